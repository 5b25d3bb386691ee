//! deploy/: the Kubernetes manifests (docs/kubernetes.md) and the Grafana
//! dashboard. The manifests pass kubernetes-validate's schemas (strict, at
//! the oldest and a recent Kubernetes version), the kustomization builds
//! with kubectl offline and its output passes too, the Jobs give dbmeter
//! only options that its help lists, every `$(NAME)` they use is defined,
//! no password reaches an argument, their arguments with the ConfigMap's
//! values run against SQLite and store the run, and the metrics port is the same in
//! dbmeter's `--prometheus`, the container port and the scrape annotations.
//! The image is not built (no Docker engine), but its build context is
//! checked to hold what the build reads, and the binary to need no shared
//! library that the image's base (distroless/cc-debian12) lacks.

use crate::common::*;
use dbmeter_testkit::Requirement;
use dbmeter_testkit::tools::Tool;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use yaml_rust2::{Yaml, YamlLoader};

/// The Kubernetes versions whose schemas the manifests must pass: the
/// oldest the docs claim, and a recent one.
const KUBERNETES_VERSIONS: &[&str] = &["1.28.0", "1.34.0"];

/// What .ci/run installs from PyPI (keep the two in step).
const VALIDATOR_PACKAGE: &str = "kubernetes-validate==1.37.0";

/// Set by Kubernetes in an Indexed Job's pods (the manifests also name it).
const SET_BY_KUBERNETES: &[&str] = &["JOB_COMPLETION_INDEX"];

const KUBECTL: Tool = Tool::on_path_for(
    "kubectl",
    "kubernetes-client",
    Requirement::Tools,
    &["kubectl"],
);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifests_dir() -> PathBuf {
    repo().join("deploy/kubernetes")
}

/// Every manifest of deploy/kubernetes (the kustomization is not one: it
/// is built and checked by `kustomization_builds_offline_and_validates`).
fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(manifests_dir())
        .expect("read deploy/kubernetes")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .filter(|p| p.file_name().is_some_and(|n| n != "kustomization.yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 6,
        "expected the namespace, ConfigMap, Secret and three Jobs in {}, found {files:?}",
        manifests_dir().display()
    );
    files
}

fn load(path: &Path) -> Vec<Yaml> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one resource of a manifest file.
fn resource(name: &str) -> Yaml {
    let docs = load(&manifests_dir().join(name));
    assert_eq!(docs.len(), 1, "{name} should hold one resource");
    docs.into_iter().next().expect("one document")
}

fn text(y: &Yaml) -> &str {
    y.as_str()
        .unwrap_or_else(|| panic!("expected a string, found {y:?}"))
}

fn list(y: &Yaml) -> &[Yaml] {
    y.as_vec().map(Vec::as_slice).unwrap_or(&[])
}

/// kubernetes-validate on PATH, or None after the skip message.
fn validator() -> Option<PathBuf> {
    let found = Tool::on_path_for(
        "kubernetes-validate",
        "",
        Requirement::Tools,
        &["kubernetes-validate"],
    )
    .find();
    if found.is_none() {
        dbmeter_testkit::skip(
            Requirement::Tools,
            &format!(
                "kubernetes-validate not found (PyPI package {VALIDATOR_PACKAGE}; .ci/run installs it)"
            ),
        );
    }
    found
}

/// Runs kubernetes-validate strictly at `version` on `files` (or on
/// `stdin` when given, with `-` as the file) and insists that every one of
/// `resources` passed, with no error and no warning (an unknown kind or
/// apiVersion is only a warning to it).
fn validate(
    validator: &Path,
    version: &str,
    files: &[PathBuf],
    stdin: Option<&str>,
    resources: usize,
) {
    let mut cmd = Command::new(validator);
    cmd.args(["--strict", "--kubernetes-version", version]);
    if stdin.is_some() {
        cmd.arg("-").stdin(Stdio::piped());
    } else {
        cmd.args(files).stdin(Stdio::null());
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kubernetes-validate");
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(input.as_bytes())
            .expect("write to kubernetes-validate");
    }
    let out = child.wait_with_output().expect("run kubernetes-validate");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "kubernetes-validate at {version} failed:\n{said}"
    );
    let problems: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("WARN") || l.starts_with("ERROR"))
        .collect();
    assert!(
        problems.is_empty(),
        "kubernetes-validate at {version}:\n{said}"
    );
    let passed = said
        .lines()
        .filter(|l| l.contains(" passed for resource "))
        .count();
    assert_eq!(
        passed, resources,
        "kubernetes-validate at {version} passed {passed} resources, expected {resources}:\n{said}"
    );
}

