//! Background work's place on the cores. The threads that build derived state (the
//! vector settler and the inserts it runs, the backlog loader, the claim index's
//! checkpoint) run below the threads answering callers: on a machine of two cores a
//! bulk import's catching up would otherwise take half of each seek's time. The graph's
//! inserts, which hold no lock a caller waits on, go further: they run only on cores no
//! caller wants ([`only_when_idle`]).

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

/// Run the calling thread only on a core no other thread wants (Linux's `SCHED_IDLE`):
/// a caller's thread waking takes the core at once, where a nice thread would still
/// take its share of it. For work that holds no lock a caller waits on (a thread
/// holding one and kept off the cores would stall that caller): the graph's inserts,
/// which a seek searches beside. Threads it spawns afterwards run so too. Where the
/// system will not, the thread stays where it was.
pub fn only_when_idle() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{
            set_thread_priority_and_policy, thread_native_id, thread_schedule_policy,
            NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        };
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        let tid = rustix::thread::gettid();
        let nice = rustix::process::getpriority_process(Some(tid)).ok();
        // The crate sets nice 0 after the policy: refused to a thread already below
        // callers (the policy took all the same), allowed to root, whose thread is put
        // back where it was (the nice value is moot under this policy, but stays true).
        let set = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, idle);
        if let Some(n) = nice {
            if rustix::process::getpriority_process(Some(tid)).is_ok_and(|now| now < n) {
                let _ = rustix::process::setpriority_process(Some(tid), n);
            }
        }
        if thread_schedule_policy().ok() != Some(idle) {
            tracing::debug!(error = ?set.err(), "a background thread keeps its scheduling policy");
        }
    }
}

/// The nice value of this process's thread named `name`, read from `/proc` (Linux):
/// what a test checks a background thread runs at.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn thread_nice(name: &str) -> Option<i32> {
    stat_field(name, 19)
}

/// The scheduling policy of this process's thread named `name`, read from `/proc`
/// (Linux): 5 is `SCHED_IDLE`.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn thread_policy(name: &str) -> Option<u32> {
    stat_field(name, 41)
}

/// Field `n` (1-based, as proc(5) counts) of the stat of this process's thread `name`.
#[cfg(all(test, target_os = "linux"))]
fn stat_field<T: std::str::FromStr>(name: &str, n: usize) -> Option<T> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            // Fields after the command's closing parenthesis start at field 3.
            let rest = &stat[stat.rfind(')')? + 2..];
            return rest.split_whitespace().nth(n - 3)?.parse().ok();
        }
    }
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_below_callers_can_run_only_when_idle_and_so_do_its_children() {
        const SCHED_IDLE: u32 = 5;
        let (mine, child, nice) = std::thread::Builder::new()
            .name("idle-probe".into())
            .spawn(|| {
                yield_to_callers();
                only_when_idle();
                let mine = thread_policy("idle-probe");
                let child = std::thread::Builder::new()
                    .name("idle-probe-kid".into())
                    .spawn(|| thread_policy("idle-probe-kid"))
                    .unwrap()
                    .join()
                    .unwrap();
                (mine, child, thread_nice("idle-probe"))
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(mine, Some(SCHED_IDLE));
        assert_eq!(child, Some(SCHED_IDLE));
        assert!(nice.is_some_and(|n| n >= BACKGROUND_NICE), "nice {nice:?}");
        // The caller's own thread is untouched.
        assert_eq!(
            thread_priority::thread_schedule_policy().ok(),
            Some(thread_priority::ThreadSchedulePolicy::Normal(
                thread_priority::NormalThreadSchedulePolicy::Other
            ))
        );
    }

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
