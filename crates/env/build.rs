//! Records how dbmeter was built: the git commit (when built from a git
//! checkout with git installed), the compiler and the profile. Every step
//! tolerates failure: a source tarball without git builds the same.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=DBMETER_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: the HEAD file, the branch it points to, packed refs.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!(
            "cargo:rerun-if-changed={}",
            PathBuf::from(&dir).join("HEAD").display()
        );
    }
    if let (Some(common), Some(branch)) = (
        git(&["rev-parse", "--git-common-dir"]),
        git(&["symbolic-ref", "-q", "HEAD"]),
    ) {
        let common = PathBuf::from(common);
        for p in [common.join(&branch), common.join("packed-refs")] {
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=DBMETER_RUSTC={version}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=DBMETER_PROFILE={profile}");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=DBMETER_TARGET={target}");
}
