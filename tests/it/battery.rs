//! The battery runner: replays every case in `battery/<invariant>/*.json` against a
//! fresh owner. A case is data: projects to create, brains to bootstrap, and steps
//! (a tool call over REST or MCP, or a REST read) each with what must hold.
//! The format is documented in battery/README.md.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{header, labels, Mcp, Owner, OwnerOptions};

fn battery_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("battery")
}

/// Every case file, grouped by invariant folder.
fn cases() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for inv in std::fs::read_dir(battery_dir()).expect("battery/ exists") {
        let inv = inv.unwrap().path();
        if !inv.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&inv).unwrap() {
            let case = case.unwrap().path();
            if case.extension().is_some_and(|e| e == "json") {
                out.push((
                    inv.file_name().unwrap().to_string_lossy().into_owned(),
                    case,
                ));
            }
        }
    }
    out.sort();
    out
}

/// Replace `$P` with the projects dir and `$FP(name)` with that project's fingerprint.
fn subst(v: &Value, projects: &Path) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            while let Some(i) = s.find("$FP(") {
                let j = s[i..].find(')').expect("closing paren in $FP(") + i;
                let name = &s[i + 4..j];
                let root = std::fs::canonicalize(projects.join(name))
                    .expect("$FP names an existing project");
                let digest =
                    <sha2::Sha256 as sha2::Digest>::digest(root.to_string_lossy().as_bytes());
                let fp = hex::encode(digest)[..16].to_string();
                s.replace_range(i..=j, &fp);
            }
            Value::String(s.replace("$P", &projects.to_string_lossy()))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| subst(x, projects)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), subst(x, projects)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// JSON pointer with `*` matching every array element; returns all matches.
fn select<'a>(v: &'a Value, pointer: &str) -> Vec<&'a Value> {
    let mut cur = vec![v];
    for part in pointer.split('/').skip(1) {
        let mut next = Vec::new();
        for c in cur {
            if part == "*" {
                if let Some(a) = c.as_array() {
                    next.extend(a.iter());
                }
            } else if let Some(x) = c
                .get(part)
                .or_else(|| part.parse::<usize>().ok().and_then(|i| c.get(i)))
            {
                next.push(x);
            }
        }
        cur = next;
    }
    cur
}

fn check(expect: &Value, status: u16, body: &Value) -> Vec<String> {
    let mut fails = Vec::new();
    let is_err = body.get("error").is_some() || status >= 400;
    if let Some(ok) = expect.get("ok").and_then(Value::as_bool) {
        if ok == is_err {
            fails.push(format!("expected ok={ok}, got status {status}"));
        }
    }
    if let Some(code) = expect.get("error_code").and_then(Value::as_str) {
        if body["error"]["code"].as_str() != Some(code) {
            fails.push(format!(
                "expected error code {code}, got {}",
                body["error"]["code"]
            ));
        }
    }
    if let Some(s) = expect.get("status").and_then(Value::as_u64) {
        if status as u64 != s {
            fails.push(format!("expected HTTP {s}, got {status}"));
        }
    }
    for (ptr, want) in expect
        .get("eq")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let got = select(body, ptr);
        if got.first().copied() != Some(want) {
            fails.push(format!("{ptr}: expected {want}, got {:?}", got.first()));
        }
    }
    for (ptr, want) in expect
        .get("all_eq")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for got in select(body, ptr) {
            if got != want {
                fails.push(format!("{ptr}: every match must be {want}, one is {got}"));
            }
        }
    }
    for ptr in expect
        .get("absent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let ptr = ptr.as_str().unwrap();
        if !select(body, ptr).is_empty() {
            fails.push(format!("{ptr} must be absent"));
        }
    }
    // `find`: in the array at `in`, the element whose fields equal `where` must exist and
    // match `eq` (pointers into that element).
    for f in expect
        .get("find")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let arr = select(body, f["in"].as_str().unwrap())
            .first()
            .and_then(|a| a.as_array())
            .cloned()
            .unwrap_or_default();
        let hit = arr.iter().find(|el| {
            f["where"]
                .as_object()
                .into_iter()
                .flatten()
                .all(|(k, v)| el.get(k) == Some(v))
        });
        match hit {
            None => fails.push(format!("no element of {} matches {}", f["in"], f["where"])),
            Some(el) => {
                for (ptr, want) in f["eq"].as_object().into_iter().flatten() {
                    let got = select(el, ptr);
                    if got.first().copied() != Some(want) {
                        fails.push(format!(
                            "{} where {}: {ptr} expected {want}, got {:?}",
                            f["in"],
                            f["where"],
                            got.first()
                        ));
                    }
                }
            }
        }
    }
    let found = labels(body);
    for l in expect
        .get("labels_include")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !found.iter().any(|f| Some(f.as_str()) == l.as_str()) {
            fails.push(format!("label {l} missing from {found:?}"));
        }
    }
    for l in expect
        .get("labels_exclude")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if found.iter().any(|f| Some(f.as_str()) == l.as_str()) {
            fails.push(format!("label {l} must not appear, got {found:?}"));
        }
    }
    let text = body.to_string();
    for t in expect
        .get("text_absent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if text.contains(t.as_str().unwrap()) {
            fails.push(format!("text {t} must not appear anywhere in the answer"));
        }
    }
    for t in expect
        .get("text_present")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !text.contains(t.as_str().unwrap()) {
            fails.push(format!("text {t} must appear in the answer"));
        }
    }
    fails
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A call over REST or in a named MCP session; (status, answer).
fn call_via(
    o: &Owner,
    session: Option<&mut Mcp>,
    tool: &str,
    args: Value,
    h: &[(&str, &str)],
) -> (u16, Value) {
    match session {
        None => o.call(tool, args, h),
        Some(m) => match m.tool(tool, args, h) {
            Ok(v) => (200, v),
            Err(v) => (400, v),
        },
    }
}

