//! Real MariaDB servers: see checks.rs for what each test checks.

use crate::checks;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::can_run;

const FLAVOR: Flavor = Flavor::MariaDb;

macro_rules! flavor_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                if can_run(FLAVOR) {
                    checks::$name(FLAVOR);
                }
            }
        )*
    };
}

flavor_tests!(
    starts_and_answers,
    restart_keeps_data,
    kill_then_restart_recovers,
    stop_is_clean_and_idempotent,
    port_in_use_is_a_clear_error,
    bad_setting_quotes_the_log,
    two_at_once,
    given_datadir_is_kept_and_reused,
);
