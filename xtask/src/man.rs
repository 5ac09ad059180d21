//! `cargo xtask man`: the man pages and shell completions of `logfmt`, generated from its
//! clap definitions (`clap_mangen`, `clap_complete`, through the hidden `logfmt generate`):
//! `target/man/logfmt.1`, `target/man/logfmt-<command>.1`, and
//! `target/completions/logfmt.{bash,zsh,fish}`.

use std::fs;

use crate::cmd::{Cmd, Error, Result, banner, project_root};

/// The shells completions are written for, and the files' extensions.
const SHELLS: &[(&str, &str)] = &[("bash", "bash"), ("zsh", "zsh"), ("fish", "fish")];

/// `cargo xtask man`.
pub(crate) fn run(args: &[String]) -> Result {
    if let Some(bad) = args.first() {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `man`"
        )));
    }
    let target = project_root().join("target");
    let man = target.join("man");
    let completions = target.join("completions");
    fs::create_dir_all(&completions)
        .map_err(|e| Error::Failed(format!("{}: {e}", completions.display())))?;
    banner("man: man pages");
    let logfmt = || {
        Cmd::cargo().args([
            "run",
            "--quiet",
            "-p",
            "logfmt-cli",
            "--bin",
            "logfmt",
            "--",
        ])
    };
    logfmt()
        .args(["generate", "man"])
        .args([man.to_string_lossy().as_ref()])
        .run()?;
    banner("man: shell completions");
    for (shell, extension) in SHELLS {
        let script = logfmt().args(["generate", "completions", shell]).read()?;
        let path = completions.join(format!("logfmt.{extension}"));
        fs::write(&path, script).map_err(|e| Error::Failed(format!("{}: {e}", path.display())))?;
    }
    println!(
        "man pages in {}, completions in {}",
        man.display(),
        completions.display()
    );
    Ok(())
}
