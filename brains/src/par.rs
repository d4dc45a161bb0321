//! Work split over the cores. A batch: one part per core, each mapped on a scoped thread
//! of its own, the parts joined back in order. Two halves of one answer (a recall's
//! lexical and dense sides): one here, one on a thread of a pool kept for them.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The pool the second half of an answer runs on: one thread per core, started on first
/// use and kept (asleep when idle), so a recall does not pay a thread's start and end.
fn pool() -> Option<&'static rayon_core::ThreadPool> {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        rayon_core::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("recall-{i}"))
            .build()
            .inspect_err(|e| tracing::warn!(error = %e, "no pool for recalls: one side at a time"))
            .ok()
    })
    .as_ref()
}

/// `a` on this thread while `b` runs on the pool; both results. `b`'s is `None` when it
/// panicked (told to the caller as an error, never a panic carried across). Without a
/// pool, `b` after `a` here.
pub(crate) fn join<RA, RB: Send>(
    a: impl FnOnce() -> RA,
    b: impl FnOnce() -> RB + Send,
) -> (RA, Option<RB>) {
    let Some(pool) = pool() else {
        let ra = a();
        return (ra, catch_unwind(AssertUnwindSafe(b)).ok());
    };
    let mut rb = None;
    let ra = pool.in_place_scope(|s| {
        s.spawn(|_| rb = catch_unwind(AssertUnwindSafe(b)).ok());
        a()
    });
    (ra, rb)
}

/// `f` of each item, in order. A batch of at least `min` items (below it a thread costs
/// more than it saves) is cut into one part per core. `None` when a thread panicked.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    min: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Option<Vec<R>> {
    // A small batch is mapped here before the cores are counted: counting them reads
    // the process's CPU affinity and cgroup quota (files), ~30 µs a call, more than a
    // static model takes to embed a query.
    if items.len() < min {
        return Some(items.iter().map(f).collect());
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 {
        return Some(items.iter().map(f).collect());
    }
    let per = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(per)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        // Every part joined before any is looked at: a panic is answered, never left
        // to the scope.
        let joined: Vec<_> = parts.into_iter().map(|p| p.join()).collect();
        let mut out = Vec::with_capacity(items.len());
        for part in joined {
            out.extend(part.ok()?);
        }
        Some(out)
    })
}

/// `a` and `b` at once on the recall pool (from one of its threads, `b` waits for the
/// other to take it; from any other thread, this one waits for both); their results.
/// Without a pool, one after the other here. A panic in either is carried to the caller.
pub(crate) fn halves<R: Send>(
    a: impl FnOnce() -> R + Send,
    b: impl FnOnce() -> R + Send,
) -> (R, R) {
    match pool() {
        Some(pool) => pool.install(|| rayon_core::join(a, b)),
        None => (a(), b()),
    }
}
