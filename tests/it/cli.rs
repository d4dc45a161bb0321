//! The `medulla` command line, run as the real binary against a real owner (and without
//! one). It finds the owner the way a user's shell does: `MEDULLA_HOME` names the home,
//! whose `owner.json` holds the URL and whose `founder.token` makes the CLI the founder.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{Owner, BIN};

/// One run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// A finished process's exit code and output, as text.
    pub fn of(out: std::process::Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|_| panic!("not JSON:\n{}\n{}", self.stdout, self.stderr))
    }
}

/// The binary with the environment of a user whose shell points at the owner's home;
/// nothing in the test runner's environment may force colour or another owner.
pub fn medulla_cmd(home: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(cwd)
        .env("MEDULLA_HOME", home)
        // A command that finds no owner says so here, as before autostart: a test that
        // wants one started runs on a home of its own (tests/it/autostart.rs).
        .env("MEDULLA_NO_AUTOSTART", "1")
        .env_remove("MEDULLA_URL")
        .env_remove("MEDULLA_BRAIN")
        // The clients' own homes are the test's HOME, never the machine's.
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("COLUMNS");
    cmd
}

/// Run `medulla ARGS` in `cwd`. Its output is a pipe, never a terminal, so no ANSI code
/// may appear in it (issue 15, item 10).
pub fn medulla(o: &Owner, cwd: &Path, args: &[&str]) -> Run {
    let out = medulla_cmd(o.home.path(), cwd).args(args).output().unwrap();
    let r = Run::of(out);
    assert!(
        !r.stdout.contains('\u{1b}') && !r.stderr.contains('\u{1b}'),
        "ANSI codes off a terminal from {args:?}:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    r
}

/// `medulla ARGS --json`: the exit code and the owner's answer.
fn cli(o: &Owner, cwd: &Path, args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.push("--json");
    let r = medulla(o, cwd, &a);
    (r.code, r.json())
}

/// Human output: every line fits 80 columns and none is raw JSON.
fn assert_readable(r: &Run) {
    for line in r.stdout.lines().chain(r.stderr.lines()) {
        // A URL alone on its line is copied whole: it may be wider.
        if line.starts_with("http://") && !line.contains(' ') {
            continue;
        }
        assert!(
            line.chars().count() <= 80,
            "a line wider than 80 columns:\n{line}\n---\n{}",
            r.stdout
        );
        assert!(
            !line.trim_start().starts_with('{') && !line.contains("{\""),
            "raw JSON in human output:\n{}",
            r.stdout
        );
    }
}

fn ok(r: &Run) {
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn the_cli_routes_by_working_directory() {
    let o = Owner::start();
    let p = o.project("proj");
    let sub = o.project("proj/src");
    let (code, v) = cli(&o, &sub, &["bootstrap", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = cli(
        &o,
        &sub,
        &[
            "memorize",
            "--label",
            "from cli",
            "--text",
            "the cli writes here",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["claim"]["source_agent"], "human:founder");
    assert_eq!(v["brain"]["root"], p.to_str().unwrap());
    let (code, v) = cli(&o, &sub, &["seek", "cli", "writes"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"][0]["label"], "from cli");
    let (code, v) = cli(&o, &sub, &["history", "from-cli"]);
    assert_eq!(code, 0);
    assert_eq!(v["versions"].as_array().unwrap().len(), 1);
    let (code, v) = cli(&o, &sub, &["learn", "from-cli", "correct"]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = cli(&o, &sub, &["brains"]);
    assert_eq!(code, 0);
    assert_eq!(v["instances"].as_array().unwrap().len(), 1);
    let (code, v) = cli(&o, &sub, &["status"]);
    assert_eq!(code, 0);
    assert_eq!(v["status"], "ok");
    // A refused write exits non-zero with the typed error.
    let elsewhere = o.project("elsewhere");
    let (code, v) = cli(&o, &elsewhere, &["memorize", "--label", "x", "--text", "y"]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["code"], "unbootstrapped");
}

#[test]
fn no_owner_running_exits_2_naming_the_command_that_starts_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["status"])
        .current_dir(dir.path())
        .env("MEDULLA_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("medulla serve"), "{err}");
}

/// Item 7: with `--json` and no owner, stdout still carries a JSON error object.
#[test]
fn no_owner_with_json_prints_a_json_error_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["status", "--json"][..], &["seek", "x", "--json"]] {
        let out = medulla_cmd(dir.path(), dir.path())
            .args(args)
            .env("MEDULLA_URL", "http://127.0.0.1:9")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let v: Value = serde_json::from_slice(&out.stdout).expect("a JSON error on stdout");
        assert_eq!(v["error"]["code"], "owner_not_running");
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("medulla serve"));
    }
}

/// Item 1: `.` and every relative path argument reach the owner absolute.
#[test]
fn relative_paths_are_sent_absolute() {
    let o = Owner::start();
    let p = o.project("proj");
    let other = o.project("other");
    ok(&medulla(&o, &p, &["bootstrap"]));
    ok(&medulla(&o, &p, &["bootstrap", "../other"]));
    // The README's own line.
    let (code, v) = cli(
        &o,
        &p,
        &["report", "--class", "bug", "--repo", ".", "--what", "a bug"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["filed"]["to"], "project", "{v}");
    assert_eq!(v["filed"]["repo"], p.to_str().unwrap());
    let (code, v) = cli(&o, &p, &["mailbox", "show", "--brain", "."]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["served_brain"], p.to_str().unwrap());
    assert_eq!(v["letters"].as_array().unwrap().len(), 1);
    ok(&medulla(
        &o,
        &p,
        &["memorize", "--label", "l", "--text", "t"],
    ));
    let (code, v) = cli(&o, &p, &["export", "../out", "--brain", "."]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["dir"],
        o.projects
            .path()
            .canonicalize()
            .unwrap()
            .join("out")
            .to_str()
            .unwrap()
    );
    let (code, v) = cli(&o, &p, &["import", "../out", "--brain", "../other"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["target"], other.to_str().unwrap());
    assert_eq!(v["imported_live"], 1, "{v}");
    let (code, v) = cli(&o, &p, &["acts", "--brain", "../other"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["store"], other.to_str().unwrap());
}

/// Item 2: bootstrap says what it did, and with a PATH the working directory does not
/// matter, even one that no longer exists.
#[test]
fn bootstrap_says_what_it_did_whatever_the_working_directory() {
    let o = Owner::start();
    let p = o.project("proj");
    let gone = o.project("gone");
    let script = format!(
        "cd '{}' && rmdir '{}' && exec '{BIN}' bootstrap '{}'",
        gone.display(),
        gone.display(),
        p.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(o.projects.path())
        .env("MEDULLA_HOME", o.home.path())
        .env("MEDULLA_NO_AUTOSTART", "1")
        .env_remove("MEDULLA_URL")
        .env_remove("MEDULLA_BRAIN")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    let first = Run::of(out);
    ok(&first);
    assert!(
        first.stdout.starts_with("created brain"),
        "{}",
        first.stdout
    );
    assert!(first.stdout.contains(p.to_str().unwrap()));
    assert_eq!(first.stderr, "", "nothing to complain about");
    let again = medulla(&o, o.projects.path(), &["bootstrap", p.to_str().unwrap()]);
    ok(&again);
    assert!(again.stdout.contains("already exists"), "{}", again.stdout);
    assert!(!again.stdout.contains("created"), "{}", again.stdout);
    assert_eq!(again.stderr, "");
}

/// Item 3: every row leads with the slug `history`, `learn`, `promote`, `purge` take.
#[test]
fn rows_show_the_slug() {
    let o = Owner::start();
    let p = o.project("proj");
    ok(&medulla(&o, &p, &["bootstrap"]));
    ok(&medulla(
        &o,
        &p,
        &[
            "memorize",
            "--label",
            "Release Build",
            "--text",
            "use cargo build --release",
        ],
    ));
    for args in [
        &["seek", "release"][..],
        &["north", "release", "build"],
        &["delegate", "cut", "a", "release"],
        &["history", "release-build"],
    ] {
        let r = medulla(&o, &p, args);
        ok(&r);
        assert!(
            r.stdout.contains("release-build"),
            "{args:?}:\n{}",
            r.stdout
        );
        assert_readable(&r);
    }
}

/// Item 5: `serve` lists only its own flags; every value set is spelled out.
#[test]
fn help_lists_values_and_serve_has_no_client_flags() {
    let help = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let serve = help(&["serve", "--help"]);
    assert!(
        !serve.contains("--json") && !serve.contains("--url"),
        "{serve}"
    );
    assert!(serve.contains("--no-model"));
    let report = help(&["report", "--help"]);
    for v in [
        "bug",
        "friction",
        "idea",
        "memory_misdelivery",
        "note",
        "triage",
        "receipt",
        "external",
        "leak",
        "false_absence",
        "wrong_store_write",
        "misattribution",
        "vanished",
    ] {
        assert!(report.contains(v), "report --help lacks {v}:\n{report}");
    }
    assert!(help(&["seek", "--help"]).contains("all-brains"));
    let learn = help(&["learn", "--help"]);
    assert!(["correct", "partial", "wrong", "medulla"]
        .iter()
        .all(|v| learn.contains(v)));
    assert!(help(&["memorize", "--help"]).contains("verified"));
    // An unknown value is refused before anything is sent.
    let out = Command::new(BIN)
        .args(["report", "--class", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Item 6: `stop` stops the owner, waits until it is gone, and says so.
#[test]
fn stop_stops_the_owner_then_names_serve() {
    let mut o = Owner::start();
    let p = o.project("proj");
    let r = medulla(&o, &p, &["stop"]);
    ok(&r);
    assert!(r.stdout.contains("stopped"), "{}", r.stdout);
    let status = o.child.wait().expect("the owner exits");
    assert!(status.success(), "{status:?}");
    let r = medulla(&o, &p, &["stop"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("medulla serve"), "{}", r.stderr);
}

/// Item 7: doctor, mailbox, report and delegate read as sentences and tables.
#[test]
fn human_output_is_never_raw_json() {
    let o = Owner::start();
    let p = o.project("proj");
    ok(&medulla(&o, &p, &["bootstrap"]));
    let r = medulla(
        &o,
        &p,
        &[
            "report",
            "--class",
            "memory_misdelivery",
            "--kind",
            "leak",
            "--repo",
            ".",
            "--what",
            "another project's claim came back",
        ],
    );
    ok(&r);
    assert!(r.stdout.contains("filed into"), "{}", r.stdout);
    assert_readable(&r);
    let r = medulla(
        &o,
        &p,
        &[
            "report",
            "--class",
            "bug",
            "--repo",
            "/nowhere/repo",
            "--what",
            "x",
        ],
    );
    assert!(r.stdout.contains("pending:"), "{}", r.stdout);
    let r = medulla(&o, &p, &["doctor"]);
    ok(&r);
    assert_readable(&r);
    assert!(r.stdout.contains("leak"), "{}", r.stdout);
    assert!(r.stdout.contains("-W"), "the ISO week:\n{}", r.stdout);
    assert!(r.stdout.contains("1 letter waiting"), "{}", r.stdout);
    assert!(r.stdout.contains("1 on disk, 1 warm"), "{}", r.stdout);
    let r = medulla(&o, &p, &["mailbox", "show"]);
    ok(&r);
    assert_readable(&r);
    assert!(
        r.stdout.contains("1 open (1 wet ink, 0 in flight)"),
        "{}",
        r.stdout
    );
    let r = medulla(&o, &p, &["mailbox", "sweep"]);
    ok(&r);
    assert_readable(&r);
    ok(&medulla(
        &o,
        &p,
        &["memorize", "--label", "a", "--text", "release steps"],
    ));
    let (_, packet) = cli(&o, &p, &["delegate", "release"]);
    let ms = packet["sources"]["composed_ts"]
        .as_i64()
        .unwrap()
        .to_string();
    let r = medulla(&o, &p, &["delegate", "release"]);
    ok(&r);
    assert!(!r.stdout.contains(&ms), "the time in ms:\n{}", r.stdout);
    assert!(r.stdout.contains(" UTC"), "{}", r.stdout);
}

/// Item 8: `promote` without `--brain` promotes from the working directory's brain.
#[test]
fn promote_defaults_to_the_working_directorys_brain() {
    let o = Owner::start();
    let p = o.project("proj");
    ok(&medulla(&o, &p, &["bootstrap"]));
    ok(&medulla(
        &o,
        &p,
        &["memorize", "--label", "tabs", "--text", "indent with tabs"],
    ));
    let r = medulla(
        &o,
        &p,
        &["promote", "--claim", "tabs", "--reason", "holds everywhere"],
    );
    ok(&r);
    assert_readable(&r);
    assert_eq!(o.claims("medulla").len(), 1);
}

/// Item 9: duplicates are "already imported", not refusals; all refused exits non-zero;
/// counts are singular when they are one.
#[test]
fn import_tells_duplicates_from_refusals() {
    let o = Owner::start();
    let a = o.project("a");
    let b = o.project("b");
    ok(&medulla(&o, &a, &["bootstrap"]));
    ok(&medulla(&o, &b, &["bootstrap"]));
    ok(&medulla(
        &o,
        &a,
        &["memorize", "--label", "one", "--text", "first"],
    ));
    let r = medulla(&o, &a, &["export", "../dump", "--brain", "."]);
    ok(&r);
    assert!(
        r.stdout.contains("1 live claim and 0 history versions"),
        "{}",
        r.stdout
    );
    let r = medulla(&o, &b, &["import", "../dump", "--brain", "."]);
    ok(&r);
    assert!(r.stdout.contains("1 file read"), "{}", r.stdout);
    assert!(!r.stdout.contains("refused"), "{}", r.stdout);
    let r = medulla(&o, &b, &["import", "../dump", "--brain", "."]);
    ok(&r);
    assert!(r.stdout.contains("already imported"), "{}", r.stdout);
    assert!(!r.stdout.contains("refused"), "{}", r.stdout);
    assert_readable(&r);
    let bad = o.project("bad");
    std::fs::write(bad.join("x.light.md"), "no frontmatter here\n").unwrap();
    let r = medulla(&o, &b, &["import", "../bad", "--brain", "."]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("refused"), "{}", r.stdout);
    assert!(r.stdout.contains("unparseable"), "{}", r.stdout);
    // No progress bar off a terminal.
    assert_eq!(r.stderr, "");
    let out = Command::new(BIN)
        .args(["import", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("2026-07-04T10:00:00Z") && help.contains("milliseconds"),
        "{help}"
    );
}

/// Item 10: the owner's logs carry no colour off a terminal, and the no-model note is
/// said once.
#[test]
fn serve_logs_without_colour_and_notes_the_model_once() {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-model", "--home"])
        .arg(home.path())
        .env_remove("MEDULLA_LOG")
        .env_remove("CLICOLOR_FORCE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("medulla listening on http://"), "{first}");
    let stop = medulla_cmd(home.path(), home.path())
        .arg("stop")
        .output()
        .unwrap();
    assert_eq!(stop.status.code(), Some(0), "{stop:?}");
    assert!(child.wait().unwrap().success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(!logs.contains('\u{1b}'), "ANSI in the logs:\n{logs}");
    let all = format!("{first}{rest}{logs}");
    assert_eq!(all.matches("the model is disabled").count(), 1, "{all}");
}

/// Item 11: a fresh home says how to begin; one is singular; a bad limit reads well.
#[test]
fn fresh_home_hint_plurals_and_a_bad_limit() {
    let o = Owner::start();
    let p = o.project("proj");
    let r = medulla(&o, &p, &["brains"]);
    ok(&r);
    assert!(r.stdout.contains("medulla bootstrap"), "{}", r.stdout);
    ok(&medulla(&o, &p, &["bootstrap"]));
    ok(&medulla(
        &o,
        &p,
        &["memorize", "--label", "x", "--text", "y"],
    ));
    let r = medulla(&o, &p, &["brains"]);
    assert!(
        r.stdout.contains("1 claim ") || r.stdout.contains("1 claim\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1 brain on disk"), "{}", r.stdout);
    let r = medulla(&o, &p, &["status"]);
    assert!(r.stdout.contains("1 brain,"), "{}", r.stdout);
    for r in [medulla(&o, &p, &["brains"]), r] {
        assert!(
            !r.stdout.contains("1 brains") && !r.stdout.contains("1 claims"),
            "{}",
            r.stdout
        );
        assert_readable(&r);
    }
    let r = medulla(&o, &p, &["seek", "x", "--limit", "0"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("from 1 to 200"), "{}", r.stderr);
    assert!(r.stderr.contains("[limit_out_of_range]"), "{}", r.stderr);
    assert_readable(&r);
}

/// Item 14: the founder acts on the medulla: doctrine birth, grading and demotion, boot
/// memory (whose medulla writes are not built yet, and say so).
#[test]
fn the_founder_acts_on_the_medulla() {
    let o = Owner::start();
    let p = o.project("proj");
    ok(&medulla(&o, &p, &["bootstrap"]));
    let r = medulla(
        &o,
        &p,
        &[
            "memorize",
            "--tier",
            "medulla",
            "--label",
            "test first",
            "--text",
            "write the test first",
        ],
    );
    ok(&r);
    assert!(r.stdout.contains("the medulla"), "{}", r.stdout);
    assert_eq!(o.claims("medulla").len(), 1);
    let r = medulla(
        &o,
        &p,
        &[
            "learn",
            "test-first",
            "wrong",
            "--tier",
            "medulla",
            "--note",
            "not always",
        ],
    );
    ok(&r);
    assert!(r.stdout.contains("demoted"), "{}", r.stdout);
    assert_eq!(o.claims("medulla").len(), 0);
    ok(&medulla(
        &o,
        &p,
        &["memorize", "--label", "local", "--text", "a project claim"],
    ));
    let r = medulla(&o, &p, &["learn", "local", "wrong"]);
    ok(&r);
    assert!(
        r.stdout.contains(&format!("{}'s brain", p.display())),
        "{}",
        r.stdout
    );
    ok(&medulla(&o, &p, &["kv", "set", "editor", "vim"]));
    let r = medulla(&o, &p, &["kv", "get", "editor"]);
    ok(&r);
    assert_eq!(r.stdout.trim(), "vim");
    let r = medulla(&o, &p, &["kv", "list"]);
    assert!(
        r.stdout.contains("editor") && r.stdout.contains("[project]"),
        "{}",
        r.stdout
    );
    ok(&medulla(&o, &p, &["kv", "delete", "editor"]));
    assert_eq!(medulla(&o, &p, &["kv", "get", "editor"]).code, 1);
    // The medulla's boot memory, through the audit actor.
    let r = medulla(
        &o,
        &p,
        &["kv", "set", "editor", "helix", "--tier", "medulla"],
    );
    ok(&r);
    assert_readable(&r);
    let r = medulla(&o, &p, &["kv", "get", "editor", "--tier", "medulla"]);
    ok(&r);
    assert_eq!(r.stdout.trim(), "helix");
}

/// Item 18: a store's act log, a page at a time, with the next page's command.
#[test]
fn acts_pages_with_a_hint() {
    let o = Owner::start();
    let p = o.project("proj");
    ok(&medulla(&o, &p, &["bootstrap"]));
    for l in ["a", "b", "c"] {
        ok(&medulla(&o, &p, &["memorize", "--label", l, "--text", "t"]));
    }
    let (code, v) = cli(&o, &p, &["acts", "--limit", "2"]);
    assert_eq!(code, 0, "{v}");
    let next = v["next_before"].as_u64().expect("a next page");
    let r = medulla(&o, &p, &["acts", "--limit", "2"]);
    ok(&r);
    assert!(
        r.stdout.contains(&format!("--limit 2 --before {next}")),
        "{}",
        r.stdout
    );
    assert_readable(&r);
    let r = medulla(
        &o,
        &p,
        &["acts", "--limit", "2", "--before", &next.to_string()],
    );
    ok(&r);
    assert!(r.stdout.contains("memorize"), "{}", r.stdout);
    let (code, v) = cli(&o, &p, &["acts", "--brain", "medulla"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["store"], "medulla");
}

/// Item 19: every client command answers `--json`; long text never breaks 80 columns;
/// completions for the usual shells; the Hall's ticket.
#[test]
fn every_command_has_json_and_fits_80_columns() {
    let o = Owner::start();
    let p = o.project(&format!("deep/{}/proj", "nested-directory/".repeat(6)));
    ok(&medulla(&o, &p, &["bootstrap"]));
    let long = "a claim whose text goes on and on ".repeat(20);
    ok(&medulla(
        &o,
        &p,
        &[
            "memorize",
            "--label",
            &"a long label ".repeat(10),
            "--text",
            &long,
        ],
    ));
    let slug = cli(&o, &p, &["seek"]).1["results"][0]["slug"]
        .as_str()
        .unwrap()
        .to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["status"],
        vec!["brains"],
        vec!["seek", "claim"],
        vec!["seek", "claim", "--tier", "all-brains"],
        vec!["history", &slug],
        vec!["north", "claim"],
        vec!["delegate", "claim"],
        vec!["audit"],
        vec!["acts"],
        vec!["kv", "list"],
        vec!["mailbox", "show"],
        vec!["mailbox", "sweep"],
        vec!["mailbox", "distribute"],
        vec!["doctor"],
        vec!["hall", "--no-open"],
        vec!["promote", "--claim", &slug, "--reason", "it holds"],
    ];
    for args in &commands {
        let r = medulla(&o, &p, args);
        ok(&r);
        assert_readable(&r);
        let (code, v) = cli(&o, &p, args);
        assert_eq!(code, 0, "{args:?}: {v}");
        assert!(v.is_object(), "{args:?}");
    }
    let r = medulla(&o, &p, &["hall", "--no-open"]);
    assert!(r.stdout.contains("#ticket="), "{}", r.stdout);
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(BIN)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains("medulla") && script.contains("memorize"),
            "{shell}"
        );
    }
}

/// The installed binary can fetch the model and say where it is, without an owner.
#[test]
fn the_binary_fetches_the_model_and_says_where_it_is() {
    let dir = crate::common::model_dir();
    let status = |model_dir: &Path, json: bool| {
        let mut cmd = Command::new(BIN);
        cmd.args(["model", "status"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.env("MEDULLA_MODEL_DIR", model_dir).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = status(&dir, false);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("complete"), "{text}");
    let (code, text) = status(&dir, true);
    assert_eq!(code, 0, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["found"], dir.to_string_lossy().as_ref(), "{v}");

    let empty = tempfile::tempdir().unwrap();
    let (code, text) = status(empty.path(), false);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("medulla model fetch"), "{text}");

    // A complete directory is left alone, and the answer says a running owner needs a
    // restart to use it.
    let out = Command::new(BIN)
        .args(["model", "fetch", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("next start"), "{text}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `seek` and `north` take the recall filters and `--detail` on the command line.
#[test]
fn seek_and_north_take_the_recall_filters() {
    let o = Owner::start();
    let x = o.project("x");
    ok(&medulla(&o, &x, &["bootstrap"]));
    for (label, agent, strength) in [
        ("cache keys", "claude:maker", "observed"),
        ("cache eviction", "codex:reviewer", "verified"),
    ] {
        ok(&medulla(
            &o,
            &x,
            &[
                "memorize",
                "--label",
                label,
                "--text",
                &format!("the {label} rule of the cache layer"),
                "--agent",
                agent,
                "--strength",
                strength,
            ],
        ));
    }
    let slugs = |v: &Value| {
        let mut s: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["slug"].as_str().unwrap().to_string())
            .collect();
        s.sort();
        s
    };
    let (code, v) = cli(&o, &x, &["seek", "cache", "--agent", "codex"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(slugs(&v), ["cache-eviction"], "{v}");
    let (_, v) = cli(&o, &x, &["seek", "cache", "--min-strength", "verified"]);
    assert_eq!(slugs(&v), ["cache-eviction"], "{v}");
    let (_, v) = cli(
        &o,
        &x,
        &["seek", "cache", "--since", "2001-01-01", "--detail"],
    );
    assert_eq!(slugs(&v), ["cache-eviction", "cache-keys"], "{v}");
    assert!(v["results"][0]["content_hash"].is_string(), "{v}");
    let (_, v) = cli(&o, &x, &["seek", "cache", "--until", "2001-01-01"]);
    assert_eq!(slugs(&v), Vec::<String>::new(), "{v}");
    assert_eq!(v["memory_exists"]["project"], 2, "{v}");
    let (_, v) = cli(
        &o,
        &x,
        &["north", "the cache layer", "--agent", "claude:maker"],
    );
    let north: Vec<&str> = v["project"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["slug"].as_str().unwrap())
        .collect();
    assert_eq!(north, ["cache-keys"], "{v}");
    // A time that is not one is refused before anything is sent, naming the forms.
    let r = medulla(&o, &x, &["seek", "cache", "--since", "last tuesday"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("ISO 8601"), "{}", r.stderr);
    // The human output names the note when nothing is left.
    let r = medulla(&o, &x, &["seek", "cache", "--agent", "gemini"]);
    ok(&r);
    assert!(r.stdout.contains("memory exists"), "{}", r.stdout);
}
