//! The scenario's directories: a fresh temporary workspace holding its
//! `files`, the optional `${store}` directory, both removed when the
//! scenario ends, and the `readFile` checks on the workspace.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;

use crate::host::Host;
use crate::pattern::{self, brief};
use crate::scenario::Scenario;
use crate::step::{FileCheck, ReadFile};
use crate::vars::Vars;

pub struct Workspace {
    /// The workspace's canonical absolute path (`${workspace}`).
    pub root: PathBuf,
    _dir: TempDir,
    _store: Option<TempDir>,
}

impl Workspace {
    /// Creates the directories and the scenario's files; sets `workspace`
    /// (and `store`) in `vars`.
    pub fn create(scenario: &Scenario, vars: &mut Vars) -> Result<Workspace, String> {
        let (dir, root) = temp_dir("the workspace")?;
        for (path, contents) in &scenario.files {
            let target = root.join(path);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|e| format!("{path}: {e}"))?;
            }
            fs::write(&target, contents).map_err(|e| format!("{path}: {e}"))?;
        }
        vars.set("workspace", path_value(&root));
        let store = match scenario.store_dir {
            false => None,
            true => {
                let (store, path) = temp_dir("the store")?;
                vars.set("store", path_value(&path));
                Some(store)
            }
        };
        Ok(Workspace {
            root,
            _dir: dir,
            _store: store,
        })
    }
}

fn temp_dir(what: &str) -> Result<(TempDir, PathBuf), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("creating {what}: {e}"))?;
    let path = dir
        .path()
        .canonicalize()
        .map_err(|e| format!("creating {what}: {e}"))?;
    Ok((dir, path))
}

fn path_value(path: &Path) -> Value {
    Value::String(path.to_string_lossy().into_owned())
}

/// Checks a workspace file now (tool side effects are done by the time the
/// run that caused them has answered); `matches` may capture.
pub fn read_file(host: &mut Host, root: &Path, spec: &ReadFile) -> Result<(), String> {
    let path = root.join(&spec.path);
    let contents = match fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("readFile {}: {e}", spec.path)),
    };
    let text = |bytes: Vec<u8>| {
        String::from_utf8(bytes).map_err(|e| format!("readFile {}: not UTF-8: {e}", spec.path))
    };
    match (&spec.check, contents) {
        (FileCheck::Absent, None) => Ok(()),
        (FileCheck::Absent, Some(bytes)) => Err(format!(
            "readFile {}: expected no such file, it holds {}",
            spec.path,
            brief(
                &Value::String(String::from_utf8_lossy(&bytes).into_owned()),
                300
            )
        )),
        (_, None) => Err(format!("readFile {}: no such file", spec.path)),
        (FileCheck::Equals(want), Some(bytes)) => {
            let want = host.vars.substitute(want)?;
            let got = Value::String(text(bytes)?);
            if got == want {
                Ok(())
            } else {
                Err(format!(
                    "readFile {}: contents differ\n  expected: {}\n  actual:   {}",
                    spec.path,
                    brief(&want, 300),
                    brief(&got, 300)
                ))
            }
        }
        (FileCheck::Matches(pattern), Some(bytes)) => {
            let pattern = host.vars.substitute(pattern)?;
            let captures = pattern::matches(&pattern, &Value::String(text(bytes)?))
                .map_err(|m| format!("readFile {}: {m}", spec.path))?;
            for (name, value) in captures {
                host.vars.set(name, value);
            }
            Ok(())
        }
    }
}
