//! What the benches measure resident memory with: /proc (latency percentiles are
//! `bench::runner::pct`).

/// Resident memory of a process and all its descendants, in KiB (from /proc).
pub fn rss_tree_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    let mut seen = std::collections::HashSet::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p) {
            continue;
        }
        total += proc_status_kib(p, "VmRSS:").unwrap_or(0);
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                    continue;
                };
                let ppid = std::fs::read_to_string(format!("/proc/{child}/stat"))
                    .ok()
                    .and_then(|s| {
                        // The command may hold spaces: fields resume after the last ')'.
                        let rest = &s[s.rfind(')')? + 2..];
                        rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                    });
                if ppid == Some(p) {
                    todo.push(child);
                }
            }
        }
    }
    total
}

/// A `Vm…:` field of `/proc/<pid>/status` in KiB.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
