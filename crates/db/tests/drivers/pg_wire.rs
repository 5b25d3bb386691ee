//! dbmeter's PostgreSQL client against a throwaway server: values of
//! several types (prepared and not) and their text as psql prints it,
//! NULL and bytea values both ways, server errors and their SQLSTATEs,
//! errors inside transactions, several results from one query, long rows,
//! COPY with escapes, cancel requests, statement_timeout, a terminated
//! backend and the reconnect after it.

use dbmeter_db::{
    ConnectOptions, Connection, ErrorKind, Outcome, Param, PgArg, PgCell, PgClient, PsMode, Target,
    Value,
};
use dbmeter_server::{Flavor, Server};
use std::time::{Duration, Instant};

fn start() -> Option<Server> {
    dbmeter_testkit::servers::start(Flavor::Postgres)
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
        Some(Value::Text("t".into())),
        None,
    ];
    assert_eq!(out, want);
    let mut text = connect_with(&server, |o| o.ps_mode = PsMode::Disable);
    let select2 = text.register("SELECT id, s, b, n, c, v, f, NULL::int FROM t WHERE id = ?");
    let mut out2 = Vec::new();
    assert_eq!(text.fetch(select2, &[Param::Int(1)], &mut out2), Ok(1));
    assert_eq!(out2, want);
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

/// Runs `sql` with psql (the real client, against the same server) and
/// returns the fields of its one row as psql prints them (unaligned).
fn psql(server: &Server, sql: &str) -> Vec<String> {
    let out = std::process::Command::new("psql")
        .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"])
        .args([
            "-F",
            "\u{1f}",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "test",
        ])
        .args(["-p", &server.port().to_string(), "-c", sql])
        .env("PGCLIENTENCODING", "UTF8")
        .env_remove("PGTZ")
        .env_remove("PGDATESTYLE")
        .env_remove("PGOPTIONS")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run psql (is PostgreSQL's bin directory on PATH?): {e}")
        });
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text.strip_suffix('\n').unwrap_or(&text);
    assert!(!line.contains('\n'), "psql printed several rows: {text}");
    line.split('\u{1f}').map(str::to_string).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A fetched value as psql prints it.
fn printed(v: &Option<Value>) -> String {
    match v {
        None => "<NULL>".into(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Text(s)) => s.clone(),
        Some(Value::Bytes(b)) => format!("\\x{}", hex(b)),
    }
}

