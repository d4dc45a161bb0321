//! TEMPORARY timing harness (removed before hand-off).
use crate::{Embedder, MemorizeInput, StaticModel, Store, StoreOptions};
use std::sync::Arc;

#[test]
fn timing() {
    let Ok(n) = std::env::var("TEND_TIME_N") else {
        return;
    };
    let n: usize = n.parse().unwrap();
    let embedder: Option<Arc<dyn Embedder>> = std::env::var("TEND_TIME_MODEL").ok().map(|d| {
        Arc::new(StaticModel::load(std::path::Path::new(&d)).unwrap()) as Arc<dyn Embedder>
    });
    let services = [
        "billing",
        "checkout",
        "inventory",
        "auth",
        "notifications",
        "payments",
        "shipping",
        "catalog",
        "analytics",
        "gateway",
        "ledger",
        "invoicing",
        "pricing",
        "recommendations",
        "reviews",
        "accounts",
        "onboarding",
        "scheduler",
        "reporting",
        "messaging",
        "media",
        "geocoding",
        "fraud",
        "loyalty",
        "subscriptions",
        "refunds",
        "tax",
        "warehouse",
        "returns",
        "support",
        "identity",
        "export",
        "ingestion",
        "exchange",
        "forecasting",
        "compliance",
        "cart",
        "booking",
        "chat",
        "routing",
    ];
    let topics = [
        "retries failed webhooks {n} times with exponential backoff",
        "keeps its connection pool at {n} connections in src/{s}/pool.rs",
        "times out calls to its upstream after {n} seconds",
        "runs {n} replicas in production behind the load balancer",
        "stores sessions in Redis with a {n} hour TTL",
        "publishes events to the Kafka topic {s}.events with {n} partitions",
        "caches responses in the CDN for {n} minutes",
        "needs Node {n} to build; older versions break the bundler",
        "logs at info level and keeps logs for {n} days in Loki",
        "rate-limits each API key to {n} requests per minute",
        "reads its config from {S}_CONFIG_PATH at startup",
        "runs its database migrations from migrations/{s} with sqlx",
        "exposes Prometheus metrics on port {n} at /metrics",
        "backs up its database nightly and keeps {n} snapshots",
        "has an on-call rotation of {n} engineers handing over on Mondays",
    ];
    let extra = [
        "after the incident",
        "per the runbook",
        "since the migration",
        "as agreed in review",
        "for compliance",
        "to cut latency",
        "behind a feature flag",
        "in every region",
        "during peak hours",
        "unless overridden",
    ];
    let mut claims = Vec::with_capacity(n);
    let mut x: u64 = 42;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let bench = std::env::var("TEND_TIME_CORPUS").is_ok();
    let mut g: u64 = 7;
    let mut gn = move || {
        g ^= g << 13;
        g ^= g >> 7;
        g ^= g << 17;
        g
    };
    for i in 0..n {
        if bench {
            let mut w = |k: usize| {
                (0..k)
                    .map(|_| WORDS[(gn() % WORDS.len() as u64) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let a = w(2);
            let b = w(6);
            let c = w(3);
            let mut r = |k: usize| {
                (0..k)
                    .map(|_| {
                        let u = (gn() % 1_000_000) as f64 / 1_000_000.0 + 1e-6;
                        let rank = ((1.0 / u) as u64).min(20_000);
                        format!("t{rank}x{}", rank % 7)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let (r1, r6, r3) = (r(1), r(6), r(3));
            claims.push(MemorizeInput {
                label: format!("claim {i} {a} {r1}"),
                text: format!("{b} {r6} observed while {c} {r3}"),
                source_agent: "bench:maker".into(),
                origin_brain: Some("/bench".into()),
                ..Default::default()
            });
            continue;
        }
        let s = services[(rnd() % services.len() as u64) as usize];
        let t = topics[(rnd() % topics.len() as u64) as usize];
        let num = 1 + rnd() % 60;
        let e = extra[(rnd() % extra.len() as u64) as usize];
        let text = format!(
            "The {s} service {} {e} (note {i})",
            t.replace("{n}", &num.to_string())
                .replace("{s}", s)
                .replace("{S}", &s.to_uppercase())
        );
        let label = format!("{s} fact {i}");
        claims.push(MemorizeInput {
            label,
            text,
            source_agent: "claude:timing".into(),
            origin_brain: Some("/p".into()),
            ..Default::default()
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = Store::open(
        dir.path(),
        StoreOptions {
            embedder,
            ..Default::default()
        },
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    for chunk in claims.chunks(2000) {
        store.memorize_many(chunk.to_vec()).unwrap();
    }
    store.settle_vectors().unwrap();
    eprintln!("filled {n} claims in {:.1?}", t0.elapsed());
    let all = store.live_claims().unwrap();
    let ts = std::time::Instant::now();
    let mut hits = 0usize;
    let sample: usize = std::env::var("TEND_TIME_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(all.len());
    for c in all.iter().take(sample) {
        hits += store
            .similar_scored(&c.label, &c.text, Some(&c.slug))
            .unwrap()
            .len();
    }
    eprintln!(
        "similar_scored alone, one thread, {sample} claims: {:.2?} ({hits} hits)",
        ts.elapsed()
    );
    if std::env::var("TEND_TIME_ONLY_SIMILAR").is_ok() {
        return;
    }
    let tr = std::time::Instant::now();
    let mut k = 0usize;
    for c in &all {
        k += crate::tend::read(&c.label, &c.text).marks.len();
    }
    eprintln!(
        "read alone, one thread, {} claims: {:.2?} ({k})",
        all.len(),
        tr.elapsed()
    );
    let rs: Vec<_> = all
        .iter()
        .take(2000)
        .map(|c| crate::tend::read(&c.label, &c.text))
        .collect();
    let tj = std::time::Instant::now();
    let mut nj = 0;
    for i in 0..rs.len() {
        for j in (i + 1)..(i + 6).min(rs.len()) {
            nj += 1;
            let _ = crate::tend::judge_read(
                &rs[i],
                &rs[j],
                Some(0.8),
                &crate::tend::Calibration::POTION,
            );
        }
    }
    eprintln!("judge_read alone: {nj} in {:.2?}", tj.elapsed());
    let t1 = std::time::Instant::now();
    let t = store.tend_candidates().unwrap();
    let took = t1.elapsed();
    eprintln!("tend_candidates: {n} claims, mode {}, {} pairs judged, {} clusters, {} disagreements in {:.2?}", t.mode, t.pairs_judged, t.clusters.len(), t.disagreements.len(), took);
    let t2 = std::time::Instant::now();
    let again = store.tend_candidates().unwrap();
    eprintln!(
        "second pass {:.2?}, same answer: {}",
        t2.elapsed(),
        again == t
    );
}

const WORDS: &[&str] = &[
    "cache",
    "index",
    "build",
    "flake",
    "runner",
    "deploy",
    "schema",
    "migration",
    "token",
    "router",
    "session",
    "brain",
    "store",
    "vector",
    "lexical",
    "query",
    "latency",
    "timeout",
    "retry",
    "backoff",
    "queue",
    "worker",
    "config",
    "release",
    "branch",
    "merge",
    "commit",
    "review",
    "test",
    "fixture",
    "mock",
    "socket",
    "stream",
    "buffer",
    "parser",
    "grammar",
    "compiler",
    "linker",
    "crate",
    "module",
    "trait",
    "actor",
    "mailbox",
    "spool",
    "letter",
    "promotion",
    "doctrine",
    "witness",
    "history",
    "version",
    "supersede",
    "downgrade",
    "hygiene",
    "secret",
    "embedding",
    "model",
    "runtime",
    "thread",
    "core",
    "memory",
    "disk",
    "fsync",
    "journal",
    "snapshot",
];
