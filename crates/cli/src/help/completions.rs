//! Completion scripts for bash, zsh and fish, made from the pages and the
//! option tables the parser uses.
//!
//! bash and zsh share the data functions (`case` tables that both shells
//! read alike): the commands, each command's subcommands and options, each
//! workload's options and verbs, and the words a choice option takes. Each
//! shell then has a small front end that finds the command, subcommand
//! and workload on the line and offers what fits the cursor.

use super::page::{Opt, Page};
use super::pages::{self, WORKLOAD_PAGES};
use crate::commands::VERSION;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::options::{OptKind, OptSpec};
use dbmeter_benchmarks::registry;
use std::fmt::Write as _;
use std::sync::Arc;

/// The script for `shell`, or None for a shell dbmeter does not know.
pub fn completions(shell: &str) -> Option<String> {
    match shell {
        "bash" => Some(bash()),
        "zsh" => Some(zsh()),
        "fish" => Some(fish()),
        _ => None,
    }
}

/// What completes an option: `--name=` when it takes a value, `--name`
/// when it takes none (a flag or an on/off option).
fn spec_word(s: &OptSpec) -> String {
    if matches!(s.kind, OptKind::Bool) {
        format!("--{}", s.name)
    } else {
        format!("--{}=", s.name)
    }
}

fn opt_word(o: &Opt) -> String {
    if o.is_flag() {
        format!("--{}", o.name)
    } else {
        format!("--{}=", o.name)
    }
}

/// The words a spec's value can be, if it is one of a few.
fn spec_values(s: &OptSpec) -> Option<String> {
    match &s.kind {
        OptKind::Choice(c) => Some(c.join(" ")),
        OptKind::Bool => Some("on off".into()),
        _ => None,
    }
}

/// The words an option of a page can be: its value hint when that is a
/// list of lower-case words (`text|csv|json`).
fn opt_values(o: &Opt) -> Option<String> {
    let words: Vec<&str> = o.value.split('|').collect();
    (words.len() > 1
        && words
            .iter()
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')))
    .then(|| words.join(" "))
}

fn join<I: IntoIterator<Item = String>>(words: I) -> String {
    words.into_iter().collect::<Vec<_>>().join(" ")
}

fn pages_with_subs() -> Vec<&'static Page> {
    pages::all()
        .into_iter()
        .filter(|p| !p.subs.is_empty())
        .collect()
}

