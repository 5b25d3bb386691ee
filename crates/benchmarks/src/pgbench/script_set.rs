//! The scripts of a run: built from `-f file[@weight]` and
//! `-b name[@weight]` as pgbench takes them, with the variable names they
//! share, and a transaction's script chosen by weight.

use super::builtin::find_builtin;
use super::expr_parse::DEFAULT_SEED;
use super::prng::PgPrng;
use super::script::{Script, parse_script};
use super::variables::VarNames;

/// pgbench's limit on the number of scripts.
const MAX_SCRIPTS: usize = 128;

/// Splits `name@weight` at its last `@`: the name and the weight (1 when
/// there is none), 0 to 2147483647.
pub fn parse_weight(spec: &str) -> Result<(&str, u32), String> {
    let Some((name, w)) = spec.rsplit_once('@') else {
        return Ok((spec, 1));
    };
    let weight: i64 = w
        .parse()
        .map_err(|_| format!("invalid weight specification: @{w}"))?;
    if !(0..=i32::MAX as i64).contains(&weight) {
        return Err(format!(
            "weight specification out of range (0 .. {}): {weight}",
            i32::MAX
        ));
    }
    Ok((name, weight as u32))
}

/// An I/O error's text without Rust's " (os error N)" (as strerror says it).
fn os_message(e: &std::io::Error) -> String {
    let m = e.to_string();
    match m.find(" (os error ") {
        Some(i) => m[..i].to_string(),
        None => m,
    }
}

/// Collects the scripts of a run.
#[derive(Debug, Default)]
pub struct ScriptSetBuilder {
    names: VarNames,
    scripts: Vec<Script>,
}

impl ScriptSetBuilder {
    pub fn new() -> ScriptSetBuilder {
        let mut names = VarNames::default();
        // The automatic variables always have numbers.
        for n in AUTOMATIC {
            names.intern(n);
        }
        ScriptSetBuilder {
            names,
            scripts: Vec::new(),
        }
    }

    fn push(&mut self, script: Script) -> Result<(), String> {
        if self.scripts.len() >= MAX_SCRIPTS {
            return Err(format!("at most {MAX_SCRIPTS} SQL scripts are allowed"));
        }
        self.scripts.push(script);
        Ok(())
    }

    /// Adds a script given as text; `source` names it in errors and results.
    pub fn add_text(&mut self, source: &str, text: &str, weight: u32) -> Result<(), String> {
        let script =
            parse_script(source, text, weight, &mut self.names).map_err(|e| e.to_string())?;
        self.push(script)
    }

    /// Adds `-f FILE[@WEIGHT]`.
    pub fn add_file(&mut self, spec: &str) -> Result<(), String> {
        let (path, weight) = parse_weight(spec)?;
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("could not open file \"{path}\": {}", os_message(&e)))?;
        self.add_text(path, &text, weight)
    }

    /// Adds `-b NAME[@WEIGHT]`.
    pub fn add_builtin(&mut self, spec: &str) -> Result<(), String> {
        let (name, weight) = parse_weight(spec)?;
        let b = find_builtin(name)?;
        self.add_text(b.description, b.text, weight)
    }

    /// The scripts; with none given, pgbench's default (`tpcb-like`).
    pub fn build(mut self) -> Result<ScriptSet, String> {
        if self.scripts.is_empty() {
            self.add_builtin("tpcb-like")?;
        }
        let total_weight: u64 = self.scripts.iter().map(|s| s.weight as u64).sum();
        if total_weight == 0 {
            return Err("total script weight must not be zero".into());
        }
        Ok(ScriptSet {
            scripts: self.scripts,
            names: self.names,
            total_weight,
        })
    }
}

/// The variables every client has (unless `-D` sets them).
pub const AUTOMATIC: [&str; 4] = ["scale", "client_id", DEFAULT_SEED, "random_seed"];

/// The scripts of a run and the variable names they use.
#[derive(Debug)]
pub struct ScriptSet {
    scripts: Vec<Script>,
    names: VarNames,
    total_weight: u64,
}

impl ScriptSet {
    pub fn scripts(&self) -> &[Script] {
        &self.scripts
    }

    pub fn names(&self) -> &VarNames {
        &self.names
    }

    /// The number of SQL command `command` of script `script` among all
    /// the scripts' SQL commands (pgbench names its prepared statements
    /// `P_<number>`).
    pub fn sql_number(&self, script: usize, command: usize) -> usize {
        let is_sql =
            |c: &super::script::Command| matches!(c.kind, super::script::CommandKind::Sql(_));
        let before: usize = self.scripts[..script.min(self.scripts.len())]
            .iter()
            .map(|s| s.commands.iter().filter(|c| is_sql(c)).count())
            .sum();
        let here = self.scripts.get(script).map_or(0, |s| {
            s.commands[..command.min(s.commands.len())]
                .iter()
                .filter(|c| is_sql(c))
                .count()
        });
        before + here
    }

    pub fn total_weight(&self) -> u64 {
        self.total_weight
    }

    /// A script by weight, drawn as pgbench draws it (no draw when there
    /// is only one script).
    pub fn choose(&self, rng: &mut PgPrng) -> usize {
        if self.scripts.len() == 1 {
            return 0;
        }
        let mut w = rng.u64_range(0, self.total_weight - 1) as i64;
        for (i, s) in self.scripts.iter().enumerate() {
            w -= s.weight as i64;
            if w < 0 {
                return i;
            }
        }
        self.scripts.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights() {
        assert_eq!(parse_weight("a.sql"), Ok(("a.sql", 1)));
        assert_eq!(parse_weight("a@b.sql@5"), Ok(("a@b.sql", 5)));
        assert_eq!(parse_weight("x@0"), Ok(("x", 0)));
        assert!(parse_weight("x@").is_err());
        assert!(parse_weight("x@1.5").is_err());
        assert!(parse_weight("x@-1").is_err());
        assert!(parse_weight("x@2147483648").is_err());
    }

    #[test]
    fn choice_follows_weights() {
        let mut b = ScriptSetBuilder::new();
        assert_eq!(b.add_builtin("tpcb-like@1"), Ok(()));
        assert_eq!(b.add_builtin("select-only@3"), Ok(()));
        assert_eq!(b.add_builtin("simple-update@0"), Ok(()));
        let set = b.build().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(set.total_weight(), 4);
        let mut rng = PgPrng::seed(11);
        let mut counts = [0u32; 3];
        for _ in 0..40_000 {
            counts[set.choose(&mut rng)] += 1;
        }
        assert_eq!(counts[2], 0);
        assert!((9_000..11_000).contains(&counts[0]), "{counts:?}");
    }

    #[test]
    fn defaults_and_errors() {
        let set = ScriptSetBuilder::new()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(set.scripts()[0].name, "<builtin: TPC-B (sort of)>");
        let mut b = ScriptSetBuilder::new();
        assert_eq!(b.add_builtin("select-only@0"), Ok(()));
        assert!(
            b.build()
                .is_err_and(|e| e.contains("total script weight must not be zero"))
        );
        let mut b = ScriptSetBuilder::new();
        assert!(
            b.add_file("/nonexistent/x.sql@2")
                .is_err_and(|e| e.contains("/nonexistent/x.sql"))
        );
    }
}
