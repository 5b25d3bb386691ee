//! The `server` crate's tests, in one test binary: real MariaDB and
//! PostgreSQL servers started, asked, restarted, killed and stopped (the
//! modules `mariadb` and `postgres` run the same checks, written once in
//! `checks`), and servers that die with the process that started them
//! (`orphans`).

mod checks;
mod orphans;

/// A module of tests for one flavor: each check of `checks`, run when the
/// flavor's server can run here (or skipped with a message).
macro_rules! flavor_tests {
    ($module:ident, $flavor:expr, [$($name:ident),* $(,)?]) => {
        mod $module {
            use dbmeter_testkit::servers::can_run;

            $(
                #[test]
                fn $name() {
                    if can_run($flavor) {
                        crate::checks::$name($flavor);
                    }
                }
            )*
        }
    };
}

macro_rules! both_flavors {
    ($($name:ident),* $(,)?) => {
        flavor_tests!(mariadb, dbmeter_server::Flavor::MariaDb, [$($name),*]);
        flavor_tests!(postgres, dbmeter_server::Flavor::Postgres, [$($name),*]);
    };
}

both_flavors!(
    starts_and_answers,
    restart_keeps_data,
    kill_then_restart_recovers,
    stop_is_clean_and_idempotent,
    port_in_use_is_a_clear_error,
    bad_setting_quotes_the_log,
    two_at_once,
    given_datadir_is_kept_and_reused,
);
