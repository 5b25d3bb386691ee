//! docs/ci/github-actions.yml, the example performance-gate workflow, stays
//! valid: it is YAML with the steps the docs describe; the campaign file it
//! writes (a shell here-document) is a campaign `--dry-run` accepts; every
//! dbmeter command line in it parses (the campaign run with a store that
//! cannot be opened fails with that, not with a usage error); and its
//! `compare` line, run as written on a store of runs of its two variants
//! (a stand-in campaign of `noop` runs, two repeats a side), passes the gate
//! and writes the files the workflow then publishes.

use crate::common::*;
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

fn workflow_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ci/github-actions.yml")
}

/// The gate job's steps, by name.
fn steps() -> Vec<(String, Yaml)> {
    let text = std::fs::read_to_string(workflow_path()).expect("read the workflow");
    let docs = YamlLoader::load_from_str(&text).expect("the workflow is YAML");
    assert_eq!(docs.len(), 1);
    let steps = docs[0]["jobs"]["gate"]["steps"]
        .as_vec()
        .expect("jobs.gate.steps")
        .clone();
    steps
        .into_iter()
        .map(|s| {
            let name = s["name"].as_str().expect("every step is named").to_string();
            (name, s)
        })
        .collect()
}

/// The here-document `cat > NAME <<'TOML' ... TOML` of a step's script.
fn here_document(script: &str, name: &str) -> String {
    let start = format!("cat > {name} <<'TOML'");
    let mut lines = script.lines().skip_while(|l| l.trim() != start);
    assert!(lines.next().is_some(), "no `{start}` in:\n{script}");
    // The shell ends it at a line that is exactly TOML: after YAML's block
    // scalar lost its indentation, it must be at the line's start.
    let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "TOML").collect();
    assert!(
        script.lines().any(|l| l == "TOML"),
        "the here-document of {name} does not end at a line 'TOML':\n{script}"
    );
    body.join("\n") + "\n"
}

/// The scripts' dbmeter command lines (backslash continuations joined),
/// without the program name.
fn dbmeter_lines(script: &str) -> Vec<Vec<String>> {
    let joined = script.replace("\\\n", " ");
    joined
        .lines()
        .filter_map(|l| l.trim().strip_prefix("dbmeter "))
        .map(|l| {
            assert!(
                !l.contains(['"', '\'', '$', '`']),
                "quoting or expansion in `dbmeter {l}`: split it like the shell here"
            );
            l.split_whitespace().map(str::to_string).collect()
        })
        .collect()
}

#[test]
fn the_example_workflow_runs_as_written() {
    let steps = steps();
    let script = |name: &str| -> String {
        steps
            .iter()
            .find(|(n, _)| n.starts_with(name))
            .and_then(|(_, s)| s["run"].as_str())
            .unwrap_or_else(|| panic!("no step '{name}...' with a script"))
            .to_string()
    };

    // It installs this package.
    let install = script("Install dbmeter");
    let cargo = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("read Cargo.toml");
    assert!(cargo.contains("\nname = \"dbmeter\"\n"));
    assert!(
        install.trim().starts_with("cargo install --locked --git ")
            && install.trim().ends_with(" dbmeter"),
        "{install}"
    );

    let s = Scratch::new();
    // The campaign file, and the two my.cnf files it names.
    let run = script("Run the campaign");
    std::fs::write(s.path("gate.toml"), here_document(&run, "gate.toml")).unwrap();
    for dir in ["db", "base/db"] {
        std::fs::create_dir_all(s.path(dir)).unwrap();
        std::fs::write(s.path(&format!("{dir}/my.cnf")), "[mysqld]\n").unwrap();
    }
    let campaign_lines = dbmeter_lines(&run);
    assert_eq!(campaign_lines.len(), 2, "{run}");
    // A file where the store's directory would be: the store cannot open.
    std::fs::write(s.path("not-a-directory"), "").unwrap();
    let bad_store = format!("--store={}", s.path("not-a-directory/gate.db").display());
    for line in &campaign_lines {
        let mut args: Vec<&str> = line.iter().map(String::as_str).collect();
        assert_eq!(args[..3], ["campaign", "run", "gate.toml"], "{line:?}");
        if args.contains(&"--dry-run") {
            let r = s.run_home(&args);
            assert_eq!(r.code, 0, "dbmeter {line:?}:\n{}\n{}", r.stdout, r.stderr);
            assert!(
                r.stdout.starts_with(
                    "campaign 'gate': 2 target(s) x 1 workload(s) x 2 client count(s) x 5 repeat(s) = 20 runs"
                ),
                "{}",
                r.stdout
            );
            assert!(r.stdout.contains("store: gate.db\n"), "{}", r.stdout);
        } else {
            args.push(&bad_store);
            let r = s.run_home(&args);
            assert_eq!(r.code, 1, "dbmeter {args:?}:\n{}\n{}", r.stdout, r.stderr);
            assert!(
                r.stderr.contains("cannot open the results store"),
                "{}",
                r.stderr
            );
        }
    }
    assert!(!s.path("gate.db").exists());

    // The gate's command line: parsed, then refused for want of a store;
    // then run on a store of both variants' runs.
    let gate = script("Gate");
    let gate_lines = dbmeter_lines(&gate);
    assert_eq!(gate_lines.len(), 1, "{gate}");
    let args: Vec<&str> = gate_lines[0].iter().map(String::as_str).collect();
    assert_eq!(args[0], "compare");
    let r = s.run_home(&args);
    assert_eq!(r.code, 1, "dbmeter {args:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("there is no results store 'gate.db'"),
        "{}",
        r.stderr
    );
    std::fs::write(
        s.path("stand-in.toml"),
        "name = \"gate\"\nstore = \"gate.db\"\nduration = 0.3\nrepeats = 2\nclients = [1, 8]\n\
         [[target]]\nname = \"base\"\n[[target]]\nname = \"pr\"\n[[workload]]\nname = \"noop\"\n",
    )
    .unwrap();
    s.ok_home(&["campaign", "run", "stand-in.toml"]);
    // Two repeats a side can never be significant: the gate passes, each
    // of the 2 thresholds x 2 client counts with too few repeats.
    let r = s.run_home(&args);
    assert_eq!(r.code, 0, "dbmeter {args:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("\ngate passed: 4 checks\n"),
        "{}",
        r.stdout
    );
    let md = std::fs::read_to_string(s.path("gate.md")).expect("gate.md");
    assert!(
        md.starts_with("## dbmeter compare\n\n**Performance gate passed: 4 checks**"),
        "{md}"
    );
    let xml = std::fs::read_to_string(s.path("gate.xml")).expect("gate.xml");
    assert!(xml.contains("tests=\"4\" failures=\"0\""), "{xml}");

    // What the later steps read and publish is what the gate wrote.
    let summary = script("Job summary");
    assert!(
        summary.contains("cat gate.md >> \"$GITHUB_STEP_SUMMARY\""),
        "{summary}"
    );
    assert!(script("Comment on").contains("--body-file gate.md"));
    let keep = steps
        .iter()
        .find(|(n, _)| n == "Keep the results")
        .map(|(_, s)| s["with"]["path"].as_str().unwrap_or_default().to_string())
        .expect("the upload step");
    let kept: Vec<&str> = keep.split_whitespace().collect();
    assert_eq!(kept, ["gate.md", "gate.xml", "gate.db"]);
    for f in kept {
        assert!(s.path(f).is_file(), "{f} was not written");
    }
}
