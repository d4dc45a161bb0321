//! Background work's place on the cores. The threads that build derived state (the
//! vector settler and the inserts it runs, the backlog loader, the claim index's
//! checkpoint) run below the threads answering callers: on a machine of two cores a
//! bulk import's catching up would otherwise take half of each seek's time.

/// How far below a caller's thread a background one runs (Linux's nice, per thread):
/// under contention it gets about a tenth of a core a caller's thread would.
pub const BACKGROUND_NICE: i32 = 10;

/// Lower the calling thread to [`BACKGROUND_NICE`] (never raise it: a process already
/// started nicer keeps its place). Threads it spawns afterwards start there too. Where
/// the system will not, nothing changes: the work is the same, only its share of the
/// cores.
pub fn yield_to_callers() {
    #[cfg(target_os = "linux")]
    {
        let tid = rustix::thread::gettid();
        let now = rustix::process::getpriority_process(Some(tid)).unwrap_or(0);
        if now < BACKGROUND_NICE {
            if let Err(e) = rustix::process::setpriority_process(Some(tid), BACKGROUND_NICE) {
                tracing::debug!(error = %e, "a background thread keeps a caller's priority");
            }
        }
    }
}

/// The nice value of this process's thread named `name`, read from `/proc` (Linux):
/// what a test checks a background thread runs at.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn thread_nice(name: &str) -> Option<i32> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            // Fields after the command's closing parenthesis: state is field 3, nice 19.
            let rest = &stat[stat.rfind(')')? + 2..];
            return rest.split_whitespace().nth(16)?.parse().ok();
        }
    }
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_background_thread_and_what_it_spawns_run_below_callers() {
        let (mine, child) = std::thread::Builder::new()
            .name("bg-probe".into())
            .spawn(|| {
                yield_to_callers();
                let mine = thread_nice("bg-probe");
                let child = std::thread::Builder::new()
                    .name("bg-probe-child".into())
                    .spawn(|| thread_nice("bg-probe-child"))
                    .unwrap()
                    .join()
                    .unwrap();
                (mine, child)
            })
            .unwrap()
            .join()
            .unwrap();
        let caller = || rustix::process::getpriority_process(Some(rustix::thread::gettid()));
        let before = caller().unwrap();
        // (Run from a shell already nicer, the threads keep that place: never raised.)
        assert_eq!(mine, Some(before.max(BACKGROUND_NICE)));
        assert_eq!(child, Some(before.max(BACKGROUND_NICE)));
        // The caller's own thread is untouched.
        assert_eq!(caller().unwrap(), before);
    }
}
