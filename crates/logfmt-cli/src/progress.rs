//! A progress bar on standard error, for long operations on large files, shown only when
//! standard error is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files smaller than this are read too fast to need a bar.
const LARGE: u64 = 64 << 20;

/// No bar at all (`--quiet`).
static SILENT: AtomicBool = AtomicBool::new(false);

/// No bar from now on, whatever the file and the terminal (`--quiet`).
pub(crate) fn silence() {
    SILENT.store(true, Ordering::Relaxed);
}

/// A byte-count progress bar, or nothing.
#[derive(Debug)]
pub(crate) struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar for `what` over `total` bytes, if standard error is a terminal and `total` is
    /// large; otherwise a no-op.
    pub(crate) fn bytes(what: &str, total: u64) -> Self {
        if total < LARGE || SILENT.load(Ordering::Relaxed) || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        )
        .map(|style| style.progress_chars("=> "));
        if let Ok(style) = style {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        Self(Some(bar))
    }

    /// No bar.
    pub(crate) fn none() -> Self {
        Self(None)
    }

    /// Bytes done so far.
    pub(crate) fn set(&self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(done);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
