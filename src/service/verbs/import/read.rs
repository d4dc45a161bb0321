//! Reading a legacy directory, in two steps kept apart so the second can run beside the
//! writes: `read_dir` reads and parses every file, many at once (what grouping by slug
//! needs before any slug is replayed), and `check` scans a chunk of slugs' versions for
//! secrets, validates and hashes them while the chunk before is being written. `derive`
//! works out a batch's vectors and terms while the batch before is being written.

use std::path::{Path, PathBuf};

use brains::legacy::{self, LegacyClaim};
use brains::store::Derivation;
use brains::{ClaimState, Embedder, MemorizeInput};

use super::Refusal;

/// How many files a reading thread takes at a time.
const READ_BLOCK: usize = 256;
/// Blocks read between two progress reports (4 096 files).
const TELL_EVERY: usize = 16;
/// Reading threads at the least, whatever the cores: a legacy file the page cache does
/// not hold costs the disk a small read of its own, and a disk serves many of those at
/// once far faster than one after another (200 000 files read cold: ~14 s two at a
/// time, ~5 s sixteen at a time). Files the cache holds cost the same CPU either way.
const READERS: usize = 16;

/// A file read and parsed: its slug known, its content not yet checked.
pub(super) struct Loaded {
    pub file: PathBuf,
    pub slug: String,
    claim: LegacyClaim,
}

/// One legacy version, checked: what replaying it needs.
pub(super) struct Parsed {
    pub file: PathBuf,
    pub state: ClaimState,
    /// The memorize input it becomes (label and text trimmed, as its store keeps them).
    pub input: MemorizeInput,
    /// The content hash of its trimmed content: equal for two versions that say the same.
    pub hash: String,
    /// Why the input fails validation, when it does.
    pub invalid: Option<String>,
}

