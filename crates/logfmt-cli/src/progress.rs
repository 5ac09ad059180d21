//! A progress bar on standard error, for long operations on large files, shown only when
//! standard error is a terminal.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
pub(crate) struct Progress(Option<Bar>);

/// A whole bar, or a worker's part of one.
#[derive(Debug)]
enum Bar {
    /// The bar shows what `set` gives it; its parts add to `shared`.
    Whole {
        bar: ProgressBar,
        /// The bytes read by all its parts.
        shared: Arc<AtomicU64>,
    },
    /// A worker reading a part of the file: what it reads is added to the bytes all the
    /// workers share, which the bar shows.
    Part {
        bar: ProgressBar,
        /// The bytes read by all the workers.
        shared: Arc<AtomicU64>,
        /// The furthest offset this worker reported (its part's start, at first).
        last: AtomicU64,
    },
}

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
        Self(Some(Bar::Whole {
            bar,
            shared: Arc::new(AtomicU64::new(0)),
        }))
    }

    /// The bar's share for a worker reading from file offset `start`: the offsets it reports
    /// (with [`set`](Self::set)) count the bytes it has read since `start`, added to those
    /// of every other part of the same bar, so that the bar shows all that is read. Dropping
    /// a part leaves the bar.
    pub(crate) fn part(&self, start: u64) -> Self {
        let (bar, shared) = match &self.0 {
            Some(Bar::Whole { bar, shared } | Bar::Part { bar, shared, .. }) => {
                (bar.clone(), Arc::clone(shared))
            }
            None => return Self(None),
        };
        Self(Some(Bar::Part {
            bar,
            shared,
            last: AtomicU64::new(start),
        }))
    }

    /// No bar.
    pub(crate) fn none() -> Self {
        Self(None)
    }

    /// Bytes done so far (for a part: the file offset it has read up to).
    pub(crate) fn set(&self, done: u64) {
        match &self.0 {
            Some(Bar::Whole { bar, .. }) => bar.set_position(done),
            Some(Bar::Part { bar, shared, last }) => {
                let read = done.saturating_sub(last.fetch_max(done, Ordering::Relaxed));
                let total = shared.fetch_add(read, Ordering::Relaxed) + read;
                bar.set_position(total);
            }
            None => {}
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(Bar::Whole { bar, .. }) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bar drawn nowhere, as `bytes` makes on a terminal.
    fn hidden(total: u64) -> Progress {
        Progress(Some(Bar::Whole {
            bar: ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden()),
            shared: Arc::new(AtomicU64::new(0)),
        }))
    }

    fn position(progress: &Progress) -> u64 {
        match &progress.0 {
            Some(Bar::Whole { bar, .. } | Bar::Part { bar, .. }) => bar.position(),
            None => 0,
        }
    }

    #[test]
    fn parts_add_the_bytes_each_has_read_since_its_start() {
        let whole = hidden(300);
        let first = whole.part(0);
        let second = whole.part(100);
        first.set(40);
        second.set(130);
        assert_eq!(position(&whole), 70);
        // An offset reported twice, or one behind, adds nothing.
        second.set(130);
        second.set(120);
        first.set(100);
        second.set(200);
        assert_eq!(position(&whole), 200);
        drop((first, second));
        assert_eq!(position(&whole), 200);
    }

    #[test]
    fn no_bar_has_no_parts() {
        let none = Progress::none();
        let part = none.part(10);
        part.set(20);
        assert!(part.0.is_none());
    }
}