#[test]
fn manifests_pass_kubernetes_validate() {
    let Some(validator) = validator() else {
        return;
    };
    let files = manifests();
    let resources: usize = files.iter().map(|f| load(f).len()).sum();
    for version in KUBERNETES_VERSIONS {
        validate(&validator, version, &files, None, resources);
    }
}

/// The validator rejects what it should: without this, a validator that
/// passes everything would pass the test above.
#[test]
fn kubernetes_validate_rejects_a_misspelt_field() {
    let Some(validator) = validator() else {
        return;
    };
    let s = Scratch::new();
    let job = std::fs::read_to_string(manifests_dir().join("shards-job.yaml"))
        .expect("read shards-job.yaml");
    assert!(job.contains("completionMode: Indexed"));
    let bad = s.path("job.yaml");
    std::fs::write(&bad, job.replace("completionMode:", "completionMod:")).expect("write");
    let out = Command::new(&validator)
        .args(["--strict", "--kubernetes-version", KUBERNETES_VERSIONS[0]])
        .arg(&bad)
        .output()
        .expect("run kubernetes-validate");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("'completionMod' was unexpected"), "{said}");
}

/// `kubectl kustomize` builds the kustomization without a cluster (the
/// dry runs, `kubectl apply --dry-run=client`, ask the API server for its
/// resource types and so need one), and what it builds passes the schemas.
#[test]
fn kustomization_builds_offline_and_validates() {
    let Some(validator) = validator() else {
        return;
    };
    let Some(kubectl) = KUBECTL.find_or_skip() else {
        return;
    };
    let out = Command::new(kubectl)
        .arg("kustomize")
        .arg(manifests_dir())
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("run kubectl kustomize");
    let built = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl kustomize failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = YamlLoader::load_from_str(&built).expect("kubectl kustomize printed YAML");
    let kinds: BTreeSet<String> = docs
        .iter()
        .map(|d| format!("{}/{}", text(&d["kind"]), text(&d["metadata"]["name"])))
        .collect();
    let expected: BTreeSet<String> = [
        "Namespace/dbmeter",
        "ConfigMap/dbmeter-run",
        "Job/dbmeter-shards",
    ]
    .map(String::from)
    .into();
    assert_eq!(kinds, expected, "{built}");
    for version in KUBERNETES_VERSIONS {
        validate(&validator, version, &[], Some(&built), docs.len());
    }
}

/// The option names `dbmeter COMMAND WORKLOAD --help` lists (general and
/// the workload's own), dashes for underscores; None when dbmeter does not
/// know the command.
fn listed_options(command: &str, workload: Option<&str>) -> Option<BTreeSet<String>> {
    let s = Scratch::new();
    // `dbmeter UNKNOWN --help` prints the general help: ask for the
    // command's page first.
    if s.run(&["help", command]).code != 0 {
        return None;
    }
    let mut args = vec![command];
    args.extend(workload);
    args.push("--help");
    let r = s.run(&args);
    assert_eq!(r.code, 0, "dbmeter {args:?}:\n{}", r.stderr);
    let options: BTreeSet<String> = r
        .stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .filter_map(|l| {
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            (!name.is_empty()).then(|| format!("--{}", name.replace('_', "-")))
        })
        .collect();
    assert!(
        options.contains("--db") || options.contains("--store"),
        "no options read from `dbmeter {args:?}`:\n{}",
        r.stdout
    );
    Some(options)
}

/// The Jobs' containers: (file, container).
fn job_containers() -> Vec<(String, Yaml)> {
    let mut out = Vec::new();
    for file in [
        "prepare-job.yaml",
        "shards-job.yaml",
        "merge-job.yaml",
        "campaign-job.yaml",
    ] {
        let job = resource(file);
        assert_eq!(text(&job["kind"]), "Job", "{file}");
        let containers = list(&job["spec"]["template"]["spec"]["containers"]);
        assert!(!containers.is_empty(), "{file} has no container");
        for c in containers {
            out.push((file.to_string(), c.clone()));
        }
    }
    out
}

