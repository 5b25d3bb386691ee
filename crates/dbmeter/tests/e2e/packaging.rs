//! Packaging facts that must stay true: the `rust-version` the workspace
//! declares is at least what every dependency in Cargo.lock declares, and
//! every crate of the workspace declares it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("crates/dbmeter is two levels below the workspace root")
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {rustc} -vV: {e}"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no 'host:' line in {rustc} -vV"))
}

/// `cargo metadata` for the lock as it is (`--locked`), without the network
/// (`--offline`). Only the packages a build for this machine uses
/// (`--filter-platform`): the others (Windows, wasm) are not downloaded by
/// a build here, and dbmeter does not build for those platforms.
fn metadata() -> Value {
    let out = Command::new(cargo())
        .current_dir(workspace_root())
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host_triple()])
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// "1.89", "1.88.0" -> (1, 89, 0).
fn version(v: &str) -> (u64, u64, u64) {
    let mut parts = v.split('.').map(|p| {
        p.parse::<u64>()
            .unwrap_or_else(|_| panic!("rust-version '{v}' is not N.N[.N]"))
    });
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    let patch = parts.next().unwrap_or(0);
    (major, minor, patch)
}

struct Package {
    id: String,
    name: String,
    version: String,
    rust_version: Option<String>,
}

fn packages(meta: &Value) -> Vec<Package> {
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| Package {
            id: p["id"].as_str().expect("id").to_string(),
            name: p["name"].as_str().expect("name").to_string(),
            version: p["version"].as_str().expect("version").to_string(),
            rust_version: p["rust_version"].as_str().map(str::to_string),
        })
        .collect()
}

fn workspace_members(meta: &Value) -> Vec<String> {
    meta["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .iter()
        .map(|m| m.as_str().expect("member id").to_string())
        .collect()
}

/// The workspace's `rust-version`, as the dbmeter package inherits it.
fn declared(packages: &[Package]) -> String {
    packages
        .iter()
        .find(|p| p.name == "dbmeter")
        .and_then(|p| p.rust_version.clone())
        .expect("the dbmeter package declares rust-version (rust-version.workspace = true)")
}

#[test]
fn declared_rust_version_covers_every_dependency() {
    let meta = metadata();
    let packages = packages(&meta);
    let declared = declared(&packages);
    let members = workspace_members(&meta);

    let mut too_new: Vec<String> = packages
        .iter()
        .filter(|p| !members.contains(&p.id))
        .filter_map(|p| {
            let needs = p.rust_version.as_deref()?;
            (version(needs) > version(&declared))
                .then(|| format!("{} {} needs Rust {needs}", p.name, p.version))
        })
        .collect();
    too_new.sort();
    assert!(
        too_new.is_empty(),
        "the workspace declares rust-version = \"{declared}\" (Cargo.toml) but:\n  {}\n\
         raise rust-version in the root Cargo.toml, or pin older versions of these crates",
        too_new.join("\n  ")
    );

    // The check is not vacuous: the lock has dependencies that declare one.
    let with_one = packages
        .iter()
        .filter(|p| !members.contains(&p.id) && p.rust_version.is_some())
        .count();
    assert!(
        with_one > 10,
        "only {with_one} dependencies declare a rust-version"
    );
}

#[test]
fn every_crate_declares_the_workspace_rust_version() {
    let meta = metadata();
    let packages = packages(&meta);
    let declared = declared(&packages);
    let members = workspace_members(&meta);

    let mut wrong = Vec::new();
    for p in packages.iter().filter(|p| members.contains(&p.id)) {
        match &p.rust_version {
            Some(v) if *v == declared => {}
            v => wrong.push(format!(
                "{} declares {}, not the workspace's \"{declared}\": \
                 add `rust-version.workspace = true` to its [package]",
                p.name,
                v.as_deref()
                    .map_or("no rust-version".to_string(), |v| format!(
                        "rust-version \"{v}\""
                    ))
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
