//! `logfmt-bench flash`'s reboot lines: what a reboot costs a flash log that keeps logging for
//! the life of a device, per configuration and erase unit, on a simulated part with per-word
//! ECC that refuses a second program of a word — with clean reboots, and in a brown-out loop
//! where one boot in four loses power at its very first program, leaving that word reading
//! erased yet unprogrammable (the cut no read can see). One line per case:
//!
//! ```text
//! FLASH-REBOOT impl=I config=C write_size=W erase=E scenario=S boots=N unused_per_reboot=F erased_per_reboot=F abandoned=N lost=N stuck=N
//! ```
//!
//! - `impl=logfmt-ring`: the small-RAM writer keeping a 1 MiB region as a ring;
//!   `config=default` is `FlashConfig::new(..).ring()`, `config=fresh-unit` the same with
//!   `fresh_unit_on_reopen`. `impl=sequential-storage`: 8.0.2's queue over the same region
//!   and pages, reopened at each boot (clean reboots only: its mock flash cannot leave a word
//!   unprogrammable yet reading erased).
//! - each boot that is not cut logs 10 samples of 30 bytes, each flushed (pushed);
//! - `unused_per_reboot`: flash bytes the run with reboots took beyond a run that logged the
//!   same samples in one session, per reboot (what each session took: from where the session
//!   before ended to where it ended, around the ring);
//! - `erased_per_reboot`: bytes erased beyond that run's, per reboot;
//! - `abandoned`: erase units the writer left after a refused program; `lost`: records added
//!   and not yet flushed that refusals took (each reported by the flush); `stuck`: boots that
//!   were not cut and could not log (a writer that no longer appends).

use std::fmt;

use embassy_futures::block_on;
use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::flash::{
    FlashConfig, FlashError, MockError, MockFlash, PowerCut, SecondProgram, WordWriter,
};
use sequential_storage::cache::Cache;
use sequential_storage::mock_flash::{MockFlashBase, WriteCountCheck};
use sequential_storage::queue::{QueueConfig, QueueStorage};

/// The region: 1 MiB, eight 128 KiB sectors.
const REGION: usize = 1 << 20;
/// Boots per case.
const BOOTS: usize = 100;
/// Samples a boot logs.
const PER_BOOT: usize = 10;
/// Sample size.
const SAMPLE: usize = 30;

/// One `FLASH-REBOOT` line.
#[derive(Debug, Clone, PartialEq)]
pub struct RebootCost {
    /// `logfmt-ring` or `sequential-storage`.
    pub implementation: &'static str,
    /// `default`, `fresh-unit` (logfmt) or `-`.
    pub config: &'static str,
    /// Flash word size.
    pub write_size: usize,
    /// Erase unit.
    pub erase: usize,
    /// `clean` or `brownout` (one boot in four cut at its first program).
    pub scenario: &'static str,
    /// Flash bytes taken per reboot beyond a run without reboots.
    pub unused_per_reboot: f64,
    /// Bytes erased per reboot beyond a run without reboots.
    pub erased_per_reboot: f64,
    /// Erase units left after refused programs.
    pub abandoned: u64,
    /// Records a refusal took before their flush.
    pub lost: u64,
    /// Boots not cut that could not log.
    pub stuck: usize,
}

impl fmt::Display for RebootCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FLASH-REBOOT impl={} config={} write_size={} erase={} scenario={} boots={BOOTS} unused_per_reboot={:.0} erased_per_reboot={:.0} abandoned={} lost={} stuck={}",
            self.implementation,
            self.config,
            self.write_size,
            self.erase,
            self.scenario,
            self.unused_per_reboot,
            self.erased_per_reboot,
            self.abandoned,
            self.lost,
            self.stuck
        )
    }
}

/// Every case: 2 KiB pages and 4 KiB sectors with 8-byte words, 128 KiB sectors with
/// 32-byte words.
///
/// # Errors
/// A message if an implementation fails otherwise than the cases allow.
pub fn reboot_costs(emit: &mut dyn FnMut(&RebootCost)) -> Result<(), String> {
    cases::<8, 2048, { 2048 / 8 }, { REGION / 2048 }>(emit)?;
    cases::<8, 4096, { 4096 / 8 }, { REGION / 4096 }>(emit)?;
    cases::<32, 131_072, { 131_072 / 32 }, { REGION / 131_072 }>(emit)
}

