//! Targets: where a benchmark connects, parsed from `--db`.

use crate::DbError;
use std::fmt;
use std::path::PathBuf;

/// The file used when no `--db` is given.
pub const DEFAULT_SQLITE_FILE: &str = "dbmeter.sqlite";

/// SQL dialect of a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An embedded SQLite database file. `implicit` is true when the user
    /// gave no `--db` and dbmeter picked its default file.
    Sqlite { path: PathBuf, implicit: bool },
}

impl Target {
    /// The embedded SQLite file in the current directory.
    pub fn default_sqlite() -> Target {
        Target::Sqlite {
            path: PathBuf::from(DEFAULT_SQLITE_FILE),
            implicit: true,
        }
    }

    /// Parses a `--db` value: `sqlite:PATH`, `sqlite://PATH`, or a plain
    /// path ending in `.sqlite`, `.sqlite3` or `.db`.
    pub fn parse(s: &str) -> Result<Target, DbError> {
        let s = s.trim();
        let sqlite = |p: &str| -> Result<Target, DbError> {
            if p.is_empty() {
                return Err(DbError::usage(format!(
                    "--db {s}: the SQLite URL has no file path (e.g. sqlite:bench.sqlite)"
                )));
            }
            Ok(Target::Sqlite {
                path: PathBuf::from(p),
                implicit: false,
            })
        };
        if let Some(rest) = s.strip_prefix("sqlite://") {
            return sqlite(rest);
        }
        if let Some(rest) = s.strip_prefix("sqlite:") {
            return sqlite(rest);
        }
        if let Some((scheme, _)) = s.split_once("://") {
            return Err(DbError::usage(format!(
                "--db {}: unknown database type '{scheme}' (supported: sqlite:PATH)",
                mask_password(s)
            )));
        }
        let lower = s.to_ascii_lowercase();
        if [".sqlite", ".sqlite3", ".db"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            return sqlite(s);
        }
        Err(DbError::usage(format!(
            "--db {s}: not a database URL (expected sqlite:PATH, or a file ending in .sqlite or .db)"
        )))
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Sqlite { .. } => Dialect::Sqlite,
        }
    }

    /// The driver's name, as in results (`sqlite`).
    pub fn driver(&self) -> &'static str {
        match self {
            Target::Sqlite { .. } => "sqlite",
        }
    }

    /// True when the driver blocks the calling thread (one OS thread per user).
    pub fn is_blocking(&self) -> bool {
        matches!(self, Target::Sqlite { .. })
    }

    /// True when the user gave no target and dbmeter chose its default.
    pub fn is_implicit(&self) -> bool {
        match self {
            Target::Sqlite { implicit, .. } => *implicit,
        }
    }
}

impl fmt::Display for Target {
    /// The target as a URL, with any password masked.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Sqlite { path, .. } => write!(f, "sqlite:{}", path.display()),
        }
    }
}

/// Replaces the password of `scheme://user:password@host` with `***`.
pub fn mask_password(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((userinfo, host)) = rest.split_once('@')
        && let Some((user, _)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sqlite_forms() {
        for s in ["sqlite:a.sqlite", "sqlite://a.sqlite", "a.sqlite"] {
            assert_eq!(
                Target::parse(s).unwrap(),
                Target::Sqlite {
                    path: "a.sqlite".into(),
                    implicit: false
                }
            );
        }
        assert!(Target::parse("sqlite:").is_err());
        assert!(Target::parse("oracle://x").is_err());
        assert!(Target::parse("whatever").is_err());
    }

    #[test]
    fn masks_passwords() {
        assert_eq!(mask_password("mysql://u:secret@h/db"), "mysql://u:***@h/db");
        assert_eq!(mask_password("mysql://u@h/db"), "mysql://u@h/db");
    }
}
