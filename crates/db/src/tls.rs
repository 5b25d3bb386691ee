//! TLS to MariaDB/MySQL and PostgreSQL: one set of modes for both servers,
//! read from the target's URL parameters (or the `--ssl-*` options).
//!
//! | mode | encrypts | checks the certificate chain | checks the host name |
//! |---|---|---|---|
//! | disable | no | - | - |
//! | prefer | when the server offers TLS | no | no |
//! | require | yes | no | no |
//! | verify-ca | yes | yes | no |
//! | verify-full | yes | yes | yes |
//!
//! MySQL's names (DISABLED, PREFERRED, REQUIRED, VERIFY_CA,
//! VERIFY_IDENTITY) and sysbench's `on`/`off` mean the same. Connections
//! over a Unix socket are never encrypted (the socket is local).
//!
//! The CAs that verify-ca and verify-full trust: the file given
//! (`sslrootcert=`, `ssl-ca=`); without one, libpq's
//! `~/.postgresql/root.crt` for PostgreSQL when it exists, else the
//! system's trust store (as the MySQL clients and `sslrootcert=system` do;
//! SSL_CERT_FILE and SSL_CERT_DIR name another), else, on a system without
//! one, the public web CAs built into dbmeter.

use crate::DbError;
use crate::target::ServerTarget;
use crate::wire_stream::TlsParams;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl TlsMode {
    pub fn parse(s: &str) -> Option<TlsMode> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        Some(match s.as_str() {
            "disable" | "disabled" | "off" | "false" | "0" => TlsMode::Disable,
            "prefer" | "preferred" => TlsMode::Prefer,
            "require" | "required" | "on" | "true" | "1" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" | "verify-identity" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Prefer => "prefer",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }

    fn verifies_chain(self) -> bool {
        matches!(self, TlsMode::VerifyCa | TlsMode::VerifyFull)
    }
}

impl fmt::Display for TlsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// URL parameters naming each setting; the first is the one we document.
const MODE_KEYS: &[&str] = &["sslmode", "ssl-mode", "ssl_mode", "ssl"];
const CA_KEYS: &[&str] = &["sslrootcert", "ssl-ca", "ssl_ca"];
const CERT_KEYS: &[&str] = &["sslcert", "ssl-cert", "ssl_cert"];
const KEY_KEYS: &[&str] = &["sslkey", "ssl-key", "ssl_key"];

/// The CA certificates that verify-ca and verify-full trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// None named: libpq's ~/.postgresql/root.crt (PostgreSQL) when
    /// present, else the system's trust store.
    Default,
    /// A PEM file (`sslrootcert=FILE`).
    File(PathBuf),
    /// `sslrootcert=system`: the system's trust store, with the host name
    /// checked (verify-full).
    System,
}

/// The TLS settings of one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    pub mode: TlsMode,
    /// CA certificates that verify-ca / verify-full trust.
    pub roots: Roots,
    /// Client certificate chain and key (PEM) for servers that ask for one.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

impl TlsSettings {
    /// Reads the settings from the target's parameters; `default` is the
    /// mode when none is given (sysbench's: disable for MySQL, libpq's
    /// prefer for PostgreSQL).
    ///
    /// `sslrootcert=system` makes verify-full the default and refuses
    /// weaker modes, as libpq 16 does: the system's CAs vouch for hosts
    /// anywhere, so only a certificate checked against the host name means
    /// the server is the one asked for.
    pub fn of(t: &ServerTarget, default: TlsMode) -> Result<TlsSettings, DbError> {
        let get = |keys: &[&'static str]| keys.iter().find_map(|&k| t.param(k).map(|v| (k, v)));
        let path = |keys: &[&'static str]| {
            get(keys)
                .map(|(_, v)| v)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let ca = get(CA_KEYS).filter(|(_, v)| !v.is_empty());
        let roots = match ca {
            None => Roots::Default,
            Some((_, "system")) => Roots::System,
            Some((_, v)) => Roots::File(PathBuf::from(v)),
        };
        let mode = match get(MODE_KEYS) {
            None if roots == Roots::System => TlsMode::VerifyFull,
            None => default,
            Some((_, v)) => TlsMode::parse(v).ok_or_else(|| {
                DbError::usage(format!(
                    "sslmode={v}: unknown TLS mode (expected disable, prefer, require, verify-ca or verify-full; MySQL's DISABLED ... VERIFY_IDENTITY also work)"
                ))
            })?,
        };
        if let (Some((ca_key, _)), Roots::System) = (ca, &roots)
            && mode != TlsMode::VerifyFull
        {
            return Err(DbError::usage(format!(
                "{ca_key}=system needs sslmode=verify-full (ssl-mode=VERIFY_IDENTITY), its default, not {mode}: the system's CAs vouch for hosts anywhere, so the host name must be checked; leave the mode out, or name the server's CA file instead"
            )));
        }
        let s = TlsSettings {
            mode,
            roots,
            cert: path(CERT_KEYS),
            key: path(KEY_KEYS),
        };
        if s.cert.is_some() != s.key.is_some() {
            return Err(DbError::usage(
                "a client certificate needs both sslcert (ssl-cert) and sslkey (ssl-key)".into(),
            ));
        }
        let ca = match &s.roots {
            Roots::File(p) => Some(p),
            _ => None,
        };
        for p in [ca, s.cert.as_ref(), s.key.as_ref()].into_iter().flatten() {
            if !p.is_file() {
                return Err(DbError::usage(format!(
                    "TLS file {}: not found or not a file",
                    p.display()
                )));
            }
        }
        Ok(s)
    }

    /// The rustls configuration for this mode (PostgreSQL's TLS).
    pub(crate) fn client_config(&self) -> Result<SharedConfig, DbError> {
        self.shared_config(true)
    }

    /// The rustls configuration for this mode (MariaDB/MySQL's TLS): as
    /// PostgreSQL's, without libpq's ~/.postgresql/root.crt.
    pub(crate) fn mysql_config(&self) -> Result<SharedConfig, DbError> {
        self.shared_config(false)
    }

    /// What connection `nth` to `t` needs to speak TLS, for the own
    /// clients: None when the mode is disable or the target is a Unix
    /// socket (local: never encrypted). `config` is
    /// [`TlsSettings::client_config`] or [`TlsSettings::mysql_config`].
    pub(crate) fn wire_params(
        &self,
        t: &ServerTarget,
        nth: usize,
        config: fn(&TlsSettings) -> Result<SharedConfig, DbError>,
    ) -> Result<Option<TlsParams>, DbError> {
        if self.mode == TlsMode::Disable || t.socket.is_some() {
            return Ok(None);
        }
        let host = t.host(nth).trim_matches(|c| c == '[' || c == ']');
        let server_name = match ServerName::try_from(host.to_string()) {
            Ok(n) => n,
            Err(_) if self.mode != TlsMode::VerifyFull => ServerName::try_from("localhost")
                .map_err(|e| DbError::usage(format!("TLS: {e}")))?,
            Err(e) => {
                return Err(DbError::usage(format!(
                    "TLS: {host} cannot be checked against the server's certificate: {e}"
                )));
            }
        };
        let shared = config(self)?;
        Ok(Some(TlsParams {
            config: shared.config,
            trusted: shared.trusted,
            server_name,
            required: self.mode != TlsMode::Prefer,
        }))
    }

    /// The configuration for these settings, built once per process and
    /// shared by every connection that uses them: one holds a session cache
    /// and a certificate verifier, about 15 KB, which a run of a thousand
    /// connections should not build a thousand times.
    fn shared_config(&self, libpq_home_ca: bool) -> Result<SharedConfig, DbError> {
        type Built = Vec<(TlsSettings, bool, SharedConfig)>;
        static BUILT: Mutex<Built> = Mutex::new(Vec::new());
        let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, shared)) = built
            .iter()
            .find(|(s, home, _)| s == self && *home == libpq_home_ca)
        {
            return Ok(shared.clone());
        }
        let shared = self.config(libpq_home_ca)?;
        built.push((self.clone(), libpq_home_ca, shared.clone()));
        Ok(shared)
    }

    fn config(&self, libpq_home_ca: bool) -> Result<SharedConfig, DbError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?;
        let mut trusted = None;
        let verifier: Arc<dyn ServerCertVerifier> = if self.mode.verifies_chain() {
            let (roots, what) = self.root_store(libpq_home_ca)?;
            trusted = Some(what);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| DbError::usage(format!("TLS: {e}")))?;
            Arc::new(ChainVerifier {
                inner: webpki,
                check_name: self.mode == TlsMode::VerifyFull,
            })
        } else {
            Arc::new(AnyCertificate(provider))
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let chain = CertificateDer::pem_file_iter(cert)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| file_error(cert, e))?;
                let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| file_error(key, e))?;
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(tls_error)?
            }
            _ => builder.with_no_client_auth(),
        };
        Ok(SharedConfig {
            config: Arc::new(config),
            trusted,
        })
    }

    /// The CAs to trust (see [`Roots`]), and what they are in words, for
    /// the message of a certificate that does not verify.
    fn root_store(&self, libpq_home_ca: bool) -> Result<(Arc<RootCertStore>, Arc<str>), DbError> {
        let home_ca = std::env::var_os("HOME")
            .filter(|_| libpq_home_ca)
            .map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
            .filter(|p| p.is_file());
        let file = match &self.roots {
            Roots::File(ca) => Some(ca.clone()),
            Roots::Default => home_ca,
            Roots::System => None,
        };
        let Some(ca) = file else {
            let system = system_roots();
            return Ok((system.store.clone(), system.what.clone()));
        };
        let mut store = RootCertStore::empty();
        let certs = CertificateDer::pem_file_iter(&ca)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| file_error(&ca, e))?;
        let (added, _) = store.add_parsable_certificates(certs);
        if added == 0 {
            return Err(DbError::usage(format!(
                "TLS CA file {}: no certificate in it",
                ca.display()
            )));
        }
        let what = format!("the CA file {}", ca.display());
        Ok((Arc::new(store), what.into()))
    }
}

