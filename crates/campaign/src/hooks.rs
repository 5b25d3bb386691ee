//! Hook commands: `sh: COMMAND` runs through `sh -c` with the run's facts
//! in its environment; `sql: STATEMENT` runs against the run's target.
//! What they print is kept with the run.

use dbmeter_result::HookRecord;

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

pub fn run_hook(when: &str, command: &str, env: &HookEnv) -> HookRecord {
    use dbmeter_env::process::HookCommand;
    let mut r = HookRecord {
        when: when.to_string(),
        command: command.to_string(),
        ok: false,
        exit_code: None,
        output: String::new(),
    };
    let body = match HookCommand::parse(command) {
        HookCommand::Sql(sql) => {
            match run_sql(&env.url, sql) {
                Ok(msg) => {
                    r.ok = true;
                    r.output = msg;
                }
                Err(e) => r.output = e,
            }
            return r;
        }
        HookCommand::Shell(body) => body,
    };
    let out = dbmeter_env::process::shell(
        body,
        &[
            ("DBMETER_CAMPAIGN", env.campaign.clone()),
            ("DBMETER_TARGET", env.target.clone()),
            // The target without its password: a secret never goes into a
            // child's environment (a hook reads its credentials from its
            // own files, ~/.my.cnf or ~/.pgpass).
            ("DBMETER_DB", dbmeter_db::mask_password(&env.url)),
            ("DBMETER_WORKLOAD", env.workload.clone()),
            ("DBMETER_CLIENTS", env.clients.to_string()),
            ("DBMETER_REPEAT", env.repeat.to_string()),
        ],
    );
    r.exit_code = out.exit_code;
    r.ok = out.ok;
    r.output = out.output;
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
