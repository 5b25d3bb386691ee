//! The store's one error type: a message meant to be printed as one line.

use std::fmt;

/// What went wrong, in one line that says what to do about it, e.g.
/// `cannot open the results store '/x/y.db': unable to open database file`.
/// Passwords in store URLs are masked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl StoreError {
    pub fn new(message: impl Into<String>) -> StoreError {
        StoreError(message.into())
    }

    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}
