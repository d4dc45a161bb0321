//! The text of the user service that keeps the owner running: a systemd user unit or a
//! launchd agent's plist, rendered from a [`Spec`] for either manager on any OS (so both
//! are tested everywhere), and read back for `medulla service status`.

use std::path::{Path, PathBuf};

/// The launchd label, reverse-DNS as launchd expects.
pub const LABEL: &str = "dev.medulla.owner";
/// The systemd unit's name.
pub const UNIT: &str = "medulla.service";

/// Which service manager a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Manager {
    Systemd,
    Launchd,
}

impl Manager {
    /// What the file is, in words.
    pub fn file_kind(self) -> &'static str {
        match self {
            Manager::Systemd => "systemd user unit",
            Manager::Launchd => "launchd agent",
        }
    }
}

/// What the service runs: `exe serve [--home HOME]` with `env`, logging (launchd only)
/// to `log`.
#[derive(Debug, Clone)]
pub struct Spec {
    /// What runs: this binary, absolute and canonical; or, for a binary in a package
    /// cache, the package launcher's program, absolute.
    pub exe: String,
    /// The launcher's arguments before medulla's own (`--from medulla-memory==V medulla`
    /// for uvx); none for a binary run by its path.
    pub prefix: Vec<String>,
    /// A home other than the default, passed as `--home`.
    pub home: Option<String>,
    /// Environment the owner is given (`MEDULLA_HOME`, `MEDULLA_MODEL_DIR` when set).
    pub env: Vec<(String, String)>,
    /// Where launchd writes the owner's stdout and stderr (systemd keeps them in its journal).
    pub log: String,
}

impl Spec {
    /// The owner's command line.
    pub fn args(&self) -> Vec<&str> {
        let mut a = vec![self.exe.as_str()];
        a.extend(self.prefix.iter().map(String::as_str));
        a.push("serve");
        if let Some(h) = &self.home {
            a.extend(["--home", h.as_str()]);
        }
        a
    }
}

/// Where the file goes: `$XDG_CONFIG_HOME/systemd/user/medulla.service` (default
/// `~/.config`), or `~/Library/LaunchAgents/dev.medulla.owner.plist`.
pub fn path(manager: Manager, home_dir: &Path, xdg_config_home: Option<&Path>) -> PathBuf {
    match manager {
        Manager::Systemd => xdg_config_home
            .filter(|x| x.is_absolute())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home_dir.join(".config"))
            .join("systemd/user")
            .join(UNIT),
        Manager::Launchd => home_dir
            .join("Library/LaunchAgents")
            .join(format!("{LABEL}.plist")),
    }
}

/// The file's text.
pub fn render(manager: Manager, spec: &Spec) -> String {
    match manager {
        Manager::Systemd => systemd(spec),
        Manager::Launchd => launchd(spec),
    }
}

fn systemd(spec: &Spec) -> String {
    let exec: Vec<String> = spec.args().into_iter().map(systemd_word).collect();
    let mut env = String::new();
    for (k, v) in &spec.env {
        env.push_str(&format!(
            "Environment={}\n",
            systemd_quoted(&format!("{k}={v}"), false)
        ));
    }
    format!(
        "# Written by `medulla service install`; `medulla service uninstall` removes it.\n\
         [Unit]\n\
         Description=medulla memory owner (medulla serve)\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={}\n\
         {env}\
         Restart=on-failure\n\
         RestartSec=2\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        exec.join(" ")
    )
}

/// One word of `ExecStart=`: `%` (specifiers) and `$` (variables) doubled, and quoted
/// (C-style escapes inside double quotes) when it holds a space, a quote, a backslash or
/// a `;`, or is empty.
pub fn systemd_word(s: &str) -> String {
    let plain = !s.is_empty()
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "\"'\\;".contains(c));
    if plain {
        s.replace('%', "%%").replace('$', "$$")
    } else {
        systemd_quoted(s, true)
    }
}

