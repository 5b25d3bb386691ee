//! sysbench Lua scripts run unmodified: sysbench's own bundled scripts on
//! throwaway MariaDB and PostgreSQL servers (same statement counts as the
//! native workloads), a script of our own on SQLite, and a Lua error.

mod common;
use common::servers::{ask_n, start};
use common::*;
use dbmeter_server::Flavor;
use std::path::Path;

const BUNDLED: &str = "/usr/share/sysbench";

fn bundled(name: &str) -> String {
    let p = format!("{BUNDLED}/{name}");
    assert!(
        Path::new(&p).exists(),
        "{p} is missing: .ci/run installs sysbench (apt-get install sysbench)"
    );
    p
}

/// reads, writes, others, events of a run's JSON.
fn totals(r: &Run) -> (u64, u64, u64, u64) {
    let j = r.json();
    let t = &j["totals"];
    let n = |k: &str| {
        t[k].as_u64()
            .unwrap_or_else(|| panic!("no totals.{k}: {t}"))
    };
    (n("reads"), n("writes"), n("others"), n("events"))
}

fn same_counts_as_native(flavor: Flavor) {
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    for (script, native, events) in [
        ("oltp_point_select.lua", "oltp_point_select", "--events=200"),
        ("oltp_read_write.lua", "oltp_read_write", "--events=50"),
    ] {
        let script = bundled(script);
        let common = [db.as_str(), "--tables=2", "--table-size=500"];
        let mut a = vec!["prepare", script.as_str()];
        a.extend(common);
        let r = s.ok(&a);
        assert!(
            r.stdout.contains("Creating table 'sbtest2'"),
            "{}",
            r.stdout
        );
        assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM sbtest2"), 500);
        let mut a = vec!["run", script.as_str(), events, "--time=0", "--format=json"];
        a.extend(common);
        let scripted = totals(&s.ok(&a));
        let mut a = vec!["cleanup", script.as_str()];
        a.extend(common);
        s.ok(&a);
        let left = match flavor {
            Flavor::MariaDb => {
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='test' AND table_name LIKE 'sbtest%'"
            }
            Flavor::Postgres => "SELECT COUNT(*) FROM pg_tables WHERE tablename LIKE 'sbtest%'",
        };
        assert_eq!(ask_n(&server, left), 0, "cleanup left tables");

        let mut a = vec!["prepare", native];
        a.extend(common);
        s.ok(&a);
        let mut a = vec!["run", native, events, "--time=0", "--format=json"];
        a.extend(common);
        let builtin = totals(&s.ok(&a));
        let mut a = vec!["cleanup", native];
        a.extend(common);
        s.ok(&a);
        assert_eq!(scripted, builtin, "{script} against {native}");
        assert!(scripted.0 > 0 && scripted.3 > 0, "{scripted:?}");
    }
}

#[test]
fn bundled_scripts_count_like_native_on_mariadb() {
    same_counts_as_native(Flavor::MariaDb);
}

#[test]
fn bundled_scripts_count_like_native_on_postgres() {
    same_counts_as_native(Flavor::Postgres);
}

/// Our own script exercising the API on SQLite.
const API_SCRIPT: &str = r###"
sysbench.cmdline.options = {
  rows = {"rows to load", 100},
  label = {"a label", "x"},
  fast = {"a flag", false},
}
function cmd_prepare()
  local drv = sysbench.sql.driver()
  assert(drv:name() == "sqlite", drv:name())
  local con = drv:connect()
  con:query("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, g INTEGER)")
  con:bulk_insert_init("INSERT INTO t(id, v, g) VALUES")
  for i = 1, sysbench.opt.rows do
    con:bulk_insert_next(string.format("(%d, '%s', %d)", i,
      sysbench.rand.string("##@@"), sysbench.rand.gaussian(1, 10)))
  end
  con:bulk_insert_done()
  print("loaded " .. con:query_row("SELECT count(*) FROM t") .. " rows as " .. sysbench.opt.label)
