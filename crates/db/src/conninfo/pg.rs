//! PostgreSQL targets as libpq 15 resolves them. Each setting comes from
//! the first of:
//!
//! 1. the URL or the command-line options;
//! 2. the service (`service=` or `PGSERVICE`) in `PGSERVICEFILE` or
//!    `~/.pg_service.conf`, else in `PGSYSCONFDIR/pg_service.conf`;
//! 3. the environment (`PGHOST`, `PGPORT`, `PGUSER`, ...);
//! 4. the defaults of the options used (sysbench's), then libpq's: the
//!    Unix socket in `/var/run/postgresql`, port 5432, the OS user name,
//!    a database named as the user.
//!
//! (libpq reads the service file before the environment: a service's
//! settings beat `PG*` variables.) A password still missing then comes
//! from the password file (`passfile=`, `PGPASSFILE` or `~/.pgpass`).

use super::{Env, Given, Resolved, has_param, list, port};
use crate::DbError;
use crate::target::ServerTarget;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// libpq's default socket directory on Debian.
pub(crate) const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
/// libpq's system configuration directory on Debian (`PGSYSCONFDIR`).
const DEFAULT_SYSCONFDIR: &str = "/etc/postgresql-common";

/// libpq's connection keywords and their environment variables. dbmeter
/// uses those marked `true`; a service file may hold the others (they
/// are accepted and ignored).
const KEYWORDS: &[(&str, Option<&str>, bool)] = &[
    ("host", Some("PGHOST"), true),
    ("hostaddr", Some("PGHOSTADDR"), false),
    ("port", Some("PGPORT"), true),
    ("dbname", Some("PGDATABASE"), true),
    ("user", Some("PGUSER"), true),
    ("password", Some("PGPASSWORD"), true),
    ("passfile", Some("PGPASSFILE"), true),
    ("channel_binding", Some("PGCHANNELBINDING"), false),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT"), true),
    ("client_encoding", Some("PGCLIENTENCODING"), false),
    ("options", Some("PGOPTIONS"), true),
    ("application_name", Some("PGAPPNAME"), true),
    ("fallback_application_name", None, false),
    ("keepalives", None, false),
    ("keepalives_idle", None, false),
    ("keepalives_interval", None, false),
    ("keepalives_count", None, false),
    ("tcp_user_timeout", None, false),
    ("sslmode", Some("PGSSLMODE"), true),
    ("requiressl", Some("PGREQUIRESSL"), false),
    ("sslcompression", Some("PGSSLCOMPRESSION"), false),
    ("sslcert", Some("PGSSLCERT"), true),
    ("sslkey", Some("PGSSLKEY"), true),
    ("sslpassword", None, false),
    ("sslrootcert", Some("PGSSLROOTCERT"), true),
    ("sslcrl", Some("PGSSLCRL"), false),
    ("sslcrldir", Some("PGSSLCRLDIR"), false),
    ("sslsni", Some("PGSSLSNI"), false),
    ("requirepeer", Some("PGREQUIREPEER"), false),
    (
        "ssl_min_protocol_version",
        Some("PGSSLMINPROTOCOLVERSION"),
        false,
    ),
    (
        "ssl_max_protocol_version",
        Some("PGSSLMAXPROTOCOLVERSION"),
        false,
    ),
    ("gssencmode", Some("PGGSSENCMODE"), false),
    ("krbsrvname", Some("PGKRBSRVNAME"), false),
    ("gsslib", Some("PGGSSLIB"), false),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS"), false),
];

/// Keywords that become fields of the target rather than parameters.
const FIELDS: &[&str] = &["host", "port", "dbname", "user", "password", "passfile"];

/// A setting's value and where it came from (for error messages).
struct Setting {
    value: String,
    from: String,
}

/// The settings found so far; the first layer to set a keyword wins.
#[derive(Default)]
struct Settings(BTreeMap<String, Setting>);

impl Settings {
    fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    fn set(&mut self, key: &str, value: &str, from: impl FnOnce() -> String) {
        if !self.has(key) {
            self.0.insert(
                key.to_string(),
                Setting {
                    value: value.to_string(),
                    from: from(),
                },
            );
        }
    }

    fn get(&self, key: &str) -> Option<&Setting> {
        self.0.get(key)
    }
}

