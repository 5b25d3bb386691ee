//! PostgreSQL through tokio-postgres (extended protocol with prepared
//! statements by default; COPY for bulk loads).

use crate::connection::{
    Outcome, Param, PsMode, Statements, StmtId, Value, inline_params, replace_placeholders,
};
use crate::target::ServerTarget;
use crate::tls::{TlsMode, TlsSettings};
use crate::{DbError, ErrorKind};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{SinkExt, TryStreamExt};
use rustls::ClientConfig;
use std::fmt::Write as _;
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

/// A result value of any type: integers as [`Value::Int`], text as is,
/// numeric as its decimal text, anything else as text where it has an
/// obvious one (floats, booleans) or as the microseconds of a timestamp.
struct AnyValue(Option<Value>);

impl<'a> tokio_postgres::types::FromSql<'a> for AnyValue {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let v = match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT4 => Value::Text(f32::from_sql(ty, raw)?.to_string()),
            Type::FLOAT8 => Value::Text(f64::from_sql(ty, raw)?.to_string()),
            Type::NUMERIC => Value::Text(numeric_text(raw)?),
            // Microseconds since 2000-01-01.
            Type::TIMESTAMP | Type::TIMESTAMPTZ => Value::Int(i64::from_sql(&Type::INT8, raw)?),
            _ => Value::Text(String::from_utf8_lossy(raw).into_owned()),
        };
        Ok(AnyValue(Some(v)))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(AnyValue(None))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// The decimal text of a NUMERIC in PostgreSQL's binary form: digit
/// count, weight (of the first base-10000 digit), sign, display scale,
/// then the base-10000 digits.
fn numeric_text(raw: &[u8]) -> Result<String, Box<dyn std::error::Error + Sync + Send>> {
    let word = |i: usize| -> Result<u16, Box<dyn std::error::Error + Sync + Send>> {
        match raw.get(2 * i..2 * i + 2) {
            Some(b) => Ok(u16::from_be_bytes([b[0], b[1]])),
            None => Err("short numeric value".into()),
        }
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i32;
    let sign = word(2)?;
    let dscale = word(3)? as usize;
    if sign == 0xC000 {
        return Ok("NaN".into());
    }
    let digit = |k: i32| -> Result<u16, Box<dyn std::error::Error + Sync + Send>> {
        if k >= 0 && (k as usize) < ndigits {
            word(4 + k as usize)
        } else {
            Ok(0)
        }
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for k in 0..=weight {
            let d = digit(k)?;
            if k == 0 {
                s.push_str(&d.to_string());
            } else {
                s.push_str(&format!("{d:04}"));
            }
        }
    }
    if dscale > 0 {
        s.push('.');
        let mut frac = String::new();
        let mut k = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(k)?));
            k += 1;
        }
        frac.truncate(dscale);
        s.push_str(&frac);
    }
    Ok(s)
}

/// `?` placeholders to `$1, $2, ...` (outside string literals).
pub(crate) fn numbered(sql: &str) -> String {
    replace_placeholders(sql, |i, out| {
        out.push('$');
        out.push_str(&(i + 1).to_string());
    })
}