end
sysbench.cmdline.commands = { prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND} }
function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE t")
  print("dropped")
end
function init() assert(sysbench.version ~= nil) end
function thread_init(tid)
  assert(tid == sysbench.tid)
  assert(type(sysbench.opt.fast) == "boolean" and type(sysbench.opt.rows) == "number")
  con = sysbench.sql.driver():connect()
  st = con:prepare("SELECT v, g FROM t WHERE id = ?")
  p = st:bind_create(sysbench.sql.type.INT)
  st:bind_param(p)
  upd = con:prepare("UPDATE t SET v = ? WHERE id = ?")
  u1 = upd:bind_create(sysbench.sql.type.VARCHAR, 10)
  u2 = upd:bind_create(sysbench.sql.type.INT)
  upd:bind_param(u1, u2)
end
function event()
  -- Row 1 is the one the UPDATE below rewrites (3 characters then).
  p:set(sysbench.rand.uniform(2, sysbench.opt.rows))
  local rs = st:execute()
  assert(rs.nrows == 1 and rs.nfields == 2, "nrows " .. rs.nrows)
  local row = rs:fetch_row()
  assert(#row[1] == 4 and tonumber(row[2]) >= 1)
  assert(rs:fetch_row() == nil)
  rs:free()
  for _, f in ipairs({"default", "special", "pareto", "zipfian", "gaussian"}) do
    local x = sysbench.rand[f](1, 50)
    assert(x >= 1 and x <= 50, f)
  end
  local s = sysbench.rand.varstring(3, 5)
  assert(#s >= 3 and #s <= 5)
  assert(sysbench.rand.unique() ~= sysbench.rand.unique())
  con:query("BEGIN")
  u1:set_rand_str("@@@")
  u2:set(1)
  upd:execute()
  con:query("COMMIT")
  local ffi = require("ffi")
  ffi.cdef[[void sb_counter_inc(int, int); int usleep(unsigned int);]]
  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)
  ffi.C.usleep(1)
end
function thread_done()
  st:close()
  con:disconnect()
end
function sysbench.hooks.report_intermediate(stat) end
"###;

#[test]
fn own_script_uses_the_api_on_sqlite() {
    let s = Scratch::new();
    std::fs::write(s.path("api.lua"), API_SCRIPT).unwrap();
    let help = s.ok(&["help", "./api.lua"]);
    assert!(help.stdout.contains("--rows=X"), "{}", help.stdout);
    assert!(help.stdout.contains("--fast=[on|off]"), "{}", help.stdout);
    let r = s.ok(&["prepare", "./api.lua", "--rows=40", "--label=mine"]);
    assert!(r.stdout.contains("loaded 40 rows as mine"), "{}", r.stdout);
    let r = s.ok(&[
        "run",
        "./api.lua",
        "--rows=40",
        "--events=30",
        "--time=0",
        "--threads=2",
        "--format=json",
    ]);
    // Per event: a SELECT and a counted read, an UPDATE, BEGIN and COMMIT.
    assert_eq!(totals(&r), (60, 30, 60, 30));
    let r = s.ok(&["cleanup", "./api.lua"]);
    assert!(r.stdout.contains("dropped"), "{}", r.stdout);
    let bad = s.run(&["run", "./api.lua", "--rows=x"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--rows=x"), "{}", bad.stderr);
}

#[test]
fn a_lua_error_names_file_and_line_and_exits_1() {
    let s = Scratch::new();
    std::fs::write(
        s.path("boom.lua"),
        "local n = 0\nfunction event()\n  n = n + 1\n  if n > 5 then error('boom') end\nend\n",
    )
    .unwrap();
    let r = s.run(&[
        "run",
        "./boom.lua",
        "--threads=1",
        "--time=0",
        "--events=100",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("boom.lua:4: boom"), "{}", r.stderr);
    // The partial report: the five events that completed.
    assert!(r.stdout.contains("transactions:"), "{}", r.stdout);

    std::fs::write(
        s.path("unsup.lua"),
        "function event()\n  sysbench.sql.driver():connect():more_magic()\nend\n",
    )
    .unwrap();
    let r = s.run(&["run", "./unsup.lua", "--time=0", "--events=1"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("connection:more_magic is not supported by dbmeter"),
        "{}",
        r.stderr
    );

    std::fs::write(s.path("syntax.lua"), "function event(\n").unwrap();
    let r = s.run(&["run", "./syntax.lua"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("syntax.lua:"), "{}", r.stderr);
}

/// A sysbench 0.5-style script of our own: every entry of the 0.5 API
/// (options as globals read by a set_vars(), db_driver, num_threads, test,
/// mysql_table_engine, db_query, db_connect/db_disconnect, bulk inserts,
/// db_prepare/db_bind_param/db_execute/db_store_results/db_free_results/
/// db_close, the sb_rand* functions, thread_init/event/thread_done with
/// the thread id).
const OLD_SCRIPT: &str = r####"
function set_vars()
   oltp_table_size = oltp_table_size or 10000
   oltp_tables_count = oltp_tables_count or 1
   oltp_point_selects = oltp_point_selects or 3
   if (oltp_skip_trx == 'on') then oltp_skip_trx = true else oltp_skip_trx = false end
end

function prepare()
   set_vars()
   db_connect()
   assert(db_driver == "sqlite" or db_driver == "mysql" or db_driver == "pgsql", db_driver)
   local engine = ""
   if db_driver == "mysql" then engine = " ENGINE=" .. mysql_table_engine end
   for t = 1, oltp_tables_count do
      db_query("CREATE TABLE sbtest" .. t .. " (id INTEGER NOT NULL PRIMARY KEY, " ..
               "k INTEGER NOT NULL, c VARCHAR(40) NOT NULL)" .. engine)
      db_bulk_insert_init("INSERT INTO sbtest" .. t .. " (id, k, c) VALUES")
      for i = 1, oltp_table_size do
         db_bulk_insert_next("(" .. i .. ", " .. sb_rand(1, oltp_table_size) ..
                             ", '" .. sb_rand_str("###-@@@") .. "')")
      end
      db_bulk_insert_done()
      print("loaded sbtest" .. t .. " on " .. db_driver)
   end
   db_disconnect()
   return 0
end

function cleanup()
   set_vars()
   for t = 1, oltp_tables_count do db_query("DROP TABLE sbtest" .. t) end
   print("dropped " .. oltp_tables_count)
end

function thread_init(thread_id)
   set_vars()
   assert(thread_id >= 0 and thread_id < num_threads, "thread " .. thread_id)
   assert(string.find(test, "old.lua", 1, true), test)
   assert(label == "mine", tostring(label))
   assert(DB_ERROR_RESTART_TRANSACTION == 1)
   stmt = db_prepare("SELECT c FROM sbtest1 WHERE id = ?")
   params = {1}
   db_bind_param(stmt, params)
end

function event(thread_id)
   local t = "sbtest" .. sb_rand_uniform(1, oltp_tables_count)
   if not oltp_skip_trx then db_query("BEGIN") end
   for i = 1, oltp_point_selects do
      db_query("SELECT c FROM " .. t .. " WHERE id=" .. sb_rand(1, oltp_table_size))
   end
   params[1] = sb_rand_gaussian(1, oltp_table_size)
   local rs = db_execute(stmt)
   db_store_results(rs)
   db_free_results(rs)
   local x = sb_rand_special(1, 10)
   assert(x >= 1 and x <= 10)
   local u = sb_rand_uniq(5, 9)
   assert(u >= 5 and u <= 9)
   assert(sb_rnd() >= 0)
   local rs = db_query("UPDATE " .. t .. " SET k=k+1 WHERE id=" .. sb_rand(1, oltp_table_size))
   assert(rs == nil, "db_query returns nothing")
   if not oltp_skip_trx then db_query("COMMIT") end
end

function thread_done(thread_id)
   db_close(stmt)
   db_disconnect()
end
"####;

fn old_api_script(db: &str, threads: &str, drop_check: impl Fn(&Scratch) -> i64) {
    let s = Scratch::new();
    std::fs::write(s.path("old.lua"), OLD_SCRIPT).unwrap();
    let opts = [db, "--oltp-table-size=300", "--oltp-tables-count=2"];
    let with = |first: &[&str], more: &[&str]| -> Vec<String> {
        first
            .iter()
            .chain(opts.iter())
            .chain(more.iter())
            .map(|a| a.to_string())
            .collect()
    };
    let args = with(&["prepare", "./old.lua"], &[]);
    let r = s.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(r.stdout.contains("loaded sbtest2 on "), "{}", r.stdout);
    let run = |more: &[&str]| {
        let args = with(
            &["run", "./old.lua"],
            &[&[threads, "--events=40", "--time=0", "--format=json"], more].concat(),
        );
        totals(&s.ok(&args.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    // Per event: 2 point selects and the prepared one, an UPDATE, BEGIN
    // and COMMIT.
    assert_eq!(
        run(&["--oltp-point-selects=2", "--label=mine"]),
        (120, 40, 80, 40)
    );
    // Per-statement latencies: each statement (literals as ?) is a kind.
    let args = with(
        &["run", "./old.lua"],
        &[
            threads,
            "--events=40",
            "--time=0",
            "--label=mine",
            "--report-statements",
        ],
    );
    let r = s.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(r.stdout.contains("Statement latencies"), "{}", r.stdout);
    let line = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.ends_with(&format!("  {name}")))
            .unwrap_or_else(|| panic!("no line for {name}: {}", r.stdout))
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
    };
    assert_eq!(line("BEGIN"), Some(40));
    assert_eq!(line("SELECT c FROM sbtest1 WHERE id = ?"), Some(40));
    let args = with(
        &["run", "./old.lua"],
        &[
            threads,
            "--events=40",
            "--time=0",
            "--label=mine",
            "--format=json",
        ],
    );
    let j = s
        .ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .json();
    let kinds = j["kinds"].as_array().expect("kinds");
    let per_kind: u64 = kinds.iter().map(|k| k["events"].as_u64().unwrap()).sum();
    // 3 point selects (the default), the prepared one, UPDATE, BEGIN, COMMIT.
    assert_eq!(per_kind, 40 * 7, "{kinds:?}");
    assert!(
        kinds
            .iter()
            .any(|k| k["name"] == "SELECT c FROM sbtest2 WHERE id=?"),
        "{kinds:?}"
    );
    assert_eq!(
        run(&[
            "--oltp-point-selects=1",
            "--oltp-skip-trx=on",
            "--label=mine"
        ]),
        (80, 40, 0, 40)
    );
    let args = with(&["cleanup", "./old.lua"], &[]);
    let r = s.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(r.stdout.contains("dropped 2"), "{}", r.stdout);
    assert_eq!(drop_check(&s), 0, "cleanup left tables");
}

#[test]
fn old_api_script_on_sqlite() {
    // One user: SQLite's deferred transactions of two users that both
    // write would fail with SQLITE_BUSY and be restarted (and counted).
    old_api_script("--db=sqlite:old.db", "--threads=1", |s| {
        count(
            &s.db("old.db"),
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sbtest%'",
        )
    });
}

#[test]
fn old_api_script_on_mariadb() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let db = format!("--db={}", server.url());
    old_api_script(&db, "--threads=2", |_| {
        ask_n(
            &server,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='test' AND table_name LIKE 'sbtest%'",
        )
    });
}

/// Result sets and parameters at the edges: an empty result still has its
/// columns, NULL binds and reads back as nil, and a result lasts until its
/// connection's next statement (a second connection keeps its own).
const EDGES_SCRIPT: &str = r###"
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS edges")
  con:query("CREATE TABLE edges (id INTEGER PRIMARY KEY, v VARCHAR(10), n INTEGER)")
  con:query("INSERT INTO edges (id, v, n) VALUES (1, 'one', NULL), (2, NULL, 2)")
end
function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS edges")
end
function thread_init()
  local drv = sysbench.sql.driver()
  con, other = drv:connect(), drv:connect()
  sel = con:prepare("SELECT id, v, n FROM edges WHERE id = ?")
  p = sel:bind_create(sysbench.sql.type.INT)
  sel:bind_param(p)
  ins = con:prepare("INSERT INTO edges (id, v, n) VALUES (?, ?, ?)")
  i1 = ins:bind_create(sysbench.sql.type.INT)
  i2 = ins:bind_create(sysbench.sql.type.VARCHAR, 10)
  i3 = ins:bind_create(sysbench.sql.type.INT)
  ins:bind_param(i1, i2, i3)
end
function event()
  -- An empty result, prepared and as text, keeps its columns.
  p:set(-1)
  local rs = sel:execute()
  assert(rs.nrows == 0 and rs.nfields == 3, "prepared empty: " .. rs.nrows .. "/" .. rs.nfields)
  assert(rs:fetch_row() == nil)
  rs = con:query("SELECT id, v FROM edges WHERE id < 0")
  assert(rs.nrows == 0 and rs.nfields == 2, "text empty: " .. rs.nrows .. "/" .. rs.nfields)
  -- NULL reads back as nil; a NULL parameter matches nothing.
  p:set(1)
  local row = sel:execute():fetch_row()
  assert(row[1] == "1" and row[2] == "one" and row[3] == nil, "row 1")
  p:set(nil)
  assert(sel:execute().nrows == 0, "id = NULL matched")
  -- A NULL parameter is stored as NULL.
  local id = 1000 + sysbench.rand.unique() % 1000000
  i1:set(id); i2:set(nil); i3:set(nil)
  ins:execute()
  local v, n = con:query_row("SELECT v, n FROM edges WHERE id = " .. id)
  assert(v == nil and n == nil, "inserted NULLs")
  local nulls = con:query_row("SELECT COUNT(*) FROM edges WHERE id = " .. id ..
                              " AND v IS NULL AND n IS NULL")
  assert(tonumber(nulls) == 1, "NULLs stored: " .. tostring(nulls))
  -- Each connection keeps its own last result.
  local a = con:query("SELECT id FROM edges WHERE id = 2")
  local b = other:query("SELECT id, v FROM edges WHERE id = 1")
  assert(a.nfields == 1 and a:fetch_row()[1] == "2", "first connection's result")
  assert(b.nfields == 2 and b:fetch_row()[2] == "one", "second connection's result")
end
"###;

fn edges(db: Option<&str>) {
    let s = Scratch::new();
    std::fs::write(s.path("edges.lua"), EDGES_SCRIPT).unwrap();
    let mut a = vec!["prepare", "./edges.lua"];
    a.extend(db);
    s.ok(&a);
    let mut a = vec![
        "run",
        "./edges.lua",
        "--events=20",
        "--time=0",
        "--threads=2",
        "--format=json",
    ];
    a.extend(db);
    let r = s.ok(&a);
    // Per event: 8 statements that return rows, one INSERT.
    assert_eq!(totals(&r), (160, 20, 0, 20));
    let mut a = vec!["cleanup", "./edges.lua"];
    a.extend(db);
    s.ok(&a);
}

#[test]
fn empty_results_nulls_and_results_per_connection() {
    edges(None);
    for flavor in [Flavor::MariaDb, Flavor::Postgres] {
        let Some(server) = start(flavor) else {
            continue;
        };
        let db = format!("--db={}", server.url());
        edges(Some(&db));
    }
}
