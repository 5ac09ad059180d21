//! The upload cycle, told after the run on the same flash: the samples delivered from a read
//! cursor (`CursorReader`), the cursor committed (`FlashWriter::commit`), a power cut in the
//! next commit, a reboot, and the upload resumed at the cursor: nothing delivered before the
//! last commit comes again, nothing is skipped.

use core::cell::RefCell;

use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{CursorReader, FlashConfig, FlashItem, FlashWriter, MockError, PowerCut};

use super::board::{Board, Shared};
use super::{Console, DemoError, sample_of};

/// The uplink's cursor.
const UPLOAD: u8 = 0;

/// What a delivery read: the samples (first and last), how many, and the cursor after them.
struct Delivered {
    first: Option<u32>,
    last: Option<u32>,
    count: u32,
    cursor: logfmt_core::parts::cursor::Cursor,
    committed: Option<u32>,
    aged_out: u32,
}

/// Delivers up to `limit` samples from the uplink's cursor (an upload would send them).
fn deliver(
    flash: Shared<'_, '_>,
    config: FlashConfig,
    scratch: &mut [u8],
    limit: u32,
) -> Result<Delivered, DemoError> {
    let mut reader = CursorReader::open(flash, config, UPLOAD)?;
    let mut delivered = Delivered {
        first: None,
        last: None,
        count: 0,
        cursor: reader.cursor(),
        committed: reader.start().committed.map(|c| c.next),
        aged_out: reader.start().aged_out,
    };
    while delivered.count < limit {
        match reader.next(scratch)? {
            Some(FlashItem::Record { len, .. }) => {
                let sample = sample_of(scratch.get(..len).unwrap_or_default());
                delivered.first = delivered.first.or(sample);
                delivered.last = sample;
                delivered.count += 1;
            }
            Some(_) => return Err(DemoError::Upload("the uplink read damage")),
            None => break,
        }
    }
    delivered.cursor = reader.cursor();
    Ok(delivered)
}

/// Runs the upload cycle on the demo's flash (`board`), the log in region `config`.
///
/// # Errors
/// [`DemoError::Upload`] if a reading from the cursor does not start where the last commit
/// left it; a flash error.
pub fn run(
    board: &RefCell<Board<'_>>,
    config: FlashConfig,
    block: &mut [u8; BLOCK_SIZE],
    scratch: &mut [u8],
    out: &mut dyn Console,
) -> Result<(), DemoError> {
    say!(out, "");
    say!(
        out,
        "THE UPLOAD CYCLE: the uplink comes up; it delivers samples from read cursor {UPLOAD} \
         (CursorReader) and commits the cursor after each upload (FlashWriter::commit)"
    );
    let mut writer = FlashWriter::open(Shared(board), config, &mut *block)?;
    let first = deliver(Shared(board), config, scratch, 200)?;
    say!(
        out,
        "  never committed: {} records aged out of the ring before any upload (counted, not \
         skipped); uploads samples {}..={} ({} samples)",
        first.aged_out,
        first.first.unwrap_or_default(),
        first.last.unwrap_or_default(),
        first.count
    );
    let before = writer.stats();
    writer.commit(first.cursor)?;
    let cost = writer.stats().programmed_bytes - before.programmed_bytes;
    let erased = writer.stats().erased_bytes - before.erased_bytes;
    say!(
        out,
        "  commit: cursor {UPLOAD} at record {}: {cost} bytes programmed, {erased} erased",
        first.cursor.next
    );
    let second = deliver(Shared(board), config, scratch, 150)?;
    say!(
        out,
        "  uploads samples {}..={} ({} samples); POWER CUT in their commit (5 bytes into its \
         word, PowerCut::Partial)",
        second.first.unwrap_or_default(),
        second.last.unwrap_or_default(),
        second.count
    );
    board
        .borrow_mut()
        .flash
        .cut_power_after(5, PowerCut::Partial);
    match writer.commit(second.cursor) {
        Err(logfmt_core::flash::FlashError::Flash(MockError::PowerCut)) => {}
        _ => return Err(DemoError::Upload("the commit was not cut")),
    }
    board.borrow_mut().flash.power_on();
    let mut writer = FlashWriter::open(Shared(board), config, &mut *block)?;
    let resumed = deliver(Shared(board), config, scratch, u32::MAX)?;
    if resumed.committed != Some(first.cursor.next) || resumed.first != second.first {
        return Err(DemoError::Upload(
            "after the cut commit, the cursor is not the one committed before",
        ));
    }
    say!(
        out,
        "  reboot: the torn commit is no cursor; CursorReader::open finds the one before (record \
         {}) and the upload resumes at sample {}: samples {}..={} ({} samples; the {} of the cut \
         commit again, as they were never acknowledged)",
        first.cursor.next,
        resumed.first.unwrap_or_default(),
        resumed.first.unwrap_or_default(),
        resumed.last.unwrap_or_default(),
        resumed.count,
        second.count
    );
    writer.commit(resumed.cursor)?;
    let after = deliver(Shared(board), config, scratch, u32::MAX)?;
    if after.count != 0 || after.committed != Some(resumed.cursor.next) {
        return Err(DemoError::Upload("after the last commit, samples remain"));
    }
    say!(
        out,
        "  commit: cursor {UPLOAD} at record {}; reading from it again delivers nothing: every \
         sample uploaded once since the last commit (`logfmt stats` on the image shows the \
         cursor)",
        resumed.cursor.next
    );
    Ok(())
}
