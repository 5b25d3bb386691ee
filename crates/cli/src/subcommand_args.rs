//! The command lines of the commands that are not workload commands
//! (`results`, `compare`, `report`, `server`): words, and options as
//! `--name=value`, `--name value` or, for flags, `--name[=on|off]`.
//! Dashes and underscores in names are alike, as everywhere in dbmeter.

use crate::CliError;
use crate::help::Opt;

/// What one command accepts.
pub(crate) struct Grammar<'a> {
    /// Its options, from its help page: flags take no value (`--x` is on;
    /// `--x=off` also works); a `bare` option may be given without one,
    /// meaning "" (the default): `--store` alone is the default store.
    pub options: &'a [Opt],
    /// The command as users type it, e.g. `results` or `server start`.
    pub command: &'a str,
    /// Where help is, e.g. "`dbmeter help results`".
    pub help: &'a str,
}

/// A parsed command line: the words in order, and the options in order
/// (flags as "on" or "off").
#[derive(Debug)]
pub(crate) struct SubArgs {
    pub words: Vec<String>,
    pub opts: Vec<(String, String)>,
}

fn on_off(v: &str) -> Option<&'static str> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some("on"),
        "off" | "false" | "no" | "0" => Some("off"),
        _ => None,
    }
}

impl SubArgs {
    pub fn parse(args: &[String], g: &Grammar) -> Result<SubArgs, CliError> {
        let mut words = Vec::new();
        let mut opts = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            let Some(body) = a.strip_prefix("--").filter(|b| !b.is_empty()) else {
                words.push(a.clone());
                continue;
            };
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n.replace('_', "-"), Some(v.to_string())),
                None => (body.replace('_', "-"), None),
            };
            let spec = g.options.iter().find(|o| o.name == name);
            if spec.is_some_and(|o| o.is_flag()) {
                let value = match inline.as_deref() {
                    None => "on",
                    Some(v) => on_off(v).ok_or_else(|| {
                        CliError::Usage(format!("--{name}={v}: expected on or off ({})", g.help))
                    })?,
                };
                opts.push((name, value.to_string()));
                continue;
            }
            let Some(spec) = spec else {
                let mut known: Vec<&str> = g.options.iter().map(|o| o.name).collect();
                known.sort_unstable();
                let takes = if known.is_empty() {
                    "it takes no options".to_string()
                } else {
                    format!("it takes --{}", known.join(", --"))
                };
                return Err(CliError::Usage(format!(
                    "unknown option --{name} for `dbmeter {}` ({takes}; {})",
                    g.command, g.help
                )));
            };
            let value = match inline {
                Some(v) => v,
                None => match args.get(i) {
                    Some(v) if !v.starts_with("--") => {
                        i += 1;
                        v.clone()
                    }
                    _ if spec.bare => String::new(),
                    _ => {
                        return Err(CliError::Usage(format!(
                            "option --{name} needs a value ({})",
                            g.help
                        )));
                    }
                },
            };
            opts.push((name, value));
        }
        Ok(SubArgs { words, opts })
    }

    /// The last value given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.opts
            .iter()
            .rfind(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for a repeatable option, in order.
    pub fn all(&self, name: &str) -> impl Iterator<Item = &str> {
        self.opts
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether a flag is on.
    pub fn flag(&self, name: &str) -> bool {
        self.get(name) == Some("on")
    }

    /// `--format`, one of `choices` (the first is the default).
    pub fn format(&self, choices: &[&str], command: &str) -> Result<String, CliError> {
        match self.get("format") {
            None => Ok(choices[0].to_string()),
            Some(f) if choices.contains(&f.to_ascii_lowercase().as_str()) => {
                Ok(f.to_ascii_lowercase())
            }
            Some(f) => Err(CliError::Usage(format!(
                "--format={f}: `dbmeter {command}` writes {}",
                choices.join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::help::{flag, opt};

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    const OPTS: &[Opt] = &[
        opt("store", "PATH", "").bare(),
        opt("format", "F", ""),
        opt("set", "K=V", ""),
        flag("yes", ""),
    ];
    const G: Grammar = Grammar {
        options: OPTS,
        command: "results",
        help: "`dbmeter help results`",
    };

    #[test]
    fn words_values_and_flags() {
        let a = SubArgs::parse(
            &args("list x --set a=1 --set=b=2 --format json --yes y"),
            &G,
        )
        .unwrap();
        assert_eq!(a.words, ["list", "x", "y"]);
        assert_eq!(a.all("set").collect::<Vec<_>>(), ["a=1", "b=2"]);
        assert_eq!(a.get("format"), Some("json"));
        assert!(a.flag("yes"));
        let a = SubArgs::parse(&args("--yes=off --store"), &G).unwrap();
        assert!(!a.flag("yes"));
        assert_eq!(a.get("store"), Some(""));
        assert_eq!(a.format(&["text", "json"], "results").unwrap(), "text");
    }

    #[test]
    fn usage_errors_name_the_option() {
        for (line, want) in [
            (
                "--bogus",
                "unknown option --bogus for `dbmeter results` (it takes --format",
            ),
            ("--format", "option --format needs a value"),
            ("--yes=maybe", "--yes=maybe: expected on or off"),
        ] {
            match SubArgs::parse(&args(line), &G) {
                Err(CliError::Usage(m)) => assert!(m.contains(want), "{line}: {m}"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }
}
