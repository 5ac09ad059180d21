//! `cargo xtask datafusion`: the `logfmt-datafusion` crate (logs as DataFusion tables, and
//! `logfmt-sql`), which is not a member of the workspace: DataFusion is heavy (a first build
//! takes 10 minutes or more on two cores) and needs Rust 1.94, above the workspace's MSRV. The
//! crate has its own `Cargo.lock` and target directory (`crates/logfmt-datafusion/target`).
//!
//! Runs, in the crate's directory: `cargo fmt --check`, then `cargo test` (unit, integration,
//! CLI and doc tests) with every target compiled through clippy with warnings denied (one build
//! that lints and tests), all `--locked`, with at most two jobs.

use crate::cmd::{Cmd, Error, Result, banner};

/// The crate's directory, from the project root.
pub(crate) const DIR: &str = "crates/logfmt-datafusion";

/// `cargo xtask datafusion`.
pub(crate) fn run(args: &[String]) -> Result {
    if let Some(bad) = args.first() {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `datafusion`"
        )));
    }
    banner("datafusion: fmt --check");
    Cmd::cargo().dir(DIR).args(["fmt", "--check"]).run()?;
    // One build lints and tests: clippy's check of DataFusion would compile every dependency a
    // second time (`Cmd::linted`): a check of each dependency, then a build of each.
    banner("datafusion: clippy -D warnings, in the build of every target");
    Cmd::cargo()
        .dir(DIR)
        .linted()
        .args(["test", "--locked", "-j", "2", "--all-targets", "--no-run"])
        .run()?;
    banner("datafusion: test");
    Cmd::cargo()
        .dir(DIR)
        .linted()
        .args(["test", "--locked", "-j", "2"])
        .run()
}