fn cases<const W: usize, const E: usize, const PAGE_WORDS: usize, const PAGES: usize>(
    emit: &mut dyn FnMut(&RebootCost),
) -> Result<(), String> {
    let ring = FlashConfig::new(0, REGION as u32).ring();
    for (config, name) in [
        (ring, "default"),
        (ring.fresh_unit_on_reopen(), "fresh-unit"),
    ] {
        for (scenario, brownout) in [("clean", false), ("brownout", true)] {
            let run = logfmt_run::<W, E>(config, BOOTS, brownout)?;
            // The same samples in one session.
            let (taken, erased) = logfmt_one::<W, E>(config, run.logged)?;
            let reboots = (BOOTS - 1) as f64;
            emit(&RebootCost {
                implementation: "logfmt-ring",
                config: name,
                write_size: W,
                erase: E,
                scenario,
                unused_per_reboot: run.totals.0.saturating_sub(taken) as f64 / reboots,
                erased_per_reboot: run.totals.1.saturating_sub(erased) as f64 / reboots,
                abandoned: run.abandoned,
                lost: run.lost,
                stuck: run.stuck,
            });
        }
    }
    let (taken, erased) = seq_run::<W, E, PAGE_WORDS, PAGES>(1)?;
    let (taken_boots, erased_boots) = seq_run::<W, E, PAGE_WORDS, PAGES>(BOOTS)?;
    let reboots = (BOOTS - 1) as f64;
    emit(&RebootCost {
        implementation: "sequential-storage",
        config: "-",
        write_size: W,
        erase: E,
        scenario: "clean",
        unused_per_reboot: taken_boots.saturating_sub(taken) as f64 / reboots,
        erased_per_reboot: erased_boots.saturating_sub(erased) as f64 / reboots,
        abandoned: 0,
        lost: 0,
        stuck: 0,
    });
    Ok(())
}

/// What a logfmt run did: flash taken (the sessions' advances around the ring) and bytes
/// erased; units abandoned, records lost, boots stuck.
struct Run {
    totals: (u64, u64),
    /// Samples logged (and flushed).
    logged: usize,
    abandoned: u64,
    lost: u64,
    stuck: usize,
}

/// The flash of one boot: the power cut at its first program if `cut`, and the bytes its
/// erases that completed erased.
struct Boot<'f, 'm, const W: usize, const E: usize> {
    flash: &'f mut MockFlash<'m, W, E>,
    cut: bool,
    erased: u64,
}

impl<const W: usize, const E: usize> ErrorType for Boot<'_, '_, W, E> {
    type Error = MockError;
}

impl<const W: usize, const E: usize> ReadNorFlash for Boot<'_, '_, W, E> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        self.flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl<const W: usize, const E: usize> NorFlash for Boot<'_, '_, W, E> {
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        self.flash.erase(from, to)?;
        self.erased += u64::from(to - from);
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        if std::mem::take(&mut self.cut) {
            self.flash.cut_power_after(0, PowerCut::Partial);
        }
        self.flash.write(offset, bytes)
    }
}

/// The samples of boot `boot`.
fn sample(boot: usize, i: usize) -> Vec<u8> {
    (0..SAMPLE).map(|j| (boot * 31 + i * 7 + j) as u8).collect()
}

/// `boots` boots logging [`PER_BOOT`] samples each, every fourth boot cut at its first
/// program if `brownout`.
fn logfmt_run<const W: usize, const E: usize>(
    config: FlashConfig,
    boots: usize,
    brownout: bool,
) -> Result<Run, String> {
    let mut memory = vec![0xFF; REGION];
    let mut flags = vec![false; REGION / W];
    let mut flash: MockFlash<'_, W, E> =
        MockFlash::new(&mut memory, &mut flags, 0xFF).map_err(|e| e.to_string())?;
    flash.set_second_program(SecondProgram::Refused);
    let mut run = Run {
        totals: (0, 0),
        logged: 0,
        abandoned: 0,
        lost: 0,
        stuck: 0,
    };
    let (mut taken, mut end, mut erased) = (0u64, 0u64, 0u64);
    for boot in 0..boots {
        let cut = brownout && boot % 4 == 1;
        let mut boot_flash = Boot {
            flash: &mut flash,
            cut,
            erased: 0,
        };
        let mut writer = WordWriter::open(&mut boot_flash, config).map_err(|e| format!("{e:?}"))?;
        let mut logged = Ok(());
        for i in 0..PER_BOOT {
            logged = writer.add_record(&sample(boot, i)).map(drop);
            logged = logged.and_then(|()| writer.flush());
            match logged {
                Ok(()) | Err(FlashError::Lost { .. }) => run.logged += 1,
                Err(_) => break,
            }
        }
        let stats = writer.stats();
        if !cut {
            // (A cut boot's writer goes on trying while the simulated power is off: a real
            // one stops with the power.)
            (run.abandoned, run.lost) = (
                run.abandoned + u64::from(stats.abandoned_units),
                run.lost + u64::from(stats.lost_records),
            );
        }
        let position = writer.position();
        if !cut {
            taken += advance(end, position);
            end = position;
        }
        erased += boot_flash.erased;
        match logged {
            Ok(()) | Err(FlashError::Lost { .. }) => {}
            Err(FlashError::Flash(MockError::PowerCut)) if cut => {}
            Err(_) => run.stuck += 1,
        }
        flash.power_on();
    }
    run.totals = (taken, erased);
    Ok(run)
}

