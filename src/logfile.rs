//! The owner's log on disk: `$MEDULLA_HOME/logs/owner.log`, written by the owner however
//! it was started (by hand, by a client, by the service manager), rotated by size with a
//! few files kept; and the raw output (`serve.out`) of an owner a client started, where a
//! crash before the log opens still leaves its words. `medulla logs` reads both back.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A log file is rotated once it passes this many bytes.
pub const MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Rotated files kept beside the current one (`owner.log.1` … `owner.log.3`).
pub const KEEP: usize = 3;

pub fn dir(home: &Path) -> PathBuf {
    home.join("logs")
}

/// The owner's log.
pub fn path(home: &Path) -> PathBuf {
    dir(home).join("owner.log")
}

/// What an owner a client started printed on stdout and stderr (its last start's only).
pub fn raw_output_path(home: &Path) -> PathBuf {
    dir(home).join("serve.out")
}

/// `file` → `file.1` → … → `file.KEEP`, the oldest dropped.
fn rotate(file: &Path) {
    let numbered = |i: usize| PathBuf::from(format!("{}.{i}", file.display()));
    let _ = std::fs::remove_file(numbered(KEEP));
    for i in (1..KEEP).rev() {
        let _ = std::fs::rename(numbered(i), numbered(i + 1));
    }
    let _ = std::fs::rename(file, numbered(1));
}

/// A new `serve.out` for an owner about to start (the last start's kept as `.1`).
pub fn fresh_raw_output(home: &Path) -> std::io::Result<File> {
    std::fs::create_dir_all(dir(home))?;
    let p = raw_output_path(home);
    if p.exists() {
        let _ = std::fs::rename(&p, format!("{}.1", p.display()));
    }
    File::create(p)
}

/// The last `n` lines of `serve.out`, joined, for an error that says why a start failed.
pub fn raw_output_tail(home: &Path, n: usize) -> String {
    let lines = tail(&raw_output_path(home), n);
    if lines.is_empty() {
        "it printed nothing".into()
    } else {
        lines.join("\n")
    }
}

/// The last `n` lines of a file (none when it is missing).
pub fn tail(file: &Path, n: usize) -> Vec<String> {
    let Ok(f) = File::open(file) else {
        return Vec::new();
    };
    let mut last = std::collections::VecDeque::with_capacity(n + 1);
    for line in BufReader::new(f).lines() {
        let Ok(line) = line else { break };
        last.push_back(line);
        if last.len() > n {
            last.pop_front();
        }
    }
    last.into()
}

/// The last `n` lines of the owner's log, reaching into the rotated file when the
/// current one holds fewer.
pub fn last_lines(home: &Path, n: usize) -> Vec<String> {
    let current = tail(&path(home), n);
    if current.len() >= n {
        return current;
    }
    let mut older = tail(
        &PathBuf::from(format!("{}.1", path(home).display())),
        n - current.len(),
    );
    older.extend(current);
    older
}

/// The owner's log as a `tracing` writer: appends, and rotates past [`MAX_BYTES`].
#[derive(Clone)]
pub struct Rotating(Arc<Mutex<Open>>);

struct Open {
    path: PathBuf,
    file: File,
    len: u64,
}

impl Rotating {
    /// Open (or create) the home's log, rotating it first when it is already full.
    pub fn open(home: &Path) -> std::io::Result<Rotating> {
        std::fs::create_dir_all(dir(home))?;
        let p = path(home);
        if std::fs::metadata(&p).is_ok_and(|m| m.len() >= MAX_BYTES) {
            rotate(&p);
        }
        let (file, len) = append(&p)?;
        Ok(Rotating(Arc::new(Mutex::new(Open { path: p, file, len }))))
    }
}

fn append(p: &Path) -> std::io::Result<(File, u64)> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)?;
    let len = file.seek(SeekFrom::End(0))?;
    Ok((file, len))
}

impl Write for &Rotating {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut o = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if o.len >= MAX_BYTES {
            rotate(&o.path);
            let (file, len) = append(&o.path)?;
            o.file = file;
            o.len = len;
        }
        let n = o.file.write(buf)?;
        o.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .file
            .flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Rotating {
    type Writer = &'a Rotating;
    fn make_writer(&'a self) -> Self::Writer {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_past_its_size_and_keeps_a_few() {
        let home = tempfile::tempdir().unwrap();
        let log = Rotating::open(home.path()).unwrap();
        let line = vec![b'x'; 1024 * 1024 - 1];
        for _ in 0..(4 * 5 + 1) {
            (&log).write_all(&line).unwrap();
            (&log).write_all(b"\n").unwrap();
        }
        let p = path(home.path());
        assert!(std::fs::metadata(&p).unwrap().len() < MAX_BYTES + 1024 * 1024);
        for i in 1..=KEEP {
            assert!(
                PathBuf::from(format!("{}.{i}", p.display())).exists(),
                "{i}"
            );
        }
        assert!(!PathBuf::from(format!("{}.{}", p.display(), KEEP + 1)).exists());
    }

    #[test]
    fn the_last_lines_reach_into_the_rotated_file() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir(home.path())).unwrap();
        let p = path(home.path());
        std::fs::write(format!("{}.1", p.display()), "a\nb\nc\n").unwrap();
        std::fs::write(&p, "d\ne\n").unwrap();
        assert_eq!(last_lines(home.path(), 3), ["c", "d", "e"]);
        assert_eq!(last_lines(home.path(), 1), ["e"]);
    }
}
