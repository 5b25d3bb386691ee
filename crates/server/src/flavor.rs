//! The database flavors dbmeter can start ([`Flavor`]), and whether this
//! machine can run one ([`available`]).

use crate::process;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    MariaDb,
    Postgres,
}

impl Flavor {
    /// The short name used on command lines and in files: "mariadb" or
    /// "postgres".
    pub fn name(self) -> &'static str {
        match self {
            Flavor::MariaDb => "mariadb",
            Flavor::Postgres => "postgres",
        }
    }

    /// A flavor from a name a user may type: mariadb, mysql, postgres,
    /// postgresql, pg (any case).
    pub fn parse(text: &str) -> Option<Flavor> {
        match text.to_ascii_lowercase().as_str() {
            "mariadb" | "mysql" => Some(Flavor::MariaDb),
            "postgres" | "postgresql" | "pg" | "pgsql" => Some(Flavor::Postgres),
            _ => None,
        }
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Flavor::MariaDb => "MariaDB",
            Flavor::Postgres => "PostgreSQL",
        })
    }
}

/// Whether this machine can run `flavor`: its binaries are found and, when
/// we are root, so is the user to run it as.
pub fn available(flavor: Flavor) -> bool {
    let engine = flavor.engine();
    engine.locate(None).is_ok() && process::service_user(engine.service_user()).is_ok()
}
