//! MariaDB/MySQL targets as their clients resolve them. Each setting comes
//! from the first of:
//!
//! 1. the URL or the command-line options;
//! 2. the option file: `--defaults-file` (or `defaults-file=`) when given,
//!    else `~/.my.cnf`; groups `[client]`, `[client-server]` and
//!    `[client-mariadb]`;
//! 3. the environment: `MYSQL_HOST`, `MYSQL_TCP_PORT`, `MYSQL_UNIX_PORT`,
//!    `MYSQL_PWD`;
//! 4. the defaults of the options used (sysbench's), then the clients':
//!    host localhost, port 3306, the OS user name; database `test`.
//!
//! (The clients pass option-file settings as if given on the command
//! line, so they beat the environment: a `password=` in `~/.my.cnf` wins
//! over `MYSQL_PWD`.) Host `localhost` means the Unix socket, as in
//! libmysqlclient, unless `protocol=tcp` is set or a port was given in the
//! URL or options (as the mariadb client since 10.6 does); any other host
//! name or address means TCP. The socket is the one given, else the
//! option file's, else `MYSQL_UNIX_PORT`, else the first that exists of
//! the usual places.

use super::{Env, Given, Resolved, has_param, list, port};
use crate::DbError;
use crate::target::ServerTarget;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Option-file groups a client reads.
const GROUPS: &[&str] = &["client", "client-server", "client-mariadb"];

/// Option-file TLS settings, passed on as the URL parameters of the same
/// names.
const TLS_OPTIONS: &[&str] = &["ssl-mode", "ssl-ca", "ssl-cert", "ssl-key"];

pub(super) fn resolve(given: &Given, fallback: &Given, env: &Env) -> Result<Resolved, DbError> {
    let mut warnings = Vec::new();
    let (file, opts) = option_file(given, env, &mut warnings)?;
    let file_says = |key: &str| -> Option<(&str, String)> {
        let v = opts.get(key)?.as_deref()?;
        let file = file.as_deref()?;
        Some((v, format!("{} ({key}={v})", file.display())))
    };

    let hosts = if !given.hosts.is_empty() {
        given.hosts.clone()
    } else if let Some((h, _)) = file_says("host") {
        list(h)
    } else if let Some(h) = env.var("MYSQL_HOST") {
        list(h)
    } else if !fallback.hosts.is_empty() {
        fallback.hosts.clone()
    } else {
        Vec::new()
    };
    let hosts = if hosts.is_empty() {
        vec!["localhost".to_string()]
    } else {
        hosts
    };
    let ports = if !given.ports.is_empty() {
        given.ports.clone()
    } else if let Some((p, from)) = file_says("port") {
        vec![port(p, &from)?]
    } else if let Some(p) = env.var("MYSQL_TCP_PORT") {
        vec![port(p, &format!("MYSQL_TCP_PORT={p}"))?]
    } else if !fallback.ports.is_empty() {
        fallback.ports.clone()
    } else {
        vec![3306]
    };
    let user = given
        .user
        .clone()
        .or_else(|| file_says("user").map(|(u, _)| u.to_string()))
        .or_else(|| fallback.user.clone())
        .unwrap_or_else(|| env.os_user());
    let password = given
        .password
        .clone()
        .or_else(|| file_says("password").map(|(p, _)| p.to_string()))
        .or_else(|| env.var("MYSQL_PWD").map(str::to_string));
    let database = given
        .database
        .clone()
        .or_else(|| file_says("database").map(|(d, _)| d.to_string()))
        .or_else(|| fallback.database.clone())
        .unwrap_or_else(|| "test".into());

    let protocol = match given.param("protocol") {
        Some(p) => Some((p.to_string(), format!("protocol={p}"))),
        None => file_says("protocol").map(|(p, from)| (p.to_string(), from)),
    };
    let use_socket = match &protocol {
        Some((p, from)) => match p.to_ascii_lowercase().as_str() {
            "tcp" => false,
            "socket" => true,
            _ => {
                return Err(DbError::usage(format!(
                    "{from}: unknown protocol (dbmeter connects by tcp or socket)"
                )));
            }
        },
        None if given.socket.is_some() => true,
        // A port given by hand means TCP, as with the mariadb client.
        None if !given.ports.is_empty() => false,
        None => hosts.iter().all(|h| h.eq_ignore_ascii_case("localhost")),
    };
    let socket = if use_socket {
        Some(
            given
                .socket
                .clone()
                .or_else(|| file_says("socket").map(|(s, _)| PathBuf::from(s)))
                .or_else(|| env.var("MYSQL_UNIX_PORT").map(PathBuf::from))
                .or_else(|| env.mysql_sockets.iter().find(|p| p.exists()).cloned())
                .or_else(|| env.mysql_sockets.first().cloned())
                .unwrap_or_else(|| PathBuf::from("/run/mysqld/mysqld.sock")),
        )
    } else {
        None
    };

    let mut params: Vec<(String, String)> = given
        .params
        .iter()
        .filter(|(k, _)| !["protocol", "defaults-file"].contains(&k.to_ascii_lowercase().as_str()))
        .cloned()
        .collect();
    for key in TLS_OPTIONS {
        if let Some((v, _)) = file_says(key)
            && !has_param(&params, key)
        {
            params.push((key.to_string(), v.to_string()));
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

type Options = BTreeMap<String, Option<String>>;

/// The option file read (`--defaults-file`, else `~/.my.cnf` when it
/// exists) and its client options.
fn option_file(
    given: &Given,
    env: &Env,
    warnings: &mut Vec<String>,
) -> Result<(Option<PathBuf>, Options), DbError> {
    if let Some(path) = given.param("defaults-file") {
        let file = PathBuf::from(path);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            DbError::usage(format!(
                "--defaults-file={path}: cannot read it ({e}); give the path of a my.cnf"
            ))
        })?;
        return Ok((Some(file), client_options(&text)));
    }
    let Some(file) = env.in_home(".my.cnf") else {
        return Ok((None, Options::new()));
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok((None, Options::new()));
    };
    if world_writable(&file) {
        // As the clients: anyone could have put a server of theirs there.
        warnings.push(format!(
            "option file \"{}\" is writable by anyone, so it is ignored",
            file.display()
        ));
        return Ok((None, Options::new()));
    }
    Ok((Some(file), client_options(&text)))
}

fn world_writable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
}

