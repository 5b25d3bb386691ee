//! Finding a flavor's programs: the server, the tool that initializes a data
//! directory, and the command-line client.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub(crate) struct Binaries {
    pub server: PathBuf,
    pub init: PathBuf,
    pub client: PathBuf,
}

/// Names to look for, each in order of preference.
pub(crate) struct Names {
    pub server: &'static [&'static str],
    pub init: &'static [&'static str],
    pub client: &'static [&'static str],
}

/// With a `basedir`, looks in its bin/, sbin/, scripts/ and itself; without,
/// on PATH and then in `system_dirs`. The init tool and the client are
/// looked for next to the server first (symlinks resolved), so they match
/// its version; the client may also come from PATH.
pub(crate) fn locate(
    names: &Names,
    basedir: Option<&Path>,
    system_dirs: Vec<PathBuf>,
) -> Result<Binaries, String> {
    let dirs: Vec<PathBuf> = match basedir {
        Some(b) => ["bin", "sbin", "scripts", ""]
            .iter()
            .map(|s| b.join(s))
            .collect(),
        None => path_dirs().into_iter().chain(system_dirs).collect(),
    };
    let where_ = match basedir {
        Some(b) => format!("in {}, its bin/, sbin/ or scripts/", b.display()),
        None => "on PATH or in the usual system directories".to_string(),
    };
    let missing = |names: &[&str]| format!("no {} {where_}", names.join(" or "));

    let server = find(names.server, &dirs).ok_or_else(|| missing(names.server))?;
    let mut near: Vec<PathBuf> = Vec::new();
    if let Some(dir) = fs::canonicalize(&server)
        .ok()
        .as_deref()
        .and_then(Path::parent)
    {
        near.push(dir.to_path_buf());
    }
    near.extend(server.parent().map(Path::to_path_buf));
    near.extend(dirs);
    let init = find(names.init, &near).ok_or_else(|| missing(names.init))?;
    near.extend(path_dirs());
    let client = find(names.client, &near).ok_or_else(|| missing(names.client))?;
    Ok(Binaries {
        server,
        init,
        client,
    })
}

fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| d.is_absolute())
                .collect()
        })
        .unwrap_or_default()
}

fn find(names: &[&str], dirs: &[PathBuf]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        dirs.iter().map(|d| d.join(name)).find(|p| {
            fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// `root/<version>/bin` for each numeric version under `root`, newest first
/// (Debian's /usr/lib/postgresql/15/bin).
pub(crate) fn versioned_dirs(root: &Path) -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let v = e.file_name().to_str()?.parse::<u32>().ok()?;
                    Some((v, e.path().join("bin")))
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, p)| p).collect()
}
