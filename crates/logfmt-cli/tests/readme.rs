//! The shell sessions of the project's README and of this crate's README, run against the
//! built `logfmt` (trycmd): every `console` block's commands, exit statuses and outputs.
//!
//! Each README is run in a scratch directory that holds a copy of it and of the files its
//! sessions read (`tests/data/`, laid out as in the repository, so the commands are the ones a
//! user types at the repository's root); what the commands write stays there. After a change
//! to the command's output, `TRYCMD=overwrite cargo test -p logfmt-cli --test readme` writes
//! the new outputs into the READMEs.
//!
//! `logfmt-sql` sessions are checked by the DataFusion crate (`tests/readme.rs` there), which
//! builds it; here they are skipped. From a published package, which holds neither the
//! project's README nor its data, there is nothing to run.

use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `crates/logfmt-cli`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Copies `from` into `to`, directories recursively.
fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        fs::create_dir_all(to).expect("creates a directory");
        for entry in fs::read_dir(from).expect("lists a directory") {
            let entry = entry.expect("lists a directory");
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        fs::copy(from, to).expect("copies a file");
    }
}

/// Runs the sessions of `readme` (a path from the root) as trycmd does, in a scratch copy;
/// with `TRYCMD=overwrite`, the outputs it writes go back into the README.
fn check(readme: &str) {
    let original = root().join(readme);
    if !original.exists() || !root().join("tests/data").exists() {
        eprintln!("{readme} or tests/data is not here (a published package): nothing to check");
        return;
    }
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let case = scratch.path().join("README.md");
    fs::copy(&original, &case).expect("copies the README");
    // `README.in/`: the working directory; `README.out/` (empty): a sandbox, compared to nothing.
    copy(
        &root().join("tests/data"),
        &scratch.path().join("README.in/tests/data"),
    );
    fs::create_dir_all(scratch.path().join("README.out")).expect("creates README.out");
    fs::write(scratch.path().join("README.out/.keep"), "").expect("writes .keep");
    trycmd::TestCases::new()
        .register_bin("logfmt", trycmd::cargo::cargo_bin!("logfmt"))
        .register_bin("logfmt-sql", trycmd::schema::Bin::Ignore)
        .case(&case)
        .run();
    if std::env::var("TRYCMD").is_ok_and(|mode| mode == "overwrite") {
        fs::copy(&case, &original).expect("writes the README back");
    }
}

#[test]
fn project_readme() {
    check("README.md");
}

#[test]
fn cli_readme() {
    check("crates/logfmt-cli/README.md");
}
