//! The SQLite driver takes and returns the same values as the MySQL and
//! PostgreSQL clients: NULL parameters, bytes (blobs) byte-exact, with
//! prepared statements, plain SQL and bulk loads.

use dbmeter_db::{ConnectOptions, Connection, Outcome, Param, PsMode, Target, Value};

#[test]
fn nulls_and_blobs_round_trip() {
    let dir = std::env::temp_dir().join(format!("dbmeter-sqlite-values-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = Target::Sqlite {
        path: dir.join("v.sqlite"),
        implicit: false,
    };
    let connect = |ps| {
        let mut opts = ConnectOptions::new(target.clone());
        opts.ps_mode = ps;
        Connection::connect(&opts).unwrap()
    };
    let all: Vec<u8> = (0..=255u8).collect();
    let text = "é \\ ' \t\n x";
    let mut c = connect(PsMode::Auto);
    let mut plain = connect(PsMode::Disable);
    c.execute("CREATE TABLE v (id INTEGER PRIMARY KEY, b BLOB, t TEXT, n INTEGER)")
        .unwrap();
    for (conn, first) in [(&mut c, 1), (&mut plain, 3)] {
        let insert = conn.register("INSERT INTO v VALUES (?, ?, ?, ?)");
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
        if n > 6 {
            return false;
        }
        row.extend([
            Value::Int(n),
            Value::Bytes(all.clone().into()),
            Value::Text(text.into()),
        ]);
        true
    };
    assert_eq!(c.bulk_insert("v", &["id", "b", "t"], &mut next), Ok(2));
    let stored = c
        .query_rows("SELECT hex(b), typeof(b) FROM v WHERE id IN (1, 3, 5, 6)")
        .unwrap();
    let hex: String = all.iter().map(|x| format!("{x:02X}")).collect();
    for row in stored.rows {
        assert_eq!(row, [Some(hex.clone()), Some("blob".into())]);
    }
    for conn in [&mut c, &mut plain] {
        let select = conn.register("SELECT id, b, t, n FROM v WHERE id < ? ORDER BY id");
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
        assert_eq!(out, [full(1), nulls(2), full(3), nulls(4)].concat());
        let find = conn.register("SELECT count(*) FROM v WHERE b = ?");
        let mut out = Vec::new();
        conn.fetch(find, &[Param::Bytes(&all)], &mut out).unwrap();
        assert_eq!(out, [Some(Value::Int(4))]);
    }
    drop((c, plain));
    let _ = std::fs::remove_dir_all(&dir);
}
