//! Store faults, tried as a user meets them: a disk that fills up under the owner, and a
//! store file damaged while the owner was stopped. Each answer is typed and names the
//! fix; a full disk recovers by itself; a damaged store is quarantined (never a panic,
//! never a write on top of it) and every listing says so; other brains never notice.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{Brain, Owner, OwnerOptions};

/// A small tmpfs mounted over a directory, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `None` (with the reason printed) where mounting is not allowed: not root, or no
    /// mount in this sandbox.
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!(
                "skipped: mounting a {size} tmpfs needs root (and mount in this sandbox); the full-disk path is not exercised here"
            );
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn memorize(b: &Brain, label: &str, text: &str) -> (u16, Value) {
    b.call("memorize", json!({ "label": label, "text": text }))
}

/// The doctor's `broken` entry for a store (a root, or `medulla`), if any.
fn broken<'a>(doctor: &'a Value, store: &str) -> Option<&'a Value> {
    doctor["broken"]
        .as_array()?
        .iter()
        .find(|b| b["brain"] == store)
}

#[test]
fn a_full_disk_answers_disk_full_and_the_brain_recovers_by_itself_when_room_returns() {
    let home = tempfile::tempdir().unwrap();
    let Some(_fs) = Tmpfs::mount(home.path(), "6m") else {
        return;
    };
    // Room the test gives back later: the disk fills up with it in place.
    let filler = home.path().join("filler.bin");
    std::fs::write(&filler, vec![7u8; 1024 * 1024]).unwrap();
    let o = Owner::start_in(home, tempfile::tempdir().unwrap(), OwnerOptions::default());
    let b = o.brain("p");
    let cr = b.root.clone();

    // Write until the disk is full: every write before is acknowledged.
    let body = "x".repeat(3000);
    let mut acknowledged = Vec::new();
    let mut full = None;
    for i in 0..5000 {
        let label = format!("note {i}");
        let (s, v) = memorize(&b, &label, &format!("{i} {body}"));
        if s == 200 {
            acknowledged.push(label);
            continue;
        }
        full = Some((s, v));
        break;
    }
    let (s, v) = full.expect("the 6 MB disk filled up");
    assert_eq!(s, 507, "a full disk is 507 disk_full: {v}");
    assert_eq!(v["error"]["code"], "disk_full", "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("no space left") && msg.contains("recovers by itself"),
        "{msg}"
    );
    assert!(acknowledged.len() > 10, "some writes landed first");

    // The next write is told the same, not a poisoned-database error.
    let (s, v) = memorize(&b, "while full", "still no room");
    assert_eq!(s, 507, "{v}");
    assert_eq!(v["error"]["code"], "disk_full", "{v}");

    // The spool refuses a letter cleanly: never half a line.
    let mut refused = None;
    for i in 0..200 {
        let (s, v) = b.call(
            "report",
            json!({ "letter": { "class": "friction", "what": format!("letter {i} {}", "y".repeat(2000)) } }),
        );
        if s != 200 {
            refused = Some((s, v));
            break;
        }
    }
    if let Some((s, v)) = &refused {
        assert_eq!(*s, 507, "{v}");
        assert_eq!(v["error"]["code"], "disk_full", "{v}");
    }
    let spool =
        std::fs::read_to_string(o.home.path().join("field-reports.jsonl")).unwrap_or_default();
    for line in spool.lines() {
        serde_json::from_str::<Value>(line).expect("every spool line is whole JSON");
    }

    // Doctor says so while it lasts, and the brain's row does too.
    let (_, d) = o.get("/api/doctor");
    let row = broken(&d, &cr).unwrap_or_else(|| panic!("doctor names the full brain: {d}"));
    assert_eq!(row["fault"], "disk_full", "{row}");
    let row = o.instance(&cr);
    assert_eq!(row["fault"]["kind"], "disk_full", "{row}");

    // Room returns: the brain recovers with no restart.
    std::fs::remove_file(&filler).unwrap();
    let started = Instant::now();
    loop {
        let (s, v) = memorize(&b, "after room returned", "the disk has room again");
        if s == 200 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the brain recovers by itself once there is room: {s} {v}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let (_, d) = o.get("/api/doctor");
    assert!(broken(&d, &cr).is_none(), "the fault is gone: {d}");

    // Nothing acknowledged was lost.
    let live: Vec<String> = o
        .claims(&cr)
        .iter()
        .filter_map(|c| c["label"].as_str().map(String::from))
        .collect();
    for l in &acknowledged {
        assert!(live.contains(l), "acknowledged {l:?} is still there");
    }
}

/// Overwrite, with random bytes, every 4 KiB page of `file` that holds `marker`.
fn damage_pages_holding(file: &Path, marker: &str) -> usize {
    let mut bytes = std::fs::read(file).unwrap();
    let mut pages = std::collections::BTreeSet::new();
    let m = marker.as_bytes();
    for i in 0..bytes.len().saturating_sub(m.len()) {
        if &bytes[i..i + m.len()] == m {
            pages.insert(i / 4096);
        }
    }
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for p in &pages {
        let start = p * 4096;
        let end = (start + 4096).min(bytes.len());
        for b in &mut bytes[start..end] {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *b = seed as u8;
        }
    }
    std::fs::write(file, bytes).unwrap();
    pages.len()
}

/// Stop the owner, run `between`, and start a new owner over the same home.
fn stopped_then(o: Owner, between: impl FnOnce()) -> Owner {
    o.restart_after(OwnerOptions::default(), between).0
}

fn sha(file: &Path) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(std::fs::read(file).unwrap()))
}