/// A client configuration shared by the connections of one set of
/// settings, and (when it verifies certificates) what CAs it trusts.
#[derive(Clone)]
pub(crate) struct SharedConfig {
    pub config: Arc<ClientConfig>,
    pub trusted: Option<Arc<str>>,
}

/// The system's trust store, read once per process.
struct SystemRoots {
    store: Arc<RootCertStore>,
    what: Arc<str>,
}

/// The system's CA certificates (on Debian /etc/ssl/certs; SSL_CERT_FILE
/// or SSL_CERT_DIR, when set, name the only places read instead), or the
/// public web CAs built into dbmeter on a system that has none.
fn system_roots() -> &'static SystemRoots {
    static ROOTS: OnceLock<SystemRoots> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        let mut store = RootCertStore::empty();
        let (added, _) = store.add_parsable_certificates(found.certs);
        let named: Vec<String> = ["SSL_CERT_FILE", "SSL_CERT_DIR"]
            .iter()
            .filter_map(|k| {
                std::env::var_os(k).map(|v| format!("{k}={}", PathBuf::from(v).display()))
            })
            .collect();
        let place = if named.is_empty() {
            String::new()
        } else {
            format!(", from {}", named.join(" and "))
        };
        let what = if added > 0 {
            format!("the system's CA certificates{place}")
        } else {
            store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            format!("dbmeter's built-in public web CAs: no CA certificates on the system{place}")
        };
        SystemRoots {
            store: Arc::new(store),
            what: what.into(),
        }
    })
}