/// How far a ring's log went from region offset `from` to `to` (less than a lap).
fn advance(from: u64, to: u64) -> u64 {
    (to + REGION as u64 - from) % REGION as u64
}

/// `samples` samples logged in one session: flash taken and bytes erased.
fn logfmt_one<const W: usize, const E: usize>(
    config: FlashConfig,
    samples: usize,
) -> Result<(u64, u64), String> {
    let mut memory = vec![0xFF; REGION];
    let mut flags = vec![false; REGION / W];
    let mut flash: MockFlash<'_, W, E> =
        MockFlash::new(&mut memory, &mut flags, 0xFF).map_err(|e| e.to_string())?;
    let mut writer = WordWriter::open(&mut flash, config).map_err(|e| format!("{e:?}"))?;
    for i in 0..samples {
        writer
            .add_record(&sample(i / PER_BOOT, i % PER_BOOT))
            .and_then(|_| writer.flush())
            .map_err(|e| format!("{e:?}"))?;
    }
    // (One session: the samples take less than a lap, from the region's start.)
    Ok((writer.position(), writer.stats().erased_bytes))
}

/// sequential-storage's queue over the same region, reopened at each of `boots` boots: flash
/// taken (the end of its last item) and bytes erased.
fn seq_run<const W: usize, const E: usize, const PAGE_WORDS: usize, const PAGES: usize>(
    boots: usize,
) -> Result<(u64, u64), String> {
    let per_session = if boots == 1 {
        BOOTS * PER_BOOT
    } else {
        PER_BOOT
    };
    let region = (PAGES * E) as u32;
    let mut flash: MockFlashBase<PAGES, W, PAGE_WORDS> =
        MockFlashBase::new(WriteCountCheck::Twice, None, false);
    let origin = flash.stats_snapshot();
    let mut end = 0u64;
    for boot in 0..boots {
        let config = QueueConfig::try_new(0..region).map_err(|e| format!("{e:?}"))?;
        let mut queue = QueueStorage::new(&mut flash, config, Cache::new_uncached());
        for i in 0..per_session {
            block_on(queue.push(&sample(boot, i), false)).map_err(|e| format!("{e:?}"))?;
        }
        let mut buffer = [0u8; 64];
        let mut iter = block_on(queue.iter()).map_err(|e| format!("{e:?}"))?;
        while let Some(entry) = block_on(iter.next(&mut buffer)).map_err(|e| format!("{e:?}"))? {
            end = end.max(u64::from(entry.address()) + entry.len() as u64);
        }
    }
    let stats = origin.compare_to(flash.stats_snapshot());
    Ok((end, stats.erases * E as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_configuration_gets_stuck_in_the_brownout_loop() {
        let mut lines = Vec::new();
        reboot_costs(&mut |line| lines.push(line.clone())).expect("runs");
        for line in &lines {
            assert_eq!(line.stuck, 0, "{line}");
        }
        let line = |config, scenario| {
            lines
                .iter()
                .find(|l| l.config == config && l.scenario == scenario && l.erase == 2048)
                .expect("a line")
        };
        let default_brownout = line("default", "brownout");
        assert_eq!(
            default_brownout.abandoned,
            (BOOTS / 4) as u64,
            "{default_brownout}"
        );
        let default_clean = line("default", "clean");
        // A clean reboot costs the extra word, and no erase of its own (the bytes it leaves
        // are erased once, with their group: one 32 KiB group over the run at most).
        assert!(default_clean.unused_per_reboot <= 16.0, "{default_clean}");
        let reboots = (BOOTS - 1) as f64;
        assert!(
            default_clean.erased_per_reboot <= 32_768.0 / reboots,
            "{default_clean}"
        );
        for line in &lines {
            std::eprintln!("{line}");
        }
    }
}