/// The `case` tables bash and zsh share.
fn data_functions(workloads: &[Arc<dyn Benchmark>]) -> String {
    let mut out = String::new();
    let commands = join(pages::all().iter().map(|p| p.name.to_string()));
    let names = join(workloads.iter().map(|w| w.name().to_string()));
    let verbs = join(WORKLOAD_PAGES.iter().map(|p| p.name.to_string()));
    let _ = writeln!(out, "_dbmeter_commands='{commands}'");
    let _ = writeln!(out, "_dbmeter_workloads='{names}'");
    let _ = writeln!(out, "_dbmeter_workload_commands='{verbs}'");
    let general = join(dbmeter_run::options::GENERAL.iter().map(spec_word));
    let _ = writeln!(out, "_dbmeter_general='{general}'");

    // A workload's verbs (its own commands too) and options.
    out.push_str("_dbmeter_workload_verbs() {\n    case \"$1\" in\n");
    for w in workloads {
        let own = join(w.verbs().iter().map(|v| v.name.to_string()));
        let _ = writeln!(out, "        {}) echo 'run {own}' ;;", w.name());
    }
    out.push_str("    esac\n}\n");
    out.push_str("_dbmeter_workload_options() {\n    case \"$1\" in\n");
    for w in workloads {
        let _ = writeln!(
            out,
            "        {}) echo '{}' ;;",
            w.name(),
            join(w.options().iter().map(spec_word))
        );
    }
    out.push_str("    esac\n}\n");

    // Subcommands and the options of the other commands.
    out.push_str("_dbmeter_subcommands() {\n    case \"$1\" in\n");
    for p in pages_with_subs() {
        let _ = writeln!(
            out,
            "        {}) echo '{}' ;;",
            p.name,
            join(p.subs.iter().map(|s| s.name.to_string()))
        );
    }
    out.push_str("    esac\n}\n");
    out.push_str("_dbmeter_command_options() {\n    case \"$1/$2\" in\n");
    for p in pages::all() {
        for s in p.subs {
            let _ = writeln!(
                out,
                "        {}/{}) echo '{}' ;;",
                p.name,
                s.name,
                join(p.options_of(Some(s.name)).iter().map(opt_word))
            );
        }
        let mut all: Vec<String> = p.all_options().iter().map(opt_word).collect();
        all.extend(p.specs.iter().map(spec_word));
        let _ = writeln!(out, "        {}/*) echo '{}' ;;", p.name, join(all));
    }
    out.push_str("    esac\n}\n");

    // The words of choice options: COMMAND/SUB/WORKLOAD/OPTION.
    out.push_str("_dbmeter_values() {\n    case \"$1\" in\n");
    for w in workloads {
        for s in w.options() {
            if let Some(v) = spec_values(&s) {
                let _ = writeln!(out, "        */*/{}/{}) echo '{v}' ;;", w.name(), s.name);
            }
        }
    }
    for p in pages::all() {
        for s in p.subs {
            for o in s.options {
                if let Some(v) = opt_values(o) {
                    let _ = writeln!(
                        out,
                        "        {}/{}/*/{}) echo '{v}' ;;",
                        p.name, s.name, o.name
                    );
                }
            }
        }
        for o in p.options {
            if let Some(v) = opt_values(o) {
                let _ = writeln!(out, "        {}/*/*/{}) echo '{v}' ;;", p.name, o.name);
            }
        }
        for s in p.specs {
            if let Some(v) = spec_values(s) {
                let _ = writeln!(out, "        {}/*/*/{}) echo '{v}' ;;", p.name, s.name);
            }
        }
    }
    for s in dbmeter_run::options::GENERAL {
        if let Some(v) = spec_values(s) {
            let _ = writeln!(out, "        */*/*/{}) echo '{v}' ;;", s.name);
        }
    }
    out.push_str("        */*/*/db) echo 'sqlite: mysql:// mariadb:// postgres://' ;;\n");
    out.push_str("    esac\n}\n");

    // What to offer: the words before the cursor give the command, the
    // subcommand and the workload.
    out.push_str(
        r#"_dbmeter_in() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
# Sets _dbmeter_cmd, _dbmeter_sub, _dbmeter_wl from the words given.
_dbmeter_parse() {
    _dbmeter_cmd='' _dbmeter_sub='' _dbmeter_wl=''
    local w
    for w in "$@"; do
        case "$w" in -*) continue ;; esac
        if [ -z "$_dbmeter_cmd" ] && _dbmeter_in "$w" "$_dbmeter_commands"; then
            _dbmeter_cmd=$w
        elif [ -z "$_dbmeter_wl" ] && _dbmeter_in "$w" "$_dbmeter_workloads"; then
            _dbmeter_wl=$w
        elif [ -n "$_dbmeter_cmd" ] && [ -z "$_dbmeter_sub" ]; then
            _dbmeter_sub=$w
        elif [ -z "$_dbmeter_cmd" ] && [ -n "$_dbmeter_wl" ]; then
            _dbmeter_cmd=$w
        fi
    done
}
# The words that may come at the cursor (a word that does not start with -).
_dbmeter_words() {
    if [ -z "$_dbmeter_cmd" ] && [ -z "$_dbmeter_wl" ]; then
        echo "$_dbmeter_commands $_dbmeter_workloads"
    elif [ -z "$_dbmeter_cmd" ]; then
        _dbmeter_workload_verbs "$_dbmeter_wl"
    elif [ "$_dbmeter_cmd" = help ]; then
        [ -z "$_dbmeter_sub" ] && echo "$_dbmeter_commands $_dbmeter_workloads"
    elif [ "$_dbmeter_cmd" = completions ]; then
        [ -z "$_dbmeter_sub" ] && echo 'bash zsh fish'
    elif _dbmeter_in "$_dbmeter_cmd" "$_dbmeter_workload_commands"; then
        [ -z "$_dbmeter_wl" ] && echo "$_dbmeter_workloads"
    elif [ -z "$_dbmeter_sub" ]; then
        _dbmeter_subcommands "$_dbmeter_cmd"
    fi
}
# The options that fit the command on the line.
_dbmeter_options() {
    case " $_dbmeter_commands " in
        *" $_dbmeter_cmd "*) ;;
        *) [ -n "$_dbmeter_wl" ] && echo "$_dbmeter_general $(_dbmeter_workload_options "$_dbmeter_wl")"; return ;;
    esac
    if _dbmeter_in "$_dbmeter_cmd" "$_dbmeter_workload_commands"; then
        echo "$_dbmeter_general $(_dbmeter_workload_options "$_dbmeter_wl")"
    elif [ "$_dbmeter_cmd" = env ]; then
        echo "$_dbmeter_general $(_dbmeter_command_options env '')"
    else
        _dbmeter_command_options "$_dbmeter_cmd" "$_dbmeter_sub"
    fi
}
"#,
    );
    out
}

