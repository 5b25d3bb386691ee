//! Test support shared by dbmeter's crates, used only as a dev-dependency.
//!
//! dbmeter's tests talk to real databases and real programs. Some of those
//! are optional on a developer's machine: the MariaDB and PostgreSQL
//! servers, the shells the completion scripts are for, sysbench, pgbench,
//! Chromium, man and groff, openssl. This crate is the one place that
//! finds them, so every test that needs one behaves alike:
//!
//! - found: the test gets the server (see [`servers`]) or the program's
//!   path (see [`tools`]);
//! - missing: the test returns early after one line on stderr that says
//!   which test skips, what is missing and which Debian package has it;
//! - missing while the tool's `DBMETER_REQUIRE_*` variable is set (CI sets
//!   them all, see [`Requirement`]): the test fails with the same message.

pub mod servers;
pub mod tools;

/// The environment variables that turn a missing server or program into a
/// test failure instead of a skip. Any value counts, even an empty one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// `DBMETER_REQUIRE_SERVERS`: MariaDB, PostgreSQL and their clients.
    Servers,
    /// `DBMETER_REQUIRE_CHROMIUM`: headless Chromium for the HTML report.
    Chromium,
    /// `DBMETER_REQUIRE_TOOLS`: every other optional program (zsh, fish,
    /// sysbench and its scripts, pgbench, man, groff, openssl, prometheus).
    Tools,
}

impl Requirement {
    pub fn variable(self) -> &'static str {
        match self {
            Requirement::Servers => "DBMETER_REQUIRE_SERVERS",
            Requirement::Chromium => "DBMETER_REQUIRE_CHROMIUM",
            Requirement::Tools => "DBMETER_REQUIRE_TOOLS",
        }
    }

    /// Whether the variable is set.
    pub fn is_set(self) -> bool {
        std::env::var_os(self.variable()).is_some()
    }
}

/// Says that the running test skips because of `why`, or panics with it
/// when `requirement` is set. `why` names what is missing and its Debian
/// package.
pub fn skip(requirement: Requirement, why: &str) {
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(|n| format!(" {n}"))
        .unwrap_or_default();
    if requirement.is_set() {
        panic!("{} is set, but {why}", requirement.variable());
    }
    eprintln!(
        "skipping{test}: {why} (set {} to make this a failure)",
        requirement.variable()
    );
}
