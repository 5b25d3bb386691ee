//! The `server` crate's tests, in one test binary: real MariaDB and
//! PostgreSQL servers started, asked, restarted, killed and stopped
//! (`mariadb`, `postgres`, with the checks both share in `checks`), and
//! servers that die with the process that started them (`orphans`).

mod checks;
mod mariadb;
mod orphans;
mod postgres;