/// Every `.light.md` file of `dir` and of `dir/.history/`, in that order, read and
/// parsed (or refused as unreadable or unparseable), a block of files at a time on each
/// of [`READERS`] threads or more. The blocks come back in file order and are not joined
/// into one list: at a million files that list's growth alone copied gigabytes.
///
/// `on_read(files read, files)` is told every [`TELL_EVERY`] blocks and once at the end:
/// reading a large directory from a slow disk takes minutes, and a caller that hears
/// nothing for that long gives up (the command line waits two minutes between bytes).
pub(super) fn read_dir(
    dir: &Path,
    on_read: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Vec<Result<Loaded, Refusal>>> {
    let mut files = light_files(dir);
    files.extend(light_files(&dir.join(".history")));
    let reads = read_blocks(&files, on_read);
    on_read(files.len(), files.len());
    reads
}

/// [`read_dir`]'s reading, the blocks in file order.
fn read_blocks(
    files: &[PathBuf],
    on_read: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Vec<Result<Loaded, Refusal>>> {
    let blocks: Vec<&[PathBuf]> = files.chunks(READ_BLOCK).collect();
    let read = std::sync::atomic::AtomicUsize::new(0);
    let tell = |i: usize, n: usize| {
        let so_far = read.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
        if i % TELL_EVERY == TELL_EVERY - 1 {
            on_read(so_far, files.len());
        }
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(READERS)
        .min(blocks.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Vec<Result<Loaded, Refusal>>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let (mut mine, mut buf) = (Vec::new(), Vec::new());
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(block) = blocks.get(i) else {
                            return mine;
                        };
                        mine.push((i, block.iter().map(|f| read_one(f, &mut buf)).collect()));
                        tell(i, block.len());
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a reading thread panicked"))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, reads)| reads).collect()
}

/// The `.light.md` files of `dir`, by name. The directory's own entry types spare a
/// stat of each file (only a link is followed to see what it names).
fn light_files(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().as_encoded_bytes().ends_with(b".light.md"))
        .filter(|e| match e.file_type() {
            Ok(t) if t.is_symlink() => e.path().is_file(),
            Ok(t) => t.is_file(),
            Err(_) => e.path().is_file(),
        })
        .map(|e| e.file_name())
        .collect();
    // In one directory, ordering by name is ordering by path, and far cheaper.
    names.sort_unstable();
    names.into_iter().map(|n| dir.join(n)).collect()
}

fn refusal(file: &Path, reason: &'static str, detail: String) -> Refusal {
    Refusal {
        file: file.to_path_buf(),
        reason: reason.into(),
        detail,
    }
}

/// Read one file into `buf` (a reading thread's, reused from file to file): refused as
/// unreadable or unparseable, or parsed. Read to its end with no size asked first: a
/// million small files are a million opens, reads and closes, and the stat each that
/// `fs::read_to_string` adds to size a fresh buffer was one call in five.
fn read_one(f: &Path, buf: &mut Vec<u8>) -> Result<Loaded, Refusal> {
    use std::io::Read;
    buf.clear();
    let unreadable = |e: std::io::Error| refusal(f, "unreadable", e.kind().to_string());
    let file = std::fs::File::open(f).map_err(unreadable)?;
    file.take(u64::MAX).read_to_end(buf).map_err(unreadable)?;
    let text =
        std::str::from_utf8(buf).map_err(|_| unreadable(std::io::ErrorKind::InvalidData.into()))?;
    let claim = legacy::parse(text).map_err(|e| refusal(f, "unparseable", e.to_string()))?;
    let slug = claim.slug();
    if slug.is_empty() {
        return Err(refusal(
            f,
            "unparseable",
            "the label has no letters or digits".into(),
        ));
    }
    Ok(Loaded {
        file: f.to_path_buf(),
        slug,
        claim,
    })
}

/// Check one version: refused when the hygiene floor finds a secret in it, else its
/// memorize input, validated and hashed.
fn check_one(l: Loaded) -> Result<Parsed, Refusal> {
    let Loaded { file, claim: c, .. } = l;
    let mut fields = crate::floor::claim_fields(&c.label, &c.text, &c.evidence);
    if let Some(r) = &c.promotion_reason {
        fields.push(("promotion reason", r.as_str()));
    }
    let findings = crate::floor::scan(fields);
    if !findings.is_empty() {
        return Err(refusal(
            &file,
            "secret found",
            crate::floor::summary(&findings),
        ));
    }
    let state = c.state;
    let mut input = c.into_input();
    // Validation trims the label and the text, as the hash does (and as the store will):
    // for a valid input this is the hash its store will record.
    let invalid = input.validate().err().map(|e| e.to_string());
    let hash =
        brains::claim::content_hash(&input.label, &input.text, input.strength, &input.evidence);
    Ok(Parsed {
        file,
        state,
        input,
        hash,
        invalid,
    })
}

/// A slug's versions, checked.
pub(super) struct Checked {
    pub(super) slug: String,
    /// How many files it was read from.
    pub(super) files: usize,
    /// Each version: its memorize input, or why it is refused.
    pub(super) versions: Vec<Result<Parsed, Refusal>>,
}

/// Check a chunk of slugs' versions on the cores the writes leave idle
/// ([`on_idle_cores`]); in order.
pub(super) fn check(chunk: Vec<(String, Vec<Loaded>)>) -> Vec<Checked> {
    on_idle_cores(chunk, 64, |(slug, versions)| Checked {
        files: versions.len(),
        versions: versions.into_iter().map(check_one).collect(),
        slug,
    })
}

/// Each input with its vector (under `embedder`) and terms, worked out on the cores the
/// writes leave idle ([`on_idle_cores`]), in order: a batch's, while the batch before is
/// written, so its store only checks and takes them. An input the model fails on comes
/// without (its store works it out again, and answers the failure if it fails there).
pub(super) fn derive(
    embedder: &dyn Embedder,
    inputs: Vec<MemorizeInput>,
) -> Vec<(MemorizeInput, Option<Derivation>)> {
    on_idle_cores(inputs, 64, |input| {
        let derived = Derivation::of(Some(embedder), &input).ok();
        (input, derived)
    })
}

/// `f` of each item, in order: the items split among the cores (a part of `min` items at
/// the least), each part on a thread that yields to every other thread of the owner (see
/// `yield_to_others`). An import's checking and deriving run beside the writes of the
/// batch before, and must take only the cores those leave idle, never slow the writer.
fn on_idle_cores<T: Send, R: Send>(items: Vec<T>, min: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().div_ceil(min))
        .max(1);
    let per = items.len().div_ceil(threads).max(1);
    let mut parts = Vec::with_capacity(threads);
    let mut rest = items;
    while rest.len() > per {
        let tail = rest.split_off(per);
        parts.push(rest);
        rest = tail;
    }
    parts.push(rest);
    let f = &f;
    std::thread::scope(|scope| {
        let workers: Vec<_> = parts
            .into_iter()
            .map(|part| {
                scope.spawn(move || {
                    yield_to_others();
                    part.into_iter().map(f).collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("an import's worker thread panicked"))
            .collect()
    })
}

/// Lower the calling thread's scheduling priority to the least (nice 19): it then runs
/// only on what the other threads leave. Linux only, where the priority is per thread
/// (elsewhere it would lower the whole process); a refusal leaves it as it was.
fn yield_to_others() {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(None, 19) {
        tracing::debug!(error = %e, "an import's checking thread keeps its priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(i: usize) -> Loaded {
        // Every seventh version carries a token the hygiene floor refuses.
        let evidence = if i.is_multiple_of(7) {
            "Evidence: AKIAIOSFODNN7EXAMPLE\n"
        } else {
            ""
        };
        let text = format!("Node: note {i}\nCreated: {i}\n{evidence}\n  the body of note {i}  \n");
        let claim = legacy::parse(&text).expect("a well-formed legacy file");
        Loaded {
            file: PathBuf::from(format!("note-{i}.light.md")),
            slug: claim.slug(),
            claim,
        }
    }

    /// A legacy directory nobody has read lately is read from the disk a file at a time
    /// per thread: [`READERS`] files must be in flight at once, whatever the cores (two
    /// at a time, 200 000 cold files took ~14 s to read; sixteen, ~5 s). Each block's
    /// first file is a named pipe, whose reader waits until the test opens it to write:
    /// the test holds each pipe once its reader is there, and gets every one only when
    /// [`READERS`] threads wait at once.
    #[cfg(unix)]
    #[test]
    fn cold_files_are_read_many_at_once() {
        use rustix::fs::{Mode, OFlags, CWD};
        use std::io::Write;
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut files = Vec::new();
        let mut pipes = Vec::new();
        for b in 0..READERS {
            let pipe = dir.path().join(format!("pipe-{b:02}.light.md"));
            rustix::fs::mkfifoat(CWD, &pipe, Mode::RUSR | Mode::WUSR).expect("a named pipe");
            files.push(pipe.clone());
            pipes.push(pipe);
            // The rest of the block: files that do not exist, refused at once.
            files.extend((1..READ_BLOCK).map(|i| dir.path().join(format!("gone-{b}-{i}"))));
        }
        let reading = std::thread::spawn(move || read_blocks(&files, &|_, _| {}));
        let mut held: Vec<Option<std::fs::File>> = pipes.iter().map(|_| None).collect();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while held.iter().any(Option::is_none) && std::time::Instant::now() < deadline {
            for (pipe, h) in pipes
                .iter()
                .zip(held.iter_mut())
                .filter(|(_, h)| h.is_none())
            {
                // Opening a pipe to write without blocking fails while nobody reads it.
                let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
                if let Ok(fd) = rustix::fs::open(pipe, flags, Mode::empty()) {
                    *h = Some(std::fs::File::from(fd));
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let at_once = held.iter().filter(|h| h.is_some()).count();
        // Let every reader go before any assert: the held ones with a file to read; then
        // those never reached, each opened (once its reader comes) and closed.
        let mut unreached = Vec::new();
        for (b, (pipe, h)) in pipes.iter().zip(held).enumerate() {
            match h {
                Some(mut held) => write!(
                    held,
                    "Node: piped note {b}\nCreated: {b}\n\nthe body of note {b}\n"
                )
                .expect("room in the pipe"),
                None => unreached.push(pipe),
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !unreached.is_empty() && std::time::Instant::now() < deadline {
            // Opened and closed at once: its reader reads nothing, refused as unparseable.
            let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
            unreached.retain(|pipe| rustix::fs::open(*pipe, flags, Mode::empty()).is_err());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let blocks = reading.join().expect("the reading threads");
        assert_eq!(
            at_once, READERS,
            "files read at once (every block's first file waits on its pipe)"
        );
        assert_eq!(blocks.len(), READERS, "a block of files each");
        for (b, block) in blocks.iter().enumerate() {
            assert_eq!(block.len(), READ_BLOCK);
            let piped = block[0].as_ref().expect("the piped file read and parsed");
            assert_eq!(
                piped.slug,
                format!("piped-note-{b}"),
                "blocks in file order"
            );
            assert!(block[1..]
                .iter()
                .all(|r| matches!(r, Err(r) if r.reason == "unreadable")));
        }
    }

    /// The chunk is split among threads: what comes back is in the chunk's order, each
    /// version refused or checked as it would be alone.
    #[test]
    fn a_chunk_is_checked_in_order_and_each_version_as_alone() {
        let chunk: Vec<(String, Vec<Loaded>)> = (0..300)
            .map(|i| {
                let versions = vec![loaded(2 * i), loaded(2 * i + 1)];
                (format!("slug-{i}"), versions)
            })
            .collect();
        let checked = check(chunk);
        assert_eq!(checked.len(), 300);
        for (
            i,
            Checked {
                slug,
                files,
                versions,
            },
        ) in checked.into_iter().enumerate()
        {
            assert_eq!(slug, format!("slug-{i}"));
            assert_eq!(files, 2);
            for (k, v) in versions.into_iter().enumerate() {
                let n = 2 * i + k;
                match v {
                    Err(r) => {
                        assert_eq!(n % 7, 0, "note {n} refused: {}", r.detail);
                        assert_eq!(r.reason, "secret found");
                        assert_eq!(r.file, PathBuf::from(format!("note-{n}.light.md")));
                        assert!(
                            !r.detail.contains("AKIAIOSFODNN7EXAMPLE"),
                            "redacted: {}",
                            r.detail
                        );
                    }
                    Ok(p) => {
                        assert_ne!(n % 7, 0, "note {n} carries a secret");
                        assert_eq!(p.file, PathBuf::from(format!("note-{n}.light.md")));
                        assert_eq!(p.input.text, format!("the body of note {n}"), "trimmed");
                        assert_eq!(p.invalid, None);
                        assert_eq!(
                            p.hash,
                            brains::claim::content_hash(
                                &format!("note {n}"),
                                &format!("the body of note {n}"),
                                p.input.strength,
                                &[],
                            )
                        );
                    }
                }
            }
        }
    }
}
