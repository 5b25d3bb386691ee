//! sysbench Lua scripts run unmodified: sysbench's own bundled scripts on
//! throwaway MariaDB and PostgreSQL servers (same statement counts as the
//! native workloads), a script of our own on SQLite, and a Lua error.

use crate::common::*;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::{ask_n, start};
use dbmeter_testkit::tools::SYSBENCH_SCRIPTS;

/// reads, writes, others, events of a run's JSON.
fn totals(r: &Run) -> (u64, u64, u64, u64) {
    let j = r.json();
    let t = &j["totals"];
    let n = |v: &serde_json::Value, k: &str| {
        v[k].as_u64()
            .unwrap_or_else(|| panic!("no totals {k}: {t}"))
    };
    let c = &t["counts"];
    (
        n(c, "reads"),
        n(c, "writes"),
        n(c, "others"),
        n(t, "events"),
    )
}

fn same_counts_as_native(flavor: Flavor) {
    let Some(bundled) = SYSBENCH_SCRIPTS.find_or_skip() else {
        return;
    };
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    for (script, native, events) in [
        ("oltp_point_select.lua", "oltp_point_select", "--events=200"),
        ("oltp_read_write.lua", "oltp_read_write", "--events=50"),
    ] {
        let script = bundled.join(script).display().to_string();
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

/// A script of our own that uses every entry of the 1.0 API dbmeter lists
/// (docs/scripts.md), on any of the three targets. It leaves what only
/// it can see in files of the working directory: the hooks it ran, with
/// their arguments.
const EVERY_ENTRY: &str = r####"
sysbench.cmdline.options = {
  rows = {"rows to load", 50, sysbench.cmdline.ARG_INT},
  label = {"a label", "x", sysbench.cmdline.ARG_STRING},
  fast = {"a flag", false, sysbench.cmdline.ARG_BOOL},
  ratio = {"a ratio", 0.5, sysbench.cmdline.ARG_DOUBLE},
  fail_every = {"every how many events of a thread fail once (ignorable)", 4},
}

local function log(file, line)
  local f = assert(io.open(file, "a"))
  f:write(line, "\n")
  f:close()
end

local function ddl_double()
  return "DOUBLE PRECISION"
end

function cmd_prepare()
  assert(sysbench.cmdline.command == "prepare", sysbench.cmdline.command)
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con:query("CREATE TABLE api_t (id INTEGER NOT NULL PRIMARY KEY, v VARCHAR(40), " ..
            "x " .. ddl_double() .. ", n INTEGER)")
  con:bulk_insert_init("INSERT INTO api_t (id, v, x, n) VALUES")
  for i = 1, sysbench.opt.rows do
    con:bulk_insert_next(string.format("(%d, '%s', %s, %d)", i,
      sysbench.rand.string("##-@@"), tostring(sysbench.rand.uniform_double()), 0))
  end
  con:bulk_insert_done()
  print(string.format("loaded %d rows on %s as %s",
    con:query_row("SELECT COUNT(*) FROM api_t"), drv:name(), sysbench.opt.label))
end

-- A parallel command: each thread reads and says who it is.
function cmd_stamp()
  local con = sysbench.sql.driver():connect()
  local n = con:query_row("SELECT COUNT(*) FROM api_t WHERE id > " .. sysbench.tid)
  print(string.format("stamp tid=%d of %d sees %d", sysbench.tid, sysbench.opt.threads, n))
end

sysbench.cmdline.commands = {
  prepare = {cmd_prepare},
  stamp = {cmd_stamp, sysbench.cmdline.PARALLEL_COMMAND},
}

function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE api_t")
  print("dropped")
end

function init()
  assert(sysbench.version:match("^1%.0"), sysbench.version)
  assert(sysbench.sql.error.NONE == 0 and sysbench.sql.error.IGNORABLE ~= nil and
         sysbench.sql.error.FATAL ~= nil)
  main_state = "mine"
  log("hooks.log", "init")
end

function done()
  -- Row 1's v is NULL now: fetch_row gives nil for it.
  local con = sysbench.sql.driver():connect()
  local rs = con:query("SELECT v, n FROM api_t WHERE id = 1")
  assert(rs.nrows == 1 and rs.nfields == 2)
  local row = rs:fetch_row()
  assert(row[1] == nil and tonumber(row[2]) == 0, "row 1: " .. tostring(row[1]))
  log("hooks.log", "done " .. tostring(main_state))
end

function sysbench.hooks.sql_error_ignorable(err)
  return err.query ~= nil and err.query:find("api_missing", 1, true) ~= nil
end

function sysbench.hooks.before_restart_event(err)
  log("restarts.log", string.format("%d %s", sysbench.tid, tostring(err.sql_errmsg)))
end

function sysbench.hooks.report_cumulative(stat)
  log("hooks.log", string.format("cumulative %s %d %d %d %d %d %s", tostring(main_state),
    stat.events, stat.reads, stat.writes, stat.other, stat.errors,
    tostring(stat.latency_sum > 0)))
end

local calls = 0

function thread_init(tid)
  assert(tid == sysbench.tid, "tid " .. tid .. " vs " .. sysbench.tid)
  assert(sysbench.opt.label == "mine" and sysbench.opt.fast == true and
         sysbench.opt.ratio == 0.25 and type(sysbench.opt.rows) == "number",
         "options")
  drv = sysbench.sql.driver()
  con = drv:connect()
  con:reconnect()
  local T = sysbench.sql.type
  sel = con:prepare("SELECT v, x, n FROM api_t WHERE id = ?")
  p_id = sel:bind_create(T.INT)
  sel:bind_param(p_id)
  upd = con:prepare("UPDATE api_t SET n = n + 1, v = ?, x = ? WHERE id = ?")
  p_v = upd:bind_create(T.VARCHAR, 40)
  p_x = upd:bind_create(T.DOUBLE)
  p_uid = upd:bind_create(T.BIGINT)
  upd:bind_param(p_v, p_x, p_uid)
  nul = con:prepare("UPDATE api_t SET v = ?, x = x + 1 WHERE id = ?")
  p_nv = nul:bind_create(T.CHAR, 10)
  p_nid = nul:bind_create(T.SMALLINT)
  nul:bind_param(p_nv, p_nid)
  ffi.cdef[[void sb_counter_inc(int, int); int usleep(unsigned int);]]
end

local function in_range(x, a, b, what)
  assert(x >= a and x <= b, what .. " " .. tostring(x))
end

function event(tid)
  calls = calls + 1
  if calls % sysbench.opt.fail_every == 0 then
    -- Fails before anything is counted: sql_error_ignorable restarts it.
    con:query("SELECT * FROM api_missing")
  end
  local rows = sysbench.opt.rows
  -- Random numbers: every distribution, and through ffi.C.
  for _, f in ipairs({"default", "uniform", "gaussian", "special", "pareto", "zipfian"}) do
    in_range(sysbench.rand[f](1, 50), 1, 50, f)
  end
  in_range(ffi.C.sb_rand_default(1, 9), 1, 9, "sb_rand_default")
  in_range(ffi.C.sb_rand_uniform(1, 9), 1, 9, "sb_rand_uniform")
  in_range(ffi.C.sb_rand_gaussian(1, 9), 1, 9, "sb_rand_gaussian")
  in_range(ffi.C.sb_rand_special(1, 9), 1, 9, "sb_rand_special")
  in_range(ffi.C.sb_rand_pareto(1, 9), 1, 9, "sb_rand_pareto")
  in_range(ffi.C.sb_rand_zipfian(1, 9), 1, 9, "sb_rand_zipfian")
  in_range(ffi.C.sb_rand_uniform_double(), 0, 1, "sb_rand_uniform_double")
  assert(ffi.C.sb_rand_uniform_uint64() ~= nil)
  assert(ffi.C.sb_rand_unique() ~= ffi.C.sb_rand_unique())
  in_range(sysbench.rand.uniform_double(), 0, 1, "uniform_double")
  assert(tostring(sysbench.rand.uniform_uint64()) ~= nil)
  assert(sysbench.rand.unique() ~= sysbench.rand.unique())
  assert(sysbench.rand.string("###-@@@"):match("^%d%d%d%-%l%l%l$"))
  local vs = sysbench.rand.varstring(3, 6)
  in_range(#vs, 3, 6, "varstring")

  -- A prepared read, its result set walked with fetch_row (1 read).
  local id = sysbench.rand.uniform(2, rows)
  p_id:set(id)
  local rs = sel:execute()
  assert(rs.nrows == 1 and rs.nfields == 3, "nrows " .. rs.nrows .. " nfields " .. rs.nfields)
  local n = 0
  local row = rs:fetch_row()
  while row do
    n = n + 1
    assert(#row[1] >= 1 and tonumber(row[2]) ~= nil and tonumber(row[3]) >= 0)
    row = rs:fetch_row()
  end
  assert(n == 1)
  rs:free()
  -- query_row with several values (1 read).
  local c, mx = con:query_row("SELECT COUNT(*), MAX(id) FROM api_t")
  assert(tonumber(c) == rows and tonumber(mx) == rows, tostring(c) .. " " .. tostring(mx))
  -- A transaction with a prepared write and a NULL (2 writes, 2 others).
  con:query("BEGIN")
  p_v:set(sysbench.rand.varstring(5, 10))
  p_x:set(sysbench.opt.ratio * id)
  p_uid:set(id)
  upd:execute()
  p_nv:set(nil)
  p_nid:set(1)
  nul:execute()
  con:query("COMMIT")
  -- A counted read of our own, and a short sleep, through the FFI.
  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)
  ffi.C.usleep(10)
end

function thread_done(tid)
  log("threads.log", string.format("%d %d", tid, calls))
  sel:close()
  upd:close()
  con:disconnect()
end
"####;

/// Lines of a file the script wrote in the scratch directory.
fn lines_of(s: &Scratch, name: &str) -> Vec<String> {
    std::fs::read_to_string(s.path(name))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn every_entry(db: &str, users: usize, left: impl Fn() -> i64) {
    let threads = format!("--threads={users}");
    let threads = threads.as_str();
    let s = Scratch::new();
    std::fs::write(s.path("api.lua"), EVERY_ENTRY).unwrap();
    let help = s.ok(&["help", "./api.lua"]);
    for want in [
        "--rows=N",
        "--label=STRING",
        "--fast=[on|off]",
        "--ratio=",
        "stamp",
    ] {
        assert!(help.stdout.contains(want), "{want}: {}", help.stdout);
    }
    let r = s.ok(&["prepare", "./api.lua", db, "--label=mine", "--rows=40"]);
    let driver = if db.starts_with("--db=mysql") {
        "mysql"
    } else if db.starts_with("--db=postgres") {
        "pgsql"
    } else {
        "sqlite"
    };
    assert!(
        r.stdout
            .contains(&format!("loaded 40 rows on {driver} as mine")),
        "{}",
        r.stdout
    );
    // A parallel command of the script's own runs on --threads threads.
    let r = s.ok(&["stamp", "./api.lua", db, "--threads=2"]);
    assert!(
        r.stdout.contains("stamp tid=0 of 2 sees 40"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("stamp tid=1 of 2 sees 39"),
        "{}",
        r.stdout
    );
    let r = s.ok(&[
        "run",
        "./api.lua",
        db,
        threads,
        "--rows=40",
        "--label=mine",
        "--fast",
        "--ratio=0.25",
        "--events=30",
        "--time=0",
        "--format=json",
    ]);
    let j = r.json();
    // Per event: the prepared SELECT, query_row and a counted read; two
    // UPDATEs; BEGIN and COMMIT.
    assert_eq!(totals(&r), (90, 60, 60, 30), "{}", r.stderr);
    // Every 4th call of a thread failed once and was restarted: as many
    // restarts as before_restart_event saw, as ignored errors counted, as
    // calls beyond the completed events.
    let restarts = lines_of(&s, "restarts.log");
    let calls: u64 = lines_of(&s, "threads.log")
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    let ignored = j["totals"]["ignored_errors"].as_u64().unwrap();
    assert!(ignored >= 6, "{ignored} restarts for 30 events");
    assert_eq!(restarts.len() as u64, ignored, "{restarts:?}");
    assert_eq!(calls, 30 + ignored);
    assert!(
        restarts.iter().all(|l| l.contains("api_missing")),
        "{restarts:?}"
    );
    assert_eq!(
        j["errors"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        ignored,
        "{}",
        j["errors"]
    );
    // init, then the cumulative report and done() on the same (main)
    // state, once, with the run's totals.
    let hooks = lines_of(&s, "hooks.log");
    assert_eq!(
        hooks,
        vec![
            "init".to_string(),
            format!("cumulative mine 30 90 60 60 {ignored} true"),
            "done mine".to_string(),
        ]
    );
    assert_eq!(lines_of(&s, "threads.log").len(), users);
    // The UPDATEs changed the data: n counts them.
    let r = s.ok(&["cleanup", "./api.lua", db]);
    assert!(r.stdout.contains("dropped"), "{}", r.stdout);
    assert_eq!(left(), 0, "cleanup left the table");
}

#[test]
fn every_api_entry_on_sqlite() {
    // One user: two users' write transactions on one SQLite file wait for
    // each other's lock (fine), but the test wants no timing at all.
    let s = Scratch::new();
    let file = s.path("api.db");
    let db = format!("--db=sqlite:{}", file.display());
    every_entry(&db, 1, || {
        let c = rusqlite::Connection::open(&file).unwrap();
        count(
            &c,
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'api_t'",
        )
    });
}

#[test]
fn every_api_entry_on_mariadb() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let db = format!("--db={}", server.url());
    every_entry(&db, 2, || {
        ask_n(
            &server,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='test' AND table_name = 'api_t'",
        )
    });
}

#[test]
fn every_api_entry_on_postgres() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    let db = format!("--db={}", server.url());
    every_entry(&db, 2, || {
        ask_n(
            &server,
            "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'api_t'",
        )
    });
}

/// sysbench's report hooks: every field of the stat table, written to a
/// file, and what the hooks print.
const REPORT_HOOKS: &str = r####"
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)")
  con:query("INSERT INTO t VALUES (1, 0)")
end
function init() where = "main" end
function thread_init() con = sysbench.sql.driver():connect() end
function event()
  con:query("SELECT v FROM t WHERE id = 1")
  ffi.C.usleep(1000)
end
local fields = {"threads_running", "time_interval", "time_total", "latency_pct",
  "events", "reads", "writes", "other", "errors", "reconnects"}
local function write(file, kind, stat, more)
  local f = assert(io.open(file, "a"))
  local parts = {kind, tostring(where)}
  for _, k in ipairs(fields) do parts[#parts + 1] = k .. "=" .. tostring(stat[k]) end
  for _, k in ipairs(more) do parts[#parts + 1] = k .. "=" .. tostring(stat[k]) end
  f:write(table.concat(parts, " "), "\n")
  f:close()
end
-- As in sysbench, the body runs in the main state before the options are
-- there: the hook reads them when it is called.
function sysbench.hooks.report_intermediate(stat)
  if sysbench.opt.style == "json" then return sysbench.report_json(stat) end
  write("stats.log", "intermediate", stat, {"queue_length", "concurrency"})
  sysbench.report_csv(stat)
end
function sysbench.hooks.report_cumulative(stat)
  write("stats.log", "cumulative", stat,
        {"latency_min", "latency_max", "latency_avg", "latency_sum"})
  print("my cumulative report: " .. stat.events .. " events")
end
sysbench.cmdline.options = { style = {"how the hooks report", "file"} }
"####;

/// The stat lines the hooks wrote: kind and each field's value.
fn stat_lines(s: &Scratch) -> Vec<(String, std::collections::HashMap<String, String>)> {
    lines_of(s, "stats.log")
        .iter()
        .map(|l| {
            let mut words = l.split(' ');
            let kind = words.next().unwrap().to_string();
            assert_eq!(words.next(), Some("main"), "not the main state: {l}");
            let fields = words
                .map(|w| {
                    let (k, v) = w.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect();
            (kind, fields)
        })
        .collect()
}

#[test]
fn report_hooks_get_sysbench_stats() {
    let s = Scratch::new();
    std::fs::write(s.path("hooks.lua"), REPORT_HOOKS).unwrap();
    s.ok(&["prepare", "./hooks.lua", "--db=sqlite:h.db"]);
    let r = s.ok(&[
        "run",
        "./hooks.lua",
        "--db=sqlite:h.db",
        "--threads=2",
        "--time=3",
        "--report-interval=1",
        "--format=json",
    ]);
    let j = r.json();
    let stats = stat_lines(&s);
    let inter: Vec<_> = stats
        .iter()
        .filter(|(k, _)| k == "intermediate")
        .map(|(_, f)| f)
        .collect();
    let cumul: Vec<_> = stats
        .iter()
        .filter(|(k, _)| k == "cumulative")
        .map(|(_, f)| f)
        .collect();
    // Once per full interval, with that interval's counts.
    let intervals = j["intervals"].as_array().unwrap();
    assert!(!inter.is_empty(), "{stats:?}");
    assert!(inter.len() <= intervals.len(), "{stats:?}\n{intervals:?}");
    let num = |f: &std::collections::HashMap<String, String>, k: &str| -> f64 {
        f.get(k)
            .unwrap_or_else(|| panic!("no {k}: {f:?}"))
            .parse()
            .unwrap_or_else(|_| panic!("{k}={}", f[k]))
    };
    for (f, i) in inter.iter().zip(intervals) {
        // The run's last interval may also hold the events that ended
        // just after --time (folded into it after its report).
        let folded = i["duration_s"].as_f64().unwrap() > num(f, "time_interval") + 1e-6;
        if folded {
            assert!(num(f, "events") <= i["events"].as_f64().unwrap(), "{f:?}");
            assert!(num(f, "time_total") < i["t_s"].as_f64().unwrap());
            continue;
        }
        assert_eq!(num(f, "events"), i["events"].as_f64().unwrap(), "{f:?}");
        assert_eq!(num(f, "threads_running"), 2.0);
        assert_eq!(num(f, "reads"), num(f, "events"));
        assert_eq!(num(f, "writes") + num(f, "other") + num(f, "errors"), 0.0);
        assert_eq!(num(f, "reconnects") + num(f, "queue_length"), 0.0);
        assert!(num(f, "concurrency") == 0.0);
        assert!((num(f, "time_total") - i["t_s"].as_f64().unwrap()).abs() < 1e-6);
        assert!(num(f, "time_interval") > 0.0 && num(f, "latency_pct") >= 0.0);
        // Seconds, as sysbench gives them (an event sleeps 1 ms).
        assert!(num(f, "latency_pct") < 1.0, "{f:?}");
    }
    // Once at the end, with the run's totals.
    assert_eq!(cumul.len(), 1, "{stats:?}");
    let c = cumul[0];
    let t = &j["totals"];
    assert_eq!(num(c, "events"), t["events"].as_f64().unwrap());
    assert_eq!(num(c, "reads"), t["counts"]["reads"].as_f64().unwrap());
    assert!(num(c, "events") > 0.0);
    assert!((num(c, "time_total") - t["duration_s"].as_f64().unwrap()).abs() < 1e-6);
    let l = &j["latency_ms"];
    for (field, key) in [
        ("latency_min", "min_ms"),
        ("latency_max", "max_ms"),
        ("latency_avg", "avg_ms"),
        ("latency_sum", "sum_ms"),
    ] {
        let want = l[key].as_f64().unwrap() / 1000.0;
        assert!((num(c, field) - want).abs() <= want * 1e-9, "{field}");
    }
    // What report_intermediate printed took the place of the interval
    // lines (on stderr: stdout carries the JSON); what report_cumulative
    // printed is the script's section of the result.
    let csv: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains(",2,"))
        .collect();
    assert_eq!(csv.len(), inter.len(), "{}", r.stderr);
    assert!(!r.stderr.contains("] thds:"), "{}", r.stderr);
    let want = format!("my cumulative report: {} events", t["events"]);
    assert_eq!(
        j["script"]["report_cumulative"].as_str(),
        Some(want.as_str())
    );

    // sysbench.report_json as the hook: one JSON array over the run; the
    // text report carries the cumulative hook's lines.
    std::fs::remove_file(s.path("stats.log")).unwrap();
    let r = s.ok(&[
        "run",
        "./hooks.lua",
        "--db=sqlite:h.db",
        "--threads=1",
        "--time=2",
        "--report-interval=1",
        "--style=json",
    ]);
    let start = r.stdout.find("\n[\n").expect("a JSON array") + 1;
    let end = start + r.stdout[start..].find("\n]\n").expect("its end") + 2;
    let arr: serde_json::Value = serde_json::from_str(&r.stdout[start..end])
        .unwrap_or_else(|e| panic!("{e}: {}", &r.stdout[start..end]));
    let arr = arr.as_array().unwrap();
    assert!(!arr.is_empty());
    for o in arr {
        assert_eq!(o["threads"], 1);
        assert!(o["tps"].as_f64().unwrap() > 0.0 && o["qps"]["reads"] == o["tps"]);
    }
    assert_eq!(stat_lines(&s).len(), 1, "cumulative only");
    assert!(
        r.stdout.contains("my cumulative report: ")
            && r.stdout.find("my cumulative report").unwrap() > r.stdout.find("Latency").unwrap(),
        "{}",
        r.stdout
    );
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