/// Values of every common type come back as the text PostgreSQL prints
/// (what psql shows), from prepared statements and plain SQL alike;
/// integers as integers, bytea as its bytes.
#[test]
fn values_print_as_postgresql_does() {
    let Some(server) = start() else {
        return;
    };
    let all: Vec<u8> = (0..=255u8).collect();
    // `{1}` and `{2}` are parameters: a NULL, and bytes.
    let sql = r#"SELECT '2024-02-29'::date, '2024-02-29 13:45:06.5'::timestamp,
        '2024-02-29 13:45:06.123456+02'::timestamptz, '13:45:06'::time,
        '13:45:06.25+05:30'::timetz, '1 day 02:00'::interval,
        '-1 year 2 mons 3 days 04:05:06.7'::interval,
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 12345.6789::numeric(12,4),
        -0.05::numeric, 'NaN'::numeric, true, false, '\x00ff10'::bytea,
        '{"b": [1, 2.50, null], "a": "x"}'::json,
        '{"b": [1, 2.50, null], "a": "x"}'::jsonb, ARRAY[1,NULL,3],
        ARRAY['a b', 'c"d', NULL, '', 'NULL', 'e\f', '{x}'], ARRAY[[1,2],[3,4]]::int8[],
        '{}'::int[], ARRAY['2024-01-02'::date], '192.168.0.1/24'::inet, '::1'::inet,
        '10.0.0.0/8'::cidr, '08:00:2b:01:02:03'::macaddr, 0.1::float8, 1e20::float8,
        'NaN'::float8, '-Infinity'::float8, 1.1::float4, 'x'::char(3), 'abc'::varchar,
        'abc'::name, 42::oid, int4range(1, 10), point(1.5, 2), 32767::int2,
        (-2147483648)::int4, 9223372036854775807::int8, 'é'::text, {1}::text IS NULL,
        {2}::bytea"#;
    let want = psql(
        &server,
        &sql.replace("{1}", "NULL")
            .replace("{2}", &format!("'\\x{}'", hex(&all))),
    );
    assert_eq!(want.len(), 42, "{want:?}");
    assert_eq!(want[0], "2024-02-29");
    assert_eq!(want[17], r#"{"a b","c\"d",NULL,"","NULL","e\\f","{x}"}"#);
    let ours = sql.replace("{1}", "?").replace("{2}", "?");
    let params = [Param::Null, Param::Bytes(&all)];
    for ps in [PsMode::Auto, PsMode::Disable] {
        let mut c = connect_with(&server, |o| o.ps_mode = ps);
        let id = c.register(&ours);
        let mut out = Vec::new();
        assert_eq!(c.fetch(id, &params, &mut out), Ok(1), "{ps:?}");
        let got: Vec<String> = out.iter().map(printed).collect();
        assert_eq!(got, want, "{ps:?}");
        // Integers are integers, bytea is bytes, the rest text.
        assert_eq!(out[36], Some(Value::Int(32767)), "{ps:?}");
        assert_eq!(out[38], Some(Value::Int(i64::MAX)), "{ps:?}");
        assert_eq!(
            out[13],
            Some(Value::Bytes(vec![0, 0xff, 0x10].into())),
            "{ps:?}"
        );
        assert_eq!(out[41], Some(Value::Bytes(all.clone().into())), "{ps:?}");
        assert_eq!(out[11], Some(Value::Text("t".into())), "{ps:?}");
        assert_eq!(out[33], Some(Value::Text("42".into())), "{ps:?}");
        // Every row of a plain query is text as psql prints it.
        let plain = sql
            .replace("{1}", "NULL")
            .replace("{2}", &format!("'\\x{}'", hex(&all)));
        let r = c.query_rows(&plain).unwrap();
        let rows: Vec<String> = r.rows[0].iter().map(|v| v.clone().unwrap()).collect();
        assert_eq!(rows, want);
    }
}

/// NULL and bytes parameters are stored as they are, prepared or as plain
/// SQL, and through COPY; bytea comes back byte-exact.
#[test]
fn nulls_and_bytes_round_trip() {
    let Some(server) = start() else {
        return;
    };
    let all: Vec<u8> = (0..=255u8).collect();
    let mut c = connect(&server);
    c.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, v BYTEA, t TEXT, n INTEGER)")
        .unwrap();
    let mut plain = connect_with(&server, |o| o.ps_mode = PsMode::Disable);
    let text = "a\\b'c\td";
    for (conn, first) in [(&mut c, 1), (&mut plain, 3)] {
        let insert = conn.register("INSERT INTO b VALUES (?, ?, ?, ?)");
        let full = [
            Param::Int(first),
            Param::Bytes(&all),
            Param::Text(text),
            Param::Null,
        ];
        assert_eq!(conn.run(insert, &full), Ok(Outcome::Affected(1)));
        let nulls = [Param::Int(first + 1), Param::Null, Param::Null, Param::Null];
        assert_eq!(conn.run(insert, &nulls), Ok(Outcome::Affected(1)));
    }
    let mut n = 4;
    let mut next = |row: &mut Vec<Value>| {
        n += 1;
        if n > 1000 {
            return false;
        }
        let mut bytes = all.clone();
        bytes.rotate_left(n as usize % 256);
        row.push(Value::Int(n));
        row.push(Value::Bytes(bytes.into()));
        row.push(Value::Text(text.into()));
        true
    };
    assert_eq!(c.bulk_insert("b", &["id", "v", "t"], &mut next), Ok(996));

    // What the server stored, in its own words.
    let r = c
        .query_rows("SELECT encode(v, 'hex'), t, n FROM b WHERE id IN (1, 3) ORDER BY id")
        .unwrap();
    let stored = Some(hex(&all));
    assert_eq!(r.rows[0], [stored.clone(), Some(text.into()), None]);
    assert_eq!(r.rows[0], r.rows[1]);
    assert_eq!(
        c.query_i64("SELECT COUNT(*) FROM b WHERE v IS NULL AND t IS NULL AND n IS NULL"),
        Ok(Some(2))
    );
    let mut rotated = all.clone();
    rotated.rotate_left(777 % 256);
    assert_eq!(
        c.query_rows("SELECT encode(v, 'hex') FROM b WHERE id = 777")
            .unwrap()
            .rows[0][0],
        Some(hex(&rotated))
    );

    // Read back, prepared and as plain SQL; a bytea parameter finds rows.
    for conn in [&mut c, &mut plain] {
        let select = conn.register("SELECT id, v, t, n FROM b WHERE id < ? ORDER BY id");
        let mut out = Vec::new();
        assert_eq!(conn.fetch(select, &[Param::Int(5)], &mut out), Ok(4));
        let full = |id| {
            [
                Some(Value::Int(id)),
                Some(Value::Bytes(all.clone().into())),
                Some(Value::Text(text.into())),
                None,
            ]
        };
        let nulls = |id| [Some(Value::Int(id)), None, None, None];
        let want: Vec<Option<Value>> = [full(1), nulls(2), full(3), nulls(4)].concat();
        assert_eq!(out, want);
        let find = conn.register("SELECT id FROM b WHERE v = ? ORDER BY id");
        let mut out = Vec::new();
        // Rows 9, 265, 521 and 777 hold the bytes rotated by 9.
        assert_eq!(conn.fetch(find, &[Param::Bytes(&rotated)], &mut out), Ok(4));
        assert_eq!(out[3], Some(Value::Int(777)));
        let mut out = Vec::new();
        assert_eq!(conn.fetch(find, &[Param::Null], &mut out), Ok(0));
    }
}
