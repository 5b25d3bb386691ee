//! sysbench 1.0 Lua scripts, run unmodified: a script file is a benchmark.
//!
//! Loading a script runs it once to read the options
//! (`sysbench.cmdline.options`) and commands (`sysbench.cmdline.commands`)
//! it declares. Each command, and each virtual user of a run, gets a Lua
//! state of its own (as in sysbench) with dbmeter's implementation of
//! sysbench's API ([`state`]); the queries go through `dbmeter-db`, so a
//! script runs on SQLite, MySQL/MariaDB and PostgreSQL, and is measured,
//! reported and stored like a built-in workload.

mod ffi;
mod state;

use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptKind, OptSpec, OptValues, canonical, parse_bool, parse_float_list};
use crate::random::RandSpec;
use dbmeter_db::{ErrorKind, IgnoreList};
use dbmeter_engine::{EventError, Flow, Interrupter, Tally, User, UserFactory};
use dbmeter_result::RunEvent;
use dbmeter_stats::measure::sql;
use mlua::{Function, Lua, Table, Value as LuaValue};
use state::{Env, OptVal};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

/// Options whose value is a password: kept out of `sysbench.opt`.
const SECRETS: &[&str] = &["mysql-password", "pgsql-password"];

/// The option that prints the per-statement latencies.
pub const REPORT_STATEMENTS: &str = "report-statements";

/// The script's section of a run's text report: what its
/// `report_cumulative` hook printed, then the per-statement latencies
/// (with `--report-statements`). None when there is neither.
pub fn report_text(doc: &dbmeter_result::RunDocument) -> Option<String> {
    let hook = doc
        .section::<ScriptSection>(SECTION)
        .and_then(|s| s.report_cumulative)
        .filter(|t| !t.is_empty())
        .map(|mut t| {
            t.push('\n');
            t
        });
    match (hook, statements_text(doc)) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
    }
}

/// The per-statement latencies of a scripted run (its named kinds), as
/// pgbench -r prints them: with `--report-statements`, else None.
pub fn statements_text(doc: &dbmeter_result::RunDocument) -> Option<String> {
    let on = doc
        .options
        .get(REPORT_STATEMENTS)
        .and_then(|v| parse_bool(v))
        .unwrap_or(false);
    if !on || doc.kinds.is_empty() {
        return None;
    }
    // The percentile --percentile asks for, else the highest one kept.
    let asked = doc
        .options
        .get("percentile")
        .and_then(|v| v.trim().parse::<f64>().ok());
    let kept = &doc.latency_ms.percentiles;
    let pct = kept
        .iter()
        .find(|p| Some(p.percentile) == asked)
        .or(kept.last())
        .map(|p| p.percentile);
    let mut out = String::from("Statement latencies (ms, measured phase):\n");
    let head = match pct {
        Some(p) => format!(
            "{:>10} {:>9} {:>9}  statement",
            "count",
            "avg",
            format!("{p}th")
        ),
        None => format!("{:>10} {:>9}  statement", "count", "avg"),
    };
    out.push_str(&head);
    out.push('\n');
    for k in &doc.kinds {
        let mut line = format!("{:>10} {:>9.3}", k.events, k.latency_ms.avg_ms);
        if let Some(p) = pct {
            let v = k
                .latency_ms
                .percentiles
                .iter()
                .find(|x| x.percentile == p)
                .map_or(0.0, |x| x.ms);
            line.push_str(&format!(" {v:>9.3}"));
        }
        line.push_str("  ");
        // Long statements are cut to keep the line within 80 columns
        // (the JSON result keeps their whole text).
        let room = 80usize.saturating_sub(line.chars().count()).max(20);
        if k.name.chars().count() > room {
            line.extend(k.name.chars().take(room - 3));
            line.push_str("...");
        } else {
            line.push_str(&k.name);
        }
        out.push_str(&line);
        out.push('\n');
    }
    Some(out)
}

