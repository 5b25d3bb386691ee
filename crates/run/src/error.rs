//! Why a run or a benchmark command could not be done.

use dbmeter_benchmarks::BenchError;
use dbmeter_db::{DbError, ErrorKind};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The request asks for something that cannot be: a usage error.
    Usage(String),
    /// Anything else that went wrong.
    Failed(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Usage(m) | RunError::Failed(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<DbError> for RunError {
    fn from(e: DbError) -> Self {
        match e.kind {
            ErrorKind::Usage => RunError::Usage(e.message),
            _ => RunError::Failed(e.message),
        }
    }
}

impl From<BenchError> for RunError {
    fn from(e: BenchError) -> Self {
        match e {
            BenchError::Usage(m) => RunError::Usage(m),
            BenchError::Failed(m) => RunError::Failed(m),
        }
    }
}
