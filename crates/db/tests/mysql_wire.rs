//! dbmeter's MySQL client against a throwaway MariaDB server: values and
//! results longer than one 16 MiB packet, server errors and their codes,
//! several results from one query, KILL QUERY, a killed connection.

use dbmeter_db::{ConnectOptions, Connection, ErrorKind, Outcome, Param, Target};
use dbmeter_server::{Flavor, Server, ServerOptions, available};
use std::time::Duration;

fn start(settings: &[(&str, &str)]) -> Option<Server> {
    if !available(Flavor::MariaDb) {
        if std::env::var_os("DBMETER_REQUIRE_SERVERS").is_some() {
            panic!("DBMETER_REQUIRE_SERVERS is set, but MariaDB is not installed");
        }
        eprintln!("skipping: MariaDB binaries or service user not found");
        return None;
    }
    let mut opts = ServerOptions::new(Flavor::MariaDb);
    opts.settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Some(Server::start(&opts).unwrap_or_else(|e| panic!("{e}")))
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