fn args_of(container: &Yaml) -> Vec<String> {
    list(&container["args"])
        .iter()
        .map(|a| text(a).to_string())
        .collect()
}

#[test]
fn jobs_use_only_options_dbmeter_lists() {
    for (file, container) in job_containers() {
        let args = args_of(&container);
        let command = args
            .first()
            .unwrap_or_else(|| panic!("{file}: no arguments"))
            .as_str();
        let workload = args
            .get(1)
            .filter(|w| !w.starts_with("--") && matches!(command, "run" | "prepare"))
            .map(String::as_str);
        let Some(known) = listed_options(command, workload) else {
            panic!("{file}: dbmeter has no command `{command}`");
        };
        for arg in args.iter().filter(|a| a.starts_with("--")) {
            let name = arg.split('=').next().unwrap_or(arg).replace('_', "-");
            assert!(
                known.contains(&name),
                "{file}: `dbmeter {command} {}` does not list {name} (from {arg})",
                workload.unwrap_or("")
            );
        }
    }
}

/// `$(NAME)` references in `s`.
fn references(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("$(") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    out
}

/// Kubernetes leaves a `$(NAME)` it cannot resolve as it is, so a missing
/// ConfigMap key would reach dbmeter as text: every reference must be a
/// ConfigMap key, a variable defined before it (for env values) or one
/// Kubernetes sets. Passwords come from the Secret into the environment
/// only: no argument names one, the ConfigMap has none, and the Secret
/// keys the Jobs read are those of secret.example.yaml.
#[test]
fn job_references_resolve_and_passwords_stay_out_of_arguments() {
    let configmap = resource("configmap.yaml");
    let cm_name = text(&configmap["metadata"]["name"]).to_string();
    let cm_keys: BTreeSet<String> = configmap["data"]
        .as_hash()
        .expect("ConfigMap data")
        .keys()
        .map(|k| text(k).to_string())
        .collect();
    for key in &cm_keys {
        assert!(
            !key.to_ascii_uppercase().contains("PASSWORD") && !key.contains("PWD"),
            "configmap.yaml: {key} looks like a password; passwords go in the Secret"
        );
    }
    let secret = resource("secret.example.yaml");
    let secret_name = text(&secret["metadata"]["name"]).to_string();
    let secret_keys: BTreeSet<String> = secret["stringData"]
        .as_hash()
        .expect("Secret stringData")
        .keys()
        .map(|k| text(k).to_string())
        .collect();

    for (file, container) in job_containers() {
        let from_configmap = list(&container["envFrom"])
            .iter()
            .any(|e| e["configMapRef"]["name"].as_str() == Some(cm_name.as_str()));
        assert!(from_configmap, "{file}: no envFrom of ConfigMap {cm_name}");
        let mut defined: BTreeSet<String> = cm_keys.clone();
        defined.extend(SET_BY_KUBERNETES.iter().map(|s| s.to_string()));
        let mut secret_vars = BTreeSet::new();
        for var in list(&container["env"]) {
            let name = text(&var["name"]).to_string();
            if let Some(value) = var["value"].as_str() {
                for r in references(value) {
                    assert!(
                        defined.contains(&r),
                        "{file}: env {name} uses $({r}), not defined before it"
                    );
                }
            }
            let secret_ref = &var["valueFrom"]["secretKeyRef"];
            if !secret_ref.is_badvalue() {
                assert_eq!(text(&secret_ref["name"]), secret_name, "{file}: {name}");
                let key = text(&secret_ref["key"]);
                assert!(
                    secret_keys.contains(key),
                    "{file}: {name} reads Secret key {key}, which secret.example.yaml lacks"
                );
                secret_vars.insert(name.clone());
            }
            defined.insert(name);
        }
        assert!(
            !secret_vars.is_empty(),
            "{file}: no password from the Secret"
        );
        let args = args_of(&container);
        for arg in &args {
            for r in references(arg) {
                assert!(
                    defined.contains(&r),
                    "{file}: argument {arg} uses $({r}), which is not defined"
                );
                assert!(
                    !secret_vars.contains(&r),
                    "{file}: argument {arg} puts the secret {r} on dbmeter's command line"
                );
            }
            assert!(
                !arg.contains("password") && !arg.contains("STORE_PASSWORD"),
                "{file}: argument {arg} passes a password"
            );
        }
    }
}

