//! The directory a session works in, and the rule that keeps tools inside it.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// A canonical workspace root. Every path a tool touches goes through
/// [`Workspace::resolve`], which refuses anything that ends up outside the
/// root: `..` segments, absolute paths elsewhere, and symlinks pointing out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens a workspace; the directory must exist.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(root.as_ref())?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("workspace {} is not a directory", root.display()),
            ));
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (relative to the root, or absolute inside it) to a real
    /// path inside the workspace. The deepest existing ancestor is
    /// canonicalized so symlinks are followed before the check, which also
    /// covers paths that do not exist yet (for tools that create files).
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let outside = || ToolError::OutsideWorkspace {
            path: path.to_string(),
        };
        let requested = Path::new(path);
        let joined = if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            self.root.join(requested)
        };
        let normalized = normalize(&joined).ok_or_else(outside)?;

        // Split into the longest existing prefix and the not-yet-existing rest.
        let mut existing = normalized.as_path();
        let mut rest = Vec::new();
        while !existing.exists() && existing.symlink_metadata().is_err() {
            rest.push(existing.file_name().ok_or_else(outside)?.to_owned());
            existing = existing.parent().ok_or_else(outside)?;
        }
        let mut real = std::fs::canonicalize(existing).map_err(|_| outside())?;
        for part in rest.iter().rev() {
            real.push(part);
        }
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(outside())
        }
    }

    /// The path as shown to the model: relative to the root, `.` for the root.
    pub fn display(&self, real: &Path) -> String {
        match real.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => real.display().to_string(),
        }
    }
}

/// Lexically removes `.` and `..`; `None` if `..` climbs above the filesystem root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn main() {}").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn resolves_relative_and_absolute_paths_inside() {
        let (_dir, ws) = setup();
        let real = ws.resolve("src/lib.rs").unwrap();
        assert!(real.ends_with("src/lib.rs"));
        let abs = ws.root().join("src/lib.rs");
        assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap(), real);
        assert_eq!(ws.resolve("src/../src/./lib.rs").unwrap(), real);
        assert!(ws
            .resolve("src/new_file.rs")
            .unwrap()
            .ends_with("src/new_file.rs"));
        assert_eq!(ws.display(&ws.resolve(".").unwrap()), ".");
    }

    #[test]
    fn refuses_dotdot_absolute_and_symlink_escapes() {
        let (_dir, ws) = setup();
        for path in ["..", "../etc/passwd", "src/../../x", "/etc/passwd", "/"] {
            assert_eq!(
                ws.resolve(path),
                Err(ToolError::OutsideWorkspace { path: path.into() }),
                "{path}"
            );
        }
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.root().join("link")).unwrap();
        assert!(ws.resolve("link/secret").is_err());
        assert!(ws.resolve("link/not-yet").is_err());
        std::os::unix::fs::symlink("/etc/passwd", ws.root().join("pw")).unwrap();
        assert!(ws.resolve("pw").is_err());
    }
}
