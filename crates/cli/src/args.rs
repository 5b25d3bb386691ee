//! Splitting the command line into a command, a workload and options.

use crate::CliError;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::options::{OptKind, OptSpec, OptValues, canonical, check, parse_bool};
use dbmeter_benchmarks::registry;
use dbmeter_run::options::ALIASES;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Run,
    Prepare,
    Prewarm,
    Cleanup,
    Check,
    List,
    Help,
    Version,
    /// A command of the benchmark's own (see [`Invocation::verb`]).
    Own,
}

impl Command {
    fn parse(s: &str) -> Option<Command> {
        Some(match s {
            "run" => Command::Run,
            "prepare" => Command::Prepare,
            "prewarm" => Command::Prewarm,
            "cleanup" => Command::Cleanup,
            "check" => Command::Check,
            "list" => Command::List,
            "help" => Command::Help,
            "version" => Command::Version,
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::Prepare => "prepare",
            Command::Prewarm => "prewarm",
            Command::Cleanup => "cleanup",
            Command::Check => "check",
            Command::List => "list",
            Command::Help => "help",
            Command::Version => "version",
            Command::Own => "its own command",
        }
    }
}

/// A parsed command line.
pub struct Invocation {
    pub command: Command,
    pub workload: Option<Arc<dyn Benchmark>>,
    /// The options as given: canonical name and value.
    pub given: Vec<(String, String)>,
    /// With [`Command::Own`]: which of the benchmark's own commands.
    pub verb: Option<String>,
}

fn is_option(a: &str) -> bool {
    a.starts_with("--") && a.len() > 2
}

/// Levenshtein distance, for "did you mean" hints.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (distance(word, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The command a mistyped word (`prepar`, `RUN`) stands for, when it is
/// no workload; with the benchmark's own commands too.
fn mistyped_command(word: &str, workload: Option<&dyn Benchmark>) -> Option<String> {
    if registry::find(word).is_some() {
        return None;
    }
    let own: Vec<String> = workload
        .map(|b| b.verbs().iter().map(|v| v.name.to_string()).collect())
        .unwrap_or_default();
    let lower = word.to_ascii_lowercase();
    let pages = crate::help::pages::all();
    let words = pages
        .iter()
        .map(|p| p.name)
        .chain(own.iter().map(String::as_str));
    closest(&lower, words)
        .filter(|c| lower.len() >= 2 && !c.is_empty())
        .map(str::to_string)
}

/// Splits `args` into the command, the workload and raw options.
pub fn parse(
    args: &[String],
    specs_for: impl Fn(Option<&dyn Benchmark>) -> Vec<OptSpec>,
) -> Result<Invocation, CliError> {
    // First pass: find the command and the workload among the words that
    // are not options, so that the option kinds are known.
    let mut command = None;
    let mut workload = None;
    let mut help = false;
    for a in args {
        match a.as_str() {
            "-h" | "--help" => help = true,
            "-V" | "--version" => command = command.or(Some(Command::Version)),
            _ => {}
        }
        if let Some(c) = Command::parse(a) {
            command = command.or(Some(c));
        } else if workload.is_none() && !is_option(a) {
            workload = registry::find(a).or_else(|| {
                (registry::looks_like_path(a) || a == "-")
                    .then(|| registry::resolve(a).ok())
                    .flatten()
            });
        }
    }
    let specs = specs_for(workload.as_deref());
    let find = |name: &str| -> Option<&OptSpec> {
        let name = ALIASES
            .iter()
            .find(|(a, _)| *a == name)
            .map_or(name, |(_, to)| to);
        specs.iter().find(|s| canonical(&s.name) == name)
    };
    let mut given = Vec::new();
    let mut words = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "-h" || a == "--help" || a == "-V" || a == "--version" {
            continue;
        }
        if !is_option(a) {
            words.push(a.clone());
            continue;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (canonical(n), Some(v.to_string())),
            None => (canonical(a), None),
        };
        let open = workload.as_ref().is_some_and(|w| w.takes_any_option());
        if open && find(&name).is_none() {
            // A sysbench 0.5 script's own option: `--name=value`, or a
            // bare `--name` for on (sysbench 0.5 takes no other form).
            given.push((name, inline.unwrap_or_else(|| "on".to_string())));
            continue;
        }
        let Some(spec) = find(&name) else {
            let names = specs.iter().map(|s| s.name.as_ref());
            let hint = closest(&name, specs.iter().map(|s| s.name.as_ref()))
                .or_else(|| closest(&name.replace('-', "_"), names))
                .map(|c| format!("; did you mean --{c}?"))
                .unwrap_or_default();
            let scope = workload
                .as_ref()
                .map_or(String::new(), |w| format!(" for {}", w.name()));
            return Err(CliError::Usage(format!(
                "unknown option --{name}{scope}{hint}"
            )));
        };
        let value = match inline {
            Some(v) => v,
            None if matches!(spec.kind, OptKind::Bool) => {
                match args.get(i).filter(|n| parse_bool(n).is_some()) {
                    Some(v) => {
                        i += 1;
                        v.clone()
                    }
                    None => "on".to_string(),
                }
            }
            None => match args.get(i) {
                Some(v) if !is_option(v) => {
                    i += 1;
                    v.clone()
                }
                _ => {
                    return Err(CliError::Usage(format!(
                        "option --{} needs a value",
                        spec.name
                    )));
                }
            },
        };
        check(spec, &value).map_err(CliError::Usage)?;
        given.push((canonical(&spec.name), value));
    }
    // Second look at the words: one command, at most one workload.
    let mut command_word = None;
    let mut workload_word = None;
    let mut own_verb = None;
    let is_own = |w: &str| {
        Command::parse(w).is_none()
            && workload
                .as_ref()
                .is_some_and(|b| b.verbs().iter().any(|v| v.name == w))
    };
    for w in words {
        if Command::parse(&w).is_some() && command_word.is_none() {
            command_word = Some(w);
        } else if is_own(&w) && command_word.is_none() && own_verb.is_none() {
            own_verb = Some(w.clone());
            command_word = Some(w);
            command = Some(Command::Own);
        } else if workload_word.is_none() {
            workload_word = Some(w);
        } else {
            if command_word.is_none()
                && let Some(first) = &workload_word
                && let Some(c) = mistyped_command(first, workload.as_deref())
            {
                return Err(CliError::Usage(format!(
                    "unknown command '{first}'; did you mean {c}?"
                )));
            }
            return Err(CliError::Usage(format!("unexpected argument '{w}'")));
        }
    }
    // `dbmeter help run`: help on a command is the general help.
    if (help || command == Some(Command::Help)) && workload.is_none() {
        return Ok(Invocation {
            command: Command::Help,
            workload: None,
            given,
            verb: None,
        });
    }
    if let Some(w) = &workload_word
        && workload.is_none()
    {
        if registry::looks_like_path(w) {
            return Err(CliError::Failed(
                registry::resolve(w).err().unwrap_or_default(),
            ));
        }
        if command_word.is_none()
            && let Some(c) = mistyped_command(w, None)
        {
            return Err(CliError::Usage(format!(
                "unknown command '{w}'; did you mean {c}?"
            )));
        }
        let all = registry::all();
        let hint = closest(w, all.iter().map(|x| x.name()))
            .map(|c| format!("; did you mean {c}?"))
            .unwrap_or_default();
        return Err(CliError::Usage(format!(
            "unknown workload '{w}'{hint}; `dbmeter list` shows them"
        )));
    }
    // `help SCRIPT` calls the script's own help() when it has one (as
    // sysbench does for `sysbench SCRIPT help`).
    if !help
        && command == Some(Command::Help)
        && workload
            .as_ref()
            .is_some_and(|b| b.verbs().iter().any(|v| v.name == "help"))
    {
        return Ok(Invocation {
            command: Command::Own,
            workload,
            given,
            verb: Some("help".into()),
        });
    }
    let command = if help {
        Command::Help
    } else {
        command.unwrap_or(Command::Help)
    };
    if command_word.is_none() && workload.is_some() && !help {
        return Err(CliError::Usage(format!(
            "missing command: say what to do with {} (prepare, prewarm, run, check or cleanup)",
            workload.as_ref().map_or("", |w| w.name())
        )));
    }
    Ok(Invocation {
        command,
        workload,
        given,
        verb: own_verb,
    })
}

/// Option values: defaults from `specs`, then what the user gave.
pub fn values(specs: &[OptSpec], given: &[(String, String)]) -> OptValues {
    let mut v = OptValues::from_defaults(specs);
    for (name, value) in given {
        v.set(name, value);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(
            closest("thread", ["threads", "time"].into_iter()),
            Some("threads")
        );
        assert_eq!(closest("zzzzzz", ["threads", "time"].into_iter()), None);
    }
}
