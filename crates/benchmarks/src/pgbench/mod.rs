//! pgbench's script language: scripts as pgbench 15 reads them, its
//! expression language and functions (with pgbench's exact results), its
//! built-in scripts, and a client that runs transactions of them against
//! any [`Session`].
//!
//! Where things are (in the order a script goes through them):
//!
//! - `sql_scan.rs`: cuts a script's text into SQL commands and
//!   meta-commands (quotes, comments, `;`, backslashes).
//! - `script.rs`: [`Script`] and [`Command`]: each meta-command checked,
//!   `\gset`/`\aset` attached, `\if` blocks matched; [`parse_script`].
//! - `expr_parse.rs`: the expression language of `\set`/`\if` ([`Expr`]).
//! - `expr_eval.rs`: evaluating an expression with pgbench's type rules.
//! - `functions.rs`: the hash, permutation and random functions.
//! - `value.rs`: [`Value`], coercions, how values are written into SQL.
//! - `variables.rs`: variable names ([`VarNames`]) and a client's
//!   variables ([`Variables`]); `-D` ([`Definition`]).
//! - `prng.rs`: PostgreSQL's random generator ([`PgPrng`]) and a run's
//!   seeds ([`Seeds`]), so `--random-seed` draws what pgbench draws.
//! - `builtin.rs`: `tpcb-like`, `simple-update`, `select-only`.
//! - `script_set.rs`: the scripts of a run, `-f`/`-b` with `@weight`, the
//!   choice by weight ([`ScriptSet`]).
//! - `session.rs`: what a client needs from a database ([`Session`]).
//! - `host.rs`: what it needs from the rest: clock, sleep, shell, debug
//!   output ([`Host`]).
//! - `client.rs`: [`Setup`] and [`Client`], the per-client state machine
//!   that runs one transaction at a time.
//! - `db_session.rs`: a [`Session`] over a dbmeter connection.
//! - `init.rs`: `prepare` (pgbench's `-i`) and `cleanup`.
//! - `log.rs`: `-l`'s per-transaction and aggregated log files.
//! - `config.rs`: the benchmark's options, read and checked once
//!   ([`PgbenchConfig`]).
//! - `benchmark.rs`: the `pgbench` benchmark ([`Pgbench`]): options,
//!   users, the result's section and pgbench's report lines.

mod benchmark;
mod builtin;
mod client;
mod config;
mod db_session;
mod expr_eval;
mod expr_parse;
mod functions;
mod host;
mod init;
mod log;
mod prng;
mod script;
mod script_set;
mod session;
mod sql_scan;
mod value;
mod variables;

pub use benchmark::Pgbench;
pub use builtin::{BUILTINS, Builtin, find_builtin};
pub use client::{
    Client, CommandRun, CommandStats, ExecOptions, Failure, FailureKind, Setup, TxOutcome, TxStatus,
};
pub use config::{LogOptions, PgbenchConfig};
pub use expr_eval::Evaluator;
pub use expr_parse::{DEFAULT_SEED, Expr, ExprError, Func, parse_expr};
pub use functions::{hash_fnv1a, hash_murmur2, permute};
pub use host::{Host, SystemHost, run_shell};
pub use log::{LogSpec, TxLogs, job_of};
pub use prng::{PgPrng, Seeds};
pub use script::{
    Capture, CaptureKind, Command, CommandKind, Script, ScriptError, ShellWord, SleepAmount,
    SqlCommand, parse_script,
};
pub use script_set::{AUTOMATIC, ScriptSet, ScriptSetBuilder, parse_weight};
pub use session::{
    Captured, CapturedResult, Params, Query, QueryMode, ROLLBACK_COMMAND, Session, SqlError,
    SqlErrorKind,
};
pub use value::{EvalError, Value, value_from_text, write_double};
pub use variables::{Definition, VarId, VarNames, Variables, valid_variable_name};