#[test]
fn a_damaged_store_is_quarantined_with_the_fix_and_takes_no_write_while_others_serve() {
    let o = Owner::start();
    let (x, y, z) = (o.brain("x"), o.brain("y"), o.brain("z"));
    let (xs, ys, zs) = (x.root.clone(), y.root.clone(), z.root.clone());
    for i in 0..60 {
        let text = format!("claim {i}: the release train leaves on thursdays zzmarker{i}");
        assert_eq!(memorize(&x, &format!("x{i}"), &text).0, 200);
        assert_eq!(memorize(&z, &format!("z{i}"), &text).0, 200);
    }
    assert_eq!(memorize(&y, "y", "brain y keeps working").0, 200);
    let (dx, dz) = (o.store_file(&xs), o.store_file(&zs));
    // Damage both files while the owner is stopped, as a bad disk would.
    let o = stopped_then(o, || {
        assert!(damage_pages_holding(&dx, "zzmarker3") >= 1);
        assert!(damage_pages_holding(&dz, "zzmarker3") >= 1);
    });
    let (x, y, z) = (o.caller_at(&xs), o.caller_at(&ys), o.caller_at(&zs));
    let damaged_hash = sha(&dx);

    // A read of the damaged brain: a typed refusal naming the fix, never a panic.
    let (s, v) = x.call("seek", json!({ "query": "release train" }));
    let (s, v) = if s == 200 {
        // The matched rows may sit on undamaged pages; the whole listing cannot.
        let token = o.founder_token();
        let r = o
            .http
            .get(format!("{}/api/claims", o.url))
            .query(&[("brain", xs.as_str())])
            .header("Medulla-Founder-Token", token)
            .send()
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().unwrap())
    } else {
        (s, v)
    };
    assert_eq!(s, 503, "{v}");
    assert_eq!(v["error"]["code"], "store_damaged", "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("quarantined") && msg.contains("medulla restore"),
        "the refusal names the fix: {msg}"
    );

    // No write lands on top of it.
    let (s, v) = memorize(&x, "after damage", "must not be written");
    assert_eq!(s, 503, "{v}");
    assert_eq!(v["error"]["code"], "store_damaged", "{v}");
    assert_eq!(sha(&dx), damaged_hash, "the damaged file was not written");

    // The other brain never noticed.
    assert_eq!(memorize(&y, "y2", "still fine").0, 200);
    let (s, v) = y.call("seek", json!({ "query": "working" }));
    assert_eq!(s, 200, "{v}");

    // The deep check finds the damage in the brain nothing has asked for yet (its open
    // or its check), and passes the clean stores.
    let (s, d) = o.get("/api/doctor?deep=true");
    assert_eq!(s, 200, "{d}");
    let deep = d["deep"].as_array().expect("deep rows");
    let verdict = |store: &str| {
        deep.iter()
            .find(|r| r["store"] == store)
            .map(|r| r["verdict"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(verdict(&zs).as_deref(), Some("damaged"), "{d}");
    assert_eq!(verdict(&ys).as_deref(), Some("clean"), "{d}");
    assert_eq!(verdict("medulla").as_deref(), Some("clean"), "{d}");
    let (s, v) = memorize(&z, "after deep", "must not be written");
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (503, Some("store_damaged")),
        "{v}"
    );

    // Every listing names it.
    let row = o.instance(&xs);
    assert_eq!(row["fault"]["kind"], "damaged", "{row}");
    let row = o.instance(&ys);
    assert!(row.get("fault").is_none(), "{row}");
    let (_, d) = o.get("/api/doctor");
    assert_eq!(
        broken(&d, &xs).expect("doctor names it")["fault"],
        "damaged"
    );

    // A restart keeps it quarantined.
    let (o, _) = o.restart(OwnerOptions::default());
    let (x, y) = (o.caller_at(&xs), o.caller_at(&ys));
    let (s, v) = memorize(&x, "after restart", "must not be written");
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (503, Some("store_damaged")),
        "{v}"
    );
    assert_eq!(sha(&dx), damaged_hash);
    assert_eq!(memorize(&y, "y3", "still fine").0, 200);
}

