//! sysbench 1.0.20's Lua API as sysbench runs it: a script's own
//! thread_run() loop, options typed as sysbench types them, the stock
//! bulk_insert.lua counted, scripts that never connect, argv and scripts
//! on standard input.

use crate::common::*;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::{ask_n, start};
use dbmeter_testkit::tools::SYSBENCH_SCRIPTS;

/// A port nothing listens on: the scripts below must never connect.
const NO_SERVER: &str = "--mysql-port=1";

#[test]
fn thread_run_drives_its_own_loop_with_no_server() {
    let s = Scratch::new();
    std::fs::write(
        s.path("loop.lua"),
        r#"
function thread_run(tid)
  local n = 0
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    n = n + 1
    ffi.C.sb_event_stop(tid)
  end
  print("thread " .. tid .. " ran " .. n .. " events")
end
function event() error("event() is not called when thread_run() is defined") end
"#,
    )
    .unwrap();
    let r = s.ok(&[
        "sysbench",
        NO_SERVER,
        "--events=7",
        "--threads=1",
        "./loop.lua",
        "run",
    ]);
    assert!(
        r.stdout.contains("thread 0 ran 7 events"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    // Nothing tried the database: no warning about it either.
    assert!(!r.stderr.contains("connect"), "{}", r.stderr);
}

#[test]
fn options_are_typed_as_sysbench_types_them() {
    let s = Scratch::new();
    std::fs::write(
        s.path("opts.lua"),
        r#"
sysbench.cmdline.options = {
  list_opt = {"a list", {"foo", "bar"}},
  list_none = {"a list without default", nil, sysbench.cmdline.ARG_LIST},
  int_none = {"an integer without default", nil, sysbench.cmdline.ARG_INT},
  bool_none = {"a flag without default", nil, sysbench.cmdline.ARG_BOOL},
  str_none = {"a string without default"},
}
local function show()
  local o = sysbench.opt
  print("list_opt", type(o.list_opt), table.concat(o.list_opt, "+"))
  print("list_none", type(o.list_none), #o.list_none)
  print("int_none", type(o.int_none), o.int_none)
  print("bool_none", type(o.bool_none), o.bool_none)
  print("str_none", type(o.str_none), "[" .. o.str_none .. "]")
end
function event() show() end
"#,
    )
    .unwrap();
    let r = s.ok(&[
        "sysbench",
        NO_SERVER,
        "--events=1",
        "./opts.lua",
        "--list_opt=a,b,c",
        "run",
    ]);
    for want in [
        "list_opt\ttable\ta+b+c",
        "list_none\ttable\t0",
        "int_none\tnumber\t0",
        "bool_none\tboolean\ttrue",
        "str_none\tstring\t[]",
    ] {
        assert!(r.stdout.contains(want), "{want}:\n{}", r.stdout);
    }
    // A malformed table is refused as sysbench refuses it.
    std::fs::write(
        s.path("bad.lua"),
        "sysbench.cmdline.options = { {} }\nfunction event() end\n",
    )
    .unwrap();
    let r = s.run(&["sysbench", NO_SERVER, "./bad.lua", "run"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    // As sysbench: a FATAL line on standard output, after the banner.
    assert!(
        r.stdout.contains(
            "FATAL: `sysbench.cmdline.read_cmdline_options' function failed: \
             [string \"sysbench.cmdline.lua\"]:1: wrong table structure in \
             sysbench.cmdline.options"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn a_script_that_declares_no_options_takes_any_and_sees_argv() {
    let s = Scratch::new();
    std::fs::write(
        s.path("argv.lua"),
        r#"
print("argv0=" .. sysbench.cmdline.argv[0])
print("argv=" .. table.concat(sysbench.cmdline.argv, " "))
print("command=" .. tostring(sysbench.cmdline.command))
print("opt2=" .. tostring(sysbench.opt.opt2) .. " global=" .. tostring(opt2))
function event() end
"#,
    )
    .unwrap();
    // No command: sysbench runs the script's body, and that is all.
    let r = s.ok(&["sysbench", NO_SERVER, "--opt2=val", "./argv.lua"]);
    assert!(r.stdout.contains("argv0=sysbench"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("argv={NO_SERVER} --opt2=val ./argv.lua")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("command=nil"), "{}", r.stdout);
    // The body runs once per state: the main one and each thread's.
    let r = s.ok(&[
        "sysbench",
        NO_SERVER,
        "--opt2=val",
        "--events=1",
        "./argv.lua",
        "run",
    ]);
    assert_eq!(r.stdout.matches("command=run").count(), 2, "{}", r.stdout);
    assert!(r.stdout.contains("opt2=val global=val"), "{}", r.stdout);
}

#[test]
fn a_script_on_standard_input_runs() {
    let s = Scratch::new();
    let r = s.run_stdin(&["sysbench"], "print('hello from stdin')\n");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // sysbench's banner, then what the script printed.
    let banner = format!(
        "sysbench 1.0.20 (using dbmeter {})",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(r.stdout.trim(), format!("{banner}\n\nhello from stdin"));
    let r = s.run_stdin(
        &["sysbench", "-", "hello"],
        "sysbench.cmdline.commands = { hello = { function() print('hello command') end } }\n",
    );
    // sysbench 1.0.20 runs a script read from standard input and stops:
    // its commands (here `hello`) are not called, exit 0.
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout.trim(), banner, "{}", r.stdout);
}

fn bulk_insert_counts_writes(flavor: Flavor) {
    let Some(bundled) = SYSBENCH_SCRIPTS.find_or_skip() else {
        return;
    };
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    let script = bundled.join("bulk_insert.lua").display().to_string();
    s.ok(&["prepare", &script, &db, "--threads=2"]);
    let r = s.ok(&[
        "run",
        &script,
        &db,
        "--threads=2",
        "--events=100",
        "--time=0",
        "--format=json",
    ]);
    let j = r.json();
    let writes = j["totals"]["counts"]["writes"].as_u64().unwrap_or(0);
    assert!(
        (1..=2).contains(&writes),
        "writes {writes}: {}",
        j["totals"]
    );
    assert_eq!(j["totals"]["events"].as_u64(), Some(100), "{}", j["totals"]);
    let rows = ask_n(&server, "SELECT COUNT(*) FROM sbtest1")
        + ask_n(&server, "SELECT COUNT(*) FROM sbtest2");
    assert_eq!(rows, 100);
    s.ok(&["cleanup", &script, &db, "--threads=2"]);
}

#[test]
fn stock_bulk_insert_counts_writes_on_mariadb() {
    bulk_insert_counts_writes(Flavor::MariaDb);
}

#[test]
fn stock_bulk_insert_counts_writes_on_postgres() {
    bulk_insert_counts_writes(Flavor::Postgres);
}