fn bash() -> String {
    let workloads = registry::all();
    let mut out =
        format!("# bash completion for dbmeter {VERSION}; made by `dbmeter completions bash`.\n");
    out.push_str(&data_functions(&workloads));
    out.push_str(
        r#"_dbmeter() {
    local cur=${COMP_WORDS[COMP_CWORD]} line=${COMP_LINE:0:$COMP_POINT} w
    local -a before
    # The words before the cursor, split on blanks only (not on '=').
    read -ra before <<< "$line"
    if [[ $line != *[[:space:]] && ${#before[@]} -gt 0 ]]; then
        cur=${before[${#before[@]}-1]}
        unset 'before[${#before[@]}-1]'
    else
        cur=''
    fi
    _dbmeter_parse "${before[@]:1}"
    COMPREPLY=()
    if [[ $cur == --*=* ]]; then
        local name=${cur%%=*} value=${cur#*=}
        name=${name#--}
        local values
        values=$(_dbmeter_values "$_dbmeter_cmd/${_dbmeter_sub:-_}/${_dbmeter_wl:-_}/$name")
        if [[ -n $values ]]; then
            local -a found
            mapfile -t found < <(compgen -W "$values" -- "$value")
            if [[ $COMP_WORDBREAKS == *=* ]]; then
                COMPREPLY=("${found[@]}")
            else
                for w in "${found[@]}"; do COMPREPLY+=("--$name=$w"); done
            fi
        else
            compopt -o default 2>/dev/null
        fi
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_dbmeter_options)" -- "$cur")
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return 0
    fi
    local words
    words=$(_dbmeter_words)
    if [[ -n $words ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
    else
        compopt -o default 2>/dev/null
    fi
    return 0
}
complete -F _dbmeter dbmeter
"#,
    );
    out
}

fn zsh() -> String {
    let workloads = registry::all();
    let mut out = format!(
        "#compdef dbmeter\n# zsh completion for dbmeter {VERSION}; made by `dbmeter completions zsh`.\n"
    );
    out.push_str(&data_functions(&workloads));
    out.push_str(
        r#"_dbmeter() {
    local cur=${words[CURRENT]}
    _dbmeter_parse "${(@)words[2,CURRENT-1]}"
    if [[ $cur == --*=* ]]; then
        local name=${${cur%%=*}#--}
        local -a values
        values=(${=$(_dbmeter_values "$_dbmeter_cmd/${_dbmeter_sub:-_}/${_dbmeter_wl:-_}/$name")})
        compset -P '*='
        if (( ${#values} )); then
            compadd -a values
        else
            _files
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        local -a all valued flags
        all=(${=$(_dbmeter_options)})
        valued=(${${(M)all:#*=}%=})
        flags=(${all:#*=})
        compadd -S '=' -a valued
        compadd -a flags
        return
    fi
    local -a next
    next=(${=$(_dbmeter_words)})
    if (( ${#next} )); then
        compadd -a next
    else
        _files
    fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _dbmeter "$@"
else
    compdef _dbmeter dbmeter
fi
"#,
    );
    out
}

/// Text for a fish description: one line, quotes escaped, short.
fn fish_desc(text: &str) -> String {
    let one = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = match one.find(['(', ';', ':']) {
        Some(i) if i > 12 => one[..i].trim_end().to_string(),
        _ => one,
    };
    let mut s: String = short.chars().take(70).collect();
    if s.len() < short.len() {
        s.push_str("...");
    }
    s.replace('\\', "\\\\").replace('\'', "\\'")
}

fn fish_spec(out: &mut String, cond: &str, s: &OptSpec) {
    let values = match &s.kind {
        OptKind::Choice(c) => format!(" -x -a '{}'", c.join(" ")),
        OptKind::Bool => String::new(),
        _ => " -r".to_string(),
    };
    let _ = writeln!(
        out,
        "complete -c dbmeter -n '{cond}' -l {}{values} -d '{}'",
        s.name,
        fish_desc(&s.help)
    );
}

fn fish_opt(out: &mut String, cond: &str, o: &Opt) {
    let values = if o.is_flag() {
        String::new()
    } else if let Some(v) = opt_values(o) {
        format!(" -x -a '{v}'")
    } else {
        " -r".to_string()
    };
    let _ = writeln!(
        out,
        "complete -c dbmeter -n '{cond}' -l {}{values} -d '{}'",
        o.name,
        fish_desc(o.help)
    );
}

fn fish() -> String {
    let workloads = registry::all();
    let mut out =
        format!("# fish completion for dbmeter {VERSION}; made by `dbmeter completions fish`.\n");
    let names = join(workloads.iter().map(|w| w.name().to_string()));
    let verbs = join(WORKLOAD_PAGES.iter().map(|p| p.name.to_string()));
    for p in pages::all() {
        let _ = writeln!(
            out,
            "complete -c dbmeter -n '__fish_use_subcommand' -f -a {} -d '{}'",
            p.name,
            fish_desc(p.summary)
        );
    }
    for w in &workloads {
        let _ = writeln!(
            out,
            "complete -c dbmeter -n '__fish_use_subcommand' -f -a {} -d '{}'",
            w.name(),
            fish_desc(w.summary())
        );
    }
    // After a workload command (or help), the workloads.
    let _ = writeln!(
        out,
        "complete -c dbmeter -n '__fish_seen_subcommand_from {verbs} help; and not __fish_seen_subcommand_from {names}' -f -a '{names}'"
    );
    let _ = writeln!(
        out,
        "complete -c dbmeter -n '__fish_seen_subcommand_from completions' -f -a 'bash zsh fish'"
    );
    // A workload's own commands, after its name.
    for w in &workloads {
        for v in w.verbs() {
            if WORKLOAD_PAGES.iter().any(|p| p.name == v.name) {
                continue;
            }
            let _ = writeln!(
                out,
                "complete -c dbmeter -n '__fish_seen_subcommand_from {}' -f -a {} -d '{}'",
                w.name(),
                v.name,
                fish_desc(&v.help)
            );
        }
    }
    // The general options, wherever a workload or env is on the line.
    let general_cond = format!("__fish_seen_subcommand_from {verbs} env {names}");
    for s in dbmeter_run::options::GENERAL {
        fish_spec(&mut out, &general_cond, s);
    }
    for w in &workloads {
        let cond = format!("__fish_seen_subcommand_from {}", w.name());
        for s in w.options() {
            fish_spec(&mut out, &cond, &s);
        }
    }
    for p in pages::all() {
        let cond = format!("__fish_seen_subcommand_from {}", p.name);
        if !p.subs.is_empty() {
            let subs = join(p.subs.iter().map(|s| s.name.to_string()));
            for s in p.subs {
                let _ = writeln!(
                    out,
                    "complete -c dbmeter -n '{cond}; and not __fish_seen_subcommand_from {subs}' -f -a {} -d '{}'",
                    s.name,
                    fish_desc(s.help)
                );
                let sub_cond = format!("{cond}; and __fish_seen_subcommand_from {}", s.name);
                for o in s.options {
                    fish_opt(&mut out, &sub_cond, o);
                }
            }
        }
        for o in p.options {
            fish_opt(&mut out, &cond, o);
        }
        for s in p.specs {
            fish_spec(&mut out, &cond, s);
        }
    }
    out
}
