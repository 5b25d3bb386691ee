//! pgbench's script language against the real thing: a throwaway
//! PostgreSQL, pgbench itself for the reference results, and dbmeter's own
//! PostgreSQL client under the script client.
//!
//! - The expression functions (hashes, permute, the random functions with
//!   the same seed, doubles as printed, `\gset`/`\aset` values) give what
//!   pgbench's `debug()` prints, client by client.
//! - The built-in scripts, run through [`Client`] in each query mode,
//!   send the statements they should and leave the tables as pgbench's
//!   TPC-B-like transactions do; the weighted script choice picks what
//!   pgbench picks with the same seed.
//!
//! Run with DBMETER_REQUIRE_SERVERS=1 and DBMETER_REQUIRE_TOOLS=1 so that
//! a missing PostgreSQL or pgbench fails instead of skipping.

use dbmeter_benchmarks::pgbench::{
    Captured, Client, ExecOptions, Host, Query, QueryMode, ScriptSetBuilder, Session, Setup,
    SqlError, SqlErrorKind, SystemHost, TxStatus,
};
use dbmeter_db::{ConnectOptions, Connection, DbError, ErrorKind, Param, StmtId, Target};
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers;
use dbmeter_testkit::tools::PGBENCH;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// pgbench and a PostgreSQL server, or None after saying what is missing.
fn start() -> Option<(Server, PathBuf)> {
    let pgbench = PGBENCH.find_or_skip()?;
    let server = servers::start(Flavor::Postgres)?;
    Some((server, pgbench))
}

