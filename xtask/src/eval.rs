//! `cargo xtask eval`: retrieval quality.
//!
//! - LoCoMo, read from ../shared at run time (never copied into the repository). One
//!   store per conversation; its observations are the claims; questions of categories
//!   1–4 are the queries; a claim is relevant when its evidence turn is one of the
//!   question's evidence turns. R@5, R@10 and nDCG@10 for the lexical list, the dense
//!   list and the fused ranking, each with the relevance floor off and on.
//! - Off-topic abstention: every question of the OTHER selected conversations asked of
//!   a conversation's store; the share that returns any matched row (lower is better).
//! - Synthetic codebase facts: "service × topic" sentences at 200 and 2,000 facts, half
//!   the queries verbatim and half paraphrased, hit@5 per ranking.
//!
//! Tune on the dev split only (`DEV_SPLIT`); the other seven conversations are held out.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::{Embedder, MemorizeInput, RankMode, RecallQuery, Store, StoreOptions};
use serde_json::{json, Value};

/// The conversations tuning may look at. The other seven are held out.
pub const DEV_SPLIT: [&str; 3] = ["conv-26", "conv-30", "conv-41"];

fn data_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MEDULLA_LOCOMO") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/locomo/locomo10.json")
}

struct Claim {
    label: String,
    text: String,
    turns: Vec<String>,
}

struct Question {
    text: String,
    evidence: HashSet<String>,
}

fn turn_ids(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => s
            .split([',', ';', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        Value::Array(a) => a.iter().flat_map(turn_ids).collect(),
        _ => vec![],
    }
}

fn load_conversation(conv: &Value) -> (Vec<Claim>, Vec<Question>) {
    let mut claims = Vec::new();
    if let Some(obs) = conv["observation"].as_object() {
        let mut sessions: Vec<(&String, &Value)> = obs.iter().collect();
        sessions.sort_by_key(|(k, _)| {
            k.trim_start_matches("session_")
                .split('_')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
        });
        for (session, per_speaker) in sessions {
            let n = session
                .trim_start_matches("session_")
                .split('_')
                .next()
                .unwrap_or("?");
            for (speaker, items) in per_speaker.as_object().into_iter().flatten() {
                for (i, item) in items.as_array().into_iter().flatten().enumerate() {
                    let Some(text) = item.get(0).and_then(Value::as_str) else {
                        continue;
                    };
                    claims.push(Claim {
                        label: format!("{speaker} session {n} observation {i}"),
                        text: text.to_string(),
                        turns: item.get(1).map(turn_ids).unwrap_or_default(),
                    });
                }
            }
        }
    }
    let questions = conv["qa"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|q| matches!(q["category"].as_u64(), Some(1..=4)))
        .filter_map(|q| {
            Some(Question {
                text: q["question"].as_str()?.to_string(),
                evidence: turn_ids(&q["evidence"]).into_iter().collect(),
            })
        })
        .collect();
    (claims, questions)
}

#[derive(Default, Clone, Copy)]
struct Sums {
    r5: f64,
    r10: f64,
    ndcg10: f64,
    n: usize,
}

impl Sums {
    fn add(&mut self, ranked: &[bool], relevant: usize) {
        let hits = |k: usize| ranked.iter().take(k).filter(|r| **r).count() as f64;
        self.r5 += hits(5) / relevant as f64;
        self.r10 += hits(10) / relevant as f64;
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, r)| **r)
            .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
            .sum();
        let idcg: f64 = (0..relevant.min(10))
            .map(|i| 1.0 / ((i + 2) as f64).log2())
            .sum();
        self.ndcg10 += dcg / idcg;
        self.n += 1;
    }
    fn merge(&mut self, o: &Sums) {
        self.r5 += o.r5;
        self.r10 += o.r10;
        self.ndcg10 += o.ndcg10;
        self.n += o.n;
    }
    fn cells(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:.3} | {:.3} | {:.3}",
            self.r5 / n,
            self.r10 / n,
            self.ndcg10 / n
        )
    }
}

const MODES: [(&str, RankMode); 3] = [
    ("lexical", RankMode::Lexical),
    ("dense (static)", RankMode::Vector),
    ("fused", RankMode::Auto),
];

/// Per ranking: floor off, floor on.
type Table = [[Sums; 2]; 3];

