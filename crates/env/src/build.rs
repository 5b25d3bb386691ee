//! How this dbmeter was built (from build.rs).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// dbmeter's version (the workspace version).
    pub version: String,
    /// The git commit built, when built from a git checkout.
    pub commit: Option<String>,
    /// `rustc --version` of the compiler.
    pub rustc: String,
    /// Cargo profile: `debug` or `release`.
    pub profile: String,
    /// Target triple, e.g. `x86_64-unknown-linux-gnu`.
    pub target: String,
}

impl BuildInfo {
    pub fn current() -> BuildInfo {
        let commit = env!("DBMETER_GIT_COMMIT");
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: (!commit.is_empty()).then(|| commit.to_string()),
            rustc: env!("DBMETER_RUSTC").to_string(),
            profile: env!("DBMETER_PROFILE").to_string(),
            target: env!("DBMETER_TARGET").to_string(),
        }
    }

    /// One line, e.g. `0.1.0 (3f2a9c1d0b7e, release, rustc 1.91.0 ...)`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.commit {
            parts.push(c.clone());
        }
        parts.push(self.profile.clone());
        if !self.rustc.is_empty() {
            parts.push(self.rustc.clone());
        }
        format!("{} ({})", self.version, parts.join(", "))
    }
}
