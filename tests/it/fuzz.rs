//! Randomized hostile input over JSON-RPC (`POST /mcp`) and REST (`/api/...`): a bounded
//! number of generated requests, each of which must get a typed JSON answer, never a
//! panic or a dropped connection; the owner stays healthy; and a refused request writes
//! nothing (no act in any store).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};

use crate::common::{header, parse_rpc_body, Owner};

const TOOLS: &[&str] = &[
    "bootstrap",
    "brains",
    "memorize",
    "seek",
    "history",
    "boot_memory",
    "learn",
    "north",
    "delegate",
    "debrief",
    "promote",
    "audit",
    "report",
    "inbox_sweep",
    "import",
    "export",
    "backup",
    "purge",
    "nope",
];
const KEYS: &[&str] = &[
    "label",
    "text",
    "query",
    "tier",
    "limit",
    "slug",
    "op",
    "key",
    "value",
    "agent_id",
    "strength",
    "evidence",
    "task",
    "claim",
    "reason",
    "brain",
    "dir",
    "letter",
    "findings",
    "verdict",
    "scope",
    "root",
    "medulla",
    "dry_run",
    "triage",
    "name",
    "arguments",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        "[a-z]{0,12}".prop_map(Value::String),
        ".{0,40}".prop_map(Value::String),
        prop_oneof![
            Just("/".to_string()),
            Just("/etc".to_string()),
            Just("../../etc/passwd".to_string()),
            Just("medulla".to_string()),
            Just("all-brains".to_string()),
            Just("\u{0}".to_string()),
            Just("x".repeat(5000)),
            Just("hint".to_string()),
        ]
        .prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6).prop_map(
                |kv| {
                    let m: Map<String, Value> =
                        kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                    Value::Object(m)
                }
            ),
        ]
    })
}

#[derive(Debug, Clone)]
enum Req {
    Rest { tool: String, body: String },
    Get { path: String },
    Rpc { body: String },
}

fn request() -> impl Strategy<Value = Req> {
    let tool = prop_oneof![
        proptest::sample::select(TOOLS).prop_map(str::to_string),
        "[a-z_/.%]{0,16}",
    ];
    let body = prop_oneof![
        4 => value().prop_map(|v| v.to_string()),
        1 => proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    let rpc = (
        prop_oneof![Just(json!("2.0")), Just(json!("1.0")), Just(Value::Null),],
        prop_oneof![
            Just("initialize".to_string()),
            Just("tools/call".to_string()),
            Just("tools/list".to_string()),
            Just("ping".to_string()),
            "[a-z/]{0,12}",
        ],
        value(),
        prop_oneof![
            Just(json!(1)),
            Just(json!("a")),
            Just(Value::Null),
            Just(json!({}))
        ],
    )
        .prop_map(|(j, m, p, id)| {
            json!({ "jsonrpc": j, "method": m, "params": p, "id": id }).to_string()
        });
    // Some calls are well formed, so the run reaches answers beyond refusals.
    let well_formed = proptest::sample::select(vec![
        ("seek", json!({ "query": "claim" })),
        ("history", json!({ "slug": "seed" })),
        ("boot_memory", json!({ "op": "list" })),
        ("north", json!({ "task": "read a claim" })),
        ("brains", json!({})),
    ])
    .prop_map(|(tool, body)| Req::Rest {
        tool: tool.to_string(),
        body: body.to_string(),
    });
    prop_oneof![
        1 => well_formed,
        3 => (tool, body.clone()).prop_map(|(tool, body)| Req::Rest { tool, body }),
        1 => prop_oneof![
            Just("/api/claims?brain=/etc".to_string()),
            Just("/api/mailbox?brain=%00".to_string()),
            Just("/api/audit?limit=-1".to_string()),
            "/api/[a-z/?=&%]{0,20}",
        ]
        .prop_map(|path| Req::Get { path }),
        2 => prop_oneof![rpc, body].prop_map(|body| Req::Rpc { body }),
    ]
}

/// Every act in every store, as the owner counts them.
fn acts(o: &Owner) -> u64 {
    let (s, v) = o.get("/api/instances");
    assert_eq!(s, 200, "{v}");
    v["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["acts"].as_u64())
        .sum::<u64>()
        + v["medulla"]["acts"].as_u64().unwrap_or(0)
}

#[test]
fn hostile_input_gets_typed_answers_and_writes_nothing() {
    let o = Owner::start();
    let x = o.brain("x");
    x.memorize("seed", "a claim to read");
    // The hostile requests below are built by hand: malformed bodies are their point.
    let xr = x.root.clone();
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<u16, u32>::new());
    runner
        .run(&request(), |req| {
            let before = acts(&o);
            let sent = match &req {
                Req::Rest { tool, body } => o
                    .http
                    .post(format!("{}/api/call/{tool}", o.url))
                    .header(header::CALLER_ROOT, &xr)
                    .header("content-type", "application/json")
                    .body(body.clone()),
                Req::Get { path } => o.http.get(format!("{}{path}", o.url)),
                Req::Rpc { body } => o
                    .http
                    .post(format!("{}/mcp", o.url))
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header(header::CALLER_ROOT, &xr)
                    .body(body.clone()),
            };
            let r = sent.send().expect("the owner answers");
            let ct = r
                .headers()
                .get("content-type")
                .map(|c| c.to_str().unwrap().to_string());
            let (status, text) = (r.status().as_u16(), r.text().unwrap());
            let ct = ct.unwrap_or_default();
            *seen.borrow_mut().entry(status).or_default() += 1;
            prop_assert!(status < 500, "{req:?} → {status}: {text}");
            let answer: Value = if ct.starts_with("text/event-stream") {
                parse_rpc_body(&ct, &text)
            } else {
                prop_assert!(
                    ct.starts_with("application/json") || text.is_empty(),
                    "{req:?} → {status} {ct}: {text}"
                );
                serde_json::from_str(&text).unwrap_or(Value::Null)
            };
            let refused = status >= 400
                || answer.get("error").is_some()
                || answer["result"]["isError"] == true;
            if refused {
                let has_code = answer["error"]["code"].is_string()
                    || answer["error"]["code"].is_i64()
                    || crate::common::refusal(&answer["result"])["error"]["code"].is_string();
                prop_assert!(
                    has_code,
                    "{req:?} → {status}: a refusal without a typed code: {text}"
                );
                prop_assert_eq!(acts(&o), before, "{:?} was refused yet wrote", req);
            }
            prop_assert_eq!(o.get("/api/health").0, 200);
            Ok(())
        })
        .unwrap();
    let seen = seen.into_inner();
    eprintln!("statuses over the run: {seen:?}");
    assert!(
        seen.len() > 2,
        "the generator reaches several answers: {seen:?}"
    );
}
