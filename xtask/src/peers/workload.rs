//! The workload: codebase facts ("service × topic" sentences, deterministic, each with
//! a distinct label) and the searches, half verbatim and half paraphrased.

#[derive(Debug, Clone)]
pub struct Fact {
    pub label: String,
    pub text: String,
    pub paraphrase: String,
}

const SERVICES: &[&str] = &[
    "billing",
    "auth",
    "search",
    "ingest",
    "gateway",
    "notifications",
    "payments",
    "scheduler",
    "inventory",
    "reports",
    "checkout",
    "profile",
    "media",
    "analytics",
    "shipping",
    "catalog",
    "pricing",
    "fraud",
    "export",
    "sync",
];
/// Second words for sizes above 200 facts: `billing worker`, `auth cron`, …
const QUALIFIERS: &[&str] = &[
    "worker", "cron", "admin", "mobile", "partner", "ledger", "audit", "edge", "batch",
];

struct Slots {
    n: u32,
    pick: [usize; 2],
}

/// A topic: its label word, the fact, and a paraphrase a person would type to find it.
struct Topic {
    name: &'static str,
    fact: fn(&str, &Slots) -> String,
    paraphrase: fn(&str, &Slots) -> String,
}

const OBJECTS: &[&str] = &["webhooks", "payouts", "emails", "uploads", "callbacks"];
const DEPS: &[&str] = &[
    "the ledger",
    "the identity provider",
    "the tax API",
    "the geocoder",
];
const CACHED: &[&str] = &[
    "session tokens",
    "price lists",
    "user profiles",
    "feature flags",
];
const STORES: &[&str] = &["Redis", "Memcached", "an in-process LRU"];
const AUTH: &[&str] = &[
    "JWT bearer",
    "mutual TLS",
    "HMAC-signed",
    "OAuth client-credential",
];
const DBS: &[&str] = &["PostgreSQL", "MySQL", "DynamoDB", "CockroachDB"];
const TOOLS: &[&str] = &["Argo Rollouts", "Spinnaker", "Flagger"];
const SINKS: &[&str] = &["Loki", "Elasticsearch", "Datadog", "CloudWatch"];
const ALGOS: &[&str] = &["token bucket", "sliding window", "leaky bucket"];
const QUEUES: &[&str] = &["Kafka", "SQS", "RabbitMQ", "NATS"];
const METRICS: &[&str] = &[
    "error rate",
    "p99 latency budget",
    "CPU saturation",
    "queue lag",
];

fn pick<'a>(v: &[&'a str], s: &Slots, k: usize) -> &'a str {
    v[s.pick[k] % v.len()]
}

