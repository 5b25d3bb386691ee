//! Help pages, the man page and completions: what a user reads and what
//! the shell offers, all made from the option tables the parser uses.

use crate::common::{Scratch, bin};
use dbmeter_testkit::tools::{FISH, GROFF, MAN, ZSH, find_all_or_skip};
use std::process::Command;

/// Every command's name, as `dbmeter help` lists them.
fn commands(s: &Scratch) -> Vec<String> {
    let help = s.ok(&["help"]).stdout;
    let mut in_list = false;
    let mut out = Vec::new();
    for line in help.lines() {
        if line == "Commands:" {
            in_list = true;
            continue;
        }
        if in_list && line.is_empty() {
            break;
        }
        if in_list
            && let Some(word) = line.strip_prefix("  ").and_then(|l| l.split(' ').next())
            && !word.is_empty()
            && word.chars().all(|c| c.is_ascii_lowercase())
        {
            out.push(word.to_string());
        }
    }
    out
}

fn workloads(s: &Scratch) -> Vec<String> {
    s.ok(&["list"])
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// dbmeter's output with no terminal and no COLUMNS.
fn plain(s: &Scratch, args: &[&str]) -> String {
    let mut c = s.cmd(args);
    c.env_remove("COLUMNS");
    let r = s.output(c);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout
}

fn assert_fits(text: &str, width: usize, what: &str) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= width,
            "{what}: a line of {} columns:\n{l}",
            l.chars().count()
        );
    }
}

