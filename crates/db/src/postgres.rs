//! PostgreSQL through tokio-postgres (extended protocol with prepared
//! statements by default; COPY for bulk loads).

use crate::connection::{
    Outcome, Param, PsMode, Statements, StmtId, Value, inline_params, replace_placeholders,
};
use crate::target::ServerTarget;
use crate::tls::{TlsMode, TlsSettings};
use crate::{DbError, ErrorKind};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use std::sync::Arc;
use tokio_postgres::config::SslMode;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{CancelToken, Client, Config, SimpleQueryMessage, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

pub struct PgConn {
    pub(crate) client: Client,
    config: Config,
    tls: MakeRustlsConnect,
    stmts: Statements<Statement>,
    ps: bool,
    shown: String,
    version: String,
}

pub(crate) fn map_err(e: tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code().to_string();
        let kind = match code.as_str() {
            "57014" if db.message().contains("statement timeout") => ErrorKind::Timeout,
            "57014" => ErrorKind::Interrupted,
            "57P01" | "57P02" | "57P03" => ErrorKind::ConnectionLost,
            _ => ErrorKind::Other,
        };
        return DbError {
            kind,
            code,
            message: db.message().to_string(),
        };
    }
    if e.is_closed() || e.to_string().contains("connection") {
        return DbError {
            kind: ErrorKind::ConnectionLost,
            code: "08006".into(),
            message: format!("lost connection: {}", with_causes(&e)),
        };
    }
    DbError::other(
        e.code().map_or("XX000", |c| c.code()).to_string(),
        with_causes(&e),
    )
}

/// An error's message followed by those of its causes (e.g. why a TLS
/// handshake failed).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if !msg.contains(&next) {
            msg.push_str(": ");
            msg.push_str(&next);
        }
        cause = c.source();
    }
    msg
}

/// A parameter that adapts to the column type the server expects
/// (sysbench's columns are INTEGER, i.e. int4).
#[derive(Debug)]
struct PgParam<'a>(Param<'a>);

impl ToSql for PgParam<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Param::Int(i) if *ty == Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
            Param::Int(i) if *ty == Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
            Param::Int(i) if *ty == Type::INT8 => i.to_sql(ty, out),
            Param::Int(i) => i.to_string().as_str().to_sql(ty, out),
            Param::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        [
            Type::INT2,
            Type::INT4,
            Type::INT8,
            Type::TEXT,
            Type::VARCHAR,
            Type::BPCHAR,
            Type::NAME,
            Type::UNKNOWN,
        ]
        .contains(ty)
    }

    to_sql_checked!();
}

/// `?` placeholders to `$1, $2, ...` (outside string literals).
pub(crate) fn numbered(sql: &str) -> String {
    replace_placeholders(sql, |i, out| {
        out.push('$');
        out.push_str(&(i + 1).to_string());
    })
}

impl PgConn {
    pub(crate) fn config(t: &ServerTarget, nth: usize) -> Config {
        let mut c = Config::new();
        c.user(&t.user)
            .dbname(&t.database)
            .application_name("dbmeter");
        if let Some(p) = &t.password {
            c.password(p);
        }
        match &t.socket {
            Some(dir) => {
                // A socket path names the directory holding .s.PGSQL.<port>.
                let dir = if dir.is_dir() {
                    dir.clone()
                } else {
                    dir.parent().map(|p| p.to_path_buf()).unwrap_or_default()
                };
                c.host_path(dir).port(t.port(nth));
            }
            None => {
                c.host(t.host(nth)).port(t.port(nth));
            }
        }
        c.connect_timeout(std::time::Duration::from_secs(30));
        c
    }

    /// The TLS connector and mode for `t` (libpq's default: prefer).
    fn tls(t: &ServerTarget, config: &mut Config) -> Result<MakeRustlsConnect, DbError> {
        let tls = TlsSettings::of(t, TlsMode::Prefer)?;
        config.ssl_mode(match tls.mode {
            TlsMode::Disable => SslMode::Disable,
            TlsMode::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        });
        Ok(MakeRustlsConnect::new(tls.client_config()?))
    }

    async fn open(
        config: &Config,
        tls: &MakeRustlsConnect,
        shown: &str,
    ) -> Result<Client, DbError> {
        let (client, connection) = config.connect(tls.clone()).await.map_err(|e| {
            let mut d = map_err(e);
            d.kind = ErrorKind::Other;
            d.message = match d.code.as_str() {
                "28P01" | "28000" => format!("cannot connect to {shown}: authentication failed (wrong user or password?): {}", d.message),
                "3D000" => format!("cannot connect to {shown}: the database does not exist: {}", d.message),
                _ => format!("cannot connect to {shown}: {}", d.message),
            };
            d
        })?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(client)
    }