pub(super) fn resolve(given: &Given, fallback: &Given, env: &Env) -> Result<Resolved, DbError> {
    let mut s = Settings::default();
    let mut warnings = Vec::new();

    // 1. What the user gave.
    let url = || "the URL or options".to_string();
    if let Some(dir) = &given.socket {
        s.set("host", &dir.to_string_lossy(), url);
    } else if !given.hosts.is_empty() {
        s.set("host", &given.hosts.join(","), url);
    }
    if !given.ports.is_empty() {
        let ports: Vec<String> = given.ports.iter().map(u16::to_string).collect();
        s.set("port", &ports.join(","), url);
    }
    for (key, value) in [
        ("user", &given.user),
        ("password", &given.password),
        ("dbname", &given.database),
    ] {
        if let Some(v) = value {
            s.set(key, v, url);
        }
    }
    // Parameters other than TLS and the service stay as they were given.
    let mut params = Vec::new();
    for (k, v) in &given.params {
        let key = k.to_ascii_lowercase();
        if FIELDS.contains(&key.as_str()) || key == "service" {
            s.set(&key, v, url);
        } else {
            params.push((k.clone(), v.clone()));
        }
    }

    // 2. The service file.
    let service = given
        .param("service")
        .map(|v| (v.to_string(), "service=".to_string()))
        .or_else(|| {
            env.var("PGSERVICE")
                .map(|v| (v.to_string(), "PGSERVICE=".into()))
        });
    if let Some((name, _)) = &service {
        let (file, entries) = find_service(name, env)?;
        for (key, value) in entries {
            let from = || format!("service {name} in {}", file.display());
            if FIELDS.contains(&key.as_str()) {
                s.set(&key, &value, from);
            } else if !has_param(&params, &key) {
                params.push((key, value));
            }
        }
    }

    // 3. The environment.
    for (key, var, used) in KEYWORDS {
        let (Some(var), true) = (var, used) else {
            continue;
        };
        let Some(value) = env.var(var) else {
            continue;
        };
        if FIELDS.contains(key) {
            s.set(key, value, || format!("{var}={value}"));
        } else if !has_param(&params, key) {
            params.push((key.to_string(), value.to_string()));
        }
    }
    // The old PGREQUIRESSL=1 means sslmode=require when nothing set a mode.
    if env.var("PGREQUIRESSL").is_some_and(|v| v.starts_with('1')) && !has_param(&params, "sslmode")
    {
        params.push(("sslmode".into(), "require".into()));
    }

    // 4. Defaults: the options' (sysbench's), then libpq's.
    let dflt = || "the default".to_string();
    if !fallback.hosts.is_empty() {
        s.set("host", &fallback.hosts.join(","), dflt);
    }
    if !fallback.ports.is_empty() {
        let ports: Vec<String> = fallback.ports.iter().map(u16::to_string).collect();
        s.set("port", &ports.join(","), dflt);
    }
    if let Some(u) = &fallback.user {
        s.set("user", u, dflt);
    }
    if let Some(d) = &fallback.database {
        s.set("dbname", d, dflt);
    }
    s.set("host", DEFAULT_SOCKET_DIR, dflt);
    s.set("port", "5432", dflt);
    s.set("user", &env.os_user(), dflt);
    let user = s.get("user").map_or_else(String::new, |u| u.value.clone());
    s.set("dbname", &user, dflt);

    // Hosts: names for TCP, or one socket directory.
    let host = s.get("host").map_or("", |h| h.value.as_str());
    let mut hosts = list(host);
    if hosts.is_empty() {
        hosts.push(DEFAULT_SOCKET_DIR.into());
    }
    let dirs = hosts.iter().filter(|h| h.starts_with('/')).count();
    let socket = match dirs {
        0 => None,
        _ if dirs == hosts.len() => Some(PathBuf::from(&hosts[0])),
        _ => {
            let from = s.get("host").map_or_else(String::new, |h| h.from.clone());
            return Err(DbError::usage(format!(
                "host list '{host}' (from {from}) mixes socket directories and host names; dbmeter spreads connections over host names, or uses one socket directory"
            )));
        }
    };
    if socket.is_some() {
        hosts = vec!["localhost".into()];
    }
    let ports = match s.get("port") {
        Some(p) => list(&p.value)
            .iter()
            .map(|x| port(x, &p.from))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let ports = if ports.is_empty() { vec![5432] } else { ports };
    let value = |k: &str| s.get(k).map(|x| x.value.clone());
    let database = value("dbname").unwrap_or_default();

    // The password file, for a password not given anywhere else.
    let mut password = value("password");
    if password.is_none() {
        let file = value("passfile")
            .map(PathBuf::from)
            .or_else(|| env.in_home(".pgpass"));
        if let Some(file) = file {
            // For a socket, libpq looks up "localhost".
            let host = if socket.is_some() {
                "localhost"
            } else {
                &hosts[0]
            };
            password = password_from_file(
                &file,
                [host, &ports[0].to_string(), &database, &user],
                &mut warnings,
            );
        }
    }

    Ok(Resolved {
        target: ServerTarget {
            hosts,
            ports,
            socket,
            user,
            password,
            database,
            params,
        },
        warnings,
    })
}

/// The section `[name]` of the first service file that has it: the user's
/// (`PGSERVICEFILE` or `~/.pg_service.conf`), else the system's.
fn find_service(name: &str, env: &Env) -> Result<(PathBuf, Vec<(String, String)>), DbError> {
    let user = env
        .var("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| env.in_home(".pg_service.conf"));
    let system =
        Path::new(env.var("PGSYSCONFDIR").unwrap_or(DEFAULT_SYSCONFDIR)).join("pg_service.conf");
    let mut searched = Vec::new();
    for file in user.into_iter().chain([system]) {
        searched.push(file.display().to_string());
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if let Some(entries) = service_section(&text, name, &file)? {
            return Ok((file, entries));
        }
    }
    Err(DbError::usage(format!(
        "service \"{name}\" is not defined in {} (set PGSERVICEFILE, or check the name)",
        searched.join(" or ")
    )))
}

/// The `key=value` lines of section `[name]` of a service file, or None
/// when the file has no such section. Unknown keywords are errors, as in
/// libpq.
fn service_section(
    text: &str,
    name: &str,
    file: &Path,
) -> Result<Option<Vec<(String, String)>>, DbError> {
    let mut found = false;
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            if found {
                break;
            }
            found = section.strip_suffix(']') == Some(name);
            continue;
        }
        if !found {
            continue;
        }
        let bad = |why: String| {
            DbError::usage(format!(
                "service file {} line {}: {why}",
                file.display(),
                n + 1
            ))
        };
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| bad(format!("expected keyword=value, not '{line}'")))?;
        let key = key.trim();
        if key == "service" {
            return Err(bad("a service cannot name another service".into()));
        }
        if !KEYWORDS.iter().any(|(k, _, _)| *k == key) {
            return Err(bad(format!("unknown connection keyword '{key}'")));
        }
        entries.push((key.to_string(), value.trim().to_string()));
    }
    Ok(found.then_some(entries))
}