/// `s` in double quotes with C-style escapes, `%` doubled (and `$` when `dollars`).
fn systemd_quoted(s: &str, dollars: bool) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '%' => out.push_str("%%"),
            '$' if dollars => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn launchd(spec: &Spec) -> String {
    let mut x = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by `medulla service install`; `medulla service uninstall` removes it. -->\n\
         <plist version=\"1.0\">\n<dict>\n",
    );
    let string = |s: &str| format!("<string>{}</string>", xml_escape(s));
    x.push_str(&format!("\t<key>Label</key>\n\t{}\n", string(LABEL)));
    x.push_str("\t<key>ProgramArguments</key>\n\t<array>\n");
    for a in spec.args() {
        x.push_str(&format!("\t\t{}\n", string(a)));
    }
    x.push_str("\t</array>\n");
    if !spec.env.is_empty() {
        x.push_str("\t<key>EnvironmentVariables</key>\n\t<dict>\n");
        for (k, v) in &spec.env {
            x.push_str(&format!(
                "\t\t<key>{}</key>\n\t\t{}\n",
                xml_escape(k),
                string(v)
            ));
        }
        x.push_str("\t</dict>\n");
    }
    // Relaunched only when it fails: `medulla stop` (a clean exit) is respected.
    x.push_str("\t<key>RunAtLoad</key>\n\t<true/>\n");
    x.push_str(
        "\t<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n",
    );
    for key in ["StandardOutPath", "StandardErrorPath"] {
        x.push_str(&format!("\t<key>{key}</key>\n\t{}\n", string(&spec.log)));
    }
    x.push_str("</dict>\n</plist>\n");
    x
}

/// Text for XML character data and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The binary an installed file runs (the first word of `ExecStart=`, the first of
/// `ProgramArguments`), as a path.
pub fn named_binary(manager: Manager, text: &str) -> Option<String> {
    match manager {
        Manager::Systemd => {
            let line = text
                .lines()
                .find_map(|l| l.trim_start().strip_prefix("ExecStart="))?;
            first_systemd_word(line.trim_start())
        }
        Manager::Launchd => {
            let after = &text[text.find("<key>ProgramArguments</key>")?..];
            let start = after.find("<string>")? + "<string>".len();
            let end = after[start..].find("</string>")?;
            Some(xml_unescape(&after[start..start + end]))
        }
    }
}