#[test]
fn a_store_file_moved_away_under_the_owner_takes_no_write_until_it_is_back() {
    let o = Owner::start();
    let b = o.brain("p");
    let cr = b.root.clone();
    for i in 0..3 {
        assert_eq!(
            memorize(
                &b,
                &format!("before {i}"),
                "written while the file was in place"
            )
            .0,
            200
        );
    }
    let file = o.store_file(&cr);
    let aside = file.with_extension("redb.aside");
    std::fs::rename(&file, &aside).unwrap();

    // A write would land in a file nobody will open again: refused, naming the path.
    let (s, v) = memorize(&b, "while moved", "would be lost");
    assert_eq!(s, 503, "{v}");
    assert_eq!(v["error"]["code"], "io", "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("store.redb") && msg.contains("removed"),
        "{msg}"
    );
    assert!(!file.exists(), "no empty store was made in its place");
    let (_, d) = o.get("/api/doctor");
    assert_eq!(
        broken(&d, &cr).expect("doctor names it")["fault"],
        "io",
        "{d}"
    );
    // Reads still serve what the store holds.
    let (s, v) = b.call("seek", json!({ "query": "written while the file" }));
    assert_eq!(s, 200, "{v}");

    // Put back: the brain serves writes again, with no restart, and lost nothing.
    std::fs::rename(&aside, &file).unwrap();
    let started = Instant::now();
    loop {
        let (s, v) = memorize(&b, "after", "the file is back");
        if s == 200 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "recovers: {s} {v}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let live: Vec<String> = o
        .claims(&cr)
        .iter()
        .filter_map(|c| c["label"].as_str().map(String::from))
        .collect();
    for l in ["before 0", "before 1", "before 2", "after"] {
        assert!(live.iter().any(|x| x == l), "{l} in {live:?}");
    }
    assert!(!live.iter().any(|x| x == "while moved"), "{live:?}");
}

#[test]
fn a_quarantined_brain_comes_back_whole_from_a_backup() {
    let o = Owner::start();
    let x = o.brain("x");
    let xs = x.root.clone();
    for i in 0..40 {
        let text = format!("claim {i}: the cache is warmed at boot zzmarker{i}");
        assert_eq!(memorize(&x, &format!("x{i}"), &text).0, 200);
    }
    let (s, b) = o.founder_call("backup", json!({}), &[]);
    assert_eq!(s, 200, "{b}");
    let backup_dir = b["dir"]
        .as_str()
        .expect("the backup's directory")
        .to_string();
    let store = o.store_file(&xs);
    let o = stopped_then(o, || {
        assert!(damage_pages_holding(&store, "zzmarker3") >= 1);
    });
    let (s, v) = memorize(&o.caller_at(&xs), "while damaged", "refused");
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (503, Some("store_damaged")),
        "{v}"
    );

    // The fix the refusal names: restore that brain with the owner stopped.
    let home = o.home.path().to_path_buf();
    let o = stopped_then(o, || {
        let out = crate::cli::medulla_cmd(&home, &home)
            .args(["restore", backup_dir.as_str(), "--brain", xs.as_str()])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
    assert!(
        !store.with_file_name("QUARANTINE.json").exists(),
        "the quarantine went aside with the damaged store"
    );
    let (s, v) = memorize(
        &o.caller_at(&xs),
        "after restore",
        "the brain is whole again",
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        o.claims(&xs).len(),
        41,
        "every claim of the backup, and the new one"
    );
}
