//! `medulla logs [-f] [-n N]`: the owner's log, read from the home's files (no owner
//! needs to run; a crashed one's last words are there too).

use std::time::Duration;

use clap::Args;

use super::print::{note, out};
use crate::config::default_home;

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Keep printing what the owner writes, until interrupted
    #[arg(short, long)]
    pub follow: bool,
    /// How many of the last lines to print
    #[arg(short = 'n', long, default_value_t = 40, value_name = "N")]
    pub lines: usize,
}

/// `medulla logs [-f] [-n N]`: the owner's log, read from the home (no owner needed).
pub fn logs(a: LogsArgs) -> anyhow::Result<i32> {
    let home = default_home();
    let path = crate::logfile::path(&home);
    if !path.exists() {
        note!(
            "medulla: no log yet at {}: the owner writes it when it starts",
            path.display()
        );
        return Ok(if a.follow { 1 } else { 0 });
    }
    for line in crate::logfile::last_lines(&home, a.lines) {
        out!("{line}");
    }
    if a.follow {
        follow(&path)?;
    }
    Ok(0)
}

/// Print what is appended to `path` as it comes; a rotation starts the new file from its
/// beginning.
fn follow(path: &std::path::Path) -> anyhow::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut f = std::fs::File::open(path)?;
    let mut pos = f.seek(SeekFrom::End(0))?;
    let mut buf = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if len < pos {
            // Rotated: what is at the path now is a new file.
            f = std::fs::File::open(path)?;
            pos = 0;
        }
        buf.clear();
        f.seek(SeekFrom::Start(pos))?;
        pos += f.read_to_end(&mut buf)? as u64;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&buf)?;
        stdout.flush()?;
    }
}