fn print_table(t: &Table, questions: usize) {
    println!(
        "| ranking | R@5 | R@10 | nDCG@10 | R@5 floor on | R@10 floor on | nDCG@10 floor on |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (m, (name, _)) in MODES.iter().enumerate() {
        if t[m][0].n > 0 {
            println!("| {name} | {} | {} |", t[m][0].cells(), t[m][1].cells());
        }
    }
    println!("({questions} questions with a relevant claim)");
}

fn open_store(
    dir: &Path,
    embedder: &Option<Arc<dyn Embedder>>,
    origin: &str,
    claims: &[(String, String)],
) -> Result<Store> {
    let opts = StoreOptions {
        embedder: embedder.clone(),
        ..Default::default()
    };
    let (mut store, _) = Store::open(dir, opts)?;
    for (label, text) in claims {
        store.memorize(MemorizeInput {
            label: label.clone(),
            text: text.clone(),
            source_agent: "eval:observer".into(),
            origin_brain: Some(origin.to_string()),
            ..Default::default()
        })?;
    }
    Ok(store)
}

fn query(text: &str, limit: usize, mode: RankMode, matched_only: bool) -> RecallQuery {
    RecallQuery {
        text: text.to_string(),
        limit,
        mode,
        matched_only,
        ..Default::default()
    }
}

struct Args {
    conversations: Vec<String>,
    dump: Option<PathBuf>,
    synthetic: bool,
    locomo: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        conversations: DEV_SPLIT.iter().map(|s| s.to_string()).collect(),
        dump: None,
        synthetic: true,
        locomo: true,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--conversations" => {
                let list = it
                    .next()
                    .context("--conversations takes a comma-separated list (or `all`)")?;
                a.conversations = list.split(',').map(|s| s.trim().to_string()).collect();
            }
            "--dump" => a.dump = Some(it.next().context("--dump takes a file")?.into()),
            "--no-synthetic" => a.synthetic = false,
            "--synthetic-only" => a.locomo = false,
            other => bail!("unknown argument {other:?}: usage: cargo xtask eval [--conversations conv-26,conv-30|all] [--no-synthetic|--synthetic-only] [--dump FILE]"),
        }
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<()> {
    let args = parse(args)?;
    let embedder: Option<Arc<dyn Embedder>> = medulla::model::load_default()?;
    match &embedder {
        Some(e) => println!("model: {} ({} dimensions)", e.id(), e.dims()),
        None => eprintln!(
            "no embedding model: run `cargo xtask fetch-model`; dense and fused rows need it"
        ),
    }
    if args.locomo {
        locomo(&args, &embedder)?;
    }
    if args.synthetic {
        synthetic(&embedder)?;
    }
    Ok(())
}

