//! The start barrier of sharded runs (`Store::meet`), checked the same way
//! on an SQLite file and on a throwaway PostgreSQL server: shards in
//! threads, each with its own connection, as processes would have.

use dbmeter_server::Flavor;
use dbmeter_store::{Barrier, BarrierError, Meeting, Store};
use std::time::Duration;

const POLL: Duration = Duration::from_millis(20);

fn barrier(name: &str, shard: u64, shards: u64, timeout_ms: u64) -> Barrier {
    Barrier {
        name: name.into(),
        shard,
        shards,
        timeout: Duration::from_millis(timeout_ms),
        margin: Duration::from_millis(500),
        host: "test".into(),
    }
}

/// Shards `which` of `shards` meet at `name`, each in a thread.
fn meet_all(
    spec: &str,
    name: &str,
    shards: u64,
    which: &[u64],
) -> Vec<Result<Meeting, BarrierError>> {
    let threads: Vec<_> = which
        .iter()
        .map(|&i| {
            let (spec, b) = (spec.to_string(), barrier(name, i, shards, 30_000));
            std::thread::spawn(move || {
                let mut st = Store::open(&spec).map_err(BarrierError::Store)?;
                st.meet(&b, POLL, &|| false)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

fn contract(spec: &str) {
    let never = || false;
    // Three shards meet: one start for all, the latest arrival plus the
    // margin, and one token.
    let met: Vec<Meeting> = meet_all(spec, "b1", 3, &[0, 1, 2])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(met[0].token, "b1#1");
    assert!(met.iter().all(|m| *m == met[0]), "{met:?}");
    // The same name again (a campaign run a second time): a new round.
    let again: Vec<Meeting> = meet_all(spec, "b1", 3, &[2, 0, 1])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(again.iter().all(|m| m.token == "b1#2"), "{again:?}");
    assert!(again[0].start_unix_s > met[0].start_unix_s);

    // A shard that never comes: the wait ends with the missing shard
    // named, and the arrival is taken back.
    let mut st = Store::open(spec).unwrap();
    let e = st
        .meet(&barrier("b2", 0, 2, 200), POLL, &never)
        .unwrap_err();
    match &e {
        BarrierError::Timeout(m) => {
            assert!(
                m.contains("'b2'") && m.contains("shard 1/2 did not arrive"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    let e = st
        .meet(&barrier("b2", 1, 2, 200), POLL, &never)
        .unwrap_err();
    assert!(e.to_string().contains("shard 0/2 did not arrive"), "{e}");
    // Both come: they meet in a round of their own.
    let met = meet_all(spec, "b2", 2, &[0, 1]);
    let (a, b) = (met[0].clone().unwrap(), met[1].clone().unwrap());
    assert_eq!(a, b);

    // Shards that disagree on their number: the later one is told.
    let waiting = {
        let spec = spec.to_string();
        std::thread::spawn(move || {
            let mut st = Store::open(&spec).unwrap();
            st.meet(&barrier("b3", 0, 2, 3_000), POLL, &|| false)
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let e = st
        .meet(&barrier("b3", 1, 3, 3_000), POLL, &never)
        .unwrap_err();
    let first = waiting.join().unwrap();
    assert!(first.is_err(), "{first:?}");
    // The second arrival found the first (it joined its round) unless
    // the first had already given up; either way it did not start.
    assert!(
        e.to_string().contains("disagree") || matches!(e, BarrierError::Timeout(_)),
        "{e}"
    );

    // A stop ends the wait.
    let e = st
        .meet(&barrier("b4", 0, 2, 30_000), POLL, &|| true)
        .unwrap_err();
    assert_eq!(e, BarrierError::Stopped);
    // A shard out of range.
    assert!(st.meet(&barrier("b5", 2, 2, 100), POLL, &never).is_err());
}

#[test]
fn sqlite_barrier() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    contract(path.to_str().unwrap());
}

/// A round left by a shard that died while waiting (no row taken back)
/// and older than the timeout is not joined: the later shard waits in a
/// round of its own.
#[test]
fn sqlite_barrier_skips_a_stale_round() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let spec = path.to_str().unwrap();
    Store::open(spec).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO barriers (name, round_no, shard, shards, arrived_at, host) VALUES ('s', 1, 0, 2, 1000.0, 'gone')",
        [],
    )
    .unwrap();
    let mut st = Store::open(spec).unwrap();
    let e = st
        .meet(&barrier("s", 1, 2, 200), POLL, &|| false)
        .unwrap_err();
    assert!(e.to_string().contains("shard 0/2 did not arrive"), "{e}");
    // A fresh round's arrival (not stale) is joined.
    let met = meet_all(spec, "s", 2, &[0, 1]);
    assert_eq!(met[0], met[1]);
}

#[test]
fn postgres_barrier() {
    let Some(server) = dbmeter_testkit::servers::start(Flavor::Postgres) else {
        return;
    };
    contract(&server.url());
}
