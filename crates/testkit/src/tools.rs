//! Optional programs that tests run beside dbmeter, to compare with it
//! (sysbench, pgbench) or to check what it makes (the shells for the
//! completion scripts, man and groff for the man page, Chromium for the
//! HTML report, openssl for TLS certificates).
//!
//! ```no_run
//! let Some(zsh) = dbmeter_testkit::tools::ZSH.find_or_skip() else {
//!     return;
//! };
//! ```

use crate::{Requirement, skip};
use std::path::{Path, PathBuf};

/// An optional program (or, for sysbench's scripts, a file), where it is
/// looked for, and the Debian package that installs it.
#[derive(Clone, Copy, Debug)]
pub struct Tool {
    /// What the skip message calls it.
    pub name: &'static str,
    /// The Debian package that has it.
    pub package: &'static str,
    /// The variable that makes its absence a failure.
    pub requirement: Requirement,
    look: Look,
}

#[derive(Clone, Copy, Debug)]
enum Look {
    /// The first of these programs found on PATH.
    Path(&'static [&'static str]),
    /// The newest PostgreSQL's bin directory (Debian keeps it off PATH),
    /// then PATH.
    PostgresBin(&'static str),
    /// A file at a fixed place.
    File(&'static str),
}

pub const ZSH: Tool = Tool::on_path("zsh", "zsh", &["zsh"]);
pub const FISH: Tool = Tool::on_path("fish", "fish", &["fish"]);
pub const MAN: Tool = Tool::on_path("man", "man-db", &["man"]);
pub const GROFF: Tool = Tool::on_path("groff", "groff-base", &["groff"]);
pub const OPENSSL: Tool = Tool::on_path("openssl", "openssl", &["openssl"]);
/// fio, the storage benchmark fileio is compared with.
pub const FIO: Tool = Tool::on_path("fio", "fio", &["fio"]);
/// Prometheus, which scrapes `--prometheus` endpoints in the tests.
pub const PROMETHEUS: Tool = Tool::on_path("prometheus", "prometheus", &["prometheus"]);
/// promtool, Prometheus' checker of exposition text (in its package).
pub const PROMTOOL: Tool = Tool::on_path("promtool", "prometheus", &["promtool"]);
/// sysbench itself.
pub const SYSBENCH: Tool = Tool::on_path("sysbench", "sysbench", &["sysbench"]);
/// The Lua scripts Debian's sysbench installs; [`Tool::find_or_skip`] gives
/// their directory.
pub const SYSBENCH_SCRIPTS: Tool = Tool {
    name: "sysbench's scripts (/usr/share/sysbench)",
    package: "sysbench",
    requirement: Requirement::Tools,
    look: Look::File("/usr/share/sysbench/oltp_common.lua"),
};
/// pgbench of the newest PostgreSQL installed, or the one on PATH
/// (Debian 12 ships it with the server, in postgresql-15).
pub const PGBENCH: Tool = Tool {
    name: "pgbench",
    package: "postgresql",
    requirement: Requirement::Tools,
    look: Look::PostgresBin("pgbench"),
};
pub const CHROMIUM: Tool = Tool {
    name: "chromium",
    package: "chromium",
    requirement: Requirement::Chromium,
    look: Look::Path(&["chromium", "chromium-browser", "google-chrome"]),
};

impl Tool {
    const fn on_path(
        name: &'static str,
        package: &'static str,
        programs: &'static [&'static str],
    ) -> Tool {
        Tool::on_path_for(name, package, Requirement::Tools, programs)
    }

    /// The first of `programs` found on PATH, from `package`, required
    /// with `requirement`.
    pub const fn on_path_for(
        name: &'static str,
        package: &'static str,
        requirement: Requirement,
        programs: &'static [&'static str],
    ) -> Tool {
        Tool {
            name,
            package,
            requirement,
            look: Look::Path(programs),
        }
    }

    /// Where it is, or None.
    pub fn find(&self) -> Option<PathBuf> {
        match self.look {
            Look::Path(programs) => programs.iter().find_map(|p| on_path(p)),
            Look::PostgresBin(program) => newest_postgres_bin(program).or_else(|| on_path(program)),
            Look::File(file) => {
                let file = Path::new(file);
                file.is_file()
                    .then(|| file.parent().map(Path::to_path_buf))
                    .flatten()
            }
        }
    }

    /// Where it is; or None after saying that the test skips (a panic
    /// instead when its `DBMETER_REQUIRE_*` variable is set).
    pub fn find_or_skip(&self) -> Option<PathBuf> {
        let found = self.find();
        if found.is_none() {
            skip(self.requirement, &self.missing());
        }
        found
    }

    /// "zsh not found (Debian package zsh)".
    pub fn missing(&self) -> String {
        format!("{} not found (Debian package {})", self.name, self.package)
    }
}

/// Several tools at once: all their paths in order, or None after saying
/// which are missing.
pub fn find_all_or_skip(tools: &[Tool]) -> Option<Vec<PathBuf>> {
    let found: Vec<Option<PathBuf>> = tools.iter().map(Tool::find).collect();
    if found.iter().all(Option::is_some) {
        return Some(found.into_iter().flatten().collect());
    }
    for (tool, path) in tools.iter().zip(&found) {
        if path.is_none() {
            skip(tool.requirement, &tool.missing());
        }
    }
    None
}

/// `program` in a directory of PATH, as an executable file.
fn on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `program` in /usr/lib/postgresql/VERSION/bin for the highest VERSION
/// that has it.
fn newest_postgres_bin(program: &str) -> Option<PathBuf> {
    let versions = std::fs::read_dir("/usr/lib/postgresql").ok()?;
    versions
        .flatten()
        .filter_map(|v| {
            let number: u32 = v.file_name().to_str()?.parse().ok()?;
            let p = v.path().join("bin").join(program);
            p.is_file().then_some((number, p))
        })
        .max_by_key(|(number, _)| *number)
        .map(|(_, p)| p)
}
