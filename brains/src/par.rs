//! A batch's work split over the cores: one part per core, each mapped on a scoped
//! thread of its own, the parts joined back in order.

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
