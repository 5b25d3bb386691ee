//! Every option dbmeter's code reads is a declared one: each benchmark
//! parses its options (`Benchmark::check_options`, what its commands and
//! runs parse first) from the defaults of the general options and its
//! own, and the run layer turns the general ones into its settings. A
//! misspelled name panics in these debug builds (`OptValues`), so a
//! typo fails here rather than reading an empty value.

use dbmeter_benchmarks::options::OptValues;
use dbmeter_benchmarks::registry;
use dbmeter_db::conninfo::Env;
use dbmeter_run::options::specs_for;
use dbmeter_run::{pinning, settings};

#[test]
fn every_benchmark_parses_its_default_options() {
    for b in registry::all() {
        let o = OptValues::from_defaults(&specs_for(Some(b.as_ref())));
        if let Err(e) = b.check_options(&o) {
            panic!("{}: its default options are refused: {e}", b.name());
        }
    }
}

/// The kinds a campaign checks its `assert` targets against before it
/// runs anything (`Benchmark::known_kinds`; each run checks in a debug
/// build that its plan has these). Only replay's come from its input.
#[test]
fn every_benchmark_but_replay_knows_its_kinds_from_its_options() {
    for b in registry::all() {
        let o = OptValues::from_defaults(&specs_for(Some(b.as_ref())));
        let kinds = b.known_kinds(&o);
        match b.name() {
            "replay" => assert_eq!(kinds, None),
            "tpcc" => assert_eq!(
                kinds.expect("tpcc's kinds"),
                [
                    "new_order",
                    "payment",
                    "order_status",
                    "delivery",
                    "stock_level"
                ]
            ),
            "fileio" => assert_eq!(kinds.expect("fileio's kinds"), ["read", "write", "fsync"]),
            "pgbench" => assert_eq!(kinds.expect("pgbench's kinds").len(), 1),
            name => assert!(kinds.is_some(), "{name} does not say its kinds"),
        }
    }
}

#[test]
fn a_script_parses_its_default_options() {
    let path = std::env::temp_dir().join(format!("dbmeter-options-{}.lua", std::process::id()));
    std::fs::write(
        &path,
        "sysbench.cmdline.options = { rows = {'rows per table', 100} }\n\
         function event() end\n",
    )
    .expect("write the script");
    let script = registry::resolve(path.to_str().expect("a UTF-8 path"));
    let _ = std::fs::remove_file(&path);
    let script = script.expect("the script loads");
    let o = OptValues::from_defaults(&specs_for(Some(script.as_ref())));
    assert_eq!(script.check_options(&o), Ok(()));
    assert_eq!(o.u64("rows"), 100);
}

#[test]
fn the_run_layer_reads_declared_general_options() {
    let o = OptValues::from_defaults(&specs_for(None));
    let target = settings::target(&o).expect("the default target");
    let _ = settings::connect_options(&o, target.clone());
    let _ = settings::ignore_list(&o, &target);
    let _ = settings::seed(&o);
    let general = settings::General::parse(&o).expect("the default general settings");
    let _ = general.engine_config(1);
    pinning::pin_client(&o).expect("no pinning by default");
    // sysbench's --mysql-* and --pgsql-* options.
    for driver in ["mysql", "pgsql"] {
        let mut o = o.clone();
        o.set("db-driver", driver);
        settings::target_in(&o, &Env::empty()).expect("a server target");
    }
}

#[test]
fn a_bad_value_is_one_usage_line_naming_the_option() {
    let b = registry::find("pgbench").expect("pgbench");
    let mut o = OptValues::from_defaults(&specs_for(Some(b.as_ref())));
    o.set("latency-limit", "1e300");
    let e = b.check_options(&o).expect_err("1e300 ms is refused");
    assert_eq!(
        e,
        dbmeter_benchmarks::BenchError::Usage(
            "--latency-limit=1e300: expected milliseconds: 0 (no limit), or from 0.001 to 3600000"
                .into()
        )
    );
}
