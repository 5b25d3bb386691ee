//! The drivers' tests, in one test binary: dbmeter's own MySQL client
//! against a throwaway MariaDB (`mysql_wire`), its own PostgreSQL client
//! against a throwaway PostgreSQL (`pg_wire`), and SQLite's values
//! (`sqlite_values`).

mod mysql_wire;
mod pg_wire;
mod sqlite_values;
