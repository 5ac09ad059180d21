//! Whether the output is coloured: `--color auto|always|never`, and `NO_COLOR`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

/// When to colour the output (`--color`), as ripgrep, fd and cargo take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colours on a terminal, unless `NO_COLOR` is set (to anything but the empty string).
    #[default]
    Auto = 0,
    /// Colours wherever the output goes, `NO_COLOR` or not: the flag is the user's word.
    Always = 1,
    /// Never any colour.
    Never = 2,
}

/// The choice of this run, as a [`ColorChoice`] discriminant.
static CHOICE: AtomicU8 = AtomicU8::new(ColorChoice::Auto as u8);

/// Sets the choice of this run (from `--color`).
pub(crate) fn set(choice: ColorChoice) {
    CHOICE.store(choice as u8, Ordering::Relaxed);
}

/// Whether what is printed on standard output is coloured.
pub(crate) fn stdout() -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}