/// The leak permutation matrix (`"matrix"` in a case): every routing path × every verb,
/// each judged by which brain the path names. Reads must show no sentinel of any other
/// brain; writes must land in that brain alone, or nowhere when the path names none.
fn run_matrix(path: &Path, case: &Value, o: &Owner, projects: &Path) -> Vec<String> {
    let mx = subst(&case["matrix"], projects);
    let agent = mx["agent"].as_str().unwrap_or("claude:maker").to_string();
    let brains: Vec<(String, String)> = mx["brains"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let fill = |t: &str, b: &str| t.replace("{brain}", b);
    let sentinel = &mx["sentinel"];
    for (name, root) in &brains {
        let h = [
            (header::BRAIN, root.as_str()),
            (header::AGENT, agent.as_str()),
        ];
        let (s, v) = o.call(
            "memorize",
            json!({ "label": fill(sentinel["label"].as_str().unwrap(), name), "text": fill(sentinel["text"].as_str().unwrap(), name) }),
            &h,
        );
        assert_eq!(s, 200, "sentinel of {name}: {v}");
        let (s, v) = o.call(
            "boot_memory",
            json!({ "op": "set", "key": "sentinel", "value": fill(sentinel["kv"].as_str().unwrap(), name) }),
            &h,
        );
        assert_eq!(s, 200, "kv sentinel of {name}: {v}");
    }
    if let Some(d) = mx.get("doctrine") {
        let (s, v) = o.founder_call(
            "memorize",
            json!({ "tier": "medulla", "label": d["label"], "text": d["text"], "agent_id": "human:founder" }),
            &[],
        );
        assert_eq!(s, 200, "doctrine: {v}");
    }
    // The marks of a brain's memory that must never show outside it.
    let marks = |b: &str| -> Vec<String> {
        vec![
            fill(sentinel["text"].as_str().unwrap(), b),
            fill(sentinel["kv"].as_str().unwrap(), b),
        ]
    };
    let mut fails = Vec::new();
    let mut n = 0usize;
    for p in mx["paths"].as_array().unwrap() {
        for verb in mx["verbs"].as_array().unwrap() {
            n += 1;
            let what = format!(
                "{} step {n}: path {:?}, {} {}",
                path.display(),
                p["name"].as_str().unwrap_or("?"),
                verb["tool"].as_str().unwrap(),
                verb["args"]
            );
            let serves = p["serves"].as_str();
            let mut headers: Vec<(String, String)> = p["headers"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            headers.push((header::AGENT.into(), agent.clone()));
            let h: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let mut session = (p["via"] == "mcp").then(|| {
                let mut m = o.mcp();
                m.initialize(&[]);
                for st in p["setup"].as_array().into_iter().flatten() {
                    let sh: Vec<(String, String)> = st["headers"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                        .collect();
                    let sh: Vec<(&str, &str)> =
                        sh.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                    m.tool(st["tool"].as_str().unwrap(), st["args"].clone(), &sh)
                        .unwrap_or_else(|e| panic!("{what}: setup failed: {e}"));
                }
                m
            });
            let args: Value =
                serde_json::from_str(&verb["args"].to_string().replace("{n}", &n.to_string()))
                    .unwrap();
            let (status, body) = call_via(
                o,
                session.as_mut(),
                verb["tool"].as_str().unwrap(),
                args,
                &h,
            );
            let text = body.to_string();
            match verb["kind"].as_str().unwrap() {
                "read" => {
                    for (b, _) in brains.iter().filter(|(b, _)| Some(b.as_str()) != serves) {
                        for m in marks(b) {
                            if text.contains(&m) {
                                fails.push(format!(
                                    "{what}: LEAK of {b} ({m:?}) into {serves:?}: {text}"
                                ));
                            }
                        }
                    }
                }
                "read_all_brains" => {
                    if status != 200 {
                        fails.push(format!("{what}: all-brains failed: {text}"));
                    }
                    for g in body["groups"].as_array().into_iter().flatten() {
                        for r in g["results"].as_array().into_iter().flatten() {
                            if r["origin_brain"] != g["origin_brain"]
                                && g["origin_brain"] != "medulla"
                            {
                                fails.push(format!(
                                    "{what}: a row is not labelled by its origin: {r}"
                                ));
                            }
                        }
                    }
                }
                kind @ ("write" | "write_kv") => {
                    if serves.is_none()
                        && (status == 200 || body["error"]["code"] != "unbootstrapped")
                    {
                        fails.push(format!(
                            "{what}: an unrouted write must be refused with unbootstrapped: {text}"
                        ));
                    }
                    if serves.is_some() && status != 200 {
                        fails.push(format!("{what}: the write failed: {text}"));
                    }
                    for (b, root) in &brains {
                        let landed = if kind == "write" {
                            let label = verb["label"]
                                .as_str()
                                .unwrap()
                                .replace("{n}", &n.to_string());
                            o.claims(root).iter().any(|c| c["label"] == label.as_str())
                        } else {
                            let key = verb["key"].as_str().unwrap().replace("{n}", &n.to_string());
                            let (s, _) = o.call(
                                "boot_memory",
                                json!({ "op": "get", "key": key, "tier": "project" }),
                                &[(header::BRAIN, root.as_str())],
                            );
                            s == 200
                        };
                        let expected = Some(b.as_str()) == serves;
                        if landed != expected {
                            fails.push(format!(
                                "{what}: the write {} {b} (expected only in {serves:?})",
                                if landed {
                                    "LANDED IN"
                                } else {
                                    "is missing from"
                                }
                            ));
                        }
                    }
                }
                other => panic!("unknown matrix verb kind {other}"),
            }
        }
    }
    eprintln!("{}: {n} permutations", path.display());
    fails
}

fn run_case(path: &Path) -> Vec<String> {
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()));
    let owner_args: Vec<String> = case["owner_args"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let projects_dir = tempfile::tempdir().unwrap();
    let projects = std::fs::canonicalize(projects_dir.path()).unwrap();
    let env: Vec<(String, String)> = case["owner_env"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str()
                    .unwrap()
                    .replace("$P", &projects.to_string_lossy()),
            )
        })
        .collect();
    // A team case: a real PostgreSQL and one owner per member, all joined; projects
    // live in the first member's scratch dir and every owner bootstraps them.
    let members: Vec<String> = case["team"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let mut pg = None;
    let mut owners: Vec<(String, Owner)> = Vec::new();
    if members.is_empty() {
        owners.push((
            String::new(),
            Owner::start_in(
                tempfile::tempdir().unwrap(),
                projects_dir,
                OwnerOptions {
                    extra_args: owner_args,
                    env,
                    config_toml: case["owner_config"].as_str().map(str::to_string),
                    ..Default::default()
                },
            ),
        ));
    } else {
        let (db, urls) = crate::team::team_database(&members);
        for (m, url) in members.iter().zip(urls) {
            owners.push((m.clone(), crate::team::member_owner(&url)));
        }
        pg = Some(db);
        drop(projects_dir);
    }
    let o = &owners[0].1;
    let token = o.founder_token();
    let home = std::fs::canonicalize(o.home.path()).unwrap();
    let case_dir = path.parent().unwrap().to_path_buf();
    let mut vars: HashMap<String, String> = HashMap::new();
    for p in case["projects"].as_array().into_iter().flatten() {
        std::fs::create_dir_all(projects.join(p.as_str().unwrap())).unwrap();
    }
    for b in case["bootstrap"].as_array().into_iter().flatten() {
        let root = projects.join(b.as_str().unwrap());
        std::fs::create_dir_all(&root).unwrap();
        for (_, each) in &owners {
            each.bootstrap(&root);
        }
    }
    if case.get("matrix").is_some() {
        return run_matrix(path, &case, o, &projects);
    }
    let mut sessions: HashMap<String, Mcp> = HashMap::new();
    let _ = &token;
    let mut fails = Vec::new();
    let mut expanded = Vec::new();
    for step in case["steps"].as_array().expect("steps") {
        let n = step["repeat"].as_u64().unwrap_or(1);
        for k in 0..n {
            let text = step.to_string().replace("{i}", &k.to_string());
            expanded.push(serde_json::from_str::<Value>(&text).unwrap());
        }
    }
    for (i, step) in expanded.iter().enumerate() {
        let mut text = step.to_string().replace("$HOME", &home.to_string_lossy());
        for (k, v) in &vars {
            text = text.replace(&format!("${{{k}}}"), v);
        }
        let step = subst(&serde_json::from_str(&text).unwrap(), &projects);
        if let Some(dir) = step["mkdir"].as_str() {
            std::fs::create_dir_all(dir).unwrap();
            continue;
        }
        if let Some(w) = step.get("write_file") {
            let p = Path::new(w["path"].as_str().unwrap());
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, w["content"].as_str().unwrap()).unwrap();
            continue;
        }
        if let Some(line) = step["append_spool"].as_str() {
            append(&home.join("field-reports.jsonl"), &format!("{line}\n"));
            continue;
        }
        match step["db"].as_str() {
            Some("stop") => {
                pg.as_mut().expect("a team case").stop();
                continue;
            }
            Some("start") => {
                pg.as_mut().expect("a team case").start_again();
                continue;
            }
            Some(other) => panic!("unknown db step {other}"),
            None => {}
        }
        let o = match step["owner"].as_str() {
            Some(name) => {
                &owners
                    .iter()
                    .find(|(m, _)| m == name)
                    .unwrap_or_else(|| panic!("no owner {name} in {}", path.display()))
                    .1
            }
            None => &owners[0].1,
        };
        let token = o.founder_token();
        if let Some(file) = step["append_spool_file"].as_str() {
            let raw = std::fs::read_to_string(case_dir.join(file)).unwrap();
            let raw = raw
                .replace("$HOME", &home.to_string_lossy())
                .replace("$P", &projects.to_string_lossy());
            append(&home.join("field-reports.jsonl"), &raw);
            continue;
        }
        let mut headers: Vec<(String, String)> = step["headers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        if step["founder"].as_bool() == Some(true) {
            headers.push((header::FOUNDER.into(), token.clone()));
        }
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let rest = |req: reqwest::blocking::RequestBuilder| {
            let r = h
                .iter()
                .fold(req, |r, (k, v)| r.header(*k, *v))
                .send()
                .unwrap();
            let s = r.status().as_u16();
            (s, r.json().unwrap_or(Value::Null))
        };
        let deadline = std::time::Instant::now()
            + std::time::Duration::from_secs(step["retry_secs"].as_u64().unwrap_or(0));
        let (status, body) = loop {
            let (status, body) = if let Some(user) = step["sql_as"].as_str() {
                let db = pg.as_ref().expect("a team case");
                let pw = crate::team::battery_password(user);
                match db.try_psql_as("team", user, &pw, step["sql"].as_str().unwrap()) {
                    Ok(out) => (200, json!({ "output": out.trim() })),
                    Err(e) => (400, json!({ "error": { "code": "sql", "message": e } })),
                }
            } else if step["db_dump"].as_bool() == Some(true) {
                (
                    200,
                    json!({ "dump": pg.as_ref().expect("a team case").dump("team") }),
                )
            } else if let Some(path) = step["get"].as_str() {
                rest(o.http.get(format!("{}{path}", o.url)))
            } else if let Some(path) = step["post"].as_str() {
                rest(
                    o.http
                        .post(format!("{}{path}", o.url))
                        .json(&step.get("body").cloned().unwrap_or(json!({}))),
                )
            } else if let Some(path) = step["file_lines"].as_str() {
                // A file's lines as a JSON answer: {"lines": n, "text": "..."}.
                let text = std::fs::read_to_string(path).unwrap_or_default();
                (
                    200,
                    json!({ "lines": text.lines().filter(|l| !l.trim().is_empty()).count(), "text": text, "exists": Path::new(path).exists() }),
                )
            } else {
                let tool = step["tool"].as_str().expect("a step has tool or get");
                let args = step.get("args").cloned().unwrap_or(json!({}));
                match step["via"].as_str().unwrap_or("rest") {
                    "rest" => o.call(tool, args, &h),
                    "mcp" => {
                        let name = format!(
                            "{}/{}",
                            step["owner"].as_str().unwrap_or(""),
                            step["session"].as_str().unwrap_or("default")
                        );
                        let m = sessions.entry(name).or_insert_with(|| {
                            let mut m = o.mcp();
                            m.initialize(&h);
                            m
                        });
                        match m.tool(tool, args, &h) {
                            Ok(v) => (200, v),
                            Err(v) => (400, v),
                        }
                    }
                    other => panic!("unknown via {other}"),
                }
            };
            if check(&step["expect"], status, &body).is_empty()
                || std::time::Instant::now() >= deadline
            {
                break (status, body);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        for (name, ptr) in step["capture"].as_object().into_iter().flatten() {
            if let Some(v) = select(&body, ptr.as_str().unwrap()).first() {
                vars.insert(
                    name.clone(),
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                );
            }
        }
        for f in check(&step["expect"], status, &body) {
            let what = step["note"].as_str().unwrap_or("");
            fails.push(format!(
                "{} step {i} ({what}): {f}\n    answer: {body}",
                path.display()
            ));
        }
    }
    fails
}

#[test]
fn battery_cases_hold() {
    let all = cases();
    let mut per_inv: HashMap<String, usize> = HashMap::new();
    for (inv, _) in &all {
        *per_inv.entry(inv.clone()).or_default() += 1;
    }
    for required in [
        "inv-01-no-leak",
        "inv-03-elevate-never-move",
        "inv-05-etiquette-audited",
        "inv-06-no-false-absence",
        "inv-08-medulla-cap",
        "inv-09-spool-is-write-truth",
        "inv-10-never-medulla-with-repo",
        "inv-11-no-write-without-brain",
        "inv-02-recorded-acts",
        "inv-04-provenance-or-unknown",
        "inv-07-per-brain-numbers",
        "inv-12-nothing-private-leaves",
        "inv-13-no-act-lost-or-twice",
        "inv-14-attribution-is-the-databases",
        "misdelivery",
    ] {
        assert!(
            per_inv.get(required).copied().unwrap_or(0) > 0,
            "battery/{required} has no case"
        );
    }
    let fails: Vec<String> = all.iter().flat_map(|(_, p)| run_case(p)).collect();
    assert!(
        fails.is_empty(),
        "{} battery failures:\n{}",
        fails.len(),
        fails.join("\n")
    );
}
