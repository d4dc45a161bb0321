//! The release archive: `medulla-VERSION-TARGET.tar.gz` holding the binary, the README
//! and the licence, beside `medulla-VERSION-TARGET.tar.gz.sha256` (the shape `cargo
//! binstall`'s metadata points at).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use super::{root, run, version, Platform};

pub fn pack(binary: &Path, p: &Platform, out: &Path) -> Result<PathBuf> {
    let name = format!("medulla-{}-{}", version(), p.triple);
    let stage = out.join("stage").join(&name);
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage)?;
    std::fs::copy(binary, stage.join("medulla"))?;
    std::fs::copy(root().join("README.md"), stage.join("README.md"))?;
    let archive = out.join(format!("{name}.tar.gz"));
    run(
        Command::new("tar")
            .arg("-C")
            .arg(stage.parent().expect("a stage dir"))
            .args(["--owner=0", "--group=0", "-czf"])
            .arg(&archive)
            .arg(&name),
        "tar",
    )?;
    let sum = sha256_file(&archive)?;
    let file = archive
        .file_name()
        .expect("a file")
        .to_string_lossy()
        .into_owned();
    std::fs::write(
        out.join(format!("{file}.sha256")),
        format!("{sum}  {file}\n"),
    )?;
    Ok(archive)
}

/// The sha256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    let mut f = std::fs::File::open(path)?;
    std::io::copy(&mut f, &mut h)?;
    Ok(hex::encode(h.finalize()))
}