#[test]
fn help_on_a_command_is_its_page_both_ways() {
    let s = Scratch::new();
    let names = commands(&s);
    for want in [
        "run",
        "prepare",
        "results",
        "compare",
        "server",
        "completions",
        "man",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for name in &names {
        let a = plain(&s, &["help", name]);
        if name == "sysbench" {
            // `dbmeter sysbench --help` is sysbench's own help, as a
            // drop-in prints it (sysbench_cli.rs checks it).
            assert!(a.starts_with("Usage: dbmeter sysbench"), "{a}");
            continue;
        }
        let b = plain(&s, &[name, "--help"]);
        assert_eq!(
            a, b,
            "dbmeter help {name} differs from dbmeter {name} --help"
        );
        assert!(
            a.starts_with(&format!("Usage: dbmeter {name}"))
                || name == "help" && a.starts_with("Usage: dbmeter help"),
            "{name}: {a}"
        );
    }
    // `run --help` is run's page, not the general one, and has examples.
    let run = plain(&s, &["run", "--help"]);
    assert!(
        run.contains("Examples:") && run.contains("--threads=N"),
        "{run}"
    );
    assert!(!run.contains("Commands:"), "{run}");
    // A workload: the same page whichever way it is asked for.
    let a = plain(&s, &["help", "tpch"]);
    assert_eq!(a, plain(&s, &["tpch", "--help"]));
    assert_eq!(a, plain(&s, &["run", "tpch", "--help"]));
    assert!(a.contains("--scale-factor=X"), "{a}");
    // Subcommand pages come with the command's page.
    assert_eq!(
        plain(&s, &["results", "list", "--help"]),
        plain(&s, &["help", "results"])
    );
}

#[test]
fn every_page_fits_the_width() {
    let s = Scratch::new();
    let mut pages = vec![(vec!["help".to_string()], "general help".to_string())];
    for c in commands(&s) {
        pages.push((vec!["help".into(), c.clone()], c));
    }
    for w in workloads(&s) {
        pages.push((vec!["help".into(), w.clone()], w));
    }
    assert!(pages.len() > 20, "{pages:?}");
    for (args, what) in &pages {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_fits(&plain(&s, &args), 80, what);
        let mut narrow = s.cmd(&args);
        narrow.env("COLUMNS", "60");
        let r = s.output(narrow);
        assert_fits(&r.stdout, 60, &format!("{what} at 60 columns"));
    }
    // Wide terminals get longer lines, up to 100 columns.
    let mut wide = s.cmd(&["help", "run"]);
    wide.env("COLUMNS", "100");
    let text = s.output(wide).stdout;
    assert!(text.lines().any(|l| l.len() > 80), "{text}");
    assert_fits(&text, 100, "run at 100 columns");
}

#[test]
fn unknown_topics_and_shells_are_usage_errors() {
    let s = Scratch::new();
    let r = s.run(&["help", "comprae"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("did you mean compare?"), "{}", r.stderr);
    let r = s.run(&["completions", "tcsh"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bash, zsh and fish"), "{}", r.stderr);
    let r = s.run(&["completions"]);
    assert_eq!(r.code, 2);
    let r = s.run(&["man", "extra"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// What bash completes for `line` (the cursor at its end).
fn bash_complete(script: &std::path::Path, line: &str) -> Vec<String> {
    let driver = format!(
        r#"source {script}
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_dbmeter
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        script = script.display()
    );
    let o = Command::new("bash").arg("-c").arg(driver).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completion_loads_and_completes() {
    let s = Scratch::new();
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <({} completions bash); complete -p dbmeter",
            bin()
        ))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(out.trim(), "complete -F _dbmeter dbmeter");

    let script = s.path("dbmeter.bash");
    std::fs::write(&script, s.ok(&["completions", "bash"]).stdout).unwrap();
    let c = |line: &str| bash_complete(&script, line);
    assert_eq!(c("dbmeter pre"), ["prepare", "prewarm"]);
    assert!(c("dbmeter ").contains(&"oltp_read_write".to_string()));
    assert_eq!(c("dbmeter run oltp_read_w"), ["oltp_read_write"]);
    assert_eq!(
        c("dbmeter results "),
        ["list", "show", "history", "export", "delete"]
    );
    assert_eq!(c("dbmeter results export --format="), ["csv", "json"]);
    assert_eq!(c("dbmeter results list --format="), ["text", "csv", "json"]);
    // A workload's own options after its name, with their choices.
    assert_eq!(c("dbmeter run tpch --tes"), ["--test="]);
    assert_eq!(
        c("dbmeter run tpch --test="),
        ["power", "throughput", "full"]
    );
    assert!(c("dbmeter run oltp_read_write --tab").contains(&"--table_size=".to_string()));
    assert!(c("dbmeter run oltp_read_write --tes").is_empty());
    // General options; sysbench's order; a workload's own commands.
    assert_eq!(c("dbmeter run noop --db-driver=p"), ["pgsql"]);
    assert!(c("dbmeter oltp_read_write --threads=4 ").contains(&"run".to_string()));
    assert!(c("dbmeter tpch ").contains(&"queries".to_string()));
    assert_eq!(c("dbmeter server start --drop"), ["--drop-caches"]);
    assert_eq!(c("dbmeter completions "), ["bash", "zsh", "fish"]);
}

#[test]
fn zsh_and_fish_scripts_parse() {
    let Some(shells) = find_all_or_skip(&[ZSH, FISH]) else {
        return;
    };
    let (zsh, fish) = (&shells[0], &shells[1]);
    let s = Scratch::new();
    for (shell, path, check) in [("zsh", zsh, "-n"), ("fish", fish, "--no-execute")] {
        let file = s.path(&format!("completion.{shell}"));
        std::fs::write(&file, s.ok(&["completions", shell]).stdout).unwrap();
        let o = Command::new(path)
            .arg(check)
            .arg(&file)
            .output()
            .unwrap_or_else(|e| panic!("{shell}: {e}"));
        assert!(
            o.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // fish loads it and knows a workload's choices.
    let file = s.path("completion.fish");
    let o = Command::new(fish)
        .arg("-c")
        .arg(format!(
            "source {}; complete -C'dbmeter run tpch --test='",
            file.display()
        ))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("--test=power") && out.contains("--test=full"),
        "{out}"
    );
    // zsh loads it.
    let o = Command::new(zsh)
        .arg("-c")
        .arg(format!(
            "autoload -U compinit && compinit -u && source {} && echo ${{_comps[dbmeter]}}",
            s.path("completion.zsh").display()
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "_dbmeter",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn man_renders_every_command_and_option() {
    let Some(programs) = find_all_or_skip(&[MAN, GROFF]) else {
        return;
    };
    let (man, groff) = (&programs[0], &programs[1]);
    let s = Scratch::new();
    let page = s.path("dbmeter.1");
    std::fs::write(&page, s.ok(&["man"]).stdout).unwrap();
    let o = Command::new(man)
        .args(["-l", "-P", "cat"])
        .arg(&page)
        .env("MANWIDTH", "80")
        .output()
        .expect("run man");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "NAME",
        "dbmeter completions",
        "GENERAL OPTIONS",
        "--threads=N",
        "--scale-factor=X",
        "ENVIRONMENT",
        "EXIT STATUS",
    ] {
        assert!(text.contains(want), "man page lacks {want}");
    }
    for c in commands(&s) {
        assert!(text.contains(&format!("dbmeter {c}")), "man page lacks {c}");
    }
    // groff finds nothing to warn about.
    let o = Command::new(groff)
        .args(["-man", "-ww", "-z"])
        .arg(&page)
        .output()
        .expect("run groff");
    assert!(
        o.stderr.is_empty(),
        "groff warns: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
