//! Files written whole or not at all: the bytes go to a temporary file in
//! the same directory (hidden, named by the process), are flushed to disk,
//! and the file is renamed over the target. A reader, or a run restarted
//! after a kill, sees the old file or the new one, never part of one;
//! temporary files start with a dot and end in `.tmpPID`, which readers of
//! a directory skip.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Reads a text file such a run writes (its state, its log): `None` when
/// there is none yet; any other failure (no permission, not text, a
/// directory) is an error, so that a run never takes an unreadable state
/// for a fresh start and overwrites it.
pub fn read_if_present(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = std::env::temp_dir().join(format!("pantheon-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state");
        super::write(&path, b"one").unwrap();
        super::write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // A directory that does not exist: an error, nothing written.
        assert!(super::write(&dir.join("missing/state"), b"x").is_err());
        // Reading back: absent is None, a directory is an error.
        assert_eq!(super::read_if_present(&path).unwrap().as_deref(), Some("two"));
        assert_eq!(super::read_if_present(&dir.join("none")).unwrap(), None);
        assert!(super::read_if_present(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
