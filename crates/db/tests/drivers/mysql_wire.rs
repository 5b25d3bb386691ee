//! dbmeter's MySQL client against a throwaway MariaDB server: values and
//! results longer than one 16 MiB packet, server errors and their codes,
//! several results from one query, KILL QUERY, a killed connection, NULL
//! and binary values both ways (prepared, plain SQL, bulk loads).

use dbmeter_db::{ConnectOptions, Connection, ErrorKind, Outcome, Param, PsMode, Target, Value};
use dbmeter_server::{Flavor, Server};
use std::time::Duration;

fn start(settings: &[(&str, &str)]) -> Option<Server> {
    dbmeter_testkit::servers::start_with(Flavor::MariaDb, settings)
}

fn connect(server: &Server) -> Connection {
    let target = Target::parse(&server.url()).unwrap();
    Connection::connect(&ConnectOptions::new(target)).unwrap_or_else(|e| panic!("{e}"))
}

fn one(c: &mut Connection, sql: &str) -> Option<String> {
    let r = c.query_rows(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next().flatten())
}

#[test]
fn values_and_rows_longer_than_a_packet() {
    let Some(server) = start(&[("max-allowed-packet", "64M")]) else {
        return;
    };
    let mut c = connect(&server);
    c.execute("CREATE TABLE big (id INT PRIMARY KEY, c LONGTEXT)")
        .unwrap();
    // 20 MB: a parameter sent as two packets, and rows read back as two.
    let text: String = (0..20_000_000u32)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    let insert = c.register("INSERT INTO big VALUES (?, ?)");
    let r = c.run(insert, &[Param::Int(1), Param::Text(&text)]);
    assert_eq!(r, Ok(Outcome::Affected(1)));
    assert_eq!(
        one(&mut c, "SELECT LENGTH(c) FROM big").as_deref(),
        Some("20000000")
    );
    assert_eq!(
        one(&mut c, "SELECT SUBSTRING(c, 16777213, 8) FROM big"),
        Some(text[16777212..16777220].to_string())
    );
    let rows = c.query_rows("SELECT id, c FROM big").unwrap();
    assert_eq!(rows.columns, ["id", "c"]);
    assert_eq!(rows.rows.len(), 1);
    assert_eq!(rows.rows[0][1].as_deref(), Some(text.as_str()));
    // The binary protocol: the long row is counted, and the connection
    // stays in step for the next statement.
    let select = c.register("SELECT c FROM big WHERE id = ?");
    assert_eq!(c.run(select, &[Param::Int(1)]), Ok(Outcome::Rows(1)));
    assert_eq!(c.run(select, &[Param::Int(2)]), Ok(Outcome::Rows(0)));
    assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
}

#[test]
fn errors_results_and_interruptions() {
    let Some(server) = start(&[]) else {
        return;
    };
    let mut c = connect(&server);
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))")
        .unwrap();
    let insert = c.register("INSERT INTO t VALUES (?, ?)");
    assert_eq!(
        c.run(insert, &[Param::Int(1), Param::Text("x")]),
        Ok(Outcome::Affected(1))
    );
    // A server error: its code, and the connection goes on.
    let e = c
        .run(insert, &[Param::Int(1), Param::Text("y")])
        .unwrap_err();
    assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Other, "1062"), "{e}");
    assert!(e.message.contains("Duplicate entry"), "{e}");
    let e = c.execute("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(e.code, "1146", "{e}");
    assert_eq!(c.query_i64("SELECT COUNT(*) FROM t"), Ok(Some(1)));
    // NULLs in text results.
    let r = c.query_rows("SELECT NULL AS n, 'v' AS v").unwrap();
    assert_eq!(r.rows, vec![vec![None, Some("v".to_string())]]);

    // Several statements in one query: the first result counts, the rest
    // are read so that the next statement gets its own answer.
    assert_eq!(
        c.execute("SELECT id FROM t; SELECT 1, 2; DO 0"),
        Ok(Outcome::Rows(1))
    );
    assert_eq!(c.query_i64("SELECT 41 + 1"), Ok(Some(42)));

    // KILL QUERY from another connection ends a long statement with 1317.
    c.execute("SET SESSION max_recursive_iterations = 4000000000")
        .unwrap();
    let stop = c.interrupter().unwrap();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        stop();
    });
    let long = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) \
                SELECT COUNT(*) FROM r";
    let e = c.execute(long).unwrap_err();
    killer.join().unwrap();
    assert_eq!(
        (e.kind, e.code.as_str()),
        (ErrorKind::Interrupted, "1317"),
        "{e}"
    );
    assert_eq!(c.query_i64("SELECT 7"), Ok(Some(7)));

    // A killed connection is a lost one; reconnecting brings it back,
    // prepared statements included.
    let stop = c.interrupter().unwrap();
    let id = c.query_i64("SELECT CONNECTION_ID()").unwrap().unwrap();
    let mut other = connect(&server);
    other.execute(&format!("KILL CONNECTION {id}")).unwrap();
    let e = c
        .run(insert, &[Param::Int(2), Param::Text("z")])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    c.reconnect().unwrap();
    assert_eq!(
        c.run(insert, &[Param::Int(2), Param::Text("z")]),
        Ok(Outcome::Affected(1))
    );
    assert_eq!(c.query_i64("SELECT COUNT(*) FROM t"), Ok(Some(2)));
    // The interrupter taken before the reconnect stops the new
    // connection's statement (a limit ends it if it does not).
    c.execute("SET SESSION max_recursive_iterations = 4000000000, max_statement_time = 20")
        .unwrap();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        stop();
    });
    let e = c.execute(long).unwrap_err();
    killer.join().unwrap();
    assert_eq!(e.code, "1317", "{e}");
}

