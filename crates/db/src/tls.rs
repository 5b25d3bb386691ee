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
use std::sync::{Arc, Mutex, PoisonError};

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

/// The TLS settings of one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    pub mode: TlsMode,
    /// CA certificates (PEM) that verify-ca / verify-full trust.
    pub ca: Option<PathBuf>,
    /// Client certificate chain and key (PEM) for servers that ask for one.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

impl TlsSettings {
    /// Reads the settings from the target's parameters; `default` is the
    /// mode when none is given (sysbench's: disable for MySQL, libpq's
    /// prefer for PostgreSQL).
    pub fn of(t: &ServerTarget, default: TlsMode) -> Result<TlsSettings, DbError> {
        let get = |keys: &[&str]| keys.iter().find_map(|k| t.param(k));
        let mode = match get(MODE_KEYS) {
            None => default,
            Some(v) => TlsMode::parse(v).ok_or_else(|| {
                DbError::usage(format!(
                    "sslmode={v}: unknown TLS mode (expected disable, prefer, require, verify-ca or verify-full; MySQL's DISABLED ... VERIFY_IDENTITY also work)"
                ))
            })?,
        };
        let path = |keys: &[&str]| get(keys).filter(|v| !v.is_empty()).map(PathBuf::from);
        let s = TlsSettings {
            mode,
            ca: path(CA_KEYS),
            cert: path(CERT_KEYS),
            key: path(KEY_KEYS),
        };
        if s.cert.is_some() != s.key.is_some() {
            return Err(DbError::usage(
                "a client certificate needs both sslcert (ssl-cert) and sslkey (ssl-key)".into(),
            ));
        }
        for p in [&s.ca, &s.cert, &s.key].into_iter().flatten() {
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
    pub(crate) fn client_config(&self) -> Result<Arc<ClientConfig>, DbError> {
        self.shared_config(true)
    }

    /// The rustls configuration for this mode (MariaDB/MySQL's TLS): as
    /// PostgreSQL's, without libpq's ~/.postgresql/root.crt.
    pub(crate) fn mysql_config(&self) -> Result<Arc<ClientConfig>, DbError> {
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
        config: fn(&TlsSettings) -> Result<Arc<ClientConfig>, DbError>,
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
        Ok(Some(TlsParams {
            config: config(self)?,
            server_name,
            required: self.mode != TlsMode::Prefer,
        }))
    }

    /// The configuration for these settings, built once per process and
    /// shared by every connection that uses them: one holds a session cache
    /// and a certificate verifier, about 15 KB, which a run of a thousand
    /// connections should not build a thousand times.
    fn shared_config(&self, libpq_home_ca: bool) -> Result<Arc<ClientConfig>, DbError> {
        type Built = Vec<(TlsSettings, bool, Arc<ClientConfig>)>;
        static BUILT: Mutex<Built> = Mutex::new(Vec::new());
        let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, config)) = built
            .iter()
            .find(|(s, home, _)| s == self && *home == libpq_home_ca)
        {
            return Ok(config.clone());
        }
        let config = Arc::new(self.config(libpq_home_ca)?);
        built.push((self.clone(), libpq_home_ca, config.clone()));
        Ok(config)
    }

    fn config(&self, libpq_home_ca: bool) -> Result<ClientConfig, DbError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?;
        let verifier: Arc<dyn ServerCertVerifier> = if self.mode.verifies_chain() {
            let roots = Arc::new(self.root_store(libpq_home_ca)?);
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
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let chain = CertificateDer::pem_file_iter(cert)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| file_error(cert, e))?;
                let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| file_error(key, e))?;
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(tls_error)
            }
            _ => Ok(builder.with_no_client_auth()),
        }
    }

    /// The CA file when given; otherwise (`libpq_home_ca`) libpq's
    /// ~/.postgresql/root.crt when present; otherwise the public web roots.
    fn root_store(&self, libpq_home_ca: bool) -> Result<RootCertStore, DbError> {
        let mut store = RootCertStore::empty();
        let home_ca = std::env::var_os("HOME")
            .filter(|_| libpq_home_ca)
            .map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
            .filter(|p| p.is_file());
        match self.ca.clone().or(home_ca) {
            Some(ca) => {
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
            }
            None => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        Ok(store)
    }
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
}
