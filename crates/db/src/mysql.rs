//! MariaDB and MySQL through mysql_async (binary protocol, server-side
//! prepared statements by default).

use crate::connection::{Outcome, Param, PsMode, Statements, StmtId, Value, inline_params};
use crate::target::ServerTarget;
use crate::tls::{TlsMode, TlsSettings};
use crate::{DbError, ErrorKind};
use bytes::Bytes;
use mysql_async::prelude::{Protocol, Queryable};
use mysql_async::{Conn, Opts, OptsBuilder, QueryResult, Statement};
use std::sync::Arc;

pub struct MysqlConn {
    pub(crate) conn: Conn,
    opts: Opts,
    stmts: Statements<Statement>,
    ps: bool,
    shown: String,
    version: String,
}

/// Client-side error codes sysbench users know for a lost connection.
const LOST: &str = "2013";

pub(crate) fn map_err(e: mysql_async::Error) -> DbError {
    match e {
        mysql_async::Error::Server(s) => {
            let kind = match s.code {
                // Query execution was interrupted (KILL QUERY), statement timeouts.
                1317 => ErrorKind::Interrupted,
                // max_execution_time (MySQL), max_statement_time (MariaDB).
                3024 | 1969 => ErrorKind::Timeout,
                // Server shutdown in progress, connection killed.
                1053 | 1927 | 4031 => ErrorKind::ConnectionLost,
                _ => ErrorKind::Other,
            };
            DbError {
                kind,
                code: s.code.to_string(),
                message: s.message,
            }
        }
        mysql_async::Error::Io(io) => DbError {
            kind: ErrorKind::ConnectionLost,
            code: LOST.into(),
            message: format!("lost connection: {io}"),
        },
        mysql_async::Error::Driver(d) => DbError {
            kind: ErrorKind::ConnectionLost,
            code: LOST.into(),
            message: d.to_string(),
        },
        other => DbError::other("2000", other.to_string()),
    }
}

fn value(p: &Param<'_>) -> mysql_async::Value {
    match p {
        Param::Int(i) => mysql_async::Value::Int(*i),
        Param::Text(s) => mysql_async::Value::Bytes(s.as_bytes().to_vec()),
    }
}

/// Reads a result to its end: rows fetched and counted, or rows affected.
async fn outcome<P: Protocol>(mut r: QueryResult<'_, '_, P>) -> Result<Outcome, DbError> {
    if r.columns_ref().is_empty() {
        let n = r.affected_rows();
        r.drop_result().await.map_err(map_err)?;
        return Ok(Outcome::Affected(n));
    }
    let mut n = 0u64;
    r.for_each(|row| {
        std::hint::black_box(row);
        n += 1;
    })
    .await
    .map_err(map_err)?;
    r.drop_result().await.map_err(map_err)?;
    Ok(Outcome::Rows(n))
}

impl MysqlConn {
    pub(crate) fn options(t: &ServerTarget, nth: usize, tls: Option<mysql_async::SslOpts>) -> Opts {
        let mut b = OptsBuilder::default()
            .user(Some(t.user.clone()))
            .pass(t.password.clone())
            .db_name(Some(t.database.clone()))
            .stmt_cache_size(0)
            .prefer_socket(false)
            .ssl_opts(tls);
        b = match &t.socket {
            Some(s) => b.socket(Some(s.to_string_lossy().into_owned())),
            None => b.ip_or_hostname(t.host(nth)).tcp_port(t.port(nth)),
        };
        Opts::from(b)
    }