/// A sysbench Lua script, loaded.
pub struct Script {
    path: String,
    source: String,
    summary: String,
    options: Vec<OptSpec>,
    /// Options declared without a default: sysbench's zero value of their
    /// type in `sysbench.opt` unless given (0, true, "", an empty list).
    nil_default: Vec<String>,
    /// List options (`ARG_LIST`, or a table default): tables in `sysbench.opt`.
    lists: Vec<String>,
    /// The script declares `sysbench.cmdline.options`: without them it takes
    /// any option, and sees them as global variables too (as in sysbench).
    declares_options: bool,
    /// The state that ran the script when it was loaded: sysbench's main
    /// state, used again for init(), done(), the hooks and the commands.
    loaded: std::sync::Mutex<Option<Lua>>,
    /// The script's commands (`sysbench.cmdline.commands`): name, parallel.
    commands: Vec<(String, bool)>,
    /// Global functions that stand for commands (`cleanup`, `prepare`...).
    globals: Vec<String>,
    /// A sysbench 0.5 script: no `sysbench.*` use, options as globals.
    legacy: bool,
}

/// sysbench's option types (`sysbench.cmdline.ARG_*`) as dbmeter's.
fn kind_of(arg_type: Option<i64>, default: &LuaValue) -> OptKind {
    match arg_type {
        Some(1) => OptKind::Bool,
        Some(2) => OptKind::Int,
        Some(3) => OptKind::Size,
        Some(4) => OptKind::Float,
        Some(6) => OptKind::Str,
        Some(_) => OptKind::Str,
        None => match default {
            LuaValue::Boolean(_) => OptKind::Bool,
            LuaValue::Number(_) | LuaValue::Integer(_) => OptKind::Float,
            _ => OptKind::Str,
        },
    }
}

