//! dbmeter's end-to-end tests, in one test binary (`e2e`): one module per
//! area. They run the real `dbmeter` binary in scratch directories, against
//! SQLite files and against throwaway MariaDB and PostgreSQL servers that
//! the tests start themselves; `common` holds the helpers for that and
//! `procs` watches processes that run in the background.
//!
//! A test's name is its module and function, e.g.
//! `campaign::sqlite_and_managed_mariadb_matrix_stored_and_resumed`;
//! `cargo nextest run -p dbmeter -E 'test(/^campaign::/)'` runs one area.
//! Files the tests read stay beside this folder: `../fixtures/` (stored
//! documents of older versions) and `../scripts/` (Lua scripts).

mod common;
mod procs;

mod campaign;
mod campaign_shards;
mod campaign_signals;
mod capture;
mod ci_example;
mod cli_errors;
mod client_conventions;
mod compare_queries;
mod compare_stats;
mod deploy;
mod digest;
mod environment;
mod events;
mod failover;
mod faults;
mod fileio;
mod help;
mod history;
mod lua_scripts;
mod lua_sysbench_api;
mod lua_tpcc;
mod micro;
mod old_documents;
mod oltp_sqlite;
mod options;
mod packaging;
mod parallel_load;
mod pgbench;
mod pgbench_cli;
mod prometheus;
mod replay;
mod report;
mod results;
mod run_behaviour;
mod run_status;
mod server_cli;
mod servers;
mod shards;
mod slap;
mod stages;
mod sysbench_cli;
mod terminal;
mod test_types;
mod tls_auth;
mod tpcc;
mod tpch;
mod vanished_host;
mod verdicts;
mod why;