fn connect_to(url: &str, ps: PsMode) -> Connection {
    let mut opts = ConnectOptions::new(Target::parse(url).unwrap());
    opts.ps_mode = ps;
    Connection::connect(&opts).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// Every value of every row of `sql`, run as a registered statement.
fn fetch_all(c: &mut Connection, sql: &str, params: &[Param<'_>]) -> Vec<Option<Value>> {
    let id = c.register(sql);
    let mut out = Vec::new();
    c.fetch(id, params, &mut out)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// NULL and binary parameters are stored as they are, and binary columns
/// (VARBINARY, BLOB, BINARY, BIT) come back byte-exact, from prepared
/// statements (binary protocol) and plain SQL (text protocol) alike; the
/// same through each way of bulk loading.
#[test]
fn nulls_and_bytes_round_trip() {
    let Some(server) = start(&[("local-infile", "1")]) else {
        return;
    };
    let url = server.url();
    let mut c = connect_to(&url, PsMode::Auto);
    c.execute(
        "CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, t VARCHAR(300) CHARACTER SET utf8mb4, \
         vb VARBINARY(300), bl BLOB, bn BINARY(4), bt BIT(12), u BIGINT UNSIGNED)",
    )
    .unwrap();
    let all: Vec<u8> = (0..=255u8).collect();
    let text = "é \\ ' \" \t\n x";
    let insert = c.register("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    let full = |id| {
        [
            Param::Int(id),
            Param::Int(-5),
            Param::Text(text),
            Param::Bytes(&all),
            Param::Bytes(&all),
            Param::Bytes(&[0, 0xFF, 0, 1]),
            Param::Bytes(&[0x0A, 0xBC]),
            Param::Text("18446744073709551615"),
        ]
    };
    let mut nulls = [Param::Null; 8];
    nulls[0] = Param::Int(2);
    assert_eq!(c.run(insert, &full(1)), Ok(Outcome::Affected(1)));
    assert_eq!(c.run(insert, &nulls), Ok(Outcome::Affected(1)));
    // The parameter types change back and forth: sent again each time.
    assert_eq!(c.run(insert, &full(3)), Ok(Outcome::Affected(1)));
    let mut one_null = full(4);
    one_null[4] = Param::Null;
    assert_eq!(c.run(insert, &one_null), Ok(Outcome::Affected(1)));

    // What the server stored, in its own words.
    let stored = c
        .query_rows(
            "SELECT id, i IS NULL, HEX(t), HEX(vb), HEX(bl), HEX(bn), HEX(bt) FROM v ORDER BY id",
        )
        .unwrap();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        stored.rows[0],
        [
            s("1"),
            s("0"),
            s(&hex(text.as_bytes())),
            s(&hex(&all)),
            s(&hex(&all)),
            s("00FF0001"),
            s("ABC")
        ]
    );
    assert_eq!(stored.rows[1][1..], [s("1"), None, None, None, None, None]);
    assert_eq!(stored.rows[3][4], None);
    assert_eq!(
        c.query_i64("SELECT COUNT(*) FROM v WHERE bl IS NULL"),
        Ok(Some(2))
    );

    // Read back, prepared and as plain SQL.
    let want_full = |id| {
        vec![
            Some(Value::Int(id)),
            Some(Value::Int(-5)),
            Some(Value::Text(text.into())),
            Some(Value::Bytes(all.clone().into())),
            Some(Value::Bytes(all.clone().into())),
            Some(Value::Bytes(vec![0, 0xFF, 0, 1].into())),
            Some(Value::Bytes(vec![0x0A, 0xBC].into())),
            Some(Value::Text("18446744073709551615".into())),
        ]
    };
    let mut want = want_full(1);
    want.extend(
        [Some(Value::Int(2))]
            .into_iter()
            .chain(std::iter::repeat_n(None, 7)),
    );
    want.extend(want_full(3));
    let mut four = want_full(4);
    four[4] = None;
    want.extend(four);
    let select = "SELECT * FROM v WHERE id > ? ORDER BY id";
    let mut text_conn = connect_to(&url, PsMode::Disable);
    for conn in [&mut c, &mut text_conn] {
        assert_eq!(fetch_all(conn, select, &[Param::Int(0)]), want);
        // Expressions of the binary character set are bytes too; NULL
        // parameters are NULL.
        assert_eq!(
            fetch_all(
                conn,
                "SELECT UNHEX('00FF'), CAST('é' AS BINARY), ?, ? IS NULL, CONCAT('a', ?)",
                &[Param::Null, Param::Null, Param::Bytes(b"\xFFb")]
            ),
            [
                Some(Value::Bytes(vec![0, 0xFF].into())),
                Some(Value::Bytes("é".as_bytes().to_vec().into())),
                None,
                Some(Value::Int(1)),
                Some(Value::Bytes(b"a\xFFb".to_vec().into())),
            ]
        );
        // Rows found by a binary parameter.
        assert_eq!(
            fetch_all(
                conn,
                "SELECT id FROM v WHERE vb = ? ORDER BY id",
                &[Param::Bytes(&all)]
            ),
            [
                Some(Value::Int(1)),
                Some(Value::Int(3)),
                Some(Value::Int(4))
            ]
        );
    }

    // Plain SQL writes the same values (literals) as prepared statements.
    let plain = text_conn.register("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    assert_eq!(text_conn.run(plain, &full(5)), Ok(Outcome::Affected(1)));
    nulls[0] = Param::Int(6);
    assert_eq!(text_conn.run(plain, &nulls), Ok(Outcome::Affected(1)));
    let mut want = want_full(5);
    want.extend(
        [Some(Value::Int(6))]
            .into_iter()
            .chain(std::iter::repeat_n(None, 7)),
    );
    assert_eq!(fetch_all(&mut c, select, &[Param::Int(4)]), want);

    // Bulk loads, each way: bytes and text of every kind, as they are.
    let mut expected = None;
    for load in ["bulk", "infile", "insert"] {
        let mut b = connect_to(&format!("{url}?load={load}"), PsMode::Auto);
        let method = b.bulk_method().unwrap();
        let says = match load {
            "bulk" => "bulk",
            "infile" => "LOAD DATA",
            _ => "multi-row INSERTs",
        };
        assert!(method.contains(says), "{load}: {method}");
        b.execute("DROP TABLE IF EXISTS bulk").unwrap();
        b.execute("CREATE TABLE bulk (id INT PRIMARY KEY, t VARCHAR(300) CHARACTER SET utf8mb4, b BLOB, l VARCHAR(20) CHARACTER SET latin1)")
            .unwrap();
        let mut n = 0i64;
        let mut next = |row: &mut Vec<Value>| {
            n += 1;
            if n > 300 {
                return false;
            }
            row.push(Value::Int(n));
            row.push(Value::Text(format!("{text}{n}")));
            let mut bytes = all.clone();
            bytes.rotate_left(n as usize % 256);
            row.push(Value::Bytes(bytes.into()));
            row.push(Value::Text("\\N".into()));
            true
        };
        assert_eq!(
            b.bulk_insert("bulk", &["id", "t", "b", "l"], &mut next),
            Ok(300)
        );
        let rows = fetch_all(&mut b, "SELECT * FROM bulk ORDER BY id", &[]);
        assert_eq!(rows.len(), 4 * 300, "{load}");
        let mut bytes = all.clone();
        bytes.rotate_left(7);
        assert_eq!(
            rows[4 * 6..4 * 7],
            [
                Some(Value::Int(7)),
                Some(Value::Text(format!("{text}7"))),
                Some(Value::Bytes(bytes.into())),
                Some(Value::Text("\\N".into())),
            ],
            "{load}"
        );
        match &expected {
            None => expected = Some(rows),
            Some(first) => assert!(*first == rows, "{load} loaded other rows than bulk"),
        }
    }
}