    pub(crate) async fn connect(
        t: &ServerTarget,
        nth: usize,
        ps: PsMode,
        timeout: Option<std::time::Duration>,
        shown: String,
    ) -> Result<Self, DbError> {
        let tls = TlsSettings::of(t, TlsMode::Disable)?;
        let mut opts = Self::options(t, nth, tls.mysql_opts());
        let mut conn = match Conn::new(opts.clone()).await {
            // prefer: plain text when the server has no TLS.
            Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer))
                if tls.mode == TlsMode::Prefer =>
            {
                opts = Self::options(t, nth, None);
                Conn::new(opts.clone()).await
            }
            Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer)) => {
                return Err(DbError::other(
                    "2026",
                    format!(
                        "cannot connect to {shown}: the server does not support TLS (ssl-mode={}); use ssl-mode=disable or preferred, or enable TLS on the server",
                        tls.mode
                    ),
                ));
            }
            other => other,
        }
        .map_err(|e| connect_error(e, &shown))?;
        let version: Option<String> = conn
            .query_first("SELECT VERSION()")
            .await
            .map_err(map_err)?;
        let version = version.unwrap_or_default();
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        let flavor = if mariadb { "MariaDB" } else { "MySQL" };
        if let Some(limit) = timeout {
            // Set now and on every reconnect.
            let set = if mariadb {
                format!("SET SESSION max_statement_time = {}", limit.as_secs_f64())
            } else {
                format!(
                    "SET SESSION max_execution_time = {}",
                    limit.as_millis().max(1)
                )
            };
            conn.query_drop(&set).await.map_err(|e| {
                let d = map_err(e);
                DbError::other(
                    d.code,
                    format!("cannot set --query-timeout on {shown}: {}", d.message),
                )
            })?;
            opts = Opts::from(OptsBuilder::from_opts(opts).init(vec![set]));
        }
        Ok(MysqlConn {
            conn,
            opts,
            stmts: Statements::new(),
            ps: ps == PsMode::Auto,
            shown,
            version: format!("{flavor} {version}"),
        })
    }

    pub(crate) async fn reopen(&mut self) -> Result<(), DbError> {
        self.conn = Conn::new(self.opts.clone())
            .await
            .map_err(|e| connect_error(e, &self.shown))?;
        self.stmts.forget_prepared();
        Ok(())
    }

    pub(crate) fn register(&mut self, sql: &str) -> StmtId {
        self.stmts.register(sql)
    }

    pub(crate) async fn run(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
    ) -> Result<Outcome, DbError> {
        let Some((sql, cached)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("2000", "unknown statement id"));
        };
        if self.ps {
            let stmt = match cached {
                Some(s) => s.clone(),
                None => {
                    let s = self.conn.prep(sql).await.map_err(map_err)?;
                    *cached = Some(s.clone());
                    s
                }
            };
            let values: Vec<mysql_async::Value> = params.iter().map(value).collect();
            let params = if values.is_empty() {
                mysql_async::Params::Empty
            } else {
                mysql_async::Params::Positional(values)
            };
            let r = self.conn.exec_iter(stmt, params).await.map_err(map_err)?;
            outcome(r).await
        } else {
            let text = inline_params(sql, params);
            let r = self.conn.query_iter(text).await.map_err(map_err)?;
            outcome(r).await
        }
    }

    pub(crate) async fn execute(&mut self, sql: &str) -> Result<Outcome, DbError> {
        let r = self.conn.query_iter(sql).await.map_err(map_err)?;
        outcome(r).await
    }

    pub(crate) async fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        let v: Option<Option<String>> = self.conn.query_first(sql).await.map_err(map_err)?;
        Ok(v.flatten()
            .and_then(|s| s.split('.').next().and_then(|x| x.parse().ok())))
    }

    pub(crate) async fn tables(&mut self) -> Result<Vec<String>, DbError> {
        self.conn
            .query("SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1")
            .await
            .map_err(map_err)
    }

    pub(crate) fn version(&self) -> String {
        self.version.clone()
    }

    /// True when the server accepts LOAD DATA LOCAL INFILE.
    pub(crate) async fn local_infile_allowed(&mut self) -> Result<bool, DbError> {
        Ok(self
            .query_i64("SELECT @@GLOBAL.local_infile")
            .await?
            .unwrap_or(0)
            != 0)
    }

    /// Loads rows with LOAD DATA LOCAL INFILE, streamed from memory as the
    /// rows are generated.
    pub(crate) async fn load_data(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        const CHUNK: usize = 256 * 1024;
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|b| (Ok::<_, std::io::Error>(b), rx))
        });
        self.conn
            .set_infile_handler(async move { Ok(Box::pin(stream) as mysql_async::InfileData) });
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'dbmeter-{table}' INTO TABLE {table} CHARACTER SET latin1 \
             FIELDS TERMINATED BY '\\t' ESCAPED BY '' LINES TERMINATED BY '\\n' ({})",
            columns.join(",")
        );
        let mut produced = 0u64;
        let mut buf = Vec::with_capacity(CHUNK + 1024);
        let mut row = Vec::with_capacity(columns.len());
        let mut done = false;
        let produce = async {
            loop {
                row.clear();
                if !next_row(&mut row) {
                    done = true;
                    break;
                }
                produced += 1;
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        buf.push(b'\t');
                    }
                    match v {
                        Value::Int(x) => buf.extend_from_slice(x.to_string().as_bytes()),
                        Value::Text(s) => buf.extend_from_slice(s.as_bytes()),
                    }
                }
                buf.push(b'\n');
                if buf.len() >= CHUNK {
                    let chunk = Bytes::from(std::mem::replace(
                        &mut buf,
                        Vec::with_capacity(CHUNK + 1024),
                    ));
                    if tx.send(chunk).await.is_err() {
                        return;
                    }
                }
            }
            if !buf.is_empty() {
                let _ = tx.send(Bytes::from(std::mem::take(&mut buf))).await;
            }
            drop(tx);
        };
        let (loaded, ()) = tokio::join!(self.conn.query_drop(sql), produce);
        loaded.map_err(map_err)?;
        if done {
            Ok(produced)
        } else {
            Err(DbError::other(
                "2000",
                "LOAD DATA stopped before the last row",
            ))
        }
    }

    /// Multi-row INSERTs of about 512 KiB each.
    pub(crate) async fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        let head = format!("INSERT INTO {table} ({}) VALUES ", columns.join(","));
        let mut sql = String::with_capacity(600 * 1024);
        let mut row = Vec::with_capacity(columns.len());
        let mut n = 0u64;
        loop {
            row.clear();
            let more = next_row(&mut row);
            if more {
                sql.push_str(if sql.is_empty() { &head } else { "," });
                sql.push('(');
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        sql.push(',');
                    }
                    match v {
                        Value::Int(x) => sql.push_str(&x.to_string()),
                        Value::Text(s) => {
                            sql.push('\'');
                            sql.push_str(&s.replace('\'', "''"));
                            sql.push('\'');
                        }
                    }
                }
                sql.push(')');
                n += 1;
            }
            if (!more && !sql.is_empty()) || sql.len() >= 512 * 1024 {
                self.conn
                    .query_drop(std::mem::take(&mut sql))
                    .await
                    .map_err(map_err)?;
            }
            if !more {
                return Ok(n);
            }
        }
    }

    /// Interrupts the running statement with KILL QUERY from a new connection.
    pub(crate) fn interrupter(&self) -> Arc<dyn Fn() + Send + Sync> {
        let opts = self.opts.clone();
        let id = self.conn.id();
        Arc::new(move || {
            let opts = opts.clone();
            std::thread::spawn(move || {
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    rt.block_on(async move {
                        if let Ok(mut c) = Conn::new(opts).await {
                            let _ = c.query_drop(format!("KILL QUERY {id}")).await;
                            let _ = c.disconnect().await;
                        }
                    });
                }
            });
        })
    }
}

fn connect_error(e: mysql_async::Error, shown: &str) -> DbError {
    let mut d = map_err(e);
    d.message = match d.code.as_str() {
        "1045" => format!(
            "cannot connect to {shown}: access denied (wrong user or password?): {}",
            d.message
        ),
        "1049" => format!(
            "cannot connect to {shown}: the database does not exist: {}",
            d.message
        ),
        _ => format!("cannot connect to {shown}: {}", d.message),
    };
    d.kind = ErrorKind::Other;
    d
}
