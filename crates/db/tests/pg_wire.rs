//! dbmeter's PostgreSQL client against a throwaway server: values of
//! several types (prepared and not), server errors and their SQLSTATEs,
//! errors inside transactions, several results from one query, long rows,
//! COPY with escapes, cancel requests, statement_timeout, a terminated
//! backend and the reconnect after it.

use dbmeter_db::{
    ConnectOptions, Connection, ErrorKind, Outcome, Param, PgArg, PgCell, PgClient, PsMode, Target,
    Value,
};
use dbmeter_server::{Flavor, Server, ServerOptions, available};
use std::time::{Duration, Instant};

fn start() -> Option<Server> {
    if !available(Flavor::Postgres) {
        if std::env::var_os("DBMETER_REQUIRE_SERVERS").is_some() {
            panic!("DBMETER_REQUIRE_SERVERS is set, but PostgreSQL is not installed");
        }
        eprintln!("skipping: PostgreSQL binaries or service user not found");
        return None;
    }
    Some(Server::start(&ServerOptions::new(Flavor::Postgres)).unwrap_or_else(|e| panic!("{e}")))
}

fn connect_with(server: &Server, f: impl FnOnce(&mut ConnectOptions)) -> Connection {
    let target = Target::parse(&server.url()).unwrap();
    let mut opts = ConnectOptions::new(target);
    f(&mut opts);
    Connection::connect(&opts).unwrap_or_else(|e| panic!("{e}"))
}

fn connect(server: &Server) -> Connection {
    connect_with(server, |_| {})
}

#[test]
fn values_errors_and_results() {
    let Some(server) = start() else {
        return;
    };
    let mut c = connect(&server);
    assert!(c.server_version().starts_with("PostgreSQL 1"));
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, s SMALLINT, b BIGINT, n NUMERIC(10,2), c CHAR(5), v TEXT, f BOOLEAN)")
        .unwrap();
    let insert =
        c.register("INSERT INTO t VALUES (?, ?, ?, CAST(CAST(? AS TEXT) AS NUMERIC), ?, ?, true)");
    let row = |id: i64, v: &'static str| {
        [
            Param::Int(id),
            Param::Int(-3),
            Param::Int(1 << 40),
            Param::Text("12.5"),
            Param::Text("ab"),
            Param::Text(v),
        ]
    };
    assert_eq!(c.run(insert, &row(1, "x'y")), Ok(Outcome::Affected(1)));
    // A unique violation: its SQLSTATE, and the connection goes on.
    let e = c.run(insert, &row(1, "z")).unwrap_err();
    assert_eq!(
        (e.kind, e.code.as_str()),
        (ErrorKind::Other, "23505"),
        "{e}"
    );
    // Out of range for INTEGER: refused before sending.
    assert!(c.run(insert, &row(1 << 33, "z")).is_err());
    assert_eq!(
        c.run(insert, &row(2, "line\ttab")),
        Ok(Outcome::Affected(1))
    );
    let e = c.execute("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(e.code, "42P01", "{e}");
    assert_eq!(c.query_i64("SELECT COUNT(*) FROM t"), Ok(Some(2)));

    // Values of each type, prepared (binary) and not (text).
    let select = c.register("SELECT id, s, b, n, c, v, f, NULL::int FROM t WHERE id = ?");
    let mut out = Vec::new();
    assert_eq!(c.fetch(select, &[Param::Int(1)], &mut out), Ok(1));
    let want = vec![
        Some(Value::Int(1)),
        Some(Value::Int(-3)),
        Some(Value::Int(1 << 40)),
        Some(Value::Text("12.50".into())),
        Some(Value::Text("ab   ".into())),
        Some(Value::Text("x'y".into())),
        Some(Value::Int(1)),
        None,
    ];
    assert_eq!(out, want);
    let mut text = connect_with(&server, |o| o.ps_mode = PsMode::Disable);
    let select2 = text.register("SELECT id, s, b, n, c, v, NULL::int FROM t WHERE id = ?");
    let mut out2 = Vec::new();
    assert_eq!(text.fetch(select2, &[Param::Int(1)], &mut out2), Ok(1));
    assert_eq!(out2[..6], want[..6]);
    assert_eq!(out2[6], None);
    let range = c.register("SELECT id FROM t WHERE id BETWEEN ? AND ? ORDER BY id");
    assert_eq!(
        c.run(range, &[Param::Int(0), Param::Int(9)]),
        Ok(Outcome::Rows(2))
    );
    let update = c.register("UPDATE t SET v = ? WHERE id > ?");
    assert_eq!(
        c.run(update, &[Param::Text("u"), Param::Int(0)]),
        Ok(Outcome::Affected(2))
    );

    // An error inside a transaction: the transaction is aborted until
    // ROLLBACK, and the connection stays in step.
    c.execute("BEGIN").unwrap();
    assert!(c.run(insert, &row(1, "dup")).is_err());
    let e = c.run(range, &[Param::Int(0), Param::Int(9)]).unwrap_err();
    assert_eq!(e.code, "25P02", "{e}");
    c.execute("ROLLBACK").unwrap();
    assert_eq!(
        c.run(range, &[Param::Int(0), Param::Int(9)]),
        Ok(Outcome::Rows(2))
    );

    // Several statements in one query; an empty one.
    assert_eq!(
        c.execute("SELECT 1; SELECT 2 UNION ALL SELECT 3"),
        Ok(Outcome::Rows(3))
    );
    assert_eq!(c.execute(""), Ok(Outcome::Affected(0)));
    let r = c.query_rows("SELECT NULL AS n, 'v' AS v").unwrap();
    assert_eq!(r.columns, ["n", "v"]);
    assert_eq!(r.rows, vec![vec![None, Some("v".to_string())]]);

    // A row larger than the read buffer, prepared and not.
    let big = c.register("SELECT repeat('ab', 1000000), ?::int");
    let mut out = Vec::new();
    assert_eq!(c.fetch(big, &[Param::Int(5)], &mut out), Ok(1));
    assert_eq!(
        out[0]
            .as_ref()
            .map(|v| matches!(v, Value::Text(s) if s.len() == 2_000_000)),
        Some(true)
    );
    assert_eq!(out[1], Some(Value::Int(5)));
    let r = c.query_rows("SELECT length(repeat('x', 3000000))").unwrap();
    assert_eq!(r.rows[0][0].as_deref(), Some("3000000"));

    // COPY with characters that need escaping.
    c.execute("CREATE TABLE cp (id INTEGER, v TEXT)").unwrap();
    let mut n = 0;
    let mut next = |row: &mut Vec<Value>| {
        n += 1;
        if n > 50_000 {
            return false;
        }
        row.push(Value::Int(n));
        row.push(Value::Text(format!("a\\b\tc\nd\re{n}")));
        true
    };
    assert_eq!(c.bulk_insert("cp", &["id", "v"], &mut next), Ok(50_000));
    assert_eq!(
        c.query_i64("SELECT COUNT(*) FROM cp WHERE v = E'a\\\\b\\tc\\nd\\re' || id"),
        Ok(Some(50_000))
    );
    // A COPY the server refuses (a bad row): an error, then in step again.
    let mut n = 0;
    let mut bad = |row: &mut Vec<Value>| {
        n += 1;
        if n > 200_000 {
            return false;
        }
        row.push(Value::Text(if n == 3 { "x".into() } else { n.to_string() }));
        row.push(Value::Text("v".into()));
        true
    };
    let e = c.bulk_insert("cp", &["id", "v"], &mut bad).unwrap_err();
    assert_eq!(e.code, "22P02", "{e}");
    assert_eq!(c.query_i64("SELECT COUNT(*) FROM cp"), Ok(Some(50_000)));
}