fn default_text(v: &LuaValue) -> Result<String, String> {
    Ok(match v {
        LuaValue::Nil => String::new(),
        LuaValue::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
        LuaValue::Integer(i) => i.to_string(),
        LuaValue::Number(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", *x as i64),
        LuaValue::Number(x) => x.to_string(),
        LuaValue::String(s) => s.to_string_lossy(),
        LuaValue::Table(t) => t
            .sequence_values::<LuaValue>()
            .map(|v| v.map_err(|e| e.to_string()).and_then(|v| default_text(&v)))
            .collect::<Result<Vec<_>, _>>()?
            .join(","),
        other => {
            return Err(format!(
                "an option's default cannot be a {}",
                other.type_name()
            ));
        }
    })
}

/// The command that only runs a script's body (for a script whose body
/// connects, so that it runs with the command line's database).
const BODY: &str = "body";

/// sysbench's words for a malformed `sysbench.cmdline.options`.
fn options_error(what: &str) -> mlua::Error {
    mlua::Error::RuntimeError(format!(
        "`sysbench.cmdline.read_cmdline_options' function failed: [string \"sysbench.cmdline.lua\"]:1: {what}"
    ))
}

impl Script {
    /// Loads the script at `path` (`-`: standard input): runs it once to
    /// read what it declares.
    pub fn load(path: &str) -> Result<Script, String> {
        let source = if path == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| format!("<stdin>: {e}"))?;
            s
        } else {
            std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?
        };
        // sysbench 0.5 scripts know nothing of `sysbench.*`: they read
        // their options as global variables and call `db_query()`.
        let old_style = !source.contains("sysbench.");
        let env = Arc::new(Env {
            statements: None,
            legacy: old_style,
            export_globals: false,
            script: PathBuf::from(path),
            source: source.clone(),
            connect: None,
            rand: RandSpec::default(),
            seed: 0,
            opts: Vec::new(),
            unique: AtomicU32::new(0),
            loop_start: std::sync::OnceLock::new(),
            loop_events: std::sync::atomic::AtomicU64::new(0),
            ignore: IgnoreList::parse("none"),
            reconnects: std::sync::atomic::AtomicU64::new(0),
            stopping: std::sync::atomic::AtomicBool::new(false),
        });
        let command = state::command_of(path).unwrap_or_default();
        let lua = match state::new_state(&env, &command, 0) {
            Ok(lua) => lua,
            // Its body connects: it runs once the command has a database,
            // and declares nothing dbmeter could read before.
            Err(e) if e.contains(state::NEEDS_DB) => {
                return Ok(Script {
                    legacy: false,
                    path: path.to_string(),
                    source,
                    summary: format!("sysbench Lua script {path}"),
                    options: crate::oltp::RAND_OPTIONS.to_vec(),
                    nil_default: Vec::new(),
                    lists: Vec::new(),
                    declares_options: false,
                    commands: Vec::new(),
                    globals: vec![BODY.to_string()],
                    loaded: std::sync::Mutex::new(None),
                });
            }
            Err(e) => return Err(e),
        };
        let read = || -> mlua::Result<Script> {
            let sb: Table = lua.globals().get("sysbench")?;
            let cmdline: Table = sb.get("cmdline")?;
            let mut options = Vec::new();
            let mut nil_default = Vec::new();
            let mut lists = Vec::new();
            let declared: LuaValue = cmdline.get("options")?;
            let declared = match declared {
                LuaValue::Nil => None,
                LuaValue::Table(t) => Some(t),
                other => {
                    return Err(options_error(&format!(
                        "wrong type for sysbench.cmdline.options: {}",
                        other.type_name()
                    )));
                }
            };
            if let Some(opts) = &declared {
                for pair in opts.pairs::<LuaValue, LuaValue>() {
                    let (name, def) = pair?;
                    let (LuaValue::String(name), LuaValue::Table(def)) = (name, def) else {
                        return Err(options_error(
                            "wrong table structure in sysbench.cmdline.options",
                        ));
                    };
                    let name = name.to_string_lossy();
                    let help = match def.get::<LuaValue>(1)? {
                        LuaValue::Nil => {
                            return Err(options_error(&format!(
                                "nil description for option {name}"
                            )));
                        }
                        LuaValue::String(s) => s.to_string_lossy(),
                        other => lua
                            .coerce_string(other)?
                            .map(|s| s.to_string_lossy())
                            .unwrap_or_default(),
                    };
                    let default: LuaValue = def.get(2)?;
                    let arg_type: Option<i64> = def.get(3)?;
                    let text = default_text(&default).map_err(mlua::Error::RuntimeError)?;
                    if default.is_nil() {
                        nil_default.push(canonical(&name));
                    }
                    if arg_type == Some(6) || matches!(default, LuaValue::Table(_)) {
                        lists.push(canonical(&name));
                    }
                    options.push(OptSpec {
                        name: Cow::Owned(name.clone()),
                        kind: kind_of(arg_type, &default),
                        default: Cow::Owned(text),
                        help: Cow::Owned(help),
                        shapes_data: false,
                        checked_by_benchmark: false,
                    });
                }
            }
            options.sort_by(|a, b| a.name.cmp(&b.name));
            let declares_options = declared.is_some();
            options.push(OptSpec {
                name: Cow::Borrowed(REPORT_STATEMENTS),
                kind: OptKind::Bool,
                default: Cow::Borrowed("off"),
                help: Cow::Borrowed(
                    "print each statement's latency after the run (pgbench -r); the result keeps them either way",
                ),
                shapes_data: false,
                checked_by_benchmark: false,
            });
            for r in crate::oltp::RAND_OPTIONS {
                if !options
                    .iter()
                    .any(|o| canonical(&o.name) == canonical(&r.name))
                {
                    options.push(r.clone());
                }
            }
            let mut commands = Vec::new();
            if let LuaValue::Table(cmds) = cmdline.get::<LuaValue>("commands")? {
                for pair in cmds.pairs::<LuaValue, LuaValue>() {
                    // As in sysbench, an entry that is not {function, ...}
                    // defines no command.
                    let (LuaValue::String(name), LuaValue::Table(def)) = pair? else {
                        continue;
                    };
                    if !matches!(def.get::<LuaValue>(1)?, LuaValue::Function(_)) {
                        continue;
                    }
                    let parallel = def.get::<LuaValue>(2)? == LuaValue::Boolean(true);
                    commands.push((name.to_string_lossy(), parallel));
                }
            }
            commands.sort();
            let globals = ["prepare", "cleanup", "prewarm", "help"]
                .iter()
                .filter(|n| state::global_fn(&lua, n).is_some())
                .map(|n| n.to_string())
                .collect();
            let legacy = old_style && !declares_options && commands.is_empty();
            Ok(Script {
                legacy,
                path: path.to_string(),
                source: source.clone(),
                summary: format!("sysbench Lua script {path}"),
                options,
                nil_default,
                lists,
                declares_options,
                commands,
                globals,
                loaded: std::sync::Mutex::new(None),
            })
        };
        let script = read().map_err(|e| match &e {
            mlua::Error::RuntimeError(m) if m.starts_with("`sysbench.cmdline") => m.clone(),
            _ => format!("{path}: {}", state::lua_message(&e)),
        })?;
        if let Ok(mut slot) = script.loaded.lock() {
            *slot = Some(lua);
        }
        Ok(script)
    }

    /// The state the script was loaded in, made ready for `env` as thread
    /// `tid` running `command` (sysbench's main state); a new state once it
    /// has been taken.
    fn main_state(&self, env: &Arc<Env>, command: &str, tid: usize) -> Result<Lua, String> {
        let kept = self.loaded.lock().ok().and_then(|mut s| s.take());
        match kept {
            Some(lua) => {
                state::refresh(&lua, env, command, tid)?;
                Ok(lua)
            }
            None => state::new_state(env, command, tid),
        }
    }

    fn env(&self, ctx: &Context, connect_for_users: bool) -> Result<Arc<Env>, BenchError> {
        let rand = RandSpec::from_options(ctx.options)?;
        let connect = if connect_for_users {
            ctx.user_connection()?
        } else {
            ctx.setup_connection()?
        };
        Ok(Arc::new(Env {
            statements: connect_for_users.then(|| Arc::new(state::Statements::default())),
            legacy: self.legacy,
            export_globals: !self.declares_options,
            script: PathBuf::from(&self.path),
            source: self.source.clone(),
            connect: Some(connect),
            rand,
            seed: ctx.seed,
            opts: self.opt_values(ctx.options),
            unique: AtomicU32::new(0),
            loop_start: std::sync::OnceLock::new(),
            loop_events: std::sync::atomic::AtomicU64::new(0),
            ignore: ctx.ignore.clone(),
            reconnects: std::sync::atomic::AtomicU64::new(0),
            stopping: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// `sysbench.opt`: every option, typed as sysbench types it.
    fn opt_values(&self, o: &OptValues) -> Vec<(String, OptVal)> {
        let mut out = Vec::new();
        for (name, text) in o.all() {
            if SECRETS.contains(&name.as_str()) {
                continue;
            }
            let spec = self.options.iter().find(|s| canonical(&s.name) == *name);
            let unset = self.nil_default.contains(name) && !o.given(name);
            let v = match spec.map(|s| &s.kind) {
                _ if self.lists.contains(name) => OptVal::List(
                    text.split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
                // sysbench's values of an option without a default.
                Some(OptKind::Bool) if unset => OptVal::Bool(true),
                Some(OptKind::Int | OptKind::Size | OptKind::Float) if unset => OptVal::Num(0.0),
                _ if unset => OptVal::Str(String::new()),
                Some(OptKind::Bool) => OptVal::Bool(parse_bool(text).unwrap_or(false)),
                Some(OptKind::Int | OptKind::Size | OptKind::Float) => {
                    OptVal::Num(o.f64(name).max(o.u64(name) as f64))
                }
                Some(OptKind::FloatList) => OptVal::List(
                    parse_float_list(text)
                        .unwrap_or_default()
                        .iter()
                        .map(f64::to_string)
                        .collect(),
                ),
                Some(_) => OptVal::Str(text.clone()),
                // The general options: numbers as numbers.
                None => match text.trim().parse::<f64>() {
                    Ok(x) => OptVal::Num(x),
                    Err(_) => OptVal::Str(text.clone()),
                },
            };
            out.push((name.replace('-', "_"), v));
        }
        out
    }
}

impl Benchmark for Script {
    fn name(&self) -> &str {
        &self.path
    }

    fn report_text(&self, doc: &dbmeter_result::RunDocument) -> Option<String> {
        report_text(doc)
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    fn options(&self) -> Vec<OptSpec> {
        self.options.clone()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        // `sysbench.opt` takes every option as it is; the id distribution
        // is read here.
        RandSpec::from_options(options)?;
        self.opt_values(options);
        Ok(())
    }

    fn default_command(&self) -> Option<String> {
        // sysbench runs a script's body and nothing else; it ran when the
        // script was loaded, unless it needs the database.
        Some(if self.globals.iter().any(|g| g == BODY) {
            BODY.to_string()
        } else {
            String::new()
        })
    }

    fn takes_any_option(&self) -> bool {
        // sysbench passes any option to a script that declares none.
        !self.declares_options
    }

    fn verbs(&self) -> Vec<Verb> {
        let mut names: Vec<String> = self.commands.iter().map(|(n, _)| n.clone()).collect();
        for g in &self.globals {
            if !names.contains(g) {
                names.push(g.clone());
            }
        }
        names
            .into_iter()
            .filter(|n| n != "run")
            .map(|n| Verb {
                help: Cow::Owned(format!("the script's {n} command")),
                name: Cow::Owned(n),
            })
            .collect()
    }

    fn dataset(&self) -> Option<String> {
        // A script without a prepare has no data of its own to prepare.
        let prepares = self.globals.iter().any(|g| g == "prepare")
            || self.commands.iter().any(|(n, _)| n == "prepare");
        prepares.then(|| format!("script:{}", self.path))
    }

    fn writes(&self) -> bool {
        true
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        let declared = self.commands.iter().find(|(n, _)| n == verb);
        let global = self.globals.iter().any(|g| g == verb);
        if declared.is_none() && !global {
            return Err(no_such_verb(self, verb));
        }
        let env = self.env(ctx, false)?;
        // As sysbench: a parallel command runs on worker threads when
        // there is more than one, else in the main state.
        let parallel = declared.is_some_and(|(_, p)| *p) && ctx.threads > 1;
        let threads = if parallel { ctx.threads } else { 1 };
        if parallel && matches!(ctx.layout, dbmeter_result::Layout::Sysbench { .. }) {
            // sysbench starts its worker threads for a parallel command.
            ctx.say("Initializing worker threads...\n");
        }
        let run_one = |tid: usize| -> Result<(), String> {
            // A command that is not parallel runs in the main state (the
            // one that loaded the script), as in sysbench.
            let lua = if parallel {
                state::new_state(&env, verb, tid)?
            } else {
                self.main_state(&env, verb, tid)?
            };
            if verb == BODY {
                return Ok(());
            }
            let f = match declared {
                Some(_) => lua
                    .globals()
                    .get::<Table>("sysbench")
                    .and_then(|s| s.get::<Table>("cmdline"))
                    .and_then(|c| c.get::<Table>("commands"))
                    .and_then(|c| c.get::<Table>(verb))
                    .and_then(|d| d.get::<Function>(1))
                    .map_err(|e| state::lua_message(&e))?,
                None => state::global_fn(&lua, verb)
                    .ok_or_else(|| format!("{}: no function {verb}", self.path))?,
            };
            state::call(&f, ()).map(|_| ())
        };
        let results: Vec<Result<(), String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || run_one(t))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a script thread panicked".into()))
                })
                .collect()
        });
        for r in results {
            r.map_err(BenchError::Failed)?;
        }
        Ok(())
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Events are the script's own; the per-statement latencies of
        // --report-statements are kinds of the document only, made at
        // the end of the run, and no assertion names them.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let env = self.env(ctx, true)?;
        // A script connects when it wants to (some never do): nothing is
        // asked of the server before it runs.
        let version = String::new();
        let main = self
            .main_state(&env, "run", ctx.threads)
            .map_err(BenchError::Failed)?;
        if let Some(init) = state::global_fn(&main, "init") {
            state::call(&init, ()).map_err(BenchError::Failed)?;
        }
        if state::global_fn(&main, "event").is_none() {
            // sysbench's words: the script by its file name.
            let name = std::path::Path::new(&self.path)
                .file_name()
                .map_or_else(|| self.path.clone(), |n| n.to_string_lossy().to_string());
            return Err(BenchError::Failed(format!(
                "cannot find the event() function in {name}"
            )));
        }
        Ok(Box::new(ScriptPlan {
            statements: env.statements.clone(),
            main,
            hook_error: None,
            version,
            users: Arc::new(ScriptUsers {
                env,
                ignore: ctx.ignore.clone(),
            }),
        }))
    }
}

