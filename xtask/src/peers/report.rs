//! The report: one markdown row per peer and size (percentiles, hit@5, memory,
//! startup, the ratio to medulla over HTTP), then a note per peer.

use std::time::Duration;

use crate::bench::runner::{header, pct};

/// What one peer did at one size.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    pub(super) peer: String,
    pub(super) size: usize,
    pub(super) note: String,
    pub(super) startup_ms: f64,
    pub(super) written: usize,
    pub(super) write_errors: usize,
    pub(super) write: Vec<Duration>,
    pub(super) search: Vec<Duration>,
    pub(super) search_errors: usize,
    pub(super) hits_verbatim: usize,
    pub(super) hits_para: usize,
    pub(super) verbatim: usize,
    pub(super) para: usize,
    pub(super) rss_kib: u64,
    pub(super) first_error: Option<String>,
    /// Why the peer did not run, or stopped, at this size.
    pub(super) skipped: Option<String>,
}

fn fmt_ms(v: &mut [Duration], p: f64) -> String {
    if v.is_empty() {
        "–".into()
    } else {
        format!("{:.2}", pct(v, p))
    }
}

fn ratio(v: &mut [Duration], base: &mut [Duration]) -> String {
    if v.is_empty() || base.is_empty() {
        "–".into()
    } else {
        let r = pct(v, 0.5) / pct(base, 0.5);
        if r < 0.95 {
            format!("{r:.2}×")
        } else {
            format!("{r:.1}×")
        }
    }
}

pub(super) fn print_table(results: &mut [Outcome]) {
    println!();
    header("| peer | facts | write p50 (ms) | write p95 (ms) | search p50 (ms) | search p95 (ms) | hit@5 verbatim | hit@5 paraphrased | hit@5 all | RSS (MiB) | startup (s) | write p50 vs medulla-http | search p50 vs medulla-http |");
    let sizes: Vec<usize> = {
        let mut s: Vec<usize> = results.iter().map(|o| o.size).collect();
        s.dedup();
        s
    };
    for size in sizes {
        let base = results
            .iter()
            .position(|o| o.size == size && o.peer == "medulla-http" && o.skipped.is_none());
        let (mut bw, mut bs) = base
            .map(|i| (results[i].write.clone(), results[i].search.clone()))
            .unwrap_or_default();
        for o in results.iter_mut().filter(|o| o.size == size) {
            if o.write.is_empty() && o.skipped.is_some() {
                println!(
                    "| {} | {size} | – | – | – | – | – | – | – | – | – | – | – |",
                    o.peer
                );
                continue;
            }
            let searched = o.skipped.is_none();
            let hit = |h: usize, n: usize| {
                if searched && n > 0 {
                    format!("{:.2} ({h}/{n})", h as f64 / n as f64)
                } else {
                    "–".into()
                }
            };
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.1} | {} | {} |",
                o.peer,
                if searched {
                    size.to_string()
                } else {
                    format!("{} of {size}", o.written)
                },
                fmt_ms(&mut o.write, 0.5),
                fmt_ms(&mut o.write, 0.95),
                fmt_ms(&mut o.search, 0.5),
                fmt_ms(&mut o.search, 0.95),
                hit(o.hits_verbatim, o.verbatim),
                hit(o.hits_para, o.para),
                hit(o.hits_verbatim + o.hits_para, o.verbatim + o.para),
                o.rss_kib as f64 / 1024.0,
                o.startup_ms / 1000.0,
                ratio(&mut o.write, &mut bw),
                ratio(&mut o.search, &mut bs),
            );
        }
    }
    println!();
    for o in results.iter() {
        let mut line = format!("- {} at {} facts: {}", o.peer, o.size, o.note);
        if o.write_errors + o.search_errors > 0 {
            line.push_str(&format!(
                "; {} write errors, {} search errors (first: {})",
                o.write_errors,
                o.search_errors,
                o.first_error.as_deref().unwrap_or("?")
            ));
        }
        if let Some(s) = &o.skipped {
            line.push_str(&format!("; {s}"));
        }
        println!("{line}");
    }
}
