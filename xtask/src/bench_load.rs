//! The machine's load around the rounds of `cargo xtask bench` (the main table, `--baseline`,
//! `--compare-flags`): each round's 1-minute load average, read before and after it, against a
//! limit of 1 per core. A round that ran above it shared the CPU with other work, and its
//! figures say more about that work than about the code measured: the table leaves it out. If
//! every round ran above the limit, the bench refuses to print a table, unless
//! `--allow-load` asks for one, which is then marked as not a measurement.

use std::fmt::Write as _;

use crate::cmd::{Error, Result};

/// The flag that prints the table of a run whose every round was loaded (marked).
pub(crate) const ALLOW_LOAD: &str = "--allow-load";

/// The 1-minute load average, from `/proc/loadavg`; `None` where there is none.
pub(crate) fn now() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// The load average a round may run at: 1 per core the process may use.
pub(crate) fn limit() -> f64 {
    std::thread::available_parallelism().map_or(1, usize::from) as f64
}

/// A round's load average, before and after it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RoundLoad {
    before: Option<f64>,
    after: Option<f64>,
}

impl RoundLoad {
    /// Reads the load before a round: call [`end`](Self::end) after it.
    pub(crate) fn start() -> Self {
        Self {
            before: now(),
            after: None,
        }
    }

    /// Reads the load after the round.
    pub(crate) fn end(mut self) -> Self {
        self.after = now();
        self
    }

    /// The higher of the two readings; `None` if the machine gives none.
    fn peak(self) -> Option<f64> {
        match (self.before, self.after) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the round ran above `limit` (unknown: not).
    fn loaded(self, limit: f64) -> bool {
        self.peak().is_some_and(|load| load > limit)
    }

    /// `before/after`, as printed after each round.
    pub(crate) fn text(self) -> String {
        let show = |l: Option<f64>| l.map_or_else(|| "?".to_owned(), |l| format!("{l:.2}"));
        format!("{}/{}", show(self.before), show(self.after))
    }
}

/// The rounds a table is made of, and what to print above it about the load.
#[derive(Debug)]
pub(crate) struct Kept {
    /// The outputs of the rounds kept, in order.
    pub(crate) rounds: Vec<String>,
    /// Lines about the load: every round's, the limit, which rounds were left out.
    pub(crate) note: String,
}

/// Keeps the rounds of `outputs` that ran at or under the load limit (`loads[i]` is round
/// `i`'s). With none, an error, or with `allow_load` every round, under a mark that says the
/// figures are not a measurement.
///
/// # Errors
/// Every round ran above the limit, and `allow_load` is off.
pub(crate) fn keep(outputs: Vec<String>, loads: &[RoundLoad], allow_load: bool) -> Result<Kept> {
    let limit = limit();
    let mut note = format!(
        "load average (1 min) before/after each round: {}; limit {limit:.2} (1 a core)",
        loads
            .iter()
            .map(|l| l.text())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let loaded: Vec<usize> = (0..outputs.len())
        .filter(|&i| loads.get(i).is_some_and(|l| l.loaded(limit)))
        .collect();
    if loaded.is_empty() {
        return Ok(Kept {
            rounds: outputs,
            note,
        });
    }
    if loaded.len() < outputs.len() {
        let _ = write!(
            note,
            "\nrounds {} ran above the limit: left out ({} of {} rounds kept)",
            loaded
                .iter()
                .map(|i| (i + 1).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            outputs.len() - loaded.len(),
            outputs.len()
        );
        let rounds = outputs
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !loaded.contains(i))
            .map(|(_, o)| o)
            .collect();
        return Ok(Kept { rounds, note });
    }
    if !allow_load {
        return Err(Error::Failed(format!(
            "{note}\nevery round ran above the limit: other work on the machine would weigh \
             on every figure, so none is reported. Run again on a quieter machine, or with \
             {ALLOW_LOAD} to print them marked as not a measurement"
        )));
    }
    let _ = write!(
        note,
        "\nLOADED: every round ran above the limit ({ALLOW_LOAD}): the figures below are NOT a \
         measurement; only ratios within a round mean anything, and little"
    );
    Ok(Kept {
        rounds: outputs,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(before: f64, after: f64) -> RoundLoad {
        RoundLoad {
            before: Some(before),
            after: Some(after),
        }
    }

    fn rounds(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("round {i}")).collect()
    }

    #[test]
    fn quiet_rounds_are_all_kept() {
        let kept = keep(rounds(2), &[load(0.1, 0.2), load(0.3, 0.4)], false).unwrap();
        assert_eq!(kept.rounds, rounds(2));
        assert!(kept.note.contains("0.10/0.20, 0.30/0.40"), "{}", kept.note);
        assert!(!kept.note.contains("left out"));
    }

    #[test]
    fn a_loaded_round_is_left_out() {
        let high = limit() + 0.5;
        let kept = keep(
            rounds(3),
            &[load(0.1, 0.2), load(0.3, high), load(0.1, 0.1)],
            false,
        )
        .unwrap();
        assert_eq!(kept.rounds, ["round 0", "round 2"]);
        assert!(kept.note.contains("rounds 2 ran above"), "{}", kept.note);
    }

    #[test]
    fn every_round_loaded_is_refused_or_marked() {
        let high = limit() + 0.5;
        let loads = [load(high, 0.1), load(0.1, high)];
        let refused = keep(rounds(2), &loads, false).unwrap_err();
        assert!(refused.to_string().contains(ALLOW_LOAD), "{refused}");
        let marked = keep(rounds(2), &loads, true).unwrap();
        assert_eq!(marked.rounds, rounds(2));
        assert!(marked.note.contains("NOT a measurement"), "{}", marked.note);
    }

    #[test]
    fn an_unknown_load_is_not_taken_for_a_high_one() {
        let unknown = RoundLoad {
            before: None,
            after: None,
        };
        let kept = keep(rounds(1), &[unknown], false).unwrap();
        assert_eq!(kept.rounds, rounds(1));
        assert!(kept.note.contains("?/?"));
    }
}