struct ScriptPlan {
    statements: Option<Arc<state::Statements>>,
    /// The run's main state: init(), done() and the report hooks.
    main: Lua,
    /// The first error of a report hook (a warning of the result).
    hook_error: Option<String>,
    version: String,
    users: Arc<ScriptUsers>,
}

/// The document section of a scripted run (`script` in the JSON).
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub struct ScriptSection {
    /// What `sysbench.hooks.report_cumulative` printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_cumulative: Option<String>,
}

/// The key of [`ScriptSection`] in the document.
pub const SECTION: &str = "script";

impl ScriptPlan {
    /// Calls `sysbench.hooks.NAME(stat)` with sysbench's stat fields, if
    /// the script defines the hook: what it printed (without the last line
    /// end), or the line that says it failed. None without the hook.
    fn report(&mut self, name: &str, stat: &[(&str, f64)]) -> Option<String> {
        let lua = &self.main;
        let has = state::internal_fn(lua, "has_hook")
            .and_then(|f| f.call::<bool>(name).map_err(|e| state::lua_message(&e)));
        if !has.unwrap_or(false) {
            return None;
        }
        let called = (|| -> Result<String, String> {
            let t = lua.create_table().map_err(|e| state::lua_message(&e))?;
            for (k, v) in stat {
                t.set(*k, *v).map_err(|e| state::lua_message(&e))?;
            }
            let f = state::internal_fn(lua, "report")?;
            let (text, err): (Option<String>, Option<String>) =
                f.call((name, t)).map_err(|e| state::lua_message(&e))?;
            match (text, err) {
                (Some(text), _) => Ok(text),
                (None, e) => Err(e.unwrap_or_default()),
            }
        })();
        Some(match called {
            Ok(mut text) => {
                if text.ends_with('\n') {
                    text.pop();
                }
                text
            }
            Err(e) => {
                let line = format!("the script's {name} failed: {e}");
                self.hook_error.get_or_insert_with(|| line.clone());
                line
            }
        })
    }