fn locomo(args: &Args, embedder: &Option<Arc<dyn Embedder>>) -> Result<()> {
    let path = data_path();
    let data: Value = serde_json::from_slice(&std::fs::read(&path).with_context(|| {
        format!(
            "cannot read LoCoMo at {}: set MEDULLA_LOCOMO to locomo10.json",
            path.display()
        )
    })?)?;
    let all: Vec<&Value> = data
        .as_array()
        .context("locomo10.json is not a list")?
        .iter()
        .collect();
    let mut conversations = args.conversations.clone();
    if conversations == ["all"] {
        conversations = all
            .iter()
            .filter_map(|c| c["sample_id"].as_str().map(str::to_string))
            .collect();
    }
    let held_out: Vec<&String> = conversations
        .iter()
        .filter(|c| !DEV_SPLIT.contains(&c.as_str()))
        .collect();
    if !held_out.is_empty() {
        if args.dump.is_some() {
            bail!("--dump is for the dev split only: held-out conversations are never tuned on");
        }
        eprintln!(
            "note: measuring on held-out conversations {held_out:?}; never tune on these numbers"
        );
    }
    let mut dump = match &args.dump {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => None,
    };
    let started = Instant::now();
    let mut loaded = Vec::new();
    for id in &conversations {
        let conv = all
            .iter()
            .find(|c| c["sample_id"].as_str() == Some(id))
            .with_context(|| format!("no conversation {id}"))?;
        loaded.push((id.clone(), load_conversation(conv)));
    }
    let mut totals: Table = Default::default();
    // Off-topic: (queries, answered with a matched row) for fused and lexical-only.
    let mut off = [(0usize, 0usize); 2];
    for (id, (claims, questions)) in &loaded {
        let dir = tempfile::tempdir()?;
        let pairs: Vec<(String, String)> = claims
            .iter()
            .map(|c| (c.label.clone(), c.text.clone()))
            .collect();
        let store = open_store(dir.path(), embedder, id, &pairs)?;
        let mut per: Table = Default::default();
        for q in questions {
            let relevant_of = |label: &str| {
                claims
                    .iter()
                    .any(|c| c.label == label && c.turns.iter().any(|t| q.evidence.contains(t)))
            };
            let relevant = claims
                .iter()
                .filter(|c| c.turns.iter().any(|t| q.evidence.contains(t)))
                .count();
            if relevant == 0 {
                continue;
            }
            for (m, (_, mode)) in MODES.iter().enumerate() {
                if embedder.is_none() && *mode != RankMode::Lexical {
                    continue;
                }
                for (f, floor) in [false, true].into_iter().enumerate() {
                    let res = store.recall(&query(&q.text, 10, *mode, floor))?;
                    let ranked: Vec<bool> = res
                        .hits
                        .iter()
                        .map(|h| relevant_of(&h.claim.label))
                        .collect();
                    per[m][f].add(&ranked, relevant);
                }
            }
            if let Some(w) = dump.as_mut() {
                let res = store.recall(&query(&q.text, 200, RankMode::Auto, false))?;
                let cands: Vec<Value> = res
                    .hits
                    .iter()
                    .map(|h| json!([relevant_of(&h.claim.label) as u8, h.lexical, h.vector]))
                    .collect();
                writeln!(
                    w,
                    "{}",
                    json!({"conv": id, "kind": "in", "relevant": relevant, "q": q.text, "c": cands})
                )?;
            }
        }
        // Questions of the other conversations asked of this store.
        for (other, (_, oq)) in &loaded {
            if other == id {
                continue;
            }
            for q in oq {
                for (k, mode) in [RankMode::Auto, RankMode::Lexical].into_iter().enumerate() {
                    if embedder.is_none() && mode != RankMode::Lexical {
                        continue;
                    }
                    let res = store.recall(&query(&q.text, 10, mode, true))?;
                    off[k].0 += 1;
                    off[k].1 += usize::from(!res.hits.is_empty());
                }
                if let Some(w) = dump.as_mut() {
                    let res = store.recall(&query(&q.text, 200, RankMode::Auto, false))?;
                    let cands: Vec<Value> = res
                        .hits
                        .iter()
                        .map(|h| json!([0, h.lexical, h.vector]))
                        .collect();
                    writeln!(
                        w,
                        "{}",
                        json!({"conv": id, "kind": "off", "from": other, "q": q.text, "c": cands})
                    )?;
                }
            }
        }
        println!(
            "{id}: {} claims, {} questions with relevant claims",
            claims.len(),
            per[0][0].n
        );
        for (m, (name, _)) in MODES.iter().enumerate() {
            if per[m][0].n > 0 {
                println!(
                    "  | {name} | {} | {} |",
                    per[m][0].cells(),
                    per[m][1].cells()
                );
            }
            for f in 0..2 {
                totals[m][f].merge(&per[m][f]);
            }
        }
    }
    println!();
    println!("LoCoMo, conversations: {}", conversations.join(", "));
    print_table(&totals, totals[0][0].n);
    let share = |(n, a): (usize, usize)| a as f64 / n.max(1) as f64;
    if off[0].0 > 0 {
        println!(
            "off-topic (questions of the other conversations): fused answers {:.1} % of {} with a matched row",
            100.0 * share(off[0]),
            off[0].0
        );
    }
    if off[1].0 > 0 {
        println!(
            "off-topic, lexical-only (no model): {:.1} % of {} answered with a matched row",
            100.0 * share(off[1]),
            off[1].0
        );
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Synthetic codebase facts.

const SERVICES: [&str; 40] = [
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

/// (fact, paraphrased question): `{s}` is the service, `{n}` a number.
const TOPICS: [(&str, &str); 50] = [
    (
        "The {s} service retries failed webhooks {n} times with exponential backoff",
        "how many attempts does {s} make when a callback delivery fails",
    ),
    (
        "The {s} service stores its sessions in Redis with a {n} minute expiry",
        "where does {s} keep login state and when does it time out",
    ),
    (
        "The {s} service runs database migrations with sqlx before every deploy",
        "what tool applies schema changes for {s} ahead of a release",
    ),
    (
        "The {s} service logs in JSON to stdout, shipped to Loki",
        "where do the {s} log lines end up and in what format",
    ),
    (
        "The {s} service rate limits clients to {n} requests per second per API key",
        "how much traffic can one customer token send to {s} before being throttled",
    ),
    (
        "The {s} service caches product lookups in memory for {n} seconds",
        "how long does {s} hold onto fetched items before asking again",
    ),
    (
        "The {s} service is deployed with Helm charts to the staging cluster first",
        "how does a {s} release get rolled out to the pre-production environment",
    ),
    (
        "The {s} service reads its configuration from environment variables at startup",
        "where does {s} get its settings when it boots",
    ),
    (
        "The {s} service exposes Prometheus metrics on port {n}",
        "which port should I scrape to monitor {s}",
    ),
    (
        "The {s} service uses PostgreSQL 15 as its primary database",
        "which relational store backs {s}",
    ),
    (
        "The {s} service publishes events to a Kafka topic after each write",
        "does {s} emit messages on a stream when data changes",
    ),
    (
        "The {s} service integration tests need Docker running locally",
        "what must be installed on my laptop to run the {s} end to end suite",
    ),
    (
        "The {s} service flaky test in CI is caused by a shared temp directory",
        "why does the {s} build sometimes fail randomly on the runners",
    ),
    (
        "The {s} service validates JWT tokens against the identity provider's public keys",
        "how does {s} check that a caller's credentials are genuine",
    ),
    (
        "The {s} service connection pool is capped at {n} connections",
        "what is the maximum number of simultaneous database links {s} opens",
    ),
    (
        "The {s} service times out upstream HTTP calls after {n} seconds",
        "how long does {s} wait on a dependency before giving up",
    ),
    (
        "The {s} service writes nightly backups to an S3 bucket",
        "where are copies of the {s} data saved every night",
    ),
    (
        "The {s} service feature flags are managed in LaunchDarkly",
        "which tool toggles experimental behaviour in {s}",
    ),
    (
        "The {s} service health check endpoint is /healthz",
        "what URL does the load balancer probe to see if {s} is alive",
    ),
    (
        "The {s} service is written in Rust with the Axum web framework",
        "what language and HTTP library is {s} built with",
    ),
    (
        "The {s} service sends alert pages to the on-call engineer through PagerDuty",
        "who gets woken up when {s} breaks at night and how",
    ),
    (
        "The {s} service encrypts personal data at rest with AES-256",
        "how is customer information protected on disk in {s}",
    ),
    (
        "The {s} service scales horizontally to {n} replicas under peak load",
        "how many copies of {s} run when traffic is highest",
    ),
    (
        "The {s} service queue consumer processes jobs in batches of {n}",
        "how many tasks does the {s} worker pick up at once",
    ),
    (
        "The {s} service API is versioned in the URL path as /v2",
        "how do clients select which revision of the {s} interface they call",
    ),
    (
        "The {s} service uses gRPC for internal calls between backends",
        "what protocol do other backends use to talk to {s}",
    ),
    (
        "The {s} service stores uploaded files in object storage, not on local disk",
        "where do attachments sent to {s} get kept",
    ),
    (
        "The {s} service dependency upgrades are automated by Renovate",
        "what bot opens pull requests to bump {s} libraries",
    ),
    (
        "The {s} service schedules its cleanup cron job at 3 am UTC",
        "when does the {s} housekeeping task run each day",
    ),
    (
        "The {s} service trace spans are exported with OpenTelemetry to Jaeger",
        "how can I follow a request's path through {s}",
    ),
    (
        "The {s} service returns errors as RFC 7807 problem details",
        "what does the body of a failed {s} response look like",
    ),
    (
        "The {s} service pagination uses opaque cursors instead of offsets",
        "how do I fetch the next page of results from {s}",
    ),
    (
        "The {s} service secrets are loaded from Vault at boot",
        "where does {s} get its passwords and keys",
    ),
    (
        "The {s} service load tests run with k6 against a production-sized dataset",
        "how is {s} performance checked under heavy traffic",
    ),
    (
        "The {s} service mutual TLS certificates rotate every {n} days",
        "how often are {s} transport credentials renewed",
    ),
    (
        "The {s} service idempotency keys prevent duplicate charges on retry",
        "what stops {s} from doing the same operation twice when a client resends",
    ),
    (
        "The {s} service search index is rebuilt from the database every Sunday",
        "how often is the {s} lookup catalogue regenerated from scratch",
    ),
    (
        "The {s} service memory limit in Kubernetes is {n} megabytes",
        "how much RAM is {s} allowed in its pod",
    ),
    (
        "The {s} service code owners must approve changes to its schema files",
        "who needs to sign off on a table definition change in {s}",
    ),
    (
        "The {s} service local development uses docker compose with seeded fixtures",
        "how do I run {s} on my own machine with sample data",
    ),
    (
        "The {s} service circuit breaker opens after {n} consecutive failures",
        "when does {s} stop calling a broken dependency",
    ),
    (
        "The {s} service outbound emails are rendered from Handlebars templates",
        "how are the messages {s} mails to users put together",
    ),
    (
        "The {s} service GraphQL schema is generated from the protobuf definitions",
        "where does the {s} query language contract come from",
    ),
    (
        "The {s} service timestamps are stored in UTC and converted in the client",
        "which time zone does {s} save dates in",
    ),
    (
        "The {s} service blue green deploys switch traffic at the load balancer",
        "how does {s} move users to a new version without downtime",
    ),
    (
        "The {s} service soft deletes records by setting a deleted_at column",
        "what happens to a row when someone removes it in {s}",
    ),
    (
        "The {s} service audit log is append-only and kept for seven years",
        "how long does {s} retain its history of who did what",
    ),
    (
        "The {s} service warms its cache on startup from a snapshot",
        "why is {s} slow for the first minute after booting",
    ),
    (
        "The {s} service translations are kept in Fluent files per locale",
        "where are the {s} user interface strings for other languages",
    ),
    (
        "The {s} service benchmark suite runs with criterion on every merge to main",
        "how is {s} speed tracked across changes",
    ),
];

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub struct Fact {
    pub label: String,
    pub text: String,
    pub paraphrase: String,
}

/// `n` distinct service × topic facts chosen with `seed` (n ≤ 2,000).
pub fn codebase_facts(n: usize, seed: u64) -> Vec<Fact> {
    let mut pairs: Vec<(usize, usize)> = (0..SERVICES.len())
        .flat_map(|s| (0..TOPICS.len()).map(move |t| (s, t)))
        .collect();
    let mut rng = Rng(seed | 1);
    // Fisher–Yates, then the first n.
    for i in (1..pairs.len()).rev() {
        let j = rng.below(i + 1);
        pairs.swap(i, j);
    }
    pairs.truncate(n);
    pairs
        .into_iter()
        .map(|(s, t)| {
            let num = [3, 5, 8, 10, 30, 60, 100, 250, 512, 9090][rng.below(10)].to_string();
            let fill = |x: &str| x.replace("{s}", SERVICES[s]).replace("{n}", &num);
            Fact {
                label: format!("fact {s}-{t}"),
                text: fill(TOPICS[t].0),
                paraphrase: fill(TOPICS[t].1),
            }
        })
        .collect()
}

fn synthetic(embedder: &Option<Arc<dyn Embedder>>) -> Result<()> {
    println!();
    println!("Synthetic codebase facts (service × topic), hit@5:");
    println!("| facts | ranking | verbatim | paraphrased | all | verbatim floor on | paraphrased floor on | all floor on |");
    println!("|---|---|---|---|---|---|---|---|");
    for n in [200, 2000] {
        let facts = codebase_facts(n, 0x5EED_0000 + n as u64);
        let dir = tempfile::tempdir()?;
        let pairs: Vec<(String, String)> = facts
            .iter()
            .map(|f| (f.label.clone(), f.text.clone()))
            .collect();
        let store = open_store(dir.path(), embedder, "/synthetic", &pairs)?;
        for (name, mode) in MODES {
            if embedder.is_none() && mode != RankMode::Lexical {
                continue;
            }
            let mut cells = Vec::new();
            for floor in [false, true] {
                let mut hit = [0usize; 2];
                let mut asked = [0usize; 2];
                // Half the facts asked verbatim, the other half paraphrased.
                for (i, f) in facts.iter().enumerate() {
                    let k = i % 2;
                    let text = if k == 0 { &f.text } else { &f.paraphrase };
                    let res = store.recall(&query(text, 5, mode, floor))?;
                    asked[k] += 1;
                    hit[k] += usize::from(res.hits.iter().any(|h| h.claim.label == f.label));
                }
                let r = |k: usize| hit[k] as f64 / asked[k].max(1) as f64;
                let all = (hit[0] + hit[1]) as f64 / (asked[0] + asked[1]).max(1) as f64;
                cells.push(format!("{:.2} | {:.2} | {all:.2}", r(0), r(1)));
            }
            println!("| {n} | {name} | {} | {} |", cells[0], cells[1]);
        }
    }
    Ok(())
}
