//! Online backup and restore (issue 20), end to end: the real owner writes a backup
//! while eight clients write, a fresh home is restored from it with `medulla restore`,
//! and a new owner over that home serves every write acknowledged before the backup
//! began, with the manifest's counts. A damaged backup is refused before anything is
//! touched; scheduled backups rotate.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cli::{medulla_cmd, Run};
use crate::common::{Brain, Owner, OwnerOptions};

/// Every live claim of a store, read as the founder: (total the owner reports, labels).
fn live(o: &Owner, brain: &str) -> (u64, HashSet<String>) {
    let v: Value = o
        .http
        .get(format!("{}/api/claims", o.url))
        .query(&[("brain", brain), ("limit", "5000")])
        .header("Medulla-Founder-Token", o.founder_token())
        .send()
        .expect("GET /api/claims")
        .json()
        .expect("JSON");
    let labels = v["claims"]
        .as_array()
        .unwrap_or_else(|| panic!("no claims for {brain}: {v}"))
        .iter()
        .map(|c| c["label"].as_str().unwrap().to_string())
        .collect();
    (v["total"].as_u64().unwrap(), labels)
}

/// `medulla restore ARGS` run by a user whose home is `home`.
fn restore(home: &Path, args: &[&str]) -> Run {
    let out = medulla_cmd(home, home)
        .arg("restore")
        .args(args)
        .output()
        .unwrap();
    Run::of(out)
}

fn backup(o: &Owner) -> Value {
    let (s, v) = o.founder_call("backup", json!({}), &[]);
    assert_eq!(s, 200, "{v}");
    v
}

fn manifest_store<'a>(m: &'a Value, root: &str) -> &'a Value {
    m["stores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["root"] == root)
        .unwrap_or_else(|| panic!("{root} not in the manifest: {m}"))
}

