//! `prepare tpcc --threads=N` loads warehouses in parallel: the server
//! sees N bulk loads at once (MariaDB: bulk INSERTs, or LOAD DATA with
//! `?load=infile`; PostgreSQL: COPY).

use crate::common::*;
use crate::procs::Watched;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask_n, start, try_ask};
use std::time::{Duration, Instant};

/// How many bulk loads the server runs right now; None when the question
/// failed (the server busy starting a connection, say).
fn loads_now(server: &Server, sql: &str) -> Option<i64> {
    try_ask(server, sql).ok()?.parse().ok()
}

fn loads_in_parallel(flavor: Flavor) {
    let Some(server) = start(flavor) else {
        return;
    };
    let sql = match flavor {
        Flavor::MariaDb => {
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
             WHERE INFO LIKE 'LOAD DATA%' OR INFO LIKE 'INSERT INTO%'"
        }
        Flavor::Postgres => {
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY%' AND state = 'active'"
        }
    };
    // The question works (and nothing loads yet).
    assert_eq!(ask_n(&server, sql), 0);
    let s = Scratch::new();
    let d = format!("--db={}", server.url());
    let mut c = s.cmd(&["prepare", "tpcc", &d, "--warehouses=4", "--threads=4"]);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE");
    let mut prepare = Watched::spawn(c);
    let mut most = 0;
    let mut samples = 0;
    let until = Instant::now() + Duration::from_secs(900);
    while prepare.running() && Instant::now() < until {
        if let Some(n) = loads_now(&server, sql) {
            most = most.max(n);
            samples += 1;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    let end = prepare.finish(Duration::from_secs(5));
    assert!(end.in_time, "prepare did not end:\n{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    assert!(
        most >= 4,
        "at most {most} bulk loads at once in {samples} looks:\n{}",
        end.output()
    );
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM warehouse"), 4);
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM stock"), 400_000);
}

#[test]
fn tpcc_loads_four_warehouses_at_once_on_mariadb() {
    loads_in_parallel(Flavor::MariaDb);
}

#[test]
fn tpcc_loads_four_warehouses_at_once_on_postgres() {
    loads_in_parallel(Flavor::Postgres);
}
