//! Reports kept in memory bounded by a constant, whatever the input: every report is counted,
//! only the first few are kept to be shown.
//!
//! A log of a hundred megabytes can hold fifteen million damaged chunks, and a write-ahead log
//! millions of records that do not decode: a command keeps the first `--max-errors` of them
//! (by default [`DEFAULT_SHOWN`]) and counts the rest, so that what it holds does not grow with
//! the input.

use logfmt_std::{Damage, DamageKind};

/// How many reports of each kind a command shows when `--max-errors` is not given.
pub(crate) const DEFAULT_SHOWN: usize = 1000;

/// The first reports of a kind, in order, and a count of them all.
#[derive(Debug, Clone)]
pub(crate) struct Reports<T> {
    kept: Vec<T>,
    keep: usize,
    count: u64,
}

impl<T> Reports<T> {
    /// Keeps the first `keep` reports (counts them all).
    pub(crate) fn new(keep: usize) -> Self {
        Self {
            kept: Vec::new(),
            keep,
            count: 0,
        }
    }

    /// Counts `report`, and keeps it if fewer than the limit are kept.
    pub(crate) fn push(&mut self, report: T) {
        self.count += 1;
        if self.kept.len() < self.keep {
            self.kept.push(report);
        }
    }

    /// The reports kept: the first ones, in order.
    pub(crate) fn kept(&self) -> &[T] {
        &self.kept
    }

    /// How many reports there were, kept or not.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// How many reports were counted but not kept.
    pub(crate) fn left_out(&self) -> u64 {
        self.count - self.kept.len() as u64
    }

    /// Whether there was no report.
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds the reports of `later` (which came after these), up to the limit.
    pub(crate) fn append(&mut self, later: Self) {
        let room = self.keep.saturating_sub(self.kept.len());
        self.kept.extend(later.kept.into_iter().take(room));
        self.count += later.count;
    }
}

impl<T> Default for Reports<T> {
    /// Keeps [`DEFAULT_SHOWN`].
    fn default() -> Self {
        Self::new(DEFAULT_SHOWN)
    }
}

/// Damage reports: the first ones, and the count and bytes of them all.
#[derive(Debug, Clone)]
pub(crate) struct DamageReports {
    reports: Reports<Damage>,
    /// The sum of the reports' bytes.
    bytes: u64,
    /// How many reports are not corruptions LevelDB reports (torn tails, skipped bytes...).
    others: u64,
    /// The last report (the only one a torn tail can be: [`withdraw_tail`](Self::withdraw_tail)).
    last: Option<Damage>,
}

impl DamageReports {
    /// Keeps the first `keep` reports.
    pub(crate) fn new(keep: usize) -> Self {
        Self {
            reports: Reports::new(keep),
            bytes: 0,
            others: 0,
            last: None,
        }
    }

    /// Counts `damage`, kept if fewer than the limit are kept.
    pub(crate) fn push(&mut self, damage: Damage) {
        self.bytes = self.bytes.saturating_add(damage.bytes);
        if !matches!(damage.kind, DamageKind::Corruption(_)) {
            self.others += 1;
        }
        self.last = Some(damage);
        self.reports.push(damage);
    }

    /// How many reports are kept at most.
    pub(crate) fn keep(&self) -> usize {
        self.reports.keep
    }

    /// The reports kept: the first ones, in order.
    pub(crate) fn kept(&self) -> &[Damage] {
        self.reports.kept()
    }

    /// How many reports there were.
    pub(crate) fn count(&self) -> u64 {
        self.reports.count()
    }

    /// How many reports were counted but not kept.
    pub(crate) fn left_out(&self) -> u64 {
        self.reports.left_out()
    }

    /// The sum of every report's bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether there was no report.
    pub(crate) fn is_empty(&self) -> bool {
        self.reports.is_empty()
    }

    /// Whether every report is a corruption (as LevelDB reports it), not another damage.
    pub(crate) fn only_corruption(&self) -> bool {
        self.others == 0
    }

    /// Takes back the report of a torn tail at `offset` (zeros to the end of the file, found
    /// not to be damage), if it is the last report.
    pub(crate) fn withdraw_tail(&mut self, offset: u64) {
        let Some(last) = self.last else { return };
        if last.kind != DamageKind::TornTail || last.offset != offset {
            return;
        }
        self.last = None;
        self.bytes -= last.bytes;
        self.reports.count -= 1;
        if self.reports.kept.len() as u64 > self.reports.count {
            self.reports.kept.pop();
        }
        self.others -= 1;
    }
}

impl Default for DamageReports {
    /// Keeps [`DEFAULT_SHOWN`].
    fn default() -> Self {
        Self::new(DEFAULT_SHOWN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_std::advanced::CorruptionKind;

    fn corruption(offset: u64) -> Damage {
        Damage::new(
            offset,
            10,
            DamageKind::Corruption(CorruptionKind::ChecksumMismatch),
        )
    }

    #[test]
    fn keeps_the_first_and_counts_them_all() {
        let mut reports = DamageReports::new(2);
        for offset in 0..1000 {
            reports.push(corruption(offset));
        }
        assert_eq!(reports.kept(), [corruption(0), corruption(1)]);
        assert_eq!(reports.count(), 1000);
        assert_eq!(reports.left_out(), 998);
        assert_eq!(reports.bytes(), 10_000);
        assert!(reports.only_corruption());
    }

    #[test]
    fn appending_keeps_the_order_and_the_limit() {
        let mut first = Reports::new(3);
        first.push(1);
        first.push(2);
        let mut later = Reports::new(3);
        for n in 3..10 {
            later.push(n);
        }
        first.append(later);
        assert_eq!(first.kept(), [1, 2, 3]);
        assert_eq!(first.count(), 9);
        assert_eq!(first.left_out(), 6);
    }

    #[test]
    fn a_withdrawn_tail_is_not_counted() {
        let torn = Damage::new(50, 7, DamageKind::TornTail);
        let mut reports = DamageReports::new(1);
        reports.push(corruption(0));
        reports.push(torn);
        assert!(!reports.only_corruption());
        reports.withdraw_tail(49);
        assert_eq!(reports.count(), 2);
        reports.withdraw_tail(50);
        assert_eq!(reports.count(), 1);
        assert_eq!(reports.bytes(), 10);
        assert_eq!(reports.kept(), [corruption(0)]);
        assert!(reports.only_corruption());
        let mut only_tail = DamageReports::new(5);
        only_tail.push(torn);
        only_tail.withdraw_tail(50);
        assert!(only_tail.is_empty());
        assert!(only_tail.kept().is_empty());
    }
}
