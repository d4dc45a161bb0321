//! Synthetic codebase facts: "service × topic" sentences at 200 and 2,000 facts, half
//! the queries verbatim and half paraphrased, hit@5 per ranking.

use std::sync::Arc;

use anyhow::Result;
use brains::{Embedder, RankMode, RecallQuery};

use super::{open_store, query, MODES};

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

pub(super) fn synthetic(
    embedder: &Option<Arc<dyn Embedder>>,
    figures: &mut super::Figures,
) -> Result<()> {
    println!();
    println!("Synthetic codebase facts (service × topic), hit@5:");
    println!("| facts | ranking | verbatim | paraphrased | all | verbatim floor on | paraphrased floor on | all floor on | verbatim on + weak | paraphrased on + weak | all on + weak |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
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
            // Floor off; floor on (confident rows); floor on with `seek`'s weak rows
            // counted as found.
            for (floor, weak, tag) in [
                (false, 0, "floor_off"),
                (true, 0, "floor_on"),
                (true, 3, "floor_weak"),
            ] {
                let mut hit = [0usize; 2];
                let mut asked = [0usize; 2];
                // Half the facts asked verbatim, the other half paraphrased.
                for (i, f) in facts.iter().enumerate() {
                    let k = i % 2;
                    let text = if k == 0 { &f.text } else { &f.paraphrase };
                    let res = store.recall(&RecallQuery {
                        weak,
                        ..query(text, 5, mode, floor)
                    })?;
                    asked[k] += 1;
                    hit[k] += usize::from(res.hits.iter().any(|h| h.claim.label == f.label));
                }
                let r = |k: usize| hit[k] as f64 / asked[k].max(1) as f64;
                let all = (hit[0] + hit[1]) as f64 / (asked[0] + asked[1]).max(1) as f64;
                let key = format!(
                    "synthetic.{n}.{}.{tag}",
                    name.split(' ').next().unwrap_or(name),
                );
                figures.insert(format!("{key}.verbatim"), r(0));
                figures.insert(format!("{key}.paraphrased"), r(1));
                cells.push(format!("{:.2} | {:.2} | {all:.2}", r(0), r(1)));
            }
            println!(
                "| {n} | {name} | {} | {} | {} |",
                cells[0], cells[1], cells[2]
            );
        }
    }
    Ok(())
}