/// The options of the client groups of a my.cnf: later lines win; names
/// with `_` or `-` alike; a value without `=` is None. `!include` and
/// `!includedir` are not followed.
fn client_options(text: &str) -> Options {
    let mut out = Options::new();
    let mut in_group = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';', '!']) {
            continue;
        }
        if let Some(group) = line.strip_prefix('[') {
            let name = group.split(']').next().unwrap_or("").trim();
            in_group = GROUPS.iter().any(|g| g.eq_ignore_ascii_case(name));
            continue;
        }
        if !in_group {
            continue;
        }
        let line = strip_comment(line);
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k, Some(unquote(v.trim()))),
            None => (line, None),
        };
        let key = key.trim().to_ascii_lowercase().replace('_', "-");
        let key = key.strip_prefix("loose-").unwrap_or(&key).to_string();
        out.insert(key, value);
    }
    out
}

/// The line up to a `#` outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut escape = false;
    for (i, c) in line.char_indices() {
        match c {
            '\'' | '"' if !escape => match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                _ => {}
            },
            '#' if quote.is_none() => return line[..i].trim_end(),
            _ => {}
        }
        escape = quote.is_some() && c == '\\' && !escape;
    }
    line
}

/// A value without its surrounding quotes, escapes (`\n`, `\t`, `\s`,
/// `\\`, `\"`, ...) replaced.
fn unquote(v: &str) -> String {
    let v = match v.chars().next() {
        Some(q @ ('\'' | '"')) if v.len() >= 2 && v.ends_with(q) => &v[1..v.len() - 1],
        _ => v,
    };
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('s') => out.push(' '),
            Some(e @ ('"' | '\'' | '\\')) => out.push(e),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::Dir;
    use super::*;

    fn resolve_url(url: &str, env: &Env) -> Result<Resolved, DbError> {
        let g = super::super::parse_server_url(url, super::super::ServerKind::Mysql)?;
        resolve(&g, &Given::default(), env)
    }

    /// An environment with a home and no socket found anywhere.
    fn env(dir: &Dir) -> Env {
        let none = dir.0.join("no-socket-here");
        Env::empty()
            .with_home(&dir.0)
            .with_user("alice")
            .with_mysql_sockets([none])
    }

    #[test]
    fn option_file_syntax() {
        let o = client_options(
            "# my.cnf\n[mysqld]\nuser=mysql\n\n[client]\nuser = bob\npassword=\"p#ss w\\\\d\" # note\n\
             !includedir /etc/mysql/conf.d\nssl_ca='/a b/ca.pem'\nskip-ssl\nhost=h1 # comment\n\
             [client-mariadb]\nport=3307\n[mysql]\nport=1\n[CLIENT]\nsocket=/s\\sx\n",
        );
        assert_eq!(o["user"].as_deref(), Some("bob"));
        assert_eq!(o["password"].as_deref(), Some("p#ss w\\d"));
        assert_eq!(o["ssl-ca"].as_deref(), Some("/a b/ca.pem"));
        assert_eq!(o["skip-ssl"], None);
        assert_eq!(o["host"].as_deref(), Some("h1"));
        assert_eq!(o["port"].as_deref(), Some("3307"));
        assert_eq!(o["socket"].as_deref(), Some("/s x"));
        assert!(!o.contains_key("includedir"));
    }

    #[test]
    fn localhost_means_the_socket() {
        let d = Dir::new("mylocal");
        let t = resolve_url("mysql://", &env(&d)).unwrap().target;
        assert_eq!(t.hosts, ["localhost"]);
        assert_eq!(t.socket, Some(d.0.join("no-socket-here")));
        assert_eq!((t.user.as_str(), t.database.as_str()), ("alice", "test"));
        let sock = d.file("found.sock", "", 0o600);
        let t = resolve_url(
            "mysql://u@localhost/x",
            &env(&d).with_mysql_sockets([d.0.join("x"), sock.clone()]),
        )
        .unwrap()
        .target;
        assert_eq!(t.socket, Some(sock));
        for tcp in [
            "mysql://127.0.0.1/x",
            "mysql://db1/x",
            "mysql://localhost:3306/x",
            "mysql://localhost/x?protocol=TCP",
        ] {
            let t = resolve_url(tcp, &env(&d)).unwrap().target;
            assert_eq!(t.socket, None, "{tcp}");
        }
        let t = resolve_url("mysql://127.0.0.1/x?socket=/s", &env(&d))
            .unwrap()
            .target;
        assert_eq!(t.socket, Some(PathBuf::from("/s")));
        assert_eq!(t.param("protocol"), None);
        let e = resolve_url("mysql://localhost/x?protocol=pipe", &env(&d)).unwrap_err();
        assert!(e.message.contains("protocol=pipe"), "{e}");
    }

    #[test]
    fn environment_and_option_file() {
        let d = Dir::new("myenv");
        let e = env(&d)
            .with_var("MYSQL_HOST", "envhost")
            .with_var("MYSQL_TCP_PORT", "3310")
            .with_var("MYSQL_PWD", "envpw")
            .with_var("MYSQL_UNIX_PORT", "/env.sock");
        let t = resolve_url("mysql://", &e).unwrap().target;
        assert_eq!(
            (t.hosts[0].as_str(), t.ports[0], t.socket.clone()),
            ("envhost", 3310, None)
        );
        assert_eq!(t.password.as_deref(), Some("envpw"));
        let t = resolve_url("mysql://localhost", &e).unwrap().target;
        assert_eq!(t.socket, Some(PathBuf::from("/env.sock")));
        // ~/.my.cnf beats the environment; the URL beats both.
        d.file(
            ".my.cnf",
            "[client]\nuser=fileuser\npassword=filepw\nsocket=/file.sock\ndatabase=filedb\nssl-mode=REQUIRED\n",
            0o600,
        );
        let t = resolve_url("mysql://localhost", &e).unwrap().target;
        assert_eq!(t.socket, Some(PathBuf::from("/file.sock")));
        assert_eq!(
            (t.user.as_str(), t.database.as_str()),
            ("fileuser", "filedb")
        );
        assert_eq!(t.password.as_deref(), Some("filepw"));
        assert_eq!(t.param("ssl-mode"), Some("REQUIRED"));
        let t = resolve_url("mysql://me:mine@localhost/db?sslmode=disable", &e)
            .unwrap()
            .target;
        assert_eq!(
            (t.user.as_str(), t.password.as_deref()),
            ("me", Some("mine"))
        );
        assert_eq!(t.param("ssl-mode"), None);
        // --defaults-file replaces ~/.my.cnf.
        let other = d.file("other.cnf", "[client]\nport=4000\nprotocol=tcp\n", 0o600);
        let url = format!("mysql://localhost?defaults-file={}", other.display());
        let t = resolve_url(&url, &e).unwrap().target;
        assert_eq!((t.socket.clone(), t.ports[0]), (None, 4000));
        assert_eq!(t.user, "alice");
        assert_eq!(t.param("defaults-file"), None);
        let e2 = resolve_url("mysql://?defaults-file=/nonexistent/my.cnf", &e).unwrap_err();
        assert!(e2.message.contains("/nonexistent/my.cnf"), "{e2}");
        let bad = d.file("bad.cnf", "[client]\nport=http\n", 0o600);
        let e3 = resolve_url(&format!("mysql://?defaults-file={}", bad.display()), &e).unwrap_err();
        assert!(e3.message.contains("port=http"), "{e3}");
        // A world-writable ~/.my.cnf is ignored, with a warning.
        d.file(".my.cnf", "[client]\nuser=fileuser\n", 0o666);
        let r = resolve_url("mysql://", &e).unwrap();
        assert_eq!(r.target.user, "alice");
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    }
}