fn tls_error(e: rustls::Error) -> DbError {
    DbError::usage(format!("TLS: {e}"))
}

fn file_error(p: &std::path::Path, e: impl fmt::Display) -> DbError {
    DbError::usage(format!("TLS file {}: {e}", p.display()))
}

/// prefer and require: encrypt, trust any certificate (as libpq does).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// verify-ca and verify-full: the chain must lead to a trusted CA; the
/// host name is checked only for verify-full.
#[derive(Debug)]
struct ChainVerifier {
    inner: Arc<WebPkiServerVerifier>,
    check_name: bool,
}

impl ServerCertVerifier for ChainVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_families_of_names() {
        for (s, m) in [
            ("DISABLED", TlsMode::Disable),
            ("off", TlsMode::Disable),
            ("preferred", TlsMode::Prefer),
            ("REQUIRED", TlsMode::Require),
            ("on", TlsMode::Require),
            ("VERIFY_CA", TlsMode::VerifyCa),
            ("verify-full", TlsMode::VerifyFull),
            ("VERIFY_IDENTITY", TlsMode::VerifyFull),
        ] {
            assert_eq!(TlsMode::parse(s), Some(m), "{s}");
        }
        assert_eq!(TlsMode::parse("sometimes"), None);
    }

    #[test]
    fn reads_url_parameters() {
        let crate::Target::Postgres(t) =
            crate::Target::parse("postgres://u@h/db?sslmode=require").unwrap()
        else {
            panic!()
        };
        let s = TlsSettings::of(&t, TlsMode::Prefer).unwrap();
        assert_eq!(s.mode, TlsMode::Require);
        let crate::Target::Mysql(t) =
            crate::Target::parse("mysql://u@h/db?ssl-mode=bogus").unwrap()
        else {
            panic!()
        };
        assert!(TlsSettings::of(&t, TlsMode::Disable).is_err());
        let crate::Target::Mysql(t) =
            crate::Target::parse("mysql://u@h/db?ssl-ca=/nonexistent/ca.pem").unwrap()
        else {
            panic!()
        };
        let e = TlsSettings::of(&t, TlsMode::Disable).unwrap_err();
        assert!(e.message.contains("/nonexistent/ca.pem"), "{e}");
    }

    /// sslrootcert=system (or ssl-ca=system): the system's trust store and
    /// verify-full, which is its default and the only mode it takes.
    #[test]
    fn system_roots_need_verify_full() {
        let settings = |url: &str, default| {
            let (crate::Target::Mysql(t) | crate::Target::Postgres(t)) =
                crate::Target::parse(url).unwrap()
            else {
                panic!()
            };
            TlsSettings::of(&t, default)
        };
        let s = settings("postgres://u@h/db?sslrootcert=system", TlsMode::Prefer).unwrap();
        assert_eq!((s.mode, s.roots), (TlsMode::VerifyFull, Roots::System));
        let s = settings("mysql://u@h/db?ssl-ca=system", TlsMode::Disable).unwrap();
        assert_eq!((s.mode, s.roots), (TlsMode::VerifyFull, Roots::System));
        let s = settings(
            "mysql://u@h/db?ssl-ca=system&ssl-mode=VERIFY_IDENTITY",
            TlsMode::Disable,
        )
        .unwrap();
        assert_eq!(s.mode, TlsMode::VerifyFull);
        for weaker in ["require", "verify-ca", "disable"] {
            let url = format!("postgres://u@h/db?sslrootcert=system&sslmode={weaker}");
            let e = settings(&url, TlsMode::Prefer).unwrap_err();
            assert_eq!(e.kind, crate::ErrorKind::Usage);
            assert!(e.message.starts_with("sslrootcert=system needs"), "{e}");
        }
        let s = settings("postgres://u@h/db?sslmode=verify-full", TlsMode::Prefer).unwrap();
        assert_eq!(s.roots, Roots::Default);
    }
}