/// The shards are an Indexed Job whose completion index is the shard
/// number: `--shard=$(JOB_COMPLETION_INDEX)/N` with N its completions,
/// all running at once, from one start time.
#[test]
fn shards_job_is_indexed_with_one_pod_per_shard() {
    let job = resource("shards-job.yaml");
    let spec = &job["spec"];
    assert_eq!(text(&spec["completionMode"]), "Indexed");
    let completions = spec["completions"].as_i64().expect("completions");
    assert_eq!(spec["parallelism"].as_i64(), Some(completions));
    let container = &list(&spec["template"]["spec"]["containers"])[0];
    let args = args_of(container);
    assert!(
        args.contains(&format!("--shard=$(JOB_COMPLETION_INDEX)/{completions}")),
        "{args:?}"
    );
    assert!(
        args.iter().any(|a| a.starts_with("--start-at=$(")),
        "{args:?}"
    );
    assert!(args.iter().any(|a| a == "--store"), "{args:?}");
    assert_eq!(text(&spec["template"]["spec"]["restartPolicy"]), "Never");
}

/// One port number: dbmeter's `--prometheus`, the container port named
/// `metrics`, and the scrape annotation. The Grafana dashboard selects
/// dbmeter's series by their own labels only, not by the `job`,
/// `instance`, `pod` or `namespace` that the cluster's scrape set-up
/// names, so it shows the pods' series whatever that set-up calls them.
#[test]
fn metrics_port_and_dashboard_agree_with_the_manifests() {
    let job = resource("shards-job.yaml");
    let template = &job["spec"]["template"];
    let container = &list(&template["spec"]["containers"])[0];
    let args = args_of(container);
    let listen = args
        .iter()
        .find_map(|a| a.strip_prefix("--prometheus="))
        .expect("--prometheus in the shards' arguments");
    let port: i64 = listen
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("--prometheus={listen}: no port"));
    let metrics = list(&container["ports"])
        .iter()
        .find(|p| p["name"].as_str() == Some("metrics"))
        .expect("a container port named metrics");
    assert_eq!(
        metrics["containerPort"].as_i64(),
        Some(port),
        "the container port named metrics is not --prometheus={listen}'s"
    );
    let annotations = &template["metadata"]["annotations"];
    assert_eq!(text(&annotations["prometheus.io/scrape"]), "true");
    assert_eq!(
        text(&annotations["prometheus.io/port"]),
        port.to_string(),
        "the scrape annotation's port is not --prometheus={listen}'s"
    );
    assert_eq!(text(&annotations["prometheus.io/path"]), "/metrics");

    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("deploy/grafana/dbmeter.json"))
            .expect("read deploy/grafana/dbmeter.json"),
    )
    .expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    collect_exprs(&dashboard, &mut exprs);
    assert!(exprs.len() >= 5, "few queries in the dashboard: {exprs:?}");
    for expr in &exprs {
        assert!(expr.contains("dbmeter_"), "not a dbmeter series: {expr}");
        for label in ["job", "instance", "pod", "namespace"] {
            for op in ["=", "!=", "=~", "!~"] {
                assert!(
                    !expr.contains(&format!("{{{label}{op}"))
                        && !expr.contains(&format!(",{label}{op}")),
                    "the dashboard selects on the scrape label {label}: {expr}"
                );
            }
        }
    }
}

