//! Shared helpers for logfmt's workspace-level tests.

use std::path::PathBuf;

/// Directory of the committed test data.
#[must_use]
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}