    /// What closes the reports' output (report_json's array), or "".
    fn close_reports(&self) -> String {
        state::internal_fn(&self.main, "close_reports")
            .and_then(|f| f.call::<String>(()).map_err(|e| state::lua_message(&e)))
            .unwrap_or_default()
    }
}

impl RunPlan for ScriptPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn server_optional(&self) -> bool {
        true
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        sql::MEASURES.to_vec()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }

    fn measure_start(&mut self) {
        if let Some(st) = &self.statements {
            st.measuring
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// sysbench.hooks.report_intermediate for each interval, and what
    /// closes the reports (report_json's `]`) at the end of the series.
    fn own_words(&mut self, event: &RunEvent) -> Option<String> {
        match event {
            RunEvent::Interval {
                interval: s,
                percentile,
                ..
            } => {
                let count = |name: &str| s.counts.get(name).copied().unwrap_or(0) as f64;
                // The interval keeps rates of the engine's counters.
                let times = |per_s: f64| (per_s * s.duration_s).round();
                self.report(
                    "report_intermediate",
                    &[
                        ("threads_running", s.threads as f64),
                        ("time_interval", s.duration_s),
                        ("time_total", s.t_s),
                        (
                            "latency_pct",
                            s.latency_ms.get(*percentile).unwrap_or(0.0) / 1000.0,
                        ),
                        ("events", s.events as f64),
                        ("reads", count("reads")),
                        ("writes", count("writes")),
                        ("other", count("others")),
                        ("errors", times(s.errors_per_s)),
                        ("reconnects", times(s.reconnects_per_s)),
                        ("queue_length", s.queue_length.unwrap_or(0) as f64),
                        ("concurrency", s.concurrency.unwrap_or(0) as f64),
                    ],
                )
            }
            RunEvent::MeasurementEnded { .. } => {
                Some(self.close_reports().trim_matches('\n').to_string())
            }
            _ => None,
        }
    }

    fn finish(
        &mut self,
        _result: &dbmeter_engine::RunResult,
        doc: &mut dbmeter_result::RunDocument,
    ) -> Vec<dbmeter_env::Warning> {
        let mut warnings = Vec::new();
        // sysbench.hooks.report_cumulative, with the measured phase's
        // totals: what it prints is the script's section of the report.
        let t = &doc.totals;
        let l = &doc.latency_ms;
        let pct = doc
            .options
            .get("percentile")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(95.0);
        let stat = [
            // sysbench reports no thread running once the run is over.
            ("threads_running", 0.0),
            ("time_interval", t.duration_s),
            ("time_total", t.duration_s),
            (
                "latency_pct",
                doc.latency_percentile_ms(pct).unwrap_or(0.0) / 1000.0,
            ),
            ("events", t.events as f64),
            ("reads", doc.count("reads") as f64),
            ("writes", doc.count("writes") as f64),
            ("other", doc.count("others") as f64),
            ("errors", (t.ignored_errors + t.connection_errors) as f64),
            (
                "reconnects",
                (t.reconnects
                    + self
                        .users
                        .env
                        .reconnects
                        .load(std::sync::atomic::Ordering::Relaxed)) as f64,
            ),
            ("latency_min", l.min_ms / 1000.0),
            ("latency_max", l.max_ms / 1000.0),
            ("latency_avg", l.avg_ms / 1000.0),
            ("latency_sum", l.sum_ms / 1000.0),
        ];
        if let Some(mut text) = self.report("report_cumulative", &stat) {
            let close = self.close_reports();
            let close = close.trim_end_matches('\n');
            if !close.is_empty() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(close);
            }
            // A hook that printed nothing leaves no section.
            if !text.is_empty() {
                doc.set_section(
                    SECTION,
                    &ScriptSection {
                        report_cumulative: Some(text),
                    },
                );
            }
        }
        if let Some(e) = self.hook_error.take() {
            warnings.push(dbmeter_env::Warning {
                code: "script_report".into(),
                message: e,
            });
        }
        // Each distinct statement is a named kind (pgbench -r's
        // per-statement latencies), in the order of their total time.
        if let Some(st) = &self.statements
            && let Ok(all) = st.merged.lock()
        {
            let percentiles: Vec<f64> = doc
                .latency_ms
                .percentiles
                .iter()
                .map(|p| p.percentile)
                .collect();
            let mut kinds: Vec<dbmeter_result::KindSection> = all
                .iter()
                .map(|(name, h)| dbmeter_result::KindSection {
                    name: name.clone(),
                    events: h.count(),
                    rolled_back: 0,
                    retries: 0,
                    latency_ms: dbmeter_stats::LatencySummary::from_histogram(h, &percentiles),
                    latency_histogram: h.to_base64(),
                })
                .collect();
            kinds.sort_by(|a, b| {
                b.latency_ms
                    .sum_ms
                    .total_cmp(&a.latency_ms.sum_ms)
                    .then_with(|| a.name.cmp(&b.name))
            });
            doc.kinds.extend(kinds);
        }
        warnings
    }

    /// done(), after the report, as sysbench calls it.
    fn after_report(&mut self) -> Vec<dbmeter_env::Warning> {
        match state::global_fn(&self.main, "done").map(|done| state::call(&done, ())) {
            Some(Err(e)) => vec![dbmeter_env::Warning {
                code: "script_done".into(),
                message: format!("the script's done() failed: {e}"),
            }],
            _ => Vec::new(),
        }
    }
}

