//! The subcommands.

pub(crate) mod cat;
pub(crate) mod verify;
pub(crate) mod write;

use logfmt_core::Corruption;
use std::io::Write;
use std::path::Path;

/// Prints a corruption note to standard error: one line with the offset, the bytes dropped and
/// LevelDB's reason.
fn note(path: &Path, corruption: &Corruption) {
    let mut stderr = std::io::stderr().lock();
    // Nothing useful can be done if standard error is gone.
    let _ = writeln!(stderr, "logfmt: {}: {corruption}", path.display());
}