const TOPICS: &[Topic] = &[
    Topic {
        name: "retries",
        fact: |svc, s| {
            format!(
                "The {svc} service retries failed {} {} times with exponential backoff starting at {} ms",
                pick(OBJECTS, s, 0),
                s.n % 5 + 2,
                100 * (s.n % 4 + 1)
            )
        },
        paraphrase: |svc, s| {
            format!(
                "what does {svc} do when sending {} fails, does it try again?",
                pick(OBJECTS, s, 0)
            )
        },
    },
    Topic {
        name: "timeouts",
        fact: |svc, s| {
            format!(
                "The {svc} service gives up on calls to {} after {} seconds and answers 504",
                pick(DEPS, s, 0),
                s.n % 25 + 5
            )
        },
        paraphrase: |svc, s| {
            format!(
                "how long will {svc} wait on {} before it stops waiting?",
                pick(DEPS, s, 0)
            )
        },
    },
    Topic {
        name: "caching",
        fact: |svc, s| {
            format!(
                "The {svc} service caches {} in {} for {} minutes",
                pick(CACHED, s, 0),
                pick(STORES, s, 1),
                s.n % 55 + 5
            )
        },
        paraphrase: |svc, s| {
            format!(
                "where does {svc} keep {} between requests, and for how long?",
                pick(CACHED, s, 0)
            )
        },
    },
    Topic {
        name: "authentication",
        fact: |svc, s| {
            format!(
                "The {svc} service authenticates callers with {} tokens that expire after {} hours",
                pick(AUTH, s, 0),
                s.n % 23 + 1
            )
        },
        paraphrase: |svc, _| format!("what credentials must a client present to call {svc}?"),
    },
    Topic {
        name: "storage",
        fact: |svc, s| {
            format!(
                "The {svc} service keeps its records in {} with {} read replicas",
                pick(DBS, s, 0),
                s.n % 4 + 1
            )
        },
        paraphrase: |svc, _| format!("which database backs {svc} and how is it replicated?"),
    },
    Topic {
        name: "deploys",
        fact: |svc, s| {
            format!(
                "The {svc} service ships through {} canaries that take {} percent of traffic first",
                pick(TOOLS, s, 0),
                s.n % 20 + 1
            )
        },
        paraphrase: |svc, _| format!("how are new versions of {svc} rolled out to production?"),
    },
    Topic {
        name: "logging",
        fact: |svc, s| {
            format!(
                "The {svc} service sends structured logs to {} and keeps them for {} days",
                pick(SINKS, s, 0),
                s.n % 80 + 7
            )
        },
        paraphrase: |svc, _| {
            format!("where do the log lines of {svc} end up, and what is their retention?")
        },
    },
    Topic {
        name: "rate limits",
        fact: |svc, s| {
            format!(
                "The {svc} service rate-limits each client to {} requests per second with a {}",
                10 * (s.n % 50 + 1),
                pick(ALGOS, s, 0)
            )
        },
        paraphrase: |svc, _| {
            format!("how many calls per second may one client make against {svc}?")
        },
    },
    Topic {
        name: "queue consumers",
        fact: |svc, s| {
            format!(
                "The {svc} service consumes jobs from a {} queue with {} workers",
                pick(QUEUES, s, 0),
                s.n % 30 + 2
            )
        },
        paraphrase: |svc, _| {
            format!("which message broker feeds work to {svc}, and how many consumers read it?")
        },
    },
    Topic {
        name: "alerting",
        fact: |svc, s| {
            format!(
                "The {svc} service pages on-call when its {} stays above {} percent for five minutes",
                pick(METRICS, s, 0),
                s.n % 15 + 2
            )
        },
        paraphrase: |svc, _| format!("when does {svc} wake somebody up at night?"),
    },
];

/// Services × topics: 200 × 10.
pub(super) const MAX_FACTS: usize = (SERVICES.len() * (QUALIFIERS.len() + 1)) * 10;

/// `n` facts, deterministic from `seed`: services × topics, each label distinct.
pub fn facts(n: usize, seed: u64) -> Vec<Fact> {
    let mut services: Vec<String> = SERVICES.iter().map(|s| s.to_string()).collect();
    for q in QUALIFIERS {
        for s in SERVICES {
            services.push(format!("{s} {q}"));
        }
    }
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut out = Vec::with_capacity(n);
    'outer: for svc in &services {
        for t in TOPICS {
            if out.len() == n {
                break 'outer;
            }
            let slots = Slots {
                n: (next() % 1000) as u32,
                pick: [(next() % 97) as usize, (next() % 89) as usize],
            };
            out.push(Fact {
                label: format!("{svc} {}", t.name),
                text: (t.fact)(svc, &slots),
                paraphrase: (t.paraphrase)(svc, &slots),
            });
        }
    }
    out
}

/// `count` searches: (target index, query, verbatim?), half verbatim, half paraphrased,
/// targets spread over the facts.
pub(super) fn searches(facts: &[Fact], count: usize) -> Vec<(usize, String, bool)> {
    (0..count)
        .map(|i| {
            let target = (i * 7919 + 13) % facts.len();
            if i % 2 == 0 {
                (target, facts[target].text.clone(), true)
            } else {
                (target, facts[target].paraphrase.clone(), false)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_deterministic_and_labels_distinct() {
        let a = facts(2000, 42);
        assert_eq!(a.len(), 2000);
        let labels: std::collections::HashSet<_> = a.iter().map(|f| &f.label).collect();
        assert_eq!(labels.len(), 2000);
        assert_eq!(facts(200, 42)[17].text, a[17].text);
    }

    #[test]
    fn half_the_searches_are_paraphrased() {
        let f = facts(200, 42);
        let s = searches(&f, 100);
        assert_eq!(s.iter().filter(|(_, _, v)| *v).count(), 50);
        assert!(s.iter().all(|(t, q, v)| *v == (q == &f[*t].text)));
    }
}