struct ScriptUsers {
    env: Arc<Env>,
    ignore: IgnoreList,
}

impl UserFactory for ScriptUsers {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let lua = state::new_state(&self.env, "run", user_id)?;
        // A script that defines thread_run() drives its own loop: the
        // user's one event is that call.
        let own_loop = state::global_fn(&lua, "thread_run");
        let event = match &own_loop {
            Some(f) => f.clone(),
            None => state::global_fn(&lua, "event")
                .ok_or_else(|| format!("{}: no event() function", self.env.script.display()))?,
        };
        // As sysbench 1.0 runs a 0.5 script: its db_*() calls connect
        // when they first need to, not before thread_init().
        if let Some(init) = state::global_fn(&lua, "thread_init") {
            state::call(&init, user_id)?;
        }
        state::take_counts(&lua);
        // What loading and thread_init() left behind is garbage: free it
        // now, so that thousands of users start small.
        lua.gc_collect().map_err(|e| state::lua_message(&e))?;
        // Collect again once the heap has grown by a fifth rather than
        // doubled (Lua's default): events make little garbage, and a
        // state's memory counts thousands of times.
        lua.gc_set_mode(mlua::state::GcMode::Incremental(
            mlua::state::GcIncParams::default().pause(120),
        ));
        let shared = state::shared_ptr(&lua)
            .ok_or_else(|| "dbmeter: the Lua state lost its data".to_string())?;
        Ok(Box::new(ScriptUser {
            shared,
            lua,
            event,
            own_loop: own_loop.is_some(),
            tid: user_id,
            ignore: self.ignore.clone(),
        }))
    }
}