#[test]
fn cancel_timeout_and_lost_connections() {
    let Some(server) = start() else {
        return;
    };
    let mut c = connect(&server);
    // A cancel request from another thread ends a long statement.
    let stop = c.interrupter().unwrap();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        stop();
    });
    let t0 = Instant::now();
    let e = c.execute("SELECT pg_sleep(30)").unwrap_err();
    canceller.join().unwrap();
    assert_eq!(
        (e.kind, e.code.as_str()),
        (ErrorKind::Interrupted, "57014"),
        "{e}"
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(c.query_i64("SELECT 7"), Ok(Some(7)));

    // statement_timeout: a timeout, not an interruption.
    let mut t = connect_with(&server, |o| {
        o.query_timeout = Some(Duration::from_millis(200))
    });
    let sleep = t.register("SELECT pg_sleep(?)");
    let e = t.run(sleep, &[Param::Int(5)]).unwrap_err();
    assert_eq!(
        (e.kind, e.code.as_str()),
        (ErrorKind::Timeout, "57014"),
        "{e}"
    );
    assert_eq!(t.run(sleep, &[Param::Int(0)]), Ok(Outcome::Rows(1)));

    // A terminated backend: the connection is lost, and a reconnect
    // (statements prepared again) works.
    let q = c.register("SELECT pg_backend_pid()");
    let mut out = Vec::new();
    c.fetch(q, &[], &mut out).unwrap();
    let Some(Some(Value::Int(pid))) = out.first().cloned() else {
        panic!("no pid: {out:?}");
    };
    let mut other = connect(&server);
    other
        .execute(&format!("SELECT pg_terminate_backend({pid})"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let e = c.run(q, &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    let e = c.run(q, &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    c.reconnect().unwrap();
    assert_eq!(c.run(q, &[]), Ok(Outcome::Rows(1)));
}

#[test]
fn client_for_tools() {
    let Some(server) = start() else {
        return;
    };
    let Ok(Target::Postgres(t)) = Target::parse(&server.url()) else {
        panic!("not a PostgreSQL URL");
    };
    let mut c = PgClient::connect(&t, "the server").unwrap();
    c.batch("CREATE TABLE k (i INTEGER, r DOUBLE PRECISION, s TEXT, b BYTEA, f BOOLEAN); CREATE INDEX ON k (i)")
        .unwrap();
    let (_, n) = c
        .query(
            "INSERT INTO k VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10)",
            &[
                PgArg::Int(1),
                PgArg::Real(0.1),
                PgArg::Text("é"),
                PgArg::Bytes(&[0, 1, 255]),
                PgArg::Text("true"),
                PgArg::Null,
                PgArg::Int(2),
                PgArg::Null,
                PgArg::Null,
                PgArg::Null,
            ],
        )
        .unwrap();
    assert_eq!(n, 2);
    let (rows, n) = c
        .query("SELECT i, r, s, b, f FROM k ORDER BY i NULLS LAST", &[])
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        rows,
        vec![
            vec![
                PgCell::Int(1),
                PgCell::Real(0.1),
                PgCell::Text("é".into()),
                PgCell::Bytes(vec![0, 1, 255]),
                PgCell::Int(1)
            ],
            vec![
                PgCell::Null,
                PgCell::Real(2.0),
                PgCell::Null,
                PgCell::Null,
                PgCell::Null
            ],
        ]
    );
    let e = c.query("SELECT nope", &[]).unwrap_err();
    assert_eq!(e.code, "42703", "{e}");
    assert!(!c.is_closed());
    let (rows, _) = c
        .query("SELECT count(*) FROM k WHERE i = $1", &[PgArg::Int(1)])
        .unwrap();
    assert_eq!(rows, vec![vec![PgCell::Int(1)]]);
}