    pub(crate) async fn connect(
        t: &ServerTarget,
        nth: usize,
        ps: PsMode,
        timeout: Option<std::time::Duration>,
        shown: String,
    ) -> Result<Self, DbError> {
        let mut config = Self::config(t, nth);
        if let Some(limit) = timeout {
            config.options(format!("-c statement_timeout={}", limit.as_millis().max(1)));
        }
        let tls = Self::tls(t, &mut config)?;
        let client = Self::open(&config, &tls, &shown).await?;
        let version = match client.simple_query("SHOW server_version").await {
            Ok(msgs) => msgs
                .iter()
                .find_map(|m| match m {
                    SimpleQueryMessage::Row(r) => r.get(0).map(|v| format!("PostgreSQL {v}")),
                    _ => None,
                })
                .unwrap_or_else(|| "PostgreSQL".into()),
            Err(e) => return Err(map_err(e)),
        };
        Ok(PgConn {
            client,
            config,
            tls,
            stmts: Statements::new(),
            ps: ps == PsMode::Auto,
            shown,
            version,
        })
    }

    pub(crate) async fn reopen(&mut self) -> Result<(), DbError> {
        self.client = Self::open(&self.config, &self.tls, &self.shown).await?;
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
            return Err(DbError::other("XX000", "unknown statement id"));
        };
        if !self.ps {
            let text = inline_params(sql, params);
            return self.simple(&text).await;
        }
        let stmt = match cached {
            Some(s) => s.clone(),
            None => {
                let s = self.client.prepare(&numbered(sql)).await.map_err(map_err)?;
                *cached = Some(s.clone());
                s
            }
        };
        let wrapped: Vec<PgParam<'_>> = params.iter().map(|p| PgParam(*p)).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            wrapped.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        if stmt.columns().is_empty() {
            let n = self.client.execute(&stmt, &refs).await.map_err(map_err)?;
            Ok(Outcome::Affected(n))
        } else {
            let rows = self.client.query(&stmt, &refs).await.map_err(map_err)?;
            std::hint::black_box(&rows);
            Ok(Outcome::Rows(rows.len() as u64))
        }
    }

    async fn simple(&mut self, sql: &str) -> Result<Outcome, DbError> {
        let msgs = self.client.simple_query(sql).await.map_err(map_err)?;
        let mut rows = 0u64;
        let mut described = false;
        let mut affected = 0u64;
        for m in &msgs {
            match m {
                SimpleQueryMessage::Row(_) => rows += 1,
                SimpleQueryMessage::RowDescription(_) => described = true,
                SimpleQueryMessage::CommandComplete(n) => affected = *n,
                _ => {}
            }
        }
        Ok(if described || rows > 0 {
            Outcome::Rows(rows)
        } else {
            Outcome::Affected(affected)
        })
    }

    pub(crate) async fn execute(&mut self, sql: &str) -> Result<Outcome, DbError> {
        self.simple(sql).await
    }

    pub(crate) async fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        let msgs = self.client.simple_query(sql).await.map_err(map_err)?;
        Ok(msgs
            .iter()
            .find_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(
                    r.get(0)
                        .and_then(|v| v.split('.').next().and_then(|x| x.parse().ok())),
                ),
                _ => None,
            })
            .flatten())
    }

    pub(crate) async fn tables(&mut self) -> Result<Vec<String>, DbError> {
        let msgs = self
            .client
            .simple_query(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
            )
            .await
            .map_err(map_err)?;
        Ok(msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect())
    }

    pub(crate) fn version(&self) -> String {
        self.version.clone()
    }

    /// Loads rows with COPY FROM STDIN (text format), streamed as generated.
    pub(crate) async fn copy_in(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        const CHUNK: usize = 256 * 1024;
        let sink = self
            .client
            .copy_in::<_, Bytes>(&format!("COPY {table} ({}) FROM STDIN", columns.join(",")))
            .await
            .map_err(map_err)?;
        futures_util::pin_mut!(sink);
        let mut buf = BytesMut::with_capacity(CHUNK + 1024);
        let mut row = Vec::with_capacity(columns.len());
        loop {
            row.clear();
            let more = next_row(&mut row);
            if more {
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        buf.put_u8(b'\t');
                    }
                    match v {
                        Value::Int(x) => buf.put_slice(x.to_string().as_bytes()),
                        Value::Text(s) => {
                            for b in s.bytes() {
                                match b {
                                    b'\\' => buf.put_slice(b"\\\\"),
                                    b'\t' => buf.put_slice(b"\\t"),
                                    b'\n' => buf.put_slice(b"\\n"),
                                    _ => buf.put_u8(b),
                                }
                            }
                        }
                    }
                }
                buf.put_u8(b'\n');
            }
            if buf.len() >= CHUNK || (!more && !buf.is_empty()) {
                sink.send(buf.split().freeze()).await.map_err(map_err)?;
            }
            if !more {
                break;
            }
        }
        sink.as_mut().finish().await.map_err(map_err)
    }

    /// Interrupts the running statement with a cancel request.
    pub(crate) fn interrupter(&self) -> Arc<dyn Fn() + Send + Sync> {
        let token: CancelToken = self.client.cancel_token();
        let tls = self.tls.clone();
        Arc::new(move || {
            let token = token.clone();
            let tls = tls.clone();
            std::thread::spawn(move || {
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    rt.block_on(async move {
                        let _ = token.cancel_query(tls).await;
                    });
                }
            });
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_placeholders() {
        assert_eq!(
            numbered("SELECT c FROM t WHERE id BETWEEN ? AND ? AND x='?'"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND x='?'"
        );
    }
}