/// The first word of a systemd command line, quotes and escapes undone.
fn first_systemd_word(line: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let quote = match chars.peek() {
        Some(&q @ ('"' | '\'')) => {
            chars.next();
            Some(q)
        }
        Some(_) => None,
        None => return None,
    };
    while let Some(c) = chars.next() {
        match c {
            c if Some(c) == quote => break,
            c if quote.is_none() && c.is_whitespace() => break,
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            '%' | '$' if chars.peek() == Some(&c) => {
                chars.next();
                out.push(c);
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(exe: &str, home: Option<&str>) -> Spec {
        Spec {
            exe: exe.into(),
            prefix: Vec::new(),
            home: home.map(Into::into),
            env: home
                .map(|h| vec![("MEDULLA_HOME".to_string(), h.to_string())])
                .unwrap_or_default(),
            log: "/home/u/.medulla/logs/launchd.out.log".into(),
        }
    }

    #[test]
    fn the_unit_runs_this_binary_serve_and_restarts_on_failure() {
        let text = render(Manager::Systemd, &spec("/usr/local/bin/medulla", None));
        assert!(
            text.contains("\nExecStart=/usr/local/bin/medulla serve\n"),
            "{text}"
        );
        for line in [
            "Restart=on-failure",
            "RestartSec=2",
            "Type=simple",
            "WantedBy=default.target",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(text.contains("\nDescription="), "{text}");
        assert!(!text.contains("Environment="), "nothing to set: {text}");
        assert_eq!(
            named_binary(Manager::Systemd, &text).as_deref(),
            Some("/usr/local/bin/medulla")
        );
    }

    #[test]
    fn paths_with_spaces_quotes_and_specifiers_are_quoted_for_systemd() {
        let text = render(
            Manager::Systemd,
            &spec("/opt/my tools/medulla", Some("/home/u/100% \"mine\"")),
        );
        assert!(
            text.contains(
                "ExecStart=\"/opt/my tools/medulla\" serve --home \"/home/u/100%% \\\"mine\\\"\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("Environment=\"MEDULLA_HOME=/home/u/100%% \\\"mine\\\"\"\n"),
            "{text}"
        );
        assert_eq!(
            named_binary(Manager::Systemd, &text).as_deref(),
            Some("/opt/my tools/medulla")
        );
        assert_eq!(systemd_word("/a/$HOME"), "/a/$$HOME");
        assert_eq!(systemd_word("a;b"), "\"a;b\"");
        assert_eq!(systemd_word(""), "\"\"");
    }

    #[test]
    fn the_plist_names_its_label_program_and_keeps_it_alive_on_failure() {
        let text = render(
            Manager::Launchd,
            &spec("/Users/u/bin/me & <you>", Some("/Users/u/m home")),
        );
        for want in [
            "<key>Label</key>\n\t<string>dev.medulla.owner</string>",
            "<string>/Users/u/bin/me &amp; &lt;you&gt;</string>\n\t\t<string>serve</string>\n\t\t<string>--home</string>\n\t\t<string>/Users/u/m home</string>",
            "<key>RunAtLoad</key>\n\t<true/>",
            "<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>",
            "<key>MEDULLA_HOME</key>",
            "<key>StandardErrorPath</key>",
        ] {
            assert!(text.contains(want), "{want} in\n{text}");
        }
        assert_eq!(
            named_binary(Manager::Launchd, &text).as_deref(),
            Some("/Users/u/bin/me & <you>")
        );
    }

    #[test]
    fn files_go_where_each_manager_looks() {
        let home = Path::new("/home/u");
        assert_eq!(
            path(Manager::Systemd, home, None),
            Path::new("/home/u/.config/systemd/user/medulla.service")
        );
        assert_eq!(
            path(Manager::Systemd, home, Some(Path::new("/x/cfg"))),
            Path::new("/x/cfg/systemd/user/medulla.service")
        );
        // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
        assert_eq!(
            path(Manager::Systemd, home, Some(Path::new("rel"))),
            Path::new("/home/u/.config/systemd/user/medulla.service")
        );
        assert_eq!(
            path(Manager::Launchd, home, None),
            Path::new("/home/u/Library/LaunchAgents/dev.medulla.owner.plist")
        );
    }

    /// The plist parses as a property list (python's plistlib stands in for macOS's
    /// reader), holding what launchd needs.
    #[test]
    fn the_plist_parses_as_a_property_list() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("p.plist");
        let s = spec("/a b/medulla & co", Some("/h <x>"));
        std::fs::write(&file, render(Manager::Launchd, &s)).unwrap();
        let script =
            "import plistlib,sys,json; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))";
        let out = match std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&file)
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped: python3 does not run here ({e})");
                return;
            }
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["Label"], LABEL);
        assert_eq!(
            v["ProgramArguments"],
            serde_json::json!(["/a b/medulla & co", "serve", "--home", "/h <x>"])
        );
        assert_eq!(v["RunAtLoad"], true);
        assert_eq!(
            v["KeepAlive"],
            serde_json::json!({ "SuccessfulExit": false })
        );
        assert_eq!(v["EnvironmentVariables"]["MEDULLA_HOME"], "/h <x>");
        assert_eq!(v["StandardOutPath"], s.log.as_str());
    }

    /// systemd itself reads the unit, a binary under a path with a space included
    /// (`systemd-analyze verify` fails on a word it cannot execute).
    #[test]
    fn systemd_analyze_verifies_the_unit() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("my tools");
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("medulla");
        if std::fs::copy("/bin/true", &exe).is_err() {
            eprintln!("skipped: no /bin/true to stand in for the binary");
            return;
        }
        let home = tmp.path().join("a home").to_string_lossy().into_owned();
        let unit = tmp.path().join(UNIT);
        let s = spec(exe.to_str().unwrap(), Some(home.as_str()));
        std::fs::write(&unit, render(Manager::Systemd, &s)).unwrap();
        let verify = |user: bool| {
            let mut c = std::process::Command::new("systemd-analyze");
            if user {
                c.arg("--user");
            }
            c.arg("verify").arg(&unit).output()
        };
        let out = match verify(true) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped: systemd-analyze does not run here ({e})");
                return;
            }
        };
        // With no user manager (a container), --user cannot start; the system mode reads
        // the same file by the same rules.
        let user = out.status.success()
            || !String::from_utf8_lossy(&out.stderr).contains("Failed to initialize manager");
        let out = if user { out } else { verify(false).unwrap() };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains(UNIT), "systemd complained: {stderr}");

        // The same check catches a path left unquoted.
        let bad = render(Manager::Systemd, &s)
            .replace(&systemd_word(exe.to_str().unwrap()), exe.to_str().unwrap());
        std::fs::write(&unit, bad).unwrap();
        let out = verify(user).unwrap();
        assert!(
            !out.status.success(),
            "an unquoted path with a space passed"
        );
    }
}