fn sha256_of(p: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

/// The restore drill of issue 20: a backup under 8 concurrent writers, restored into a
/// fresh home, holds every write acknowledged before the backup began; every store
/// opens clean (its indexes rebuilt) and counts what the manifest says.
#[test]
fn a_backup_under_eight_writers_restores_every_write_acknowledged_before_it() {
    let mut o = Owner::start();
    let roots: Vec<String> = ["a", "b"].iter().map(|p| o.brain(p).root).collect();
    let (s, v) = o.founder_call(
        "memorize",
        json!({ "label": "doctrine one", "text": "the medulla is backed up too", "tier": "medulla" }),
        &[],
    );
    assert_eq!(s, 200, "{v}");
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (acked, stop, url) = (acked.clone(), stop.clone(), o.url.clone());
            let root = roots[w % 2].clone();
            std::thread::spawn(move || {
                let http = reqwest::blocking::Client::new();
                for i in 0..2000 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let label = format!("writer {w} claim {i}");
                    let r = http
                        .post(format!("{url}/api/call/memorize"))
                        .header("Medulla-Caller-Root", &root)
                        .header("Medulla-Agent", "claude:maker")
                        .json(&json!({ "label": label, "text": format!("written by {w} as number {i}") }))
                        .send();
                    if r.is_ok_and(|r| r.status().as_u16() == 200) {
                        acked.lock().unwrap().push((root.clone(), label));
                    }
                }
            })
        })
        .collect();
    let started = Instant::now();
    while acked.lock().unwrap().len() < 200 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "writers stalled"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Every write in this list was acknowledged before the backup call was sent.
    let before = acked.lock().unwrap().clone();
    let answer = backup(&o);
    let during = acked.lock().unwrap().len();
    // Writers went on while it ran, and go on a little after it.
    while acked.lock().unwrap().len() < during + 50 {
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let total_acked = acked.lock().unwrap().len();
    assert!(
        total_acked > before.len(),
        "writes went on during and after the backup"
    );

    let dir = PathBuf::from(answer["dir"].as_str().unwrap());
    assert!(dir.starts_with(o.home.path().join("backups")), "{dir:?}");
    assert!(!dir.to_string_lossy().ends_with(".partial"));
    let m: Value = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap())
        .expect("manifest.json");
    assert_eq!(m, answer["manifest"], "the answer is the manifest");
    assert_eq!(m["trigger"], "manual");
    assert_eq!(m["stores"].as_array().unwrap().len(), 3, "{m}");
    assert!(m.get("failed").is_none(), "{m}");
    for s in m["stores"].as_array().unwrap() {
        let file = dir.join(s["file"].as_str().unwrap());
        assert_eq!(sha256_of(&file), s["sha256"], "{file:?}");
        // Only the truth: the derived indexes are not copied.
        let names: Vec<_> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.contains("usearch") || n.contains("snapshot")),
            "{names:?}"
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "a backup is its owner's only");
    }
    assert!(o.terminate().success());

    // A fresh home, restored from the backup, served by a new owner.
    let fresh = tempfile::tempdir().unwrap();
    let r = restore(fresh.path(), &[dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for root in &roots {
        assert!(
            r.stdout.contains(&format!("restored brain {root}")),
            "{}",
            r.stdout
        );
    }
    assert!(r.stdout.contains("restored medulla"), "{}", r.stdout);
    let o2 = Owner::start_in(fresh, tempfile::tempdir().unwrap(), OwnerOptions::default());
    for root in &roots {
        let (total, labels) = live(&o2, root);
        let want = manifest_store(&m, root)["counts"]["live_claims"]
            .as_u64()
            .unwrap();
        assert_eq!(total, want, "{root}: live claims against the manifest");
        for (r, label) in before.iter().filter(|(r, _)| r == root) {
            assert!(
                labels.contains(label),
                "{r}: {label:?} was acknowledged before the backup began and is missing"
            );
        }
        assert!(total as usize >= before.iter().filter(|(r, _)| r == root).count());
        // Recall works over the rebuilt indexes.
        let (s, v) = o2.call(
            "seek",
            json!({ "query": "written by 1 as number 3", "tier": "project" }),
            &[("Medulla-Caller-Root", root.as_str())],
        );
        assert_eq!(s, 200, "{v}");
    }
    let (total, labels) = live(&o2, "medulla");
    assert!(labels.contains("doctrine one"));
    let medulla = m["stores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["store"] == "medulla")
        .unwrap();
    assert_eq!(total, medulla["counts"]["live_claims"].as_u64().unwrap());
}

/// A backup whose copy was damaged is refused before anything in the home is touched,
/// and so are a directory that is no backup, an unfinished one, a store the backup does
/// not hold, and a restore while the owner runs; a good backup of one brain restores
/// that brain alone and says what it replaced. Only the founder may back up.
#[test]
fn restore_checks_everything_before_it_touches_anything() {
    let mut o = Owner::start();
    let (a, b) = (o.brain("a"), o.brain("b"));
    let (ra, rb) = (a.root.clone(), b.root.clone());
    let (ra, rb) = (ra.as_str(), rb.as_str());
    let write = |b: &Brain, label: &str| {
        b.memorize(label, &format!("{label} holds"));
    };
    write(&a, "kept in the backup");
    write(&b, "b before");

    let (s, v) = o.call("backup", json!({}), &[]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("founder_only")),
        "{v}"
    );
    let (s, v) = o.founder_call(
        "backup",
        json!({ "dir": o.home.path().join("brains").to_str().unwrap() }),
        &[],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("backup_dir_refused")),
        "{v}"
    );

    // The command line writes one and says what it wrote.
    let cli = |args: &[&str]| {
        medulla_cmd(o.home.path(), o.projects.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = cli(&["backup"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.starts_with("backed up 3 stores"),
        "{text}"
    );
    assert!(text.contains(ra), "{text}");
    let out = cli(&["backup", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let good = PathBuf::from(v["dir"].as_str().unwrap());
    let damaged_answer = backup(&o);
    let damaged = PathBuf::from(damaged_answer["dir"].as_str().unwrap());
    assert_ne!(good, damaged);
    write(&a, "written after the backup");
    write(&b, "b after");

    // With the owner running, restore refuses and names the fix.
    let home = o.home.path().to_path_buf();
    let r = restore(&home, &[good.to_str().unwrap(), "--brain", ra]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("owner_running") && r.stderr.contains("medulla stop"),
        "{}",
        r.stderr
    );
    assert!(o.terminate().success());

    // Flip one byte in the middle of brain a's copy.
    let fp = manifest_store(&damaged_answer["manifest"], ra)["store"]
        .as_str()
        .unwrap()
        .to_string();
    let copy = damaged.join("brains").join(&fp).join("store.redb");
    let mut bytes = std::fs::read(&copy).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&copy, bytes).unwrap();

    let store = home.join("brains").join(&fp).join("store.redb");
    let before = sha256_of(&store);
    let listing = |p: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let home_before = listing(&home);
    for args in [
        vec![damaged.to_str().unwrap()],
        vec![damaged.to_str().unwrap(), "--brain", ra],
    ] {
        let r = restore(&home, &args);
        assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("backup_damaged"), "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("brains/{fp}/store.redb")),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("nothing was touched"), "{}", r.stderr);
    }
    let r = restore(&home, &[damaged.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["error"]["code"], "backup_damaged");
    assert_eq!(sha256_of(&store), before, "the store was not touched");
    assert_eq!(listing(&home), home_before, "nothing was added to the home");

    let r = restore(&home, &[home.to_str().unwrap()]);
    assert!(
        r.code == 1 && r.stderr.contains("backup_manifest_missing"),
        "{}",
        r.stderr
    );
    let unfinished = home
        .join("backups")
        .join("2026-01-01T00-00-00.000Z.partial");
    std::fs::create_dir_all(&unfinished).unwrap();
    let r = restore(&home, &[unfinished.to_str().unwrap()]);
    assert!(
        r.code == 1 && r.stderr.contains("backup_incomplete"),
        "{}",
        r.stderr
    );
    let r = restore(
        &home,
        &[good.to_str().unwrap(), "--brain", "/no/such/brain"],
    );
    assert!(
        r.code == 1 && r.stderr.contains("backup_unknown_store"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(ra),
        "it lists what the backup holds: {}",
        r.stderr
    );

    // The good backup, one brain: a is as it was at the backup, b keeps its later write.
    let r = restore(&home, &[good.to_str().unwrap(), "--brain", ra]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!("restored brain {ra}")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("replaced what was there"), "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!("{}/replaced/", home.display())),
        "{}",
        r.stdout
    );
    let aside = std::fs::read_dir(home.join("replaced"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        sha256_of(&aside.join("brains").join(&fp).join("store.redb")),
        before,
        "the replaced store was moved aside whole"
    );

    let o2 = o.restart(OwnerOptions::default()).0;
    let (_, la) = live(&o2, ra);
    assert!(
        la.contains("kept in the backup") && !la.contains("written after the backup"),
        "{la:?}"
    );
    let (_, lb) = live(&o2, rb);
    assert!(lb.contains("b after"), "only brain a was restored: {lb:?}");
}

/// Scheduled backups (`backup_every_secs`) land in `$MEDULLA_HOME/backups/` and only
/// the newest `backup_keep` stay.
#[test]
fn scheduled_backups_rotate_to_backup_keep() {
    let o = Owner::start_with(OwnerOptions {
        config_toml: Some("backup_every_secs = 1\nbackup_keep = 2\n".into()),
        ..OwnerOptions::default()
    });
    o.brain("p");
    let dir = o.home.path().join("backups");
    let complete = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|r| r.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        v.retain(|p| {
            p.join("manifest.json").is_file() && !p.to_string_lossy().ends_with(".partial")
        });
        v.sort();
        v
    };
    let started = Instant::now();
    let first = loop {
        if let Some(f) = complete().first().cloned() {
            break f;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no scheduled backup appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // Wait until rotation has removed the first one: at least three were written.
    while first.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first backup was never rotated away"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let kept = complete();
    assert!(!kept.is_empty() && kept.len() <= 2, "{kept:?}");
    for k in &kept {
        let m: Value =
            serde_json::from_slice(&std::fs::read(k.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["trigger"], "scheduled");
        assert_eq!(m["stores"].as_array().unwrap().len(), 2, "{m}");
    }
}

/// `medulla backup DIR` writes `DIR/<time>/`, yet `medulla restore DIR` (the directory
/// the user named) used to refuse it as "not a backup: it has no manifest.json". A
/// directory holding backups restores its newest complete one and names it; `--list`
/// shows them newest first; a directory holding none is refused with the fix.
#[test]
fn restore_of_the_directory_backups_were_written_into_takes_the_newest() {
    let mut o = Owner::start();
    let projects = o.projects.path().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let dir_path = std::fs::canonicalize(dir.path()).unwrap();
    let dir_s = dir_path.to_str().unwrap();
    let cli = |home: &Path, args: &[&str]| -> Run {
        let out = medulla_cmd(home, &projects).args(args).output().unwrap();
        Run::of(out)
    };
    let home = o.home.path().to_path_buf();
    let backup_into = |dir: &str| -> PathBuf {
        let r = cli(&home, &["backup", dir, "--json"]);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        PathBuf::from(v["dir"].as_str().unwrap())
    };
    let (root, older, newer) = {
        let b = o.brain("p");
        b.memorize("before both", "written before the first backup");
        let older = backup_into(dir_s);
        b.memorize("between", "written between the two backups");
        let newer = backup_into(dir_s);
        b.memorize("after both", "written after the second backup");
        (b.root.clone(), older, newer)
    };
    assert_ne!(older, newer);
    assert!(older.starts_with(&dir_path) && newer.starts_with(&dir_path));
    // An unfinished backup, however new, is never taken.
    std::fs::create_dir_all(dir_path.join("2999-01-01T00-00-00.000Z.partial")).unwrap();

    let r = cli(&home, &["restore", dir_s, "--list", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let listed: Vec<PathBuf> = v["backups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| PathBuf::from(b["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        vec![newer.clone(), older.clone()],
        "newest first: {v}"
    );
    assert_eq!(v["backups"][0]["stores"], 2, "{v}");
    assert!(v["backups"][0]["bytes"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["unfinished"].as_array().unwrap().len(), 1, "{v}");
    let r = cli(&home, &["restore", dir_s, "--list"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let (at_new, at_old) = (
        r.stdout.find(newer.to_str().unwrap()),
        r.stdout.find(older.to_str().unwrap()),
    );
    assert!(
        r.stdout.starts_with("2 backups in") && at_new.unwrap() < at_old.unwrap(),
        "{}",
        r.stdout
    );
    assert!(o.terminate().success());

    // Restored into a fresh home through --home: the newer backup, named.
    let fresh = tempfile::tempdir().unwrap();
    let r = cli(
        &home,
        &["restore", dir_s, "--home", fresh.path().to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("restoring the newest complete one")
            && r.stdout.contains(newer.to_str().unwrap()),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("restored brain {root}")),
        "{}",
        r.stdout
    );
    let other = tempfile::tempdir().unwrap();
    let r = cli(
        &home,
        &[
            "restore",
            dir_s,
            "--home",
            other.path().to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(PathBuf::from(v["backup"].as_str().unwrap()), newer, "{v}");
    assert_eq!(
        PathBuf::from(v["chosen_from"].as_str().unwrap()),
        dir_path,
        "{v}"
    );

    let o2 = Owner::start_in(fresh, tempfile::tempdir().unwrap(), OwnerOptions::default());
    let (_, labels) = live(&o2, &root);
    assert!(
        labels.contains("before both") && labels.contains("between"),
        "every claim acknowledged before the newer backup: {labels:?}"
    );
    assert!(!labels.contains("after both"), "{labels:?}");

    // A directory that neither is nor holds a backup: refused, naming the fix.
    let empty = tempfile::tempdir().unwrap();
    let r = cli(
        &home,
        &[
            "restore",
            empty.path().to_str().unwrap(),
            "--home",
            other.path().to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("backup_manifest_missing")
            && r.stderr.contains("--list")
            && r.stderr.contains("medulla backup DIR"),
        "{}",
        r.stderr
    );
}
