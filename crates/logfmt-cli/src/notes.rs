//! What the commands say on standard error besides their output, by how much the user asked
//! to hear: warnings (damage, records not printed or copied) always; notes and hints (what
//! was left out on purpose, a flag that would read the file better) unless `--quiet`; details
//! (each file's size, its ring if it is a ring image, the time spent on it) only with
//! `--verbose`.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

use logfmt_std::Damage;

/// How much is said on standard error (`--quiet`, `--verbose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    /// `--quiet`: warnings and errors only; no notes, hints or progress bar.
    Quiet = 0,
    /// Warnings, errors, notes and hints (and the bar on a terminal).
    Normal = 1,
    /// `--verbose`: all that, and each file's details.
    Verbose = 2,
}

/// The verbosity of this run, as a [`Verbosity`] discriminant.
static LEVEL: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);

/// Sets the verbosity of this run (from `--quiet` and `--verbose`).
pub(crate) fn set(verbosity: Verbosity) {
    LEVEL.store(verbosity as u8, Ordering::Relaxed);
}

/// The verbosity of this run.
pub(crate) fn verbosity() -> Verbosity {
    match LEVEL.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// Whether `--verbose` was given.
pub(crate) fn verbose() -> bool {
    verbosity() == Verbosity::Verbose
}

/// Prints a damage warning to standard error: one line with the offset, the bytes concerned
/// and the reason (LevelDB's, for what LevelDB reports, with its gloss). Said even with
/// `--quiet`: it is data lost.
pub(crate) fn note(path: &Path, damage: &Damage) {
    say(
        path,
        &format!("{damage}{}", crate::gloss::Suffix(&damage.kind)),
    );
}

/// Prints the warning `logfmt: FILE: message` on standard error, whatever the verbosity.
pub(crate) fn say(path: &Path, message: &str) {
    let mut stderr = std::io::stderr().lock();
    // Nothing useful can be done if standard error is gone.
    let _ = writeln!(
        stderr,
        "logfmt: {}: {message}",
        logfmt_std::advanced::EscapedPath::new(path)
    );
}

/// Prints the note or hint `logfmt: FILE: message` on standard error, unless `--quiet`.
pub(crate) fn hint(path: &Path, message: &str) {
    if verbosity() > Verbosity::Quiet {
        say(path, message);
    }
}

/// Prints the detail `logfmt: FILE: message` on standard error, only with `--verbose`.
pub(crate) fn detail(path: &Path, message: &str) {
    if verbose() {
        say(path, message);
    }
}

/// `n word` or `n words`.
pub(crate) fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
