//! TLS modes, password authentication and --query-timeout against real
//! MariaDB and PostgreSQL servers started with certificates made here.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, start_with};
use dbmeter_testkit::tools::OPENSSL;
use std::path::Path;
use std::process::Command;

/// A CA and a server certificate for 127.0.0.1 and localhost, made with
/// the openssl program into `dir` (readable by the server's user).
struct Certs {
    ca: String,
    cert: String,
    key: String,
    other_ca: String,
}

fn openssl(program: &Path, dir: &Path, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The certificates; None after saying that the test skips when the
/// openssl program is missing.
fn make_certs(dir: &Path) -> Option<Certs> {
    use std::os::unix::fs::PermissionsExt;
    let program = OPENSSL.find_or_skip()?;
    let openssl = |dir: &Path, args: &[&str]| openssl(&program, dir, args);
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    for name in ["ca", "other-ca"] {
        let mut a = vec!["req", "-x509", "-nodes", "-days", "2"];
        a.extend(ec);
        let (key, out, subj) = (
            format!("{name}.key"),
            format!("{name}.pem"),
            format!("/CN=dbmeter test {name}"),
        );
        a.extend(["-keyout", &key, "-out", &out, "-subj", &subj]);
        openssl(dir, &a);
    }
    let mut a = vec!["req", "-nodes"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    openssl(dir, &a);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "server.pem",
            "-extfile",
            "san.ext",
        ],
    );
    for f in ["ca.pem", "other-ca.pem", "server.pem", "server.key"] {
        std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let p = |f: &str| dir.join(f).to_string_lossy().into_owned();
    Some(Certs {
        ca: p("ca.pem"),
        cert: p("server.pem"),
        key: p("server.key"),
        other_ca: p("other-ca.pem"),
    })
}

fn url(server: &Server, user: &str, password: &str, params: &str) -> String {
    let scheme = match server.flavor() {
        Flavor::MariaDb => "mysql",
        Flavor::Postgres => "postgres",
    };
    let pass = if password.is_empty() {
        String::new()
    } else {
        format!(":{password}")
    };
    format!(
        "--db={scheme}://{user}{pass}@127.0.0.1:{}/test{params}",
        server.port()
    )
}

fn point_selects(s: &Scratch, db: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        "oltp_point_select",
        db,
        "--tables=1",
        "--table-size=100",
        "--events=50",
        "--time=0",
    ];
    args.extend_from_slice(extra);
    s.run(&args)
}

fn assert_ok(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}:\n{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stat("transactions:"), 50, "{what}");
}

fn assert_fails(r: &Run, what: &str, needle: &str) {
    assert_eq!(r.code, 1, "{what} should fail:\n{}\n{}", r.stdout, r.stderr);
    let line = r.stderr.trim();
    assert_eq!(
        line.lines().count(),
        1,
        "{what}: one line expected:\n{line}"
    );
    assert!(
        line.to_lowercase().contains(needle),
        "{what}: '{needle}' not in: {line}"
    );
}

/// A MariaDB offering TLS with the certificate of `certs`.
fn mariadb_with_tls(certs: &Certs) -> Option<Server> {
    start_with(
        Flavor::MariaDb,
        &[
            ("ssl-ca", &certs.ca),
            ("ssl-cert", &certs.cert),
            ("ssl-key", &certs.key),
        ],
    )
}