struct ScriptUser {
    /// The Rust side of `lua` (owned by it).
    shared: state::Ptr,
    lua: Lua,
    event: Function,
    /// `event` is the script's thread_run(): it runs once, as one event.
    own_loop: bool,
    tid: usize,
    ignore: IgnoreList,
}

impl ScriptUser {
    /// Calls `sysbench.hooks.before_restart_event(errdesc)`, if defined.
    fn before_restart(&self, e: &dbmeter_db::DbError) {
        let hook = self
            .lua
            .globals()
            .get::<Table>("sysbench")
            .and_then(|s| s.get::<Table>("hooks"))
            .and_then(|h| h.get::<Option<Function>>("before_restart_event"));
        if let Ok(Some(hook)) = hook {
            let dialect = state::with_shared(&self.lua, |s| {
                s.env.connect.as_ref().map(|c| c.target.dialect())
            })
            .flatten();
            let (errno, sql_state) = state::errno_state(e, dialect);
            let desc = self.lua.create_table().and_then(|t| {
                t.set("sql_errno", errno)?;
                t.set("sql_state", sql_state)?;
                t.set("sql_errmsg", e.message.as_str())?;
                t.set("errcode", 1)?;
                Ok(t)
            });
            if let Ok(desc) = desc {
                let _ = hook.call::<()>(desc);
            }
        }
    }
}