/// The password of the first line of the password file matching
/// `[host, port, database, user]`; None (with a warning) when the file is
/// not a plain file or others may read it, as libpq does.
fn password_from_file(file: &Path, want: [&str; 4], warnings: &mut Vec<String>) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() {
        warnings.push(format!(
            "password file \"{}\" is not a plain file; it is ignored",
            file.display()
        ));
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        warnings.push(format!(
            "password file \"{}\" has group or world access, so it is ignored; permissions should be u=rw (0600) or less",
            file.display()
        ));
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    pgpass_lookup(&text, want)
}

/// The first matching line's password: fields separated by `:`, `*`
/// matching anything, `\:` and `\\` standing for `:` and `\`.
fn pgpass_lookup(text: &str, want: [&str; 4]) -> Option<String> {
    'lines: for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut rest = line;
        for w in want {
            let Some((raw, after)) = split_field(rest) else {
                continue 'lines;
            };
            if raw != "*" && unescape(raw) != w {
                continue 'lines;
            }
            rest = after;
        }
        let password = unescape(rest);
        return (!password.is_empty()).then_some(password);
    }
    None
}

/// The text before the first unescaped `:`, and what follows it.
fn split_field(s: &str) -> Option<(&str, &str)> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ':' => return Some((&s[..i], &s[i + 1..])),
            _ => {}
        }
    }
    None
}