fn collect_exprs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr", serde_json::Value::String(s)) => out.push(s.clone()),
                    _ => collect_exprs(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_exprs(i, out)),
        _ => {}
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// No Docker engine runs here, so the image is not built on CI; what can
/// break its build without breaking `cargo build` is checked instead: the
/// build context (.dockerignore's allow-list) holds every file outside
/// `crates/` that the crates' sources embed, and the Dockerfile's Rust is
/// at least the workspace's rust-version.
#[test]
fn image_context_holds_what_the_build_reads() {
    let root = normalize(&std::fs::canonicalize(repo()).expect("repository root"));
    let ignore = std::fs::read_to_string(root.join(".dockerignore")).expect("read .dockerignore");
    let lines: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        lines.first(),
        Some(&"*"),
        ".dockerignore should start by leaving everything out"
    );
    let allowed: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix('!'))
        .map(|l| l.trim_end_matches('/'))
        .collect();
    for needed in ["Cargo.toml", "Cargo.lock", "crates"] {
        assert!(
            allowed.contains(&needed),
            ".dockerignore leaves out {needed}"
        );
    }

    let mut sources = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        let src = entry.expect("directory entry").path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut sources);
        }
    }
    let mut outside = BTreeSet::new();
    for file in &sources {
        let code = std::fs::read_to_string(file).expect("read a source file");
        for mac in ["include_str!(\"", "include_bytes!(\""] {
            for (at, _) in code.match_indices(mac) {
                let rest = &code[at + mac.len()..];
                let Some(end) = rest.find('"') else { continue };
                let dir = file.parent().expect("a source file's directory");
                let target = normalize(&dir.join(&rest[..end]));
                let relative = target.strip_prefix(&root).unwrap_or_else(|_| {
                    panic!(
                        "{} embeds {}, outside the repository",
                        file.display(),
                        target.display()
                    )
                });
                if !relative.starts_with("crates") {
                    outside.insert(relative.to_path_buf());
                }
            }
        }
    }
    assert!(
        outside.contains(Path::new("docs/sysbench.md")),
        "expected the help's docs/sysbench.md among the embedded files: {outside:?}"
    );
    for file in &outside {
        assert!(
            allowed.iter().any(|a| file.starts_with(a)),
            "the sources embed {}, which .dockerignore leaves out of the image's build context",
            file.display()
        );
    }

    let dockerfile =
        std::fs::read_to_string(root.join("deploy/Dockerfile")).expect("read deploy/Dockerfile");
    let image_rust = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("ARG RUST_VERSION="))
        .expect("ARG RUST_VERSION= in deploy/Dockerfile");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let needed = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("rust-version in Cargo.toml");
    let version = |v: &str| -> Vec<u32> {
        v.split('.')
            .map(|p| p.parse().expect("a version number"))
            .collect()
    };
    assert!(
        version(image_rust) >= version(needed),
        "deploy/Dockerfile builds with Rust {image_rust}, older than the workspace's rust-version {needed}"
    );
    assert!(
        dockerfile.contains("cargo build --release --locked -p dbmeter"),
        "{dockerfile}"
    );
    assert!(
        dockerfile.contains("FROM gcr.io/distroless/cc-debian12"),
        "{dockerfile}"
    );
}

/// The shared libraries that gcr.io/distroless/cc-debian12 holds: glibc's
/// (Debian's libc6), libgcc-s1, libgomp1 and libstdc++6.
const DISTROLESS_CC_LIBRARIES: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "libpthread.so.0",
    "librt.so.1",
    "libresolv.so.2",
    "libutil.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
    "libgcc_s.so.1",
    "libgomp.so.1",
    "libstdc++.so.6",
];

/// Debian 12's glibc, the newest symbol version the image can resolve.
const BOOKWORM_GLIBC: (u32, u32) = (2, 36);

