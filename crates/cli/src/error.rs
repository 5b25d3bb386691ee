//! Errors that end the program with one line and an exit code.

use dbmeter_db::{DbError, ErrorKind};
use std::fmt;

#[derive(Debug)]
pub enum CliError {
    /// Bad command line: exit code 2.
    Usage(String),
    /// Anything else that went wrong: exit code 1.
    Failed(String),
    /// A bad sysbench command line under `dbmeter sysbench`: exit code 1,
    /// as sysbench gives for its usage errors.
    SysbenchUsage(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Failed(_) | CliError::SysbenchUsage(_) => 1,
        }
    }
}

impl CliError {
    /// The message alone, without the hint or prefix the display adds
    /// (`dbmeter sysbench` prints it as sysbench prints its errors).
    pub fn message(&self) -> &str {
        match self {
            CliError::Usage(m) | CliError::Failed(m) | CliError::SysbenchUsage(m) => m,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Messages that already point somewhere keep their own hint.
            CliError::Usage(m) if m.contains('`') => write!(f, "{m}"),
            CliError::Usage(m) => write!(f, "{m} (see `dbmeter help`)"),
            CliError::Failed(m) => write!(f, "error: {m}"),
            CliError::SysbenchUsage(m) if m.contains('`') => write!(f, "{m}"),
            CliError::SysbenchUsage(m) => write!(f, "{m} (see `dbmeter help sysbench`)"),
        }
    }
}

impl From<DbError> for CliError {
    fn from(e: DbError) -> Self {
        match e.kind {
            ErrorKind::Usage => CliError::Usage(e.message),
            _ => CliError::Failed(e.message),
        }
    }
}

impl From<dbmeter_run::RunError> for CliError {
    fn from(e: dbmeter_run::RunError) -> Self {
        match e {
            dbmeter_run::RunError::Usage(m) => CliError::Usage(m),
            dbmeter_run::RunError::Failed(m) => CliError::Failed(m),
        }
    }
}
