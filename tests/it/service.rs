//! `medulla service install | status | uninstall`, run as the real binary over a temp
//! home and config directory. `MEDULLA_SERVICE_MANAGER=none` keeps systemctl and
//! launchctl from ever being called, so a machine whose user manager runs never gets a
//! real service enabled by a test.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cli::Run;
use crate::common::BIN;

/// A user whose home, config directory and medulla home are temp directories.
struct User {
    home: tempfile::TempDir,
    config: tempfile::TempDir,
    medulla: tempfile::TempDir,
}

impl User {
    fn new() -> User {
        User {
            home: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
            medulla: tempfile::tempdir().unwrap(),
        }
    }

    fn medulla(&self, args: &[&str]) -> Run {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(self.home.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.config.path())
            .env("MEDULLA_HOME", self.medulla.path())
            .env("MEDULLA_NO_AUTOSTART", "1")
            .env("MEDULLA_SERVICE_MANAGER", "none")
            .env_remove("MEDULLA_MODEL_DIR")
            .env_remove("MEDULLA_URL")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .unwrap();
        Run::of(out)
    }

    fn unit(&self) -> PathBuf {
        self.config.path().join("systemd/user/medulla.service")
    }
}

fn files_under(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        }
        out.push(p);
    }
    out
}

/// The service's file names this binary (absolute, canonical) with `serve` and the home
/// the shell points at; `--dry-run` writes nothing; install, status and uninstall go
/// round without a service manager.
#[cfg(target_os = "linux")]
#[test]
fn service_install_writes_a_unit_for_this_binary_and_uninstall_removes_it() {
    let u = User::new();
    let exe = std::fs::canonicalize(BIN).unwrap();
    let exe = exe.to_str().unwrap();
    let home = std::fs::canonicalize(u.medulla.path()).unwrap();

    let r = u.medulla(&["service", "install", "--dry-run"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let printed = r.stdout.clone();
    let exec = r
        .stdout
        .lines()
        .find(|l| l.starts_with("ExecStart="))
        .unwrap_or_else(|| panic!("no ExecStart in\n{}", r.stdout));
    assert_eq!(
        exec,
        format!("ExecStart={exe} serve --home {}", home.display()),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\nRestart=on-failure\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("Environment=\"MEDULLA_HOME={}\"", home.display())),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("would write") && r.stderr.contains("systemctl --user enable --now"),
        "{}",
        r.stderr
    );
    for dir in [u.home.path(), u.config.path(), u.medulla.path()] {
        assert_eq!(files_under(dir), Vec::<PathBuf>::new(), "--dry-run wrote");
    }

    let r = u.medulla(&["service", "status", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["installed"], false, "{v}");

    let r = u.medulla(&["service", "install"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(u.unit()).expect("the unit was written");
    assert!(text.contains(&format!("\nExecStart={exe} serve")), "{text}");
    assert_eq!(text, printed, "install writes what --dry-run printed");
    assert!(
        r.stdout.contains("systemctl --user enable --now medulla"),
        "it names what to run: {}",
        r.stdout
    );

    let r = u.medulla(&["service", "status"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(u.unit().to_str().unwrap())
            && r.stdout.contains(&format!("runs this binary, {exe}")),
        "{}",
        r.stdout
    );
    let r = u.medulla(&["service", "status", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (
            &v["installed"],
            &v["names_this_binary"],
            &v["up_to_date"],
            &v["manager"]
        ),
        (
            &Value::Bool(true),
            &Value::Bool(true),
            &Value::Bool(true),
            &Value::from("systemd")
        ),
        "{v}"
    );

    // A unit naming a binary that moved: status says so and names the fix.
    std::fs::write(u.unit(), text.replace(exe, "/gone/medulla")).unwrap();
    let r = u.medulla(&["service", "status"]);
    assert!(
        r.stdout.contains("/gone/medulla") && r.stdout.contains("medulla service install"),
        "{}",
        r.stdout
    );

    let r = u.medulla(&["service", "uninstall", "--dry-run"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(u.unit().exists(), "--dry-run removed the unit");
    let r = u.medulla(&["service", "uninstall"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!u.unit().exists());
    let r = u.medulla(&["service", "uninstall"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("nothing is installed"), "{}", r.stdout);
}