/// Runs pgbench against the server; its stdout and stderr.
fn pgbench(server: &Server, bin: &PathBuf, args: &[&str]) -> (String, String) {
    let port = server.port().to_string();
    let out = Command::new(bin)
        .args(["-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
        .args(args)
        .arg("test")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "pgbench {args:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

fn connect(server: &Server) -> Connection {
    let target = Target::parse(&server.url()).unwrap_or_else(|e| panic!("{e}"));
    Connection::connect(&ConnectOptions::new(target)).unwrap_or_else(|e| panic!("{e}"))
}

/// A [`Session`] over dbmeter's own client, counting statements by their
/// first word.
struct DbSession {
    conn: Connection,
    prepared: HashMap<(usize, usize), StmtId>,
    counts: BTreeMap<String, u64>,
}

impl DbSession {
    fn new(server: &Server) -> DbSession {
        DbSession {
            conn: connect(server),
            prepared: HashMap::new(),
            counts: BTreeMap::new(),
        }
    }
}

fn sql_error(e: DbError) -> SqlError {
    let mut s = SqlError::from_sqlstate(&e.code, e.message);
    if e.kind == ErrorKind::ConnectionLost {
        s.kind = SqlErrorKind::ConnectionLost;
    }
    s
}

impl Session for DbSession {
    fn query(&mut self, q: &Query<'_>, capture: Option<&mut Captured>) -> Result<(), SqlError> {
        let word = q
            .sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(';')
            .to_ascii_uppercase();
        *self.counts.entry(word).or_default() += 1;
        match (q.mode, capture) {
            (QueryMode::Simple, None) => self.conn.execute(q.sql).map(|_| ()).map_err(sql_error),
            (QueryMode::Simple, Some(c)) => {
                let rows = self.conn.query_rows(q.sql).map_err(sql_error)?;
                c.begin_result(rows.rows.len() as u64);
                if let Some(last) = rows.rows.last() {
                    for (col, v) in rows.columns.iter().zip(last) {
                        c.push_value(col, v.as_deref());
                    }
                }
                Ok(())
            }
            (_, capture) => {
                assert!(
                    capture.is_none(),
                    "this test session captures in simple mode only"
                );
                let params: Vec<Param<'_>> = q
                    .params
                    .iter()
                    .map(|p| {
                        Param::Text(p.unwrap_or_else(|| panic!("NULL parameter in {}", q.sql)))
                    })
                    .collect();
                let id = if q.mode == QueryMode::Prepared {
                    let conn = &mut self.conn;
                    *self
                        .prepared
                        .entry((q.script, q.command))
                        .or_insert_with(|| conn.register(q.sql))
                } else {
                    self.conn.register(q.sql)
                };
                self.conn.run(id, &params).map(|_| ()).map_err(sql_error)
            }
        }
    }
}

/// The real clock, with `debug()` lines collected.
struct Collect {
    real: SystemHost,
    lines: Vec<String>,
}

impl Host for Collect {
    fn now(&mut self) -> Duration {
        self.real.now()
    }

    fn sleep(&mut self, d: Duration) {
        self.real.sleep(d)
    }

    fn debug(&mut self, line: &str) {
        self.lines.push(line.to_string());
    }
}

const FUNCTIONS: &str = r#"\set h1 debug(hash(42))
\set h2 debug(hash_fnv1a(-7))
\set h3 debug(hash_murmur2(123456789, 99))
\set h4 debug(hash_fnv1a(:client_id, :random_seed))
\set p1 debug(permute(0, 1000))
\set p2 debug(permute(999, 1000, 17))
\set p3 debug(permute(-5, 7, 3))
\set p4 debug(permute(123456789, 9223372036854775807, -1))
\set p5 debug(permute(:client_id, 2, :default_seed))
\set r1 debug(random(1, 1000000000))
\set r2 debug(random(-5, 5))
\set g debug(random_gaussian(1, 1000000, 2.5))
\set e debug(random_exponential(1, 1000000, 3.0))
\set z1 debug(random_zipfian(1, 1000000, 1.07))
\set z2 debug(random_zipfian(1, 100, 2.5))
\set d1 debug(1.0 / 3)
\set d2 debug(sqrt(2) * 1e20)
\set d3 debug(pi() / 1e6)
\set d4 debug(exp(ln(10)))
\set d5 debug(pow(2, 0.5) - 1)
\set d6 debug(-1.5e-7 * :r2)
\set d7 debug(double(:r1) / 7)
\set i1 debug(int(-2.5) + int(2.5) * 10 + int(:r1 / 3.0))
\set i2 debug(-7 % 3 + 7 / -2 * 100 + :r1 % 97)
\set i3 debug(least(3, -1.5, :r2) + greatest(1, 2, :r2))
\set b1 debug(:r1 > 500000000 AND NOT :r2 < 0)
\set c1 debug(case when :r2 > 0 then 1 when :r2 < 0 then -1 else 0 end)
\set n1 debug(NULL)
\set n2 debug(:n1 IS NULL OR :n1 NOTNULL)
\set x debug(~:r2 # 255 << 2 | :r1 >> 3)
\if :r2 > 0
\set branch debug(1)
\elif :r2 = 0
\set branch debug(0)
\else
\set branch debug(-1)
\endif
SELECT :r2 * 2 AS twice, :r1::text || '.5' AS half \gset q_
\set g1 debug(:q_twice + :q_half)
SELECT 10 AS a, 'x' AS b \aset
\set g2 debug(:a * 3)
SELECT 1;
"#;

/// The `debug()` lines of `clients` clients running `transactions`
/// transactions each, through dbmeter, sorted (clients interleave).
fn ours(
    server: &Server,
    script: &str,
    clients: usize,
    transactions: usize,
    seed: u64,
) -> Vec<String> {
    let mut b = ScriptSetBuilder::new();
    b.add_text("functions.sql", script, 1)
        .unwrap_or_else(|e| panic!("{e}"));
    let set = Arc::new(b.build().unwrap_or_else(|e| panic!("{e}")));
    let setup = Setup::new(set, clients, seed, 1, Vec::new(), ExecOptions::default());
    let mut lines = Vec::new();
    for id in 0..clients {
        let mut client = setup.client(id);
        let mut session = DbSession::new(server);
        let mut host = Collect {
            real: SystemHost::new(),
            lines: Vec::new(),
        };
        for _ in 0..transactions {
            let out = client.run_transaction(&mut session, &mut host);
            assert_eq!(out.status, TxStatus::Done, "client {id}");
        }
        lines.extend(host.lines);
    }
    lines.sort();
    lines
}

#[test]
fn expressions_and_random_functions_match_pgbench() {
    let Some((server, bin)) = start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("functions.sql");
    std::fs::write(&file, FUNCTIONS).unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().into_owned();
    for (clients, seed) in [(1usize, 1234u64), (3, 987654321)] {
        let c = clients.to_string();
        let s = seed.to_string();
        // One thread: with several, pgbench's threads write parts of their
        // debug lines between each other's. The expression functions' random
        // generators are per client either way.
        let (_, stderr) = pgbench(
            &server,
            &bin,
            &[
                "-n",
                "-c",
                &c,
                "-j",
                "1",
                "-t",
                "4",
                "--random-seed",
                &s,
                "-f",
                &file,
            ],
        );
        let mut theirs: Vec<String> = stderr
            .lines()
            .filter(|l| l.starts_with("debug("))
            .map(str::to_string)
            .collect();
        theirs.sort();
        assert!(
            theirs.len() >= 4 * clients * 30,
            "pgbench printed:\n{stderr}"
        );
        let ours = ours(&server, FUNCTIONS, clients, 4, seed);
        let only_ours: Vec<&String> = ours.iter().filter(|l| !theirs.contains(l)).collect();
        let only_theirs: Vec<&String> = theirs.iter().filter(|l| !ours.contains(l)).collect();
        assert!(
            only_ours.is_empty() && only_theirs.is_empty() && ours.len() == theirs.len(),
            "{clients} clients, seed {seed}: only dbmeter printed {only_ours:#?}\nonly pgbench printed {only_theirs:#?}"
        );
    }
}

/// Statement counts by first word, for `n` transactions of each built-in.
fn expected_counts(builtin: &str, n: u64) -> BTreeMap<String, u64> {
    let per_tx: &[(&str, u64)] = match builtin {
        "tpcb-like" => &[
            ("BEGIN", 1),
            ("UPDATE", 3),
            ("SELECT", 1),
            ("INSERT", 1),
            ("END", 1),
        ],
        "simple-update" => &[
            ("BEGIN", 1),
            ("UPDATE", 1),
            ("SELECT", 1),
            ("INSERT", 1),
            ("END", 1),
        ],
        _ => &[("SELECT", 1)],
    };
    per_tx.iter().map(|(w, k)| (w.to_string(), k * n)).collect()
}

fn ask(conn: &mut Connection, sql: &str) -> i64 {
    conn.query_i64(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or(0)
}

#[test]
fn builtin_scripts_run_against_postgres() {
    let Some((server, bin)) = start() else {
        return;
    };
    pgbench(&server, &bin, &["-i", "-s", "1", "-q"]);
    let mut check = connect(&server);
    const CLIENTS: usize = 2;
    let mut history = 0;
    for (builtin, per_client, mode) in [
        ("tpcb-like", 60u64, QueryMode::Simple),
        ("simple-update", 40, QueryMode::Prepared),
        ("select-only", 50, QueryMode::Extended),
        ("tpcb-like", 30, QueryMode::Prepared),
    ] {
        let mut b = ScriptSetBuilder::new();
        b.add_builtin(builtin).unwrap_or_else(|e| panic!("{e}"));
        let set = Arc::new(b.build().unwrap_or_else(|e| panic!("{e}")));
        let options = ExecOptions {
            mode,
            ..ExecOptions::default()
        };
        let setup = Setup::new(set, CLIENTS, 5, 1, Vec::new(), options);
        // Each client in its own thread with its own connection.
        let counts: Vec<BTreeMap<String, u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..CLIENTS)
                .map(|id| {
                    let mut client: Client = setup.client(id);
                    let server = &server;
                    s.spawn(move || {
                        let mut session = DbSession::new(server);
                        let mut host = SystemHost::new();
                        for _ in 0..per_client {
                            let out = client.run_transaction(&mut session, &mut host);
                            assert_eq!(out.status, TxStatus::Done, "{builtin}");
                            assert_eq!(out.tries, 1);
                        }
                        // -r's numbers: every command of the script ran each time.
                        for stats in client.command_stats(0) {
                            assert_eq!(stats.count, per_client);
                        }
                        session.counts
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| panic!("client thread")))
                .collect()
        });
        let n = per_client * CLIENTS as u64;
        let mut total: BTreeMap<String, u64> = BTreeMap::new();
        for c in counts {
            for (k, v) in c {
                *total.entry(k).or_default() += v;
            }
        }
        assert_eq!(
            total,
            expected_counts(builtin, n),
            "{builtin} ({})",
            mode.name()
        );
        if builtin != "select-only" {
            history += n as i64;
        }
        // What the transactions did to the tables.
        assert_eq!(
            ask(&mut check, "SELECT count(*) FROM pgbench_history"),
            history
        );
        let deltas = ask(
            &mut check,
            "SELECT coalesce(sum(delta), 0) FROM pgbench_history",
        );
        assert_eq!(
            ask(&mut check, "SELECT sum(abalance) FROM pgbench_accounts"),
            deltas
        );
        assert_eq!(
            ask(
                &mut check,
                "SELECT count(*) FROM pgbench_history WHERE aid NOT BETWEEN 1 AND 100000 OR tid NOT BETWEEN 1 AND 10 OR bid <> 1 OR delta NOT BETWEEN -5000 AND 5000"
            ),
            0
        );
    }
    // Tellers and branches moved by the tpcb-like transactions only.
    let tpcb_deltas = ask(&mut check, "SELECT sum(tbalance) FROM pgbench_tellers");
    assert_eq!(
        ask(&mut check, "SELECT sum(bbalance) FROM pgbench_branches"),
        tpcb_deltas
    );
}

#[test]
fn weighted_choice_matches_pgbench() {
    let Some((server, bin)) = start() else {
        return;
    };
    pgbench(&server, &bin, &["-i", "-s", "1", "-q"]);
    const N: usize = 400;
    let n = N.to_string();
    let (stdout, _) = pgbench(
        &server,
        &bin,
        &[
            "-n",
            "-c",
            "1",
            "-j",
            "1",
            "-t",
            &n,
            "--random-seed",
            "77",
            "-b",
            "select-only@3",
            "-b",
            "simple-update@1",
            "-b",
            "tpcb-like@0",
        ],
    );
    // " - 297 transactions (74.2% of total)" under each "SQL script N:".
    let theirs: Vec<u64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix(" - "))
        .filter(|l| l.contains(" transactions (") && l.contains("of total"))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(theirs.len(), 3, "{stdout}");

    let mut b = ScriptSetBuilder::new();
    for spec in ["select-only@3", "simple-update@1", "tpcb-like@0"] {
        b.add_builtin(spec).unwrap_or_else(|e| panic!("{e}"));
    }
    let set = Arc::new(b.build().unwrap_or_else(|e| panic!("{e}")));
    let setup = Setup::new(set, 1, 77, 1, Vec::new(), ExecOptions::default());
    let mut client = setup.client(0);
    let mut ours = vec![0u64; 3];
    for _ in 0..N {
        ours[client.choose_script()] += 1;
    }
    assert_eq!(ours, theirs);
    assert_eq!(ours[2], 0);
}