#[test]
fn mariadb_tls_modes_and_passwords() {
    let s = Scratch::new();
    let Some(certs) = make_certs(s.dir.path()) else {
        return;
    };
    let Some(server) = mariadb_with_tls(&certs) else {
        return;
    };
    // `tls` must use TLS; `pw` has a mysql_native_password password.
    ask(
        &server,
        "CREATE USER tls@'%' REQUIRE SSL; GRANT ALL ON *.* TO tls@'%'; \
         CREATE USER pw@'%' IDENTIFIED BY 's3cret'; GRANT ALL ON *.* TO pw@'%'; \
         INSTALL SONAME 'auth_ed25519'; \
         CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('edpw'); GRANT ALL ON *.* TO ed@'%'",
    );
    s.ok(&[
        "prepare",
        "oltp_point_select",
        &url(&server, "root", "", ""),
        "--tables=1",
        "--table-size=100",
    ]);

    let plain = point_selects(&s, &url(&server, "tls", "", ""), &[]);
    assert_fails(&plain, "tls user without TLS", "access denied");
    for mode in ["require", "REQUIRED", "preferred", "verify-ca"] {
        let p = format!("?ssl-mode={mode}&ssl-ca={}", certs.ca);
        let r = point_selects(&s, &url(&server, "tls", "", &p), &[]);
        assert_ok(&r, mode);
    }
    // The --ssl-* options work as the URL parameters do.
    let r = point_selects(
        &s,
        &url(&server, "tls", "", ""),
        &[
            "--ssl-mode=VERIFY_IDENTITY",
            &format!("--ssl-ca={}", certs.ca),
        ],
    );
    assert_ok(&r, "verify-identity by options");
    let r = point_selects(&s, &url(&server, "tls", "", ""), &["--mysql-ssl=on"]);
    assert_ok(&r, "sysbench's --mysql-ssl=on");
    // A certificate from another CA is refused.
    let p = format!("?ssl-mode=verify-ca&ssl-ca={}", certs.other_ca);
    let r = point_selects(&s, &url(&server, "tls", "", &p), &[]);
    assert_fails(&r, "wrong CA", "certificate");

    // Passwords: in the URL, in MYSQL_PWD, from standard input; wrong ones.
    assert_ok(
        &point_selects(&s, &url(&server, "pw", "s3cret", ""), &[]),
        "password in URL",
    );
    let mut cmd = s.cmd(&[
        "run",
        "oltp_point_select",
        &url(&server, "pw", "", ""),
        "--tables=1",
        "--table-size=100",
        "--events=50",
        "--time=0",
    ]);
    let out = cmd.env("MYSQL_PWD", "s3cret").output().unwrap();
    assert!(out.status.success(), "MYSQL_PWD");
    let r = s.run_stdin(
        &[
            "run",
            "oltp_point_select",
            &url(&server, "pw", "", ""),
            "--ask-password",
            "--tables=1",
            "--table-size=100",
            "--events=50",
            "--time=0",
        ],
        "s3cret\n",
    );
    assert_ok(&r, "--ask-password");
    assert_ok(
        &point_selects(&s, &url(&server, "ed", "edpw", ""), &[]),
        "MariaDB's ed25519",
    );
    let r = point_selects(&s, &url(&server, "pw", "xyzzy", ""), &[]);
    assert_fails(&r, "wrong password", "access denied");
    assert!(!r.stderr.contains("xyzzy"), "password shown: {}", r.stderr);

    // dbmeter mysqlslap takes the MariaDB clients' TLS options.
    let port = server.port().to_string();
    let slap = |extra: &[&str]| {
        let mut args = vec![
            "mysqlslap",
            "--no-defaults",
            "-h",
            "127.0.0.1",
            "-P",
            &port,
            "-u",
            "tls",
            "-a",
            "--number-of-queries=5",
        ];
        args.extend_from_slice(extra);
        s.run(&args)
    };
    let ca = format!("--ssl-ca={}", certs.ca);
    let r = slap(&[&ca, "--ssl-verify-server-cert"]);
    assert_eq!(r.code, 0, "mysqlslap with TLS: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("Benchmark\n"), "{}", r.stdout);
    let r = slap(&[]);
    assert_eq!(r.code, 1, "mysqlslap without TLS: {}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    let other = format!("--ssl-ca={}", certs.other_ca);
    let r = slap(&[&other, "--ssl-verify-server-cert"]);
    assert_eq!(r.code, 1, "mysqlslap, wrong CA: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("certificate"), "{}", r.stderr);
}

/// A PostgreSQL offering TLS with the certificate of `certs`, whose
/// pg_hba.conf is `hba` (None: the machine cannot give the key to the
/// postgres user, or has no PostgreSQL).
fn postgres_with_tls(s: &Scratch, certs: &Certs, hba_lines: &str) -> Option<Server> {
    // PostgreSQL wants its key owned by its user and private.
    let pg_key = s.path("pg.key");
    std::fs::copy(&certs.key, &pg_key).unwrap();
    let st = Command::new("chown")
        .args(["postgres", pg_key.to_str().unwrap()])
        .status();
    if !st.is_ok_and(|s| s.success()) {
        eprintln!("skipping: cannot chown the key to postgres");
        return None;
    }
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pg_key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let hba = s.path("pg_hba.conf");
    std::fs::write(&hba, hba_lines).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hba, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    start_with(
        Flavor::Postgres,
        &[
            ("ssl", "on"),
            ("ssl_cert_file", &certs.cert),
            ("ssl_key_file", pg_key.to_str().unwrap()),
            ("ssl_ca_file", &certs.ca),
            ("hba_file", hba.to_str().unwrap()),
        ],
    )
}

#[test]
fn postgres_tls_modes_and_password_methods() {
    let s = Scratch::new();
    let Some(certs) = make_certs(s.dir.path()) else {
        return;
    };
    // TCP needs TLS; md5 and scram users need their password.
    let Some(server) = postgres_with_tls(
        &s,
        &certs,
        "local all all trust\n\
         hostnossl postgres postgres 127.0.0.1/32 trust\n\
         hostssl all md5user 127.0.0.1/32 md5\n\
         hostssl all scramuser 127.0.0.1/32 scram-sha-256\n\
         hostssl all all 127.0.0.1/32 trust\n\
         hostnossl all all 127.0.0.1/32 reject\n",
    ) else {
        return;
    };
    ask(
        &server,
        "SET password_encryption = 'md5'; CREATE USER md5user SUPERUSER PASSWORD 'm5pass'; \
         SET password_encryption = 'scram-sha-256'; CREATE USER scramuser SUPERUSER PASSWORD 'scpass'",
    );
    s.ok(&[
        "prepare",
        "oltp_point_select",
        &url(&server, "postgres", "", ""),
        "--tables=1",
        "--table-size=100",
    ]);
    // The default (prefer) uses TLS when offered.
    assert_ok(
        &point_selects(&s, &url(&server, "postgres", "", ""), &[]),
        "default sslmode",
    );
    let r = point_selects(&s, &url(&server, "postgres", "", "?sslmode=disable"), &[]);
    assert_fails(&r, "sslmode=disable", "pg_hba.conf");
    for p in [
        "?sslmode=require".to_string(),
        format!("?sslmode=verify-ca&sslrootcert={}", certs.ca),
        format!("?sslmode=verify-full&sslrootcert={}", certs.ca),
    ] {
        assert_ok(
            &point_selects(&s, &url(&server, "postgres", "", &p), &[]),
            &p,
        );
    }
    let p = format!("?sslmode=verify-full&sslrootcert={}", certs.other_ca);
    let r = point_selects(&s, &url(&server, "postgres", "", &p), &[]);
    assert_fails(&r, "wrong CA", "certificate");
    let r = point_selects(&s, &url(&server, "postgres", "", "?sslmode=sometimes"), &[]);
    assert_eq!(r.code, 2, "bad sslmode: {}", r.stderr);
    assert!(r.stderr.contains("sometimes"), "{}", r.stderr);

    assert_ok(
        &point_selects(&s, &url(&server, "md5user", "m5pass", ""), &[]),
        "md5",
    );
    assert_ok(
        &point_selects(&s, &url(&server, "scramuser", "scpass", ""), &[]),
        "scram-sha-256",
    );
    let r = s.run_stdin(
        &[
            "run",
            "oltp_point_select",
            &url(&server, "scramuser", "", ""),
            "--ask-password",
            "--tables=1",
            "--table-size=100",
            "--events=50",
            "--time=0",
        ],
        "scpass\n",
    );
    assert_ok(&r, "--ask-password");
    let r = point_selects(&s, &url(&server, "scramuser", "nope", ""), &[]);
    assert_fails(&r, "wrong scram password", "authentication failed");
    assert!(!r.stderr.contains("nope"), "password shown: {}", r.stderr);
}

/// Runs the point selects with `bundle` as the system's trust store
/// (SSL_CERT_FILE, which rustls-native-certs reads instead of /etc/ssl)
/// and a home without ~/.postgresql/root.crt.
fn with_system_store(s: &Scratch, db: &str, bundle: &str) -> Run {
    let mut c = s.cmd(&[
        "run",
        "oltp_point_select",
        db,
        "--tables=1",
        "--table-size=100",
        "--events=50",
        "--time=0",
    ]);
    c.env("SSL_CERT_FILE", bundle)
        .env_remove("SSL_CERT_DIR")
        .env("HOME", s.path("home"));
    s.output(c)
}

/// verify-full without a CA file, and `sslrootcert=system` (PostgreSQL)
/// or `ssl-mode=VERIFY_IDENTITY` without `ssl-ca` (MariaDB), trust the
/// system's CAs: the server's certificate, signed by a private CA,
/// verifies when that CA is in the system's store and not otherwise.
fn system_trust_store(s: &Scratch, server: &Server, certs: &Certs) {
    let (user, modes): (&str, &[&str]) = match server.flavor() {
        Flavor::MariaDb => (
            "root",
            &[
                "?ssl-mode=VERIFY_IDENTITY",
                "?ssl-mode=verify-full&ssl-ca=system",
                "?ssl-ca=system",
            ],
        ),
        Flavor::Postgres => (
            "postgres",
            &[
                "?sslmode=verify-full",
                "?sslrootcert=system",
                "?sslrootcert=system&sslmode=verify-full",
            ],
        ),
    };
    s.ok(&[
        "prepare",
        "oltp_point_select",
        &url(server, user, "", ""),
        "--tables=1",
        "--table-size=100",
    ]);
    // A system store with the server's CA (among others), and one without.
    let with_ca = s.path("with-ca.pem");
    let ca = std::fs::read_to_string(&certs.ca).unwrap();
    let other = std::fs::read_to_string(&certs.other_ca).unwrap();
    std::fs::write(&with_ca, format!("{other}{ca}")).unwrap();
    let with_ca = with_ca.to_str().unwrap();
    for params in modes {
        let db = url(server, user, "", params);
        assert_ok(&with_system_store(s, &db, with_ca), params);
        let r = with_system_store(s, &db, &certs.other_ca);
        assert_fails(&r, &format!("{params}, CA not in the store"), "certificate");
        // The message says what was trusted and how to name the CA.
        assert!(r.stderr.contains("SSL_CERT_FILE="), "{}", r.stderr);
        assert!(r.stderr.contains("sslrootcert=FILE"), "{}", r.stderr);
    }
    // A CA file given still wins over the system's store.
    let p = format!(
        "?{}=verify-full&sslrootcert={}",
        match server.flavor() {
            Flavor::MariaDb => "ssl-mode",
            Flavor::Postgres => "sslmode",
        },
        certs.ca
    );
    assert_ok(
        &with_system_store(s, &url(server, user, "", &p), &certs.other_ca),
        "a CA file and another system store",
    );
    // system takes no weaker mode than verify-full (as libpq 16).
    for p in [
        "?sslrootcert=system&sslmode=require",
        "?ssl-ca=system&ssl-mode=VERIFY_CA",
    ] {
        let r = with_system_store(s, &url(server, user, "", p), with_ca);
        assert_eq!(r.code, 2, "{p}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("=system needs sslmode=verify-full"),
            "{p}: {}",
            r.stderr
        );
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
}

#[test]
fn mariadb_system_trust_store() {
    let s = Scratch::new();
    let Some(certs) = make_certs(s.dir.path()) else {
        return;
    };
    let Some(server) = mariadb_with_tls(&certs) else {
        return;
    };
    system_trust_store(&s, &server, &certs);
}

#[test]
fn postgres_system_trust_store() {
    let s = Scratch::new();
    let Some(certs) = make_certs(s.dir.path()) else {
        return;
    };
    let Some(server) = postgres_with_tls(
        &s,
        &certs,
        "local all all trust\n\
         hostnossl postgres postgres 127.0.0.1/32 trust\n\
         hostssl all all 127.0.0.1/32 trust\n",
    ) else {
        return;
    };
    system_trust_store(&s, &server, &certs);
}

/// Statements longer than --query-timeout are cancelled by the server and
/// counted as timed-out events; the run goes on and ends normally.
fn query_timeout(flavor: Option<Flavor>) {
    let s = Scratch::new();
    let server = match flavor {
        Some(f) => match start_with(f, &[]) {
            Some(server) => Some(server),
            None => return,
        },
        None => None,
    };
    let db = match &server {
        Some(server) => url(
            server,
            match server.flavor() {
                Flavor::MariaDb => "root",
                Flavor::Postgres => "postgres",
            },
            "",
            "",
        ),
        None => "--db=sqlite:qt.sqlite".to_string(),
    };
    s.ok(&[
        "prepare",
        "oltp_read_only",
        &db,
        "--tables=1",
        "--table-size=50000",
    ]);
    let common = [
        "run",
        "oltp_read_only",
        &db,
        "--tables=1",
        "--table-size=50000",
        "--range-size=50000",
        "--events=5",
        "--time=0",
        "--format=json",
    ];
    let mut args = common.to_vec();
    args.push("--query-timeout=0.001");
    let r = s.ok(&args);
    let j = r.json();
    assert_eq!(j["totals"]["timeouts"], 5, "{}", r.stdout);
    assert_eq!(j["totals"]["events"], 0, "{}", r.stdout);
    let code = match flavor {
        Some(Flavor::MariaDb) => "1969",
        Some(Flavor::Postgres) => "57014",
        None => "SQLITE_INTERRUPT",
    };
    assert_eq!(j["errors"][code], 5, "{}", r.stdout);
    // Without the limit, the same events complete.
    let r = s.ok(&common);
    assert_eq!(r.json()["totals"]["events"], 5);
    assert_eq!(r.json()["totals"]["timeouts"], 0);
    let mut args = common.to_vec();
    args.push("--query-timeout=-1");
    assert_eq!(s.run(&args).code, 2);
}

#[test]
fn query_timeout_sqlite() {
    query_timeout(None);
}

#[test]
fn query_timeout_mariadb() {
    query_timeout(Some(Flavor::MariaDb));
}

#[test]
fn query_timeout_postgres() {
    query_timeout(Some(Flavor::Postgres));
}

/// Every password method of dbmeter's PostgreSQL client without TLS
/// (cleartext, md5, scram-sha-256; trust over TCP and over the Unix
/// socket, given as its directory or as the socket file).
#[test]
fn postgres_password_methods_without_tls() {
    let s = Scratch::new();
    let hba = s.path("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\n\
         host all md5user 127.0.0.1/32 md5\n\
         host all scramuser 127.0.0.1/32 scram-sha-256\n\
         host all clearuser 127.0.0.1/32 password\n\
         host all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hba, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let Some(server) = start_with(Flavor::Postgres, &[("hba_file", hba.to_str().unwrap())]) else {
        return;
    };
    ask(
        &server,
        "SET password_encryption = 'md5'; CREATE USER md5user SUPERUSER PASSWORD 'm5pass'; \
         SET password_encryption = 'scram-sha-256'; CREATE USER scramuser SUPERUSER PASSWORD 'sc pass'; \
         CREATE USER clearuser SUPERUSER PASSWORD 'clpass'",
    );
    s.ok(&[
        "prepare",
        "oltp_point_select",
        &url(&server, "postgres", "", ""),
        "--tables=1",
        "--table-size=100",
    ]);
    for (user, password) in [
        ("md5user", "m5pass"),
        ("scramuser", "sc%20pass"),
        ("clearuser", "clpass"),
    ] {
        assert_ok(
            &point_selects(&s, &url(&server, user, password, ""), &[]),
            user,
        );
        // TLS is not offered: prefer falls back to plain text, require fails.
        let r = point_selects(&s, &url(&server, user, password, "?sslmode=require"), &[]);
        assert_fails(
            &r,
            &format!("{user} sslmode=require"),
            "does not support tls",
        );
        let r = point_selects(&s, &url(&server, user, "wrong", ""), &[]);
        assert_fails(
            &r,
            &format!("{user} wrong password"),
            "authentication failed",
        );
        let r = point_selects(&s, &url(&server, user, "", ""), &[]);
        assert_fails(&r, &format!("{user} no password"), "password");
    }
    let socket = server.socket();
    let port = server.port();
    for db in [
        format!(
            "--db=postgres://postgres@localhost:{port}/test?host={}",
            socket.parent().unwrap().display()
        ),
        format!(
            "--db=postgres://postgres@localhost:{port}/test?socket={}",
            socket.display()
        ),
    ] {
        assert_ok(&point_selects(&s, &db, &[]), &db);
    }
}