impl User for ScriptUser {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        // SAFETY: the state runs no Lua outside `call`, and `self` owns it.
        let sh = unsafe { self.shared.get() };
        sh.pending = None;
        sh.forced_ignorable = false;
        let r = self.event.call::<LuaValue>(self.tid);
        // SAFETY: as above; the Lua call is over.
        let sh = unsafe { self.shared.get() };
        let counts = std::mem::take(&mut sh.counts);
        for (a, b) in tally.measures.iter_mut().zip(counts.measures) {
            *a += b;
        }
        let err = match r {
            Ok(v) => {
                return Ok(match v {
                    _ if self.own_loop => Flow::UserDone,
                    LuaValue::Nil | LuaValue::Boolean(false) => Flow::Continue,
                    _ => Flow::UserDone,
                });
            }
            Err(e) => e,
        };
        let (pending, forced) = state::with_shared(&self.lua, |s| {
            (s.pending.take(), std::mem::take(&mut s.forced_ignorable))
        })
        .unwrap_or((None, false));
        let Some(e) = pending else {
            return Err(EventError::Fatal {
                code: "lua".into(),
                message: state::lua_message(&err),
            });
        };
        let lost = e.kind == ErrorKind::ConnectionLost;
        state::with_shared(&self.lua, |s| s.rollback_open(lost));
        Err(match e.kind {
            ErrorKind::Interrupted => EventError::Cancelled,
            ErrorKind::Timeout => EventError::TimedOut { code: e.code },
            ErrorKind::ConnectionLost => {
                self.before_restart(&e);
                EventError::ConnectionLost {
                    code: e.code,
                    message: e.message,
                }
            }
            _ if forced || self.ignore.contains(&e.code) => {
                self.before_restart(&e);
                EventError::Ignorable { code: e.code }
            }
            _ => EventError::Fatal {
                message: format!("{} ({})", state::lua_message(&err), e.code),
                code: e.code,
            },
        })
    }

    fn reconnect(&mut self) -> Result<(), String> {
        state::with_shared(&self.lua, |s| {
            s.rollback_open(true);
            for c in s.connections() {
                c.reconnect().map_err(|e| e.message)?;
            }
            Ok(())
        })
        .unwrap_or(Ok(()))
    }

    fn finish(&mut self, tally: &mut Tally) -> Result<(), EventError> {
        let r = match state::global_fn(&self.lua, "thread_done") {
            Some(f) => state::call(&f, self.tid).map(|_| ()),
            None => Ok(()),
        };
        let counts = state::take_counts(&self.lua);
        for (a, b) in tally.measures.iter_mut().zip(counts.measures) {
            *a += b;
        }
        state::with_shared(&self.lua, |s| s.merge_statements());
        r.map_err(|message| EventError::Fatal {
            code: "lua".into(),
            message,
        })
    }

    fn interrupter(&self) -> Option<Interrupter> {
        let all: Vec<Interrupter> = state::with_shared(&self.lua, |s| {
            s.connections().filter_map(|c| c.interrupter()).collect()
        })
        .unwrap_or_default();
        // A script's own loop asks sb_more_events() whether to go on.
        let env = self
            .own_loop
            .then(|| state::with_shared(&self.lua, |s| s.env.clone()))
            .flatten();
        if all.is_empty() && env.is_none() {
            return None;
        }
        Some(Arc::new(move || {
            if let Some(env) = &env {
                env.stopping
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            for i in &all {
                i();
            }
        }))
    }
}