/// Drops each escaping backslash.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::Dir;
    use super::*;

    fn resolve_url(url: &str, env: &Env) -> Result<Resolved, DbError> {
        let g = super::super::parse_server_url(url, super::super::ServerKind::Postgres)?;
        resolve(&g, &Given::default(), env)
    }

    fn env(dir: &Dir) -> Env {
        Env::empty()
            .with_home(&dir.0)
            .with_user("alice")
            .with_var("PGSYSCONFDIR", &dir.0.join("etc").to_string_lossy())
    }

    #[test]
    fn pgpass_wildcards_and_escapes() {
        let text = "# comment\n\
                    db1:5432:shop:bob:first\n\
                    *:*:shop:bob:second\n\
                    h\\:x:5432:*:c\\\\d:colon\\:pw\\\\\n\
                    *:*:*:*:last\n";
        assert_eq!(
            pgpass_lookup(text, ["db1", "5432", "shop", "bob"]).as_deref(),
            Some("first")
        );
        assert_eq!(
            pgpass_lookup(text, ["db2", "5433", "shop", "bob"]).as_deref(),
            Some("second")
        );
        assert_eq!(
            pgpass_lookup(text, ["h:x", "5432", "any", "c\\d"]).as_deref(),
            Some("colon:pw\\")
        );
        assert_eq!(
            pgpass_lookup(text, ["db1", "5432", "other", "eve"]).as_deref(),
            Some("last")
        );
        assert_eq!(pgpass_lookup("a:b:c\n", ["a", "b", "c", "d"]), None);
        // An escaped star is a star, not a wildcard.
        assert_eq!(
            pgpass_lookup("\\*:*:*:*:pw\n", ["db1", "1", "d", "u"]),
            None
        );
    }

    #[test]
    fn service_sections() {
        let text = "# services\n[a]\nhost=h1\nport = 5433\n\n[b]\nhost=h2\ndbname=x\n[c]\n";
        let f = Path::new("f");
        let a = service_section(text, "a", f).unwrap().unwrap();
        assert_eq!(
            a,
            [("host".into(), "h1".into()), ("port".into(), "5433".into())]
        );
        let b = service_section(text, "b", f).unwrap().unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(service_section(text, "c", f).unwrap(), Some(vec![]));
        assert_eq!(service_section(text, "d", f).unwrap(), None);
        let e = service_section("[a]\nhots=x\n", "a", f).unwrap_err();
        assert!(
            e.message.contains("line 2") && e.message.contains("hots"),
            "{e}"
        );
        assert!(service_section("[a]\nservice=b\n", "a", f).is_err());
        assert!(service_section("[a]\nhost\n", "a", f).is_err());
    }

    #[test]
    fn defaults_are_libpqs() {
        let d = Dir::new("pgdefaults");
        let r = resolve_url("postgres://", &env(&d)).unwrap();
        let t = r.target;
        assert_eq!(t.socket, Some(PathBuf::from(DEFAULT_SOCKET_DIR)));
        assert_eq!(t.ports, [5432]);
        assert_eq!((t.user.as_str(), t.database.as_str()), ("alice", "alice"));
        assert_eq!(t.password, None);
        // localhost is TCP.
        let t = resolve_url("postgres://localhost", &env(&d))
            .unwrap()
            .target;
        assert_eq!((t.socket, t.hosts), (None, vec!["localhost".to_string()]));
    }

    #[test]
    fn environment_fills_what_the_url_leaves_out() {
        let d = Dir::new("pgenv");
        let e = env(&d)
            .with_var("PGHOST", "h1,h2")
            .with_var("PGPORT", "6001")
            .with_var("PGUSER", "bob")
            .with_var("PGDATABASE", "shop")
            .with_var("PGPASSWORD", "pw")
            .with_var("PGAPPNAME", "nightly")
            .with_var("PGSSLMODE", "require")
            .with_var("PGSSLROOTCERT", "system")
            .with_var("PGCONNECT_TIMEOUT", "7");
        let t = resolve_url("postgres://", &e).unwrap().target;
        assert_eq!(t.hosts, ["h1", "h2"]);
        assert_eq!(t.ports, [6001]);
        assert_eq!((t.user.as_str(), t.database.as_str()), ("bob", "shop"));
        assert_eq!(t.password.as_deref(), Some("pw"));
        assert_eq!(t.param("application_name"), Some("nightly"));
        assert_eq!(t.param("sslmode"), Some("require"));
        assert_eq!(t.param("sslrootcert"), Some("system"));
        assert_eq!(t.param("connect_timeout"), Some("7"));
        // The URL wins, whatever name it gives a TLS setting.
        let t = resolve_url("postgres://carol@db9:7000/x?ssl-mode=disable", &e)
            .unwrap()
            .target;
        assert_eq!((t.hosts[0].as_str(), t.ports[0]), ("db9", 7000));
        assert_eq!((t.user.as_str(), t.database.as_str()), ("carol", "x"));
        assert_eq!(t.param("sslmode"), None);
        assert_eq!(t.param("ssl-mode"), Some("disable"));
        // A socket directory in PGHOST.
        let t = resolve_url("postgres://", &env(&d).with_var("PGHOST", "/tmp/pg"))
            .unwrap()
            .target;
        assert_eq!(t.socket, Some(PathBuf::from("/tmp/pg")));
        let e = resolve_url("postgres://", &env(&d).with_var("PGHOST", "/tmp,h")).unwrap_err();
        assert!(e.message.contains("mixes"), "{e}");
        let e = resolve_url("postgres://", &env(&d).with_var("PGPORT", "x")).unwrap_err();
        assert!(e.message.contains("PGPORT=x"), "{e}");
    }

    #[test]
    fn service_file_beats_environment() {
        let d = Dir::new("pgservice");
        let user_file = d.file(
            "services.conf",
            "[bench]\nhost=svchost\nport=6543\ndbname=svcdb\napplication_name=svc\n",
            0o644,
        );
        std::fs::create_dir_all(d.0.join("etc")).unwrap();
        d.file("etc/pg_service.conf", "[sys]\nuser=sysuser\n", 0o644);
        let e = env(&d)
            .with_var("PGSERVICEFILE", &user_file.to_string_lossy())
            .with_var("PGHOST", "envhost")
            .with_var("PGUSER", "envuser")
            .with_var("PGAPPNAME", "envapp");
        let t = resolve_url("postgres:///?service=bench", &e)
            .unwrap()
            .target;
        assert_eq!((t.hosts[0].as_str(), t.ports[0]), ("svchost", 6543));
        assert_eq!((t.user.as_str(), t.database.as_str()), ("envuser", "svcdb"));
        assert_eq!(t.param("application_name"), Some("svc"));
        // The URL beats the service; PGSERVICE names it too; the system
        // file is read when the user's has no such service.
        let t = resolve_url(
            "postgres://urlhost/",
            &e.clone().with_var("PGSERVICE", "bench"),
        )
        .unwrap()
        .target;
        assert_eq!(
            (t.hosts[0].as_str(), t.database.as_str()),
            ("urlhost", "svcdb")
        );
        let t = resolve_url("postgres://?service=sys", &e).unwrap().target;
        assert_eq!(t.user, "sysuser");
        let err = resolve_url("postgres://?service=nope", &e).unwrap_err();
        assert!(err.message.contains("\"nope\""), "{err}");
        assert!(err.message.contains("services.conf"), "{err}");
        assert!(err.message.contains("pg_service.conf"), "{err}");
        assert_eq!(err.message.lines().count(), 1);
    }

    #[test]
    fn password_file_when_no_password_is_given() {
        let d = Dir::new("pgpass");
        d.file(
            ".pgpass",
            "localhost:5432:alice:alice:sockpw\ndb1:*:*:bob:tcppw\n",
            0o600,
        );
        let r = resolve_url("postgres://", &env(&d)).unwrap();
        assert_eq!(r.target.password.as_deref(), Some("sockpw"));
        assert!(r.warnings.is_empty());
        let t = resolve_url("postgres://bob@db1:9999/x", &env(&d))
            .unwrap()
            .target;
        assert_eq!(t.password.as_deref(), Some("tcppw"));
        // PGPASSWORD and the URL come first.
        let t = resolve_url("postgres://bob@db1/x", &env(&d).with_var("PGPASSWORD", "e"))
            .unwrap()
            .target;
        assert_eq!(t.password.as_deref(), Some("e"));
        // PGPASSFILE names another file; a readable one is ignored.
        let other = d.file("other", "*:*:*:*:other\n", 0o644);
        let r = resolve_url(
            "postgres://bob@db1/x",
            &env(&d).with_var("PGPASSFILE", &other.to_string_lossy()),
        )
        .unwrap();
        assert_eq!(r.target.password, None);
        assert_eq!(r.warnings.len(), 1);
        assert!(
            r.warnings[0].contains("group or world access"),
            "{:?}",
            r.warnings
        );
    }
}