/// An ordinary tokio-postgres client for `t`, with the same TLS, socket and
/// password handling as benchmark connections and errors naming `shown`
/// (the masked URL). Its connection task is spawned on the current tokio
/// runtime, which must keep running (e.g. `block_on` each query) while the
/// client is used. For tools around the benchmark, such as the results store.
pub async fn client(t: &ServerTarget, shown: &str) -> Result<Client, DbError> {
    let mut config = PgConn::config(t, 0);
    let tls = PgConn::tls(t, &mut config)?;
    PgConn::open(&config, &tls, shown).await
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
        // A shallow copy: the session cache and verifier stay shared.
        let shared: Arc<ClientConfig> = tls.client_config()?;
        Ok(MakeRustlsConnect::new(ClientConfig::clone(&shared)))
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
        // Parameters and rows go straight through: no vectors of them per
        // statement, and rows are counted as they arrive, not collected.
        let params = params.iter().map(|p| PgParam(*p));
        if stmt.columns().is_empty() {
            let n = self
                .client
                .execute_raw(&stmt, params)
                .await
                .map_err(map_err)?;
            Ok(Outcome::Affected(n))
        } else {
            let rows = self
                .client
                .query_raw(&stmt, params)
                .await
                .map_err(map_err)?;
            futures_util::pin_mut!(rows);
            let mut n = 0u64;
            while let Some(row) = rows.try_next().await.map_err(map_err)? {
                std::hint::black_box(&row);
                n += 1;
            }
            Ok(Outcome::Rows(n))
        }
    }

    /// Runs a registered statement and appends every value of every row
    /// to `out`, row after row; returns the number of rows.
    pub(crate) async fn fetch(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        let Some((sql, cached)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("XX000", "unknown statement id"));
        };
        if !self.ps {
            let text = inline_params(sql, params);
            let msgs = self.client.simple_query(&text).await.map_err(map_err)?;
            let mut n = 0;
            for m in &msgs {
                if let SimpleQueryMessage::Row(r) = m {
                    for i in 0..r.len() {
                        out.push(r.get(i).map(|v| match v.parse::<i64>() {
                            Ok(x) => Value::Int(x),
                            Err(_) => Value::Text(v.to_string()),
                        }));
                    }
                    n += 1;
                }
            }
            return Ok(n);
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
        let rows = self.client.query(&stmt, &refs).await.map_err(map_err)?;
        for row in &rows {
            for i in 0..row.len() {
                let v: AnyValue = row.try_get(i).map_err(map_err)?;
                out.push(v.0);
            }
        }
        Ok(rows.len() as u64)
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
                        Value::Int(x) => {
                            let _ = write!(buf, "{x}");
                        }
                        Value::Text(s) => copy_text(&mut buf, s),
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

/// Appends `s` as a field of COPY's text format: backslash, tab, newline
/// and carriage return escaped. Most values have none of them and are
/// copied as they are.
fn copy_text(buf: &mut BytesMut, s: &str) {
    let bytes = s.as_bytes();
    if !bytes
        .iter()
        .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        buf.put_slice(bytes);
        return;
    }
    for &b in bytes {
        match b {
            b'\\' => buf.put_slice(b"\\\\"),
            b'\t' => buf.put_slice(b"\\t"),
            b'\n' => buf.put_slice(b"\\n"),
            b'\r' => buf.put_slice(b"\\r"),
            _ => buf.put_u8(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_binary_to_text() {
        // 12345.678 = digits [1, 2345, 6780], weight 1, scale 3.
        let mut raw = Vec::new();
        for w in [3u16, 1, 0, 3, 1, 2345, 6780] {
            raw.extend_from_slice(&w.to_be_bytes());
        }
        assert_eq!(numeric_text(&raw).unwrap(), "12345.678");
        // -0.05 = digits [500], weight -1, scale 2.
        let mut raw = Vec::new();
        for w in [1u16, 0xFFFF, 0x4000, 2, 500] {
            raw.extend_from_slice(&w.to_be_bytes());
        }
        assert_eq!(numeric_text(&raw).unwrap(), "-0.05");
        // 300000.00 = digits [30], weight 1, scale 2.
        let mut raw = Vec::new();
        for w in [1u16, 1, 0, 2, 30] {
            raw.extend_from_slice(&w.to_be_bytes());
        }
        assert_eq!(numeric_text(&raw).unwrap(), "300000.00");
    }

    #[test]
    fn copy_text_escapes() {
        let mut b = BytesMut::new();
        copy_text(&mut b, "12-34");
        copy_text(&mut b, "a\\b\tc\nd\re");
        assert_eq!(&b[..], b"12-34a\\\\b\\tc\\nd\\re");
    }

    #[test]
    fn numbers_placeholders() {
        assert_eq!(
            numbered("SELECT c FROM t WHERE id BETWEEN ? AND ? AND x='?'"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND x='?'"
        );
    }
}