/// The binary that the image copies runs on its base: every library it
/// needs is one distroless/cc has (a dependency that links OpenSSL or zstd
/// dynamically would build and pass every other test, and fail in the pod
/// at start), and no symbol needs a glibc newer than Debian 12's.
#[test]
fn binary_needs_only_what_the_image_base_has() {
    let binary = bin();
    let readelf = |flag: &str| {
        let out = Command::new("readelf")
            .args([flag, "--wide"])
            .arg(binary)
            .output()
            .expect("run readelf (binutils)");
        assert!(out.status.success(), "readelf {flag} failed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dynamic = readelf("--dynamic");
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert!(
        needed.contains(&"libc.so.6"),
        "expected libc.so.6 among the needed libraries: {needed:?}"
    );
    for lib in &needed {
        assert!(
            DISTROLESS_CC_LIBRARIES.contains(lib),
            "dbmeter needs {lib}, which gcr.io/distroless/cc-debian12 does not have: link it statically (a crate's bundled/vendored feature) or change the image's base"
        );
    }
    let versions = readelf("--version-info");
    let mut newest = (0, 0);
    for name in versions.split_whitespace() {
        let Some(v) = name.strip_prefix("GLIBC_2.") else {
            continue;
        };
        if let Ok(minor) = v.parse::<u32>() {
            newest = newest.max((2, minor));
        }
    }
    assert!(
        newest >= (2, 2),
        "no GLIBC_2.x symbol versions found:\n{versions}"
    );
    assert!(
        newest <= BOOKWORM_GLIBC,
        "dbmeter needs GLIBC_{}.{}, newer than Debian 12's {}.{}",
        newest.0,
        newest.1,
        BOOKWORM_GLIBC.0,
        BOOKWORM_GLIBC.1
    );
}

/// `arg` with each `$(NAME)` replaced by its value in `vars`.
fn substitute(arg: &str, vars: &std::collections::BTreeMap<String, String>) -> String {
    let mut out = arg.to_string();
    for name in references(arg) {
        let value = vars
            .get(&name)
            .unwrap_or_else(|| panic!("no value for $({name}) in {arg}"));
        out = out.replace(&format!("$({name})"), value);
    }
    out
}

/// The prepare and shard Jobs' own arguments, with the ConfigMap's values
/// put in as Kubernetes would, run against an SQLite file instead of the
/// external server: small tables, a one-second run, the metrics on a free
/// port without linger, the store in an SQLite file through
/// `DBMETER_STORE` as in the pods. The options the sharding work adds are
/// left out while this dbmeter lacks them. The run is stored with the
/// Job's tags, and `dbmeter results list tag:run=...` finds it.
#[test]
fn job_arguments_run_with_the_configmap_values() {
    let s = Scratch::new();
    let configmap = resource("configmap.yaml");
    let mut vars: std::collections::BTreeMap<String, String> = configmap["data"]
        .as_hash()
        .expect("ConfigMap data")
        .iter()
        .map(|(k, v)| (text(k).to_string(), text(v).to_string()))
        .collect();
    let db = s.path("target.sqlite");
    for (k, v) in [
        ("DBMETER_DB", format!("sqlite:{}", db.display())),
        ("DBMETER_TABLES", "2".into()),
        ("DBMETER_TABLE_SIZE", "100".into()),
        // Two users in this shard once --shard splits them over 16.
        ("DBMETER_THREADS", "32".into()),
        ("DBMETER_PREPARE_THREADS", "2".into()),
        ("DBMETER_TIME", "1".into()),
        ("DBMETER_REPORT_INTERVAL", "1".into()),
        ("JOB_COMPLETION_INDEX", "3".into()),
    ] {
        assert!(
            vars.contains_key(k) || k == "JOB_COMPLETION_INDEX",
            "configmap.yaml has no {k}"
        );
        vars.insert(k.to_string(), v);
    }
    // Once --start-at exists: a start two seconds ahead, as date(1) says.
    let start = Command::new("date")
        .args(["-u", "-d", "+2 seconds", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("run date");
    vars.insert(
        "DBMETER_START_AT".to_string(),
        String::from_utf8_lossy(&start.stdout).trim().to_string(),
    );
    let store = s.path("results.db");
    let run_name = vars["DBMETER_RUN"].clone();

    for file in ["prepare-job.yaml", "shards-job.yaml"] {
        let job = resource(file);
        let container = &list(&job["spec"]["template"]["spec"]["containers"])[0];
        let args = args_of(container);
        let known = listed_options(&args[0], Some(&args[1])).expect("a dbmeter command");
        let args: Vec<String> = args
            .iter()
            .filter(|a| {
                let name = a.split('=').next().unwrap_or(a);
                !a.starts_with("--") || known.contains(name)
            })
            .map(|a| match a.split_once('=') {
                Some(("--prometheus", _)) => "--prometheus=127.0.0.1:0".to_string(),
                Some(("--prometheus-linger", _)) => "--prometheus-linger=0".to_string(),
                _ => substitute(a, &vars),
            })
            .collect();
        // Without --shard, the whole run's users would all be in this
        // process: keep them at two.
        let args: Vec<String> = if known.contains("--shard") {
            args
        } else {
            args.into_iter()
                .map(|a| {
                    if a == "--threads=32" {
                        "--threads=2".to_string()
                    } else {
                        a
                    }
                })
                .collect()
        };
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = s.cmd(&argv);
        cmd.env("DBMETER_STORE", &store)
            .env("DBMETER_HOME", s.path("home"))
            .env("MYSQL_PWD", "not-used-by-sqlite")
            .env("PGPASSWORD", "not-used-by-sqlite")
            .stdin(Stdio::null());
        let r = s.output(cmd);
        assert_eq!(
            r.code, 0,
            "{file}: dbmeter {argv:?}:\n{}\n{}",
            r.stdout, r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        if file == "shards-job.yaml" {
            assert!(
                r.stderr.contains("stored as run #1 in"),
                "{file}: not stored:\n{}",
                r.stderr
            );
            assert!(
                r.stderr.contains("metrics for Prometheus at http://"),
                "{}",
                r.stderr
            );
        }
    }
    let selector = format!("tag:run={run_name}");
    let r = s.run_home(&[
        "results",
        "list",
        &selector,
        "--format=json",
        &format!("--store={}", store.display()),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let runs = r.json();
    let runs = runs.as_array().expect("a JSON array of runs");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["tags"]["run"], run_name.as_str(), "{runs:?}");
    assert_eq!(runs[0]["tags"]["shard"], "3", "{runs:?}");
    assert_eq!(runs[0]["workload"], "oltp_read_write", "{runs:?}");
    let sharded =
        listed_options("run", Some("oltp_read_write")).is_some_and(|o| o.contains("--shard"));
    if !sharded {
        assert_eq!(runs[0]["threads"], 2, "{runs:?}");
    }
}

/// The sharded campaign: an Indexed Job whose completions, parallelism
/// and `--shard=$(JOB_COMPLETION_INDEX)/N` agree with the campaign file's
/// `shards`, and whose campaign file (from its ConfigMap, mounted where
/// the Job reads it) passes `campaign run --dry-run` as a shard.
#[test]
fn campaign_job_runs_its_configmap_campaign_as_shards() {
    let job = resource("campaign-job.yaml");
    let spec = &job["spec"];
    assert_eq!(text(&spec["completionMode"]), "Indexed");
    let n = spec["completions"].as_i64().expect("completions");
    assert_eq!(spec["parallelism"].as_i64(), Some(n));
    let pod = &spec["template"]["spec"];
    let container = &list(&pod["containers"])[0];
    let args = args_of(container);
    assert_eq!(&args[..2], ["campaign", "run"]);
    assert!(
        args.contains(&format!("--shard=$(JOB_COMPLETION_INDEX)/{n}")),
        "{args:?}"
    );
    let cm = resource("campaign-configmap.yaml");
    let cm_name = text(&cm["metadata"]["name"]);
    let volume = list(&pod["volumes"])
        .iter()
        .find(|v| v["configMap"]["name"].as_str() == Some(cm_name))
        .expect("a volume of the campaign's ConfigMap");
    let mount = list(&container["volumeMounts"])
        .iter()
        .find(|m| m["name"].as_str() == volume["name"].as_str())
        .expect("the campaign's volume mounted");
    let (key, toml) = cm["data"]
        .as_hash()
        .expect("ConfigMap data")
        .iter()
        .next()
        .map(|(k, v)| (text(k).to_string(), text(v).to_string()))
        .expect("a campaign file");
    assert_eq!(args[2], format!("{}/{key}", text(&mount["mountPath"])));
    assert!(toml.contains(&format!("shards = {n}")), "{toml}");
    let s = Scratch::new();
    std::fs::write(s.path(&key), &toml).expect("write the campaign");
    let store = s.path("results.db");
    for shard in [0, n - 1] {
        let r = s.output({
            let mut c = s.cmd(&[
                "campaign",
                "run",
                &key,
                &format!("--shard={shard}/{n}"),
                "--dry-run",
            ]);
            c.env("DBMETER_STORE", &store);
            c
        });
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    }
}
