//! A tiny net for tests that run the binary: one block of 8 channels.

use std::path::Path;

/// Writes a one-block, 8-channel minishogi net to `path` with
/// `pantheon net init`, its weights drawn from `seed`.
pub fn init_tiny_net(path: &Path, seed: u64) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pantheon"))
        .args(["net", "init", "--variant", "minishogi", "--blocks", "1", "--channels", "8", "--seed"])
        .arg(seed.to_string())
        .arg("--out")
        .arg(path)
        .output()
        .expect("binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
