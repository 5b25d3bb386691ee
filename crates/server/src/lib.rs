//! Throwaway database servers that dbmeter starts itself: a MariaDB or
//! PostgreSQL server on a free port of 127.0.0.1, with a fresh data
//! directory, a database `test` and a superuser without password. The test
//! suite uses them as fixtures; `dbmeter server` starts detached ones that
//! outlive it, remembered by [`managed::Home`].
//!
//! ```no_run
//! use dbmeter_server::{Flavor, Server, ServerOptions};
//!
//! let server = Server::start(&ServerOptions::new(Flavor::Postgres))?;
//! println!("{} at {}", server.version(), server.url());
//! // Dropping it stops the server and removes its files.
//! # Ok::<(), dbmeter_server::ServerError>(())
//! ```
//!
//! Where things are:
//!
//! - `server.rs`: [`Server`]: init, start, wait until ready, set up, stop,
//!   kill, restart, clean up on drop.
//! - `options.rs`: [`ServerOptions`], what [`Server::start`] is given.
//! - `flavor.rs`: [`Flavor`] (MariaDB or PostgreSQL) and [`available`].
//! - `engine.rs`: the `Engine` trait, what differs between flavors, and
//!   `Dirs`, where a server's files are.
//! - `mariadb.rs` and `postgres.rs`: how each flavor is initialized,
//!   started and set up (its `Engine`).
//! - `process.rs`: users, spawning, signals and ports.
//! - `binaries.rs`: finds the programs.
//! - [`managed`]: the state of detached servers and their snapshots.
//! - `affinity.rs` and `host.rs`: pin CPUs and drop the page cache.
//! - `error.rs`: [`ServerError`].
//!
//! When run as root, servers run as the system users `mysql` and `postgres`
//! (PostgreSQL refuses root). Servers die with the process that started
//! them, even when it is killed, unless started `detached`.

mod affinity;
mod binaries;
mod engine;
mod error;
mod flavor;
mod host;
pub mod managed;
mod mariadb;
mod options;
mod postgres;
mod process;
mod server;

pub use affinity::{allowed_cpus, cpus_allowed_list, format_cpu_list, parse_cpu_list, pin_process};
pub use error::ServerError;
pub use flavor::{Flavor, available};
pub use host::drop_caches;
pub use options::ServerOptions;
pub use server::Server;
