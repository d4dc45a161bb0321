//! `medulla connect` / `disconnect` write each agent client's own file in its own shape,
//! merged with what is there, and check the connection through the transport written;
//! `medulla prime` gives a session-start hook what to know, and never breaks a session.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::Owner;

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `medulla ARGS` in `cwd` with `$HOME` at `home` (the user's client files go there).
fn run(o: &Owner, home: &Path, cwd: &Path, args: &[&str]) -> Ran {
    let out = medulla_cmd(o.home.path(), cwd)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .args(args)
        .output()
        .unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json_at(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{} is JSON: {e}", path.display()))
}

/// Expected file, keys to the entry, and the entry, for one client and scope.
struct Case {
    client: &'static str,
    scope: &'static str,
    file: std::path::PathBuf,
    json: bool,
    keys: &'static [&'static str],
    expect: Value,
}

#[test]
fn every_client_gets_its_own_file_in_its_shape_merged_and_checked() {
    let o = Owner::start();
    let root = o.project("app");
    o.bootstrap(&root);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let rs = root.to_string_lossy().to_string();
    let url = format!("{}/mcp", o.url);
    let bin = crate::common::BIN;
    // A project file is committed: its caller root is what the client expands, never
    // this machine's path.
    let headers =
        |root: &str, agent: &str| json!({ "Medulla-Caller-Root": root, "Medulla-Agent": agent });
    let bridge = json!({ "command": bin, "args": ["bridge"] });
    let cases = vec![
        Case {
            client: "claude-code",
            scope: "project",
            file: root.join(".mcp.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: json!({ "type": "http", "url": url, "headers": headers("${PWD}", "claude:maker") }),
        },
        Case {
            client: "claude-code",
            scope: "user",
            file: h.join(".claude.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: json!({ "type": "stdio", "command": bin, "args": ["bridge"] }),
        },
        Case {
            client: "claude-desktop",
            scope: "user",
            file: h.join(".config/Claude/claude_desktop_config.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: bridge.clone(),
        },
        Case {
            client: "codex",
            scope: "project",
            file: root.join(".codex/config.toml"),
            json: false,
            keys: &["mcp_servers", "medulla"],
            expect: json!({ "url": url, "http_headers": { "Medulla-Agent": "codex:maker" },
                            "env_http_headers": { "Medulla-Caller-Root": "PWD" } }),
        },
        Case {
            client: "codex",
            scope: "user",
            file: h.join(".codex/config.toml"),
            json: false,
            keys: &["mcp_servers", "medulla"],
            expect: bridge.clone(),
        },
        Case {
            client: "cursor",
            scope: "project",
            file: root.join(".cursor/mcp.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: json!({ "url": url, "headers": headers("${workspaceFolder}", "cursor:maker") }),
        },
        Case {
            client: "cursor",
            scope: "user",
            file: h.join(".cursor/mcp.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: bridge.clone(),
        },
        Case {
            client: "vscode",
            scope: "project",
            file: root.join(".vscode/mcp.json"),
            json: true,
            keys: &["servers", "medulla"],
            expect: json!({ "type": "http", "url": url, "headers": headers("${workspaceFolder}", "copilot:maker") }),
        },
        Case {
            client: "vscode",
            scope: "user",
            file: h.join(".config/Code/User/mcp.json"),
            json: true,
            keys: &["servers", "medulla"],
            expect: json!({ "type": "stdio", "command": bin, "args": ["bridge"] }),
        },
        Case {
            client: "gemini",
            scope: "project",
            file: root.join(".gemini/settings.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: json!({ "httpUrl": url, "headers": headers("${PWD}", "gemini:maker"),
                            "trust": true, "excludeTools": ["purge"] }),
        },
        Case {
            client: "gemini",
            scope: "user",
            file: h.join(".gemini/settings.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: json!({ "command": bin, "args": ["bridge"], "trust": true, "excludeTools": ["purge"] }),
        },
        Case {
            client: "opencode",
            scope: "project",
            file: root.join("opencode.json"),
            json: true,
            keys: &["mcp", "medulla"],
            expect: json!({ "type": "remote", "url": url, "enabled": true,
                            "headers": headers("{env:PWD}", "opencode:maker") }),
        },
        Case {
            client: "opencode",
            scope: "user",
            file: h.join(".config/opencode/opencode.json"),
            json: true,
            keys: &["mcp", "medulla"],
            expect: json!({ "type": "local", "command": [bin, "bridge"], "enabled": true }),
        },
        Case {
            client: "windsurf",
            scope: "user",
            file: h.join(".codeium/windsurf/mcp_config.json"),
            json: true,
            keys: &["mcpServers", "medulla"],
            expect: bridge.clone(),
        },
    ];
    for c in &cases {
        // The user's own server is already there, and stays.
        std::fs::create_dir_all(c.file.parent().unwrap()).unwrap();
        let theirs = if c.json {
            let mut doc = json!({ "theme": "dark" });
            doc[c.keys[0]] = json!({ "theirs": { "command": "their-server" } });
            serde_json::to_string_pretty(&doc).unwrap()
        } else {
            format!(
                "# my settings\nmodel = \"o4\"\n\n[{}.theirs]\ncommand = \"their-server\"\n",
                c.keys[0]
            )
        };
        std::fs::write(&c.file, &theirs).unwrap();

        let dry = run(
            &o,
            h,
            &root,
            &["connect", c.client, "--scope", c.scope, "--dry-run"],
        );
        assert_eq!(
            dry.code, 0,
            "{} {}: {}{}",
            c.client, c.scope, dry.stdout, dry.stderr
        );
        assert!(
            dry.stdout.contains("+++") && dry.stdout.contains("medulla"),
            "a diff: {}",
            dry.stdout
        );
        assert_eq!(
            std::fs::read_to_string(&c.file).unwrap(),
            theirs,
            "--dry-run writes nothing"
        );

        let r = run(&o, h, &root, &["connect", c.client, "--scope", c.scope]);
        assert_eq!(
            r.code, 0,
            "{} {}: {}{}",
            c.client, c.scope, r.stdout, r.stderr
        );
        assert!(
            r.stdout.contains("checked:"),
            "the connection was checked: {}",
            r.stdout
        );
        let text = std::fs::read_to_string(&c.file).unwrap();
        let doc: Value = if c.json {
            json_at(&c.file)
        } else {
            assert!(text.contains("# my settings"), "comments kept: {text}");
            let t: toml::Table = text.parse().unwrap();
            serde_json::to_value(t).unwrap()
        };
        assert_eq!(
            doc[c.keys[0]][c.keys[1]], c.expect,
            "{} {}: {text}",
            c.client, c.scope
        );
        assert_eq!(
            doc[c.keys[0]]["theirs"]["command"], "their-server",
            "their server kept: {text}"
        );
        assert!(
            !text.contains(&rs),
            "no file connect writes names this machine's path: {text}"
        );

        // Again: nothing changes, byte for byte.
        let again = run(
            &o,
            h,
            &root,
            &["connect", c.client, "--scope", c.scope, "--no-check"],
        );
        assert!(
            again.stdout.contains("already connected"),
            "{}",
            again.stdout
        );
        assert_eq!(std::fs::read_to_string(&c.file).unwrap(), text);

        // Disconnect takes out only medulla's entry.
        let d = run(&o, h, &root, &["disconnect", c.client, "--scope", c.scope]);
        assert_eq!(d.code, 0, "{}{}", d.stdout, d.stderr);
        let text = std::fs::read_to_string(&c.file).unwrap();
        assert!(!text.contains("bridge") && !text.contains("/mcp"), "{text}");
        assert!(text.contains("their-server"), "{text}");
    }

    // A client with no project scope says which scope it has.
    let r = run(&o, h, &root, &["connect", "windsurf", "--scope", "project"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("--scope user"), "{}", r.stderr);

    // A malformed file is left alone, with the fix named.
    std::fs::write(root.join(".mcp.json"), "{ not json").unwrap();
    let r = run(&o, h, &root, &["connect", "claude-code"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("not valid JSON"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(root.join(".mcp.json")).unwrap(),
        "{ not json"
    );
}

#[test]
fn connect_bootstraps_installs_the_hook_and_says_when_the_owner_is_not_there() {
    let o = Owner::start();
    let root = o.project("fresh");
    let home = tempfile::tempdir().unwrap();
    let r = run(
        &o,
        home.path(),
        &root,
        &["connect", "claude-code", "--bootstrap", "--hooks"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (_, list) = o.get("/api/instances");
    assert!(
        list.to_string().contains(&*root.to_string_lossy()),
        "bootstrapped: {list}"
    );
    let settings = json_at(&root.join(".claude/settings.json"));
    let hook = &settings["hooks"]["SessionStart"][0];
    assert_eq!(hook["matcher"], "startup|resume|clear|compact");
    let cmd = hook["hooks"][0]["command"].as_str().unwrap();
    assert!(cmd.ends_with("prime --client claude"), "{cmd}");

    // Codex: its hooks in the user's hooks.json (every checkout runs them), trusted there as
    // Codex's own review records it; the project's config keeps the person's lines and
    // loses only the deprecated flag an earlier medulla wrote.
    std::fs::create_dir_all(root.join(".codex")).unwrap();
    std::fs::write(
        root.join(".codex/config.toml"),
        "# mine\n[features]\nweb_search = true\ncodex_hooks = true\n",
    )
    .unwrap();
    let r = run(
        &o,
        home.path(),
        &root,
        &["connect", "codex", "--hooks", "--no-check"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!root.join(".codex/hooks.json").exists());
    let user_hooks = home.path().join(".codex/hooks.json");
    let hooks = json_at(&user_hooks);
    let g = &hooks["hooks"]["SessionStart"][0];
    assert_eq!(g["matcher"], "startup|resume|clear");
    assert!(g["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("prime --client codex"));
    // Its end-of-turn nudge: Codex's `Stop` (issue 53).
    let stop = &hooks["hooks"]["Stop"][0]["hooks"][0];
    assert!(
        stop["command"]
            .as_str()
            .unwrap()
            .ends_with("nudge --client codex"),
        "{hooks}"
    );
    let trust = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
    let t: toml::Table = trust.parse().unwrap();
    let state = t["hooks"]["state"].as_table().expect("hooks.state");
    let key = format!("{}:session_start:0:0", user_hooks.display());
    assert!(
        state[&key]["trusted_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:")),
        "{trust}"
    );
    assert_eq!(
        state.len(),
        4,
        "prime, nudge, the prompt and file hints: {trust}"
    );
    let config = std::fs::read_to_string(root.join(".codex/config.toml")).unwrap();
    let t: toml::Table = config.parse().unwrap();
    assert_eq!(t["features"].get("codex_hooks"), None, "{config}");
    assert_eq!(
        t["features"]["web_search"].as_bool(),
        Some(true),
        "{config}"
    );
    assert!(
        config.contains("# mine") && t["mcp_servers"]["medulla"]["url"].is_str(),
        "{config}"
    );
    // `disconnect` takes the hooks and their trust out, the person's lines kept.
    let r = run(&o, home.path(), &root, &["disconnect", "codex"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let left = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
    assert!(!left.contains("trusted_hash"), "{left}");
    let left = std::fs::read_to_string(&user_hooks).unwrap();
    assert!(!left.contains("--client codex"), "{left}");

    // Gemini: one settings.json holds both its server and its hook; neither drops the other.
    let r = run(
        &o,
        home.path(),
        &root,
        &["connect", "gemini", "--hooks", "--no-check"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let g = json_at(&root.join(".gemini/settings.json"));
    assert!(g["mcpServers"]["medulla"]["httpUrl"].is_string(), "{g}");
    let cmd = g["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(cmd.ends_with("prime --client gemini"), "{g}");
    // Its end-of-turn nudge: Gemini CLI's `AfterAgent`, its timeout in milliseconds.
    let after = &g["hooks"]["AfterAgent"][0]["hooks"][0];
    assert!(
        after["command"]
            .as_str()
            .unwrap()
            .ends_with("nudge --client gemini"),
        "{g}"
    );
    assert_eq!(after["timeout"], 5000, "{g}");
    let again = run(
        &o,
        home.path(),
        &root,
        &["connect", "gemini", "--hooks", "--no-check"],
    );
    assert!(
        again.stdout.contains("already connected"),
        "{}",
        again.stdout
    );
    assert_eq!(
        json_at(&root.join(".gemini/settings.json")),
        g,
        "idempotent"
    );

    // The hook the client will run: it primes this session.
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Release steps", "text": "release with make release, never by hand", "strength": "verified" }),
        &[("Medulla-Caller-Root", &*root.to_string_lossy()), ("Medulla-Agent", "claude:maker")],
    );
    assert_eq!(s, 200, "{v}");
    let p = run(&o, home.path(), &root, &["prime", "--client", "claude"]);
    assert_eq!(p.code, 0);
    let out: Value = serde_json::from_str(&p.stdout).expect("hook JSON");
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("release-steps") && ctx.contains("make release"),
        "{ctx}"
    );
    assert!(ctx.contains("[tier project]"), "labelled: {ctx}");

    // With the owner gone the entry is still written and the check says why it failed.
    let mut o = o;
    o.terminate();
    let other = o.project("other");
    let r = Command::new(crate::common::BIN)
        .current_dir(&other)
        .env("HOME", home.path())
        .env("MEDULLA_HOME", o.home.path())
        .env("MEDULLA_NO_AUTOSTART", "1")
        .args(["connect", "cursor"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("medulla serve"), "{err}");
    assert!(other.join(".cursor/mcp.json").exists());
}

#[test]
fn prime_never_breaks_a_session_and_fits_its_budget() {
    let o = Owner::start();
    let home = tempfile::tempdir().unwrap();
    // No brain covers the directory: nothing, exit 0.
    let nowhere = o.project("nowhere");
    let r = run(&o, home.path(), &nowhere, &["prime"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);

    // A big brain: the context stays within 8 KB and is labelled.
    let root = o.project("big");
    o.bootstrap(&root);
    let cr = root.to_string_lossy().to_string();
    for i in 0..120 {
        let (s, v) = o.call(
            "memorize",
            json!({ "label": format!("fact {i}"), "text": format!("fact number {i} about the build {}", "words ".repeat(30)) }),
            &[("Medulla-Caller-Root", cr.as_str()), ("Medulla-Agent", "claude:maker")],
        );
        assert_eq!(s, 200, "{v}");
    }
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "house style", "text": "errors are lowercase and name the fix", "tier": "medulla" }),
        &[("Medulla-Caller-Root", cr.as_str()), ("Medulla-Agent", "claude:orchestrator")],
    );
    assert_eq!(s, 200, "{v}");
    let started = std::time::Instant::now();
    let r = run(&o, home.path(), &root, &["prime"]);
    let took = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() <= 8 * 1024, "{} bytes", r.stdout.len());
    assert!(
        r.stdout.contains("[tier medulla]") && r.stdout.contains("house-style"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("120 live claims"), "{}", r.stdout);
    eprintln!("prime took {took:?} (a debug build, process start included)");

    // No owner at all: nothing, exit 0.
    let mut o = o;
    o.terminate();
    let r = run(&o, home.path(), &root, &["prime", "--client", "claude"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
}

#[test]
fn sync_writes_the_instruction_files_and_never_clobbers_a_persons_edit() {
    let o = Owner::start_with(crate::common::OwnerOptions {
        config_toml: Some("project_secrets = \"flag\"\n".into()),
        ..Default::default()
    });
    let root = o.project("repo");
    o.bootstrap(&root);
    let cr = root.to_string_lossy().to_string();
    let h = |agent: &'static str| {
        [
            ("Medulla-Caller-Root", cr.clone()),
            ("Medulla-Agent", agent.to_string()),
        ]
    };
    let memorize =
        |label: &str, text: &str, strength: &str, tier: Option<&str>, agent: &'static str| {
            let hv = h(agent);
            let hs: Vec<(&str, &str)> = hv.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (s, v) = o.call(
                "memorize",
                json!({ "label": label, "text": text, "strength": strength, "tier": tier }),
                &hs,
            );
            assert_eq!(s, 200, "{v}");
        };
    memorize(
        "Release steps",
        "release with make release, never by hand",
        "verified",
        None,
        "claude:maker",
    );
    memorize(
        "Flaky test",
        "the timezone test is flaky",
        "observed",
        None,
        "claude:maker",
    );
    memorize(
        "Deploy token",
        "the deploy token is ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "verified",
        None,
        "claude:maker",
    );
    memorize(
        "House style",
        "errors are lowercase and name the fix",
        "verified",
        Some("medulla"),
        "claude:orchestrator",
    );
    std::fs::write(
        root.join("AGENTS.md"),
        "# Agents\n\nRun the tests before you push.\n",
    )
    .unwrap();
    std::fs::write(root.join("CLAUDE.md"), "# Claude\n").unwrap();
    let home = tempfile::tempdir().unwrap();

    let r = run(&o, home.path(), &root, &["sync"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let agents = std::fs::read_to_string(root.join("AGENTS.md")).unwrap();
    assert!(
        agents.starts_with("# Agents\n\nRun the tests before you push.\n"),
        "{agents}"
    );
    assert!(
        agents.contains("<!-- BEGIN MEDULLA v1 hash:sha256:")
            && agents.contains("<!-- END MEDULLA -->"),
        "{agents}"
    );
    assert!(
        agents.contains("`release-steps`") && agents.contains("`house-style`"),
        "{agents}"
    );
    assert!(
        !agents.contains("flaky"),
        "below the strength floor: {agents}"
    );
    assert!(
        !agents.contains("ghp_"),
        "a secret never reaches a committed file: {agents}"
    );
    assert!(
        r.stderr.contains("held back by the hygiene floor"),
        "{}",
        r.stderr
    );
    assert!(std::fs::read_to_string(root.join("CLAUDE.md"))
        .unwrap()
        .contains("@AGENTS.md"));
    let cursor = std::fs::read_to_string(root.join(".cursor/rules/medulla.mdc")).unwrap();
    assert!(
        cursor.starts_with("---\n")
            && cursor.contains("alwaysApply: true")
            && cursor.contains("`release-steps`"),
        "{cursor}"
    );
    let copilot =
        std::fs::read_to_string(root.join(".github/instructions/medulla.instructions.md")).unwrap();
    assert!(copilot.contains("applyTo: \"**\""), "{copilot}");
    let windsurf = std::fs::read_to_string(root.join(".windsurf/rules/medulla.md")).unwrap();
    assert!(windsurf.contains("trigger: always_on"), "{windsurf}");

    // Nothing new: nothing rewritten, and the check passes.
    let before = std::fs::metadata(root.join("AGENTS.md"))
        .unwrap()
        .modified()
        .unwrap();
    let r = run(&o, home.path(), &root, &["sync"]);
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains("written"), "{}", r.stdout);
    assert_eq!(
        std::fs::metadata(root.join("AGENTS.md"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
    assert_eq!(run(&o, home.path(), &root, &["sync", "--check"]).code, 0);

    // New memory: the check fails and writes nothing.
    memorize(
        "Pool size",
        "the pool is capped at 20",
        "verified",
        None,
        "claude:maker",
    );
    let r = run(&o, home.path(), &root, &["sync", "--check"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("stale"), "{}", r.stdout);
    assert!(!std::fs::read_to_string(root.join("AGENTS.md"))
        .unwrap()
        .contains("pool-size"));

    // A person edits the block: sync refuses, proposes beside it; --force overwrites.
    let edited = std::fs::read_to_string(root.join("AGENTS.md"))
        .unwrap()
        .replace("never by hand", "by hand on fridays");
    std::fs::write(root.join("AGENTS.md"), &edited).unwrap();
    let r = run(&o, home.path(), &root, &["sync"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("edited by hand") && r.stderr.contains("AGENTS.medulla.md"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(root.join("AGENTS.md")).unwrap(),
        edited
    );
    assert!(std::fs::read_to_string(root.join("AGENTS.medulla.md"))
        .unwrap()
        .contains("`pool-size`"));
    let r = run(&o, home.path(), &root, &["sync", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let agents = std::fs::read_to_string(root.join("AGENTS.md")).unwrap();
    assert!(
        agents.contains("`pool-size`") && agents.contains("never by hand"),
        "{agents}"
    );
    assert!(
        agents.starts_with("# Agents\n"),
        "the person's part stays: {agents}"
    );
}

#[test]
fn codex_itself_reads_the_entries_connect_writes() {
    // The pinned release the real-client tests run (tests/it/clients).
    let Some(codex) = crate::clients::codex_cli() else {
        return;
    };
    let o = Owner::start();
    let root = o.project("app");
    let home = tempfile::tempdir().unwrap();
    let rs = root.to_string_lossy().to_string();
    // The project file, read by Codex as its configuration (CODEX_HOME pointed at it).
    let r = run(&o, home.path(), &root, &["connect", "codex", "--no-check"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // The user file: the stdio bridge.
    let r = run(
        &o,
        home.path(),
        &root,
        &["connect", "codex", "--scope", "user", "--no-check"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let list = |codex_home: &Path| -> Value {
        let out = Command::new(&codex)
            .args(["mcp", "list", "--json"])
            .env("CODEX_HOME", codex_home)
            .env("HOME", home.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("codex mcp list --json")
    };
    let medulla = |v: &Value| -> Value {
        v.as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "medulla")
            .cloned()
            .unwrap_or_else(|| panic!("codex lists medulla: {v}"))
    };
    let project = medulla(&list(&root.join(".codex")));
    assert_eq!(project["transport"]["type"], "streamable_http", "{project}");
    assert_eq!(
        project["transport"]["url"],
        format!("{}/mcp", o.url),
        "{project}"
    );
    assert_eq!(
        project["transport"]["env_http_headers"]["Medulla-Caller-Root"], "PWD",
        "{project}"
    );
    assert!(!project.to_string().contains(&rs), "{project}");
    let user = medulla(&list(&home.path().join(".codex")));
    assert_eq!(user["transport"]["type"], "stdio", "{user}");
    assert_eq!(user["transport"]["args"], json!(["bridge"]), "{user}");
}

/// Claude Code's expansion of a string in `.mcp.json` (its documentation: `${VAR}` is the
/// variable, `${VAR:-default}` the variable or the default; a variable unset with no
/// default fails the file), with `env` as the client's environment.
fn claude_code_expands(v: &str, env: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = v;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}').expect("a closed ${") + at;
        let inner = &rest[at + 2..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let value = env.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        match (value, default) {
            (Some(x), _) => out.push_str(x),
            (None, Some(d)) => out.push_str(d),
            (None, None) => panic!("Claude Code refuses the file: {name} is unset"),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// Issue 51: `connect claude-code` wrote this machine's absolute path into `.mcp.json`,
/// the file teams commit, so a clone at another path was routed to the first clone's
/// brain (or to none).
#[test]
fn a_committed_mcp_json_routes_each_clone_to_its_own_brain() {
    let o = Owner::start();
    let home = tempfile::tempdir().unwrap();
    let first = o.project("first/app");
    git(&first, &["init", "-q"]);
    std::fs::write(first.join("README"), "app\n").unwrap();
    o.bootstrap(&first);
    let r = run(&o, home.path(), &first, &["connect", "claude-code"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("checked:"), "{}", r.stdout);
    git(&first, &["add", "README", ".mcp.json"]);
    git(&first, &["commit", "-q", "-m", "first"]);

    let elsewhere = tempfile::tempdir().unwrap();
    let out = Command::new("git")
        .arg("clone")
        .arg("-q")
        .arg(&first)
        .arg(elsewhere.path().join("clone"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let clone = std::fs::canonicalize(elsewhere.path().join("clone")).unwrap();
    o.bootstrap(&clone);

    let text = std::fs::read_to_string(clone.join(".mcp.json")).unwrap();
    assert!(
        !text.contains(&*first.to_string_lossy()),
        "the committed file names no machine's path: {text}"
    );
    let doc = json_at(&clone.join(".mcp.json"));
    let headers = doc["mcpServers"]["medulla"]["headers"].as_object().unwrap();
    // What Claude Code sends from each clone, started by a shell in it.
    for (dir, other) in [(&clone, &first), (&first, &clone)] {
        let ds = dir.to_string_lossy();
        let env = [("PWD", &*ds), ("HOME", "/home/someone")];
        let sent: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.clone(), claude_code_expands(v.as_str().unwrap(), &env)))
            .collect();
        let sent: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (&**k, &**v)).collect();
        let label = format!("where {ds} lives");
        let (s, v) = o.call(
            "memorize",
            json!({ "label": label, "text": "this clone's own note" }),
            &sent,
        );
        assert_eq!(s, 200, "{v}");
        let mine = o.claims(&ds);
        assert!(
            mine.iter().any(|c| c["label"] == label.as_str()),
            "routed to its own brain: {mine:?}"
        );
        let theirs = o.claims(&other.to_string_lossy());
        assert!(
            !theirs.iter().any(|c| c["label"] == label.as_str()),
            "never to the other clone's: {theirs:?}"
        );
    }
    // A client that sends the variable unexpanded (no PWD in its environment) is told
    // why and how, never routed anywhere.
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "nowhere", "text": "unrouted" }),
        &[("Medulla-Caller-Root", "${PWD}")],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("caller_root_unexpanded")),
        "{v}"
    );
    assert!(v.to_string().contains("--scope user"), "{v}");
    // `connect` in the clone: the committed file already says it, and the check passes.
    let r = run(&o, home.path(), &clone, &["connect", "claude-code"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("already connected"), "{}", r.stdout);
    assert!(r.stdout.contains("checked:"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(clone.join(".mcp.json")).unwrap(),
        text
    );
}

/// Issue 53: `--hooks` also installs the end-of-turn nudge as Claude Code's `Stop` hook,
/// merged beside the user's own hooks; `disconnect` takes out only medulla's. Issue 71,
/// finding 3: Claude Code asks before every MCP tool, and a headless `claude -p` denied
/// every one of medulla's ("you haven't granted it yet"): `connect` now allows them in
/// the same settings, beside the person's rules, all but `purge` (left to the client's
/// question), and says what Claude Code needs before it applies a project's rules.
#[test]
fn claude_hooks_add_the_stop_nudge_beside_the_users_and_disconnect_takes_only_medullas() {
    let o = Owner::start();
    let root = o.project("hooked");
    o.bootstrap(&root);
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    let mine = json!({
        "permissions": { "allow": ["Bash(ls)"] },
        "hooks": {
            "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }],
            "SessionStart": [{ "matcher": "startup", "hooks": [{ "type": "command", "command": "echo hi" }] }]
        }
    });
    std::fs::write(root.join(".claude/settings.json"), mine.to_string()).unwrap();
    let r = run(
        &o,
        home.path(),
        &root,
        &["connect", "claude-code", "--hooks"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let s = json_at(&root.join(".claude/settings.json"));
    assert_eq!(
        s["permissions"],
        json!({ "allow": ["Bash(ls)", "mcp__medulla"], "ask": ["mcp__medulla__purge"] })
    );
    assert!(
        r.stderr.contains("trust the folder") && r.stderr.contains("--allowedTools mcp__medulla"),
        "the trust step is named: {}",
        r.stderr
    );
    let stop = s["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2, "{s}");
    assert_eq!(
        stop[0], mine["hooks"]["Stop"][0],
        "the user's hook first, kept"
    );
    let cmd = stop[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(cmd.ends_with("nudge --client claude"), "{cmd}");
    let start = s["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(start.len(), 2, "{s}");
    assert!(start[1]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("prime --client claude"));

    // Again, in a folder the person trusted: nothing changes, nothing to say.
    let mut trusted = json!({ "projects": {} });
    trusted["projects"][root.to_string_lossy().as_ref()] =
        json!({ "hasTrustDialogAccepted": true });
    std::fs::write(home.path().join(".claude.json"), trusted.to_string()).unwrap();
    let r = run(
        &o,
        home.path(),
        &root,
        &["connect", "claude-code", "--hooks"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("trust"), "{}", r.stderr);
    assert_eq!(
        json_at(&root.join(".claude/settings.json")),
        s,
        "idempotent"
    );

    // Disconnect: medulla's two groups go, the user's stay.
    let r = run(&o, home.path(), &root, &["disconnect", "claude-code"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(json_at(&root.join(".claude/settings.json")), mine);
}
