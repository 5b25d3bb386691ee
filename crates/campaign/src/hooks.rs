//! Hook commands: `sh: COMMAND` runs through `sh -c` with the run's facts
//! in its environment; `sql: STATEMENT` runs against the run's target.
//! What they print is kept with the run.

use dbmeter_result::HookRecord;
use std::process::Command;

/// Output kept per hook.
const KEEP_BYTES: usize = 64 * 1024;

/// The facts a hook sees as environment variables.
#[derive(Clone, Debug, Default)]
pub struct HookEnv {
    pub campaign: String,
    pub target: String,
    pub url: String,
    pub workload: String,
    pub clients: u32,
    pub repeat: u32,
}

fn clip(mut s: String) -> String {
    if s.len() > KEEP_BYTES {
        let mut cut = KEEP_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("\n[... cut]");
    }
    s
}

pub fn run_hook(when: &str, command: &str, env: &HookEnv) -> HookRecord {
    let (kind, body) = match command.split_once(':') {
        Some((k, b)) if matches!(k.trim(), "sh" | "sql") => (k.trim(), b.trim()),
        _ => ("sh", command.trim()),
    };
    let mut r = HookRecord {
        when: when.to_string(),
        command: command.to_string(),
        ok: false,
        exit_code: None,
        output: String::new(),
    };
    if kind == "sql" {
        match run_sql(&env.url, body) {
            Ok(msg) => {
                r.ok = true;
                r.output = msg;
            }
            Err(e) => r.output = e,
        }
        return r;
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(body)
        .env("DBMETER_CAMPAIGN", &env.campaign)
        .env("DBMETER_TARGET", &env.target)
        // The target without its password: a secret never goes into a
        // child's environment (a hook reads its credentials from its own
        // files, ~/.my.cnf or ~/.pgpass).
        .env("DBMETER_DB", dbmeter_db::mask_password(&env.url))
        .env("DBMETER_WORKLOAD", &env.workload)
        .env("DBMETER_CLIENTS", env.clients.to_string())
        .env("DBMETER_REPEAT", env.repeat.to_string())
        .output();
    match out {
        Ok(o) => {
            r.exit_code = o.status.code();
            r.ok = o.status.success();
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            r.output = clip(text);
        }
        Err(e) => r.output = format!("cannot run sh: {e}"),
    }
    r
}

fn run_sql(url: &str, sql: &str) -> Result<String, String> {
    if url.is_empty() {
        return Err("no target to run SQL against".into());
    }
    let target = dbmeter_db::Target::parse(url).map_err(|e| e.message)?;
    dbmeter_db::Connection::connect(&dbmeter_db::ConnectOptions::new(target))
        .and_then(|mut conn| conn.query_rows(sql))
        .map(|r| rows_text(&r))
        .map_err(|e| format!("error {}: {}", e.code, e.message))
}

/// A result set as text: the column names, then one line per row, values
/// separated by tabs (NULL as `NULL`), like the mysql client's batch mode.
fn rows_text(r: &dbmeter_db::Rows) -> String {
    if r.columns.is_empty() {
        return String::new();
    }
    let mut out = r.columns.join("\t");
    out.push('\n');
    for row in &r.rows {
        let cells: Vec<&str> = row.iter().map(|v| v.as_deref().unwrap_or("NULL")).collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}
