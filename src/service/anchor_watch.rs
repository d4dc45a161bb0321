//! Telling the anchor check which files may have changed since it last looked, so a
//! recall stats only those. On Linux the kernel says so (inotify, one watch per directory
//! holding an anchored file); the check drains the events before it looks, and a write
//! queues its event before the write returns, so a change shows on the very next recall.
//! Anywhere else (or when a watch cannot be had) every file is looked at each time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the watcher says of the files under it.
pub enum Told {
    /// These files, and every file in these directories, may have changed.
    Changed {
        files: Vec<PathBuf>,
        dirs: Vec<PathBuf>,
    },
    /// Events were lost: anything may have changed.
    Everything,
}

#[cfg(target_os = "linux")]
pub struct Watcher {
    inotify: inotify::Inotify,
    dirs: HashMap<PathBuf, inotify::WatchDescriptor>,
    by_wd: HashMap<inotify::WatchDescriptor, PathBuf>,
    buf: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl Watcher {
    pub fn new() -> Option<Watcher> {
        match inotify::Inotify::init() {
            Ok(inotify) => Some(Watcher {
                inotify,
                dirs: HashMap::new(),
                by_wd: HashMap::new(),
                buf: vec![0; 64 * 1024],
            }),
            Err(e) => {
                tracing::warn!(error = %e, "no inotify: anchored files are stat'ed on every recall");
                None
            }
        }
    }

    /// Watch the directory holding `file`; whether it is watched (before the caller
    /// looks at the file, so no change between the look and the watch is missed).
    pub fn watch(&mut self, file: &Path) -> bool {
        use inotify::WatchMask as M;
        let Some(dir) = file.parent() else {
            return false;
        };
        if self.dirs.contains_key(dir) {
            return true;
        }
        let mask = M::MODIFY
            | M::ATTRIB
            | M::CLOSE_WRITE
            | M::MOVE
            | M::CREATE
            | M::DELETE
            | M::DELETE_SELF
            | M::MOVE_SELF
            | M::ONLYDIR;
        match self.inotify.watches().add(dir, mask) {
            Ok(wd) => {
                self.dirs.insert(dir.to_path_buf(), wd.clone());
                self.by_wd.insert(wd, dir.to_path_buf());
                true
            }
            Err(_) => false,
        }
    }

    /// Every change queued since the last call.
    pub fn drain(&mut self) -> Told {
        use inotify::EventMask as E;
        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        loop {
            let events = match self.inotify.read_events(&mut self.buf) {
                Ok(ev) => ev,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => return self.forget_all(),
            };
            let mut gone = Vec::new();
            for ev in events {
                if ev.mask.contains(E::Q_OVERFLOW) {
                    return self.forget_all();
                }
                let Some(dir) = self.by_wd.get(&ev.wd) else {
                    continue;
                };
                match ev.name {
                    Some(name) => files.push(dir.join(name)),
                    // The directory itself moved, went away, or its watch ended.
                    None => {
                        dirs.push(dir.clone());
                        if ev
                            .mask
                            .intersects(E::DELETE_SELF | E::MOVE_SELF | E::IGNORED)
                        {
                            gone.push(ev.wd.clone());
                        }
                    }
                }
            }
            for wd in gone {
                if let Some(dir) = self.by_wd.remove(&wd) {
                    self.dirs.remove(&dir);
                }
                let _ = self.inotify.watches().remove(wd);
            }
        }
        Told::Changed { files, dirs }
    }

    fn forget_all(&mut self) -> Told {
        for (_, wd) in self.dirs.drain() {
            let _ = self.inotify.watches().remove(wd);
        }
        self.by_wd.clear();
        Told::Everything
    }
}

#[cfg(not(target_os = "linux"))]
pub struct Watcher;

#[cfg(not(target_os = "linux"))]
impl Watcher {
    pub fn new() -> Option<Watcher> {
        None
    }
    pub fn watch(&mut self, _: &Path) -> bool {
        false
    }
    pub fn drain(&mut self) -> Told {
        Told::Everything
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watcher")
    }
}
