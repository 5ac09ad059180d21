//! A log in a region of NOR flash (feature `embedded-storage`), that survives power cuts and
//! costs little flash per durable record and per reboot.
//!
//! The region is a whole number of 32 KiB blocks and of erase units. The log in it is a
//! LevelDB log — LevelDB's chunks, cut into 32 KiB blocks exactly as LevelDB cuts them — with
//! three flash rules: erased bytes mean "nothing written here", a flush leaves the rest of the
//! flash word erased, and a reopened writer marks where it resumed after a torn write. A dump
//! of the region reads with a reader told the erased value and the flash word size (see
//! [`ReadOptions::erased`](crate::ReadOptions)).
//!
//! # Two writers, one log
//!
//! - [`WordWriter`] needs no block buffer (about 100 bytes of state): it computes each chunk's
//!   checksum from the record in the caller's memory and programs the log through one staging
//!   word of `WRITE_SIZE` bytes. `AsyncWordWriter` (feature `embedded-storage-async`) is the
//!   same writer over an async flash driver. Both are driven by one sans-I/O engine that hands
//!   out "erase this, program that" operations; the blocking and the async driver only carry
//!   them out.
//! - [`FlashWriter`] is the same engine with its programs gathered in a 32 KiB RAM block: it
//!   programs a block when it is complete and the rest on [`flush`](FlashWriter::flush), so
//!   records not flushed never reach the flash.
//!
//! Both put exactly the same bytes on the flash for the same records, flushes and reopenings
//! (a property test holds them to it), so everything below holds for each.
//!
//! # Two readers, one set of rules
//!
//! - [`WordReader`] needs no block buffer (about 100 bytes of state): it reads each chunk
//!   straight from the flash into the caller's record buffer, in 32-byte reads.
//!   `AsyncWordReader` (feature `embedded-storage-async`) is the same reader over an async
//!   flash driver: one source, its reading steps written once as `async` code, from which
//!   `maybe-async-cfg` makes the blocking copy (plain code, no futures). A read error, or an
//!   async read dropped before it completes, changes nothing: the next call reads again from
//!   the same place (but a word whose reads keep failing with an ECC error reads as unknown
//!   bytes: see [Power cuts on parts with per-word ECC](self#power-cuts-on-parts-with-per-word-ecc)).
//! - [`FlashSource`] gives a [`Reader`](crate::Reader) the region's blocks (a ring's from its
//!   oldest), read into a 32 KiB buffer: the host's and the tools' path.
//!
//! Both return the same records at the same offsets and report damage alike (a property test
//! and the on-target ring tests hold them to it). The layout policy
//! (chunks, padding, the marker: `layout`) and the resume policy (where a reopened log
//! continues: `resume`) are kept apart from the I/O mechanics (staging, erasing, programming).
//!
//! # The layout
//!
//! `W` is the flash's `WRITE_SIZE` (a power of two up to 32), `e` its erased value (`0xFF`, or
//! `0x00` on inverted parts, [`FlashConfig::erased`]); offsets are region offsets, and word
//! boundaries are multiples of `W`.
//!
//! - **Chunks** are LevelDB's: a 7-byte header (masked CRC-32C, length, type) and the payload;
//!   a record that does not fit in the rest of its block is cut into `FIRST`, `MIDDLE` and
//!   `LAST` chunks. Records added between two flushes follow each other with no gap.
//! - **A chunk never starts in the last 6 bytes of a block**: they are the block's trailer,
//!   left erased (LevelDB writes zeros there; readers skip a trailer whatever it holds).
//! - **Word-exact padding**: a flush programs the last, partly filled word with its rest left
//!   erased, and the next record starts at the next word boundary. A durable record of `n`
//!   bytes flushed on its own costs `roundup(7 + n, W)` bytes of flash: a 30-byte record, 37
//!   bytes of chunk, takes 40 bytes at `W` = 4 or 8, 48 at 16, 64 at 32. With `W` = 8, a
//!   30-byte record at 0 and a flush, then a 16-byte record and a flush:
//!
//!   ```text
//!   0..7    header (FULL, length 30)      7..37   payload      37..40  erased (padding)
//!   40..47  header (FULL, length 16)      47..63  payload      63..64  erased (padding)
//!   64..    erased: the next record goes here
//!   ```
//!
//!   Readers skip the erased bytes from the end of a chunk to the word boundary where the next
//!   chunk starts (rule R1 of the readers); erased bytes to the end of the block mean nothing
//!   more was written in it.
//! - **Each flash word of the log is programmed once**, in order, erased-looking or not, and
//!   never a word before where a reopened log resumes (so parts with per-word ECC are safe).
//! - **Erase lazily**: the erase units of a block are erased just before its first word is
//!   programmed. The region must be erased before its first use (the flash after the log is
//!   taken as erased). A full bounded region is [`FlashError::Full`]; a ring goes on (below).
//!
//! # Reading: what it costs, seeking, the newest records
//!
//! Costs are in flash bytes read (`N` blocks in the region, `W` the word size).
//!
//! - **A full read** with [`WordReader`] reads each chunk once, and a flush's padding as far as
//!   the 7-byte header read where it starts: erased bytes where a chunk may start are padding
//!   first, the chunk after them found from the header bytes already read (the block reader's
//!   rule, [`flash_padding`](crate::block::flash_padding)). In a ring, whose ring headers give
//!   `W`, a header of erased bytes is a flush's padding when a well-formed chunk starts at the
//!   next word boundary: the bytes between are not read (nor reported if damaged: they hold no
//!   record). Reading a full 256 KiB ring of 30-byte samples, each flushed, reads 1.08 (W = 4,
//!   8) to 1.19 (W = 16, 32) times the records' bytes and headers. A bounded log has no ring
//!   headers: its reader skips the padding the same way when told `W`
//!   ([`FlashConfig::write_size`], the same figures; a writer's `config()` has it filled in),
//!   and without it reads the padding up to the next chunk (2.05 times at W = 16 and 32).
//! - **Opening a writer** reads every block's first header (19 bytes in a ring) and the newest
//!   block once: at most one block and the headers.
//! - **Seeking** ([`WordReader::seek_record`], [`WordReader::seek_key`],
//!   [`WordReader::seek_newest`], and the same on `AsyncWordReader`): every ring header counts
//!   the records begun before its block, so a record number is found by a binary search over
//!   the ring's blocks — `⌈log2 N⌉` ring headers of 19 bytes (6 for 64 blocks) — then the block
//!   where the record begins read from its start up to it; a key the records carry (a time,
//!   told from a record's bytes by the caller's function, never decreasing from one record to
//!   the next) the same way, each step reading a header and the first record that begins in
//!   its block; the newest `n` records read the newest block (to count its records) and seek
//!   to the first of them. A bounded log has no ring headers: a seek reads it from its start.
//!   (Opening a reader reads each ring header once or twice to find the ring.)
//!
//! # Ring retention
//!
//! With [`FlashConfig::ring`] the region is kept for the life of the device: when the log
//! reaches the region's end it goes on at its start, one *lap* later, and the oldest records
//! age out. The layout, byte by byte, is in the [`ring`](crate::ring) module; in short:
//!
//! - the region is taken in *erase groups* (one erase unit, or one block if the unit is
//!   smaller) and needs at least two; **every block begins with a 19-byte ring header** chunk
//!   (type [`RING_TYPE`](crate::format::RING_TYPE), ignorable) holding the block's lap, the
//!   number of records begun before it, and the geometry. A lap costs 19 bytes per 32 KiB
//!   block (0.06 %), nothing per record: word-exact padding is unchanged;
//! - **erase ahead**: once the first ring header written in a group is programmed, the writer
//!   erases the next group — the oldest data. Readers never read the group after the newest
//!   block, so a power cut in that erase (which leaves arbitrary bits) hides nothing;
//! - records run across the wrap like across any block boundary; a record whose start was
//!   erased is dropped silently by readers, like LevelDB's initial-offset resynchronisation;
//! - the lap counter wraps (serial-number arithmetic: only two laps are ever on the flash);
//!   [`FlashConfig::first_lap`] sets where an empty region starts.
//!
//! Readers order the blocks by their ring headers ([`FlashSource::ring`] on a device, `logfmt`
//! on an image): from the first intact block of the right lap after the group erased ahead, to
//! the newest block. The ring keeps at least `(groups − 2)` groups of the newest log bytes;
//! [`FlashStats::laps`] and [`FlashStats::aged_out_bytes`] count wraps and the bytes aged out.
//!
//! # Reboots
//!
//! `open` reads the region in small reads (aligned to the flash's `READ_SIZE`) and continues
//! the log in the same block, whatever the part; it programs and erases nothing. It finds the
//! log's end with the small-RAM reader's own walk (one implementation of what a chunk, padding
//! and a marker are, for writing and for reading). What it reads: the first 7 bytes of every
//! block (the last block whose first header is written holds the log's end; in a ring, the
//! 19-byte ring header of every block, and the newest lap's last block), then that block's
//! chunks as a reader reads them (headers, payloads through the checksum, padding), and its
//! bytes after the last well-formed chunk from the block's end backwards; after a chunk that
//! turns out torn, the walk looks for the next chunk (the resume marker) a byte at a time.
//!
//! Let `l` be one past the last byte of that block that is not erased (or the end of its last
//! well-formed chunk, if later). The log continues at `r = roundup(l, W) + W`: the extra word
//! is the one a power cut may have caught at the very start of its programming, which may
//! read erased yet never be programmable again (per-word ECC; see below for what that covers
//! and the one cut it does not). So a reboot costs at most
//! `2 × W - 1` bytes of flash beyond a record torn by the power cut (and the 7-byte marker
//! below after a torn write). Reopening again before writing anything finds the same place.
//!
//! If the walk finds the log ends in a **torn chunk** (bytes after the last well-formed chunk
//! that are not one: a power cut in the middle of a program), `r` is also past the end the
//! torn chunk's header declares when that lies in the block (the word in flight at the cut is
//! inside the torn chunk), and the writer puts the **resume marker** at `r` first: an empty
//! chunk of type [`RESUME_TYPE`] (`0xB1`, ignorable: bit 7 set), 7 bytes, whose checksum covers
//! its type byte alone. The same when the log ends in the middle of a record (a `FIRST` or
//! `MIDDLE` chunk, the rest of the record cut off, usually by a power cut during the erase of
//! the next block). The marker is laid out with the first record (or flush) after the reopening.
//! With `W` = 8, a power cut in the middle of a 20-byte third record at 64 (its chunk 64..91)
//! that left bytes 64..81 programmed:
//!
//! ```text
//! 64..81  torn chunk                81..88  erased (the rest of the word in flight)
//! 88..96  erased (the extra word)   96..103 resume marker   103..  the next record
//! ```
//!
//! Readers drop the bytes from a chunk that is not well-formed up to the marker, and the record
//! they were part of, silently: a power cut, not damage (rule R2 of the readers); every record
//! after the marker reads. A well-formed chunk other than a marker after bad bytes is damage,
//! reported. Bad bytes at the end of a block are judged when the next block is read: torn if it
//! goes on with the marker (after its ring header, in a ring). Where the log ends (nothing
//! after), a chunk is torn if it looks cut short — its declared extent runs past the block or
//! ends in erased bytes; a complete chunk with a wrong checksum there is reported (a cut in a
//! chunk's very last word cannot be told from damage until the reopened writer's marker
//! follows it). If fewer than 7 bytes are left in the block at `r`, the log (and the marker)
//! continues at the next block — the one after it if the next block's first word may have been
//! in flight and the next block shares an erase unit with the last one. So readers also take
//! a marker as the end of the record in progress (a `FIRST` chunk whose block ended), and bad
//! bytes with no chunk after them in their block as torn when the next chunk they meet (in a
//! later block) is a marker.
//!
//! In a ring, a block whose ring header was torn (written bytes where the header goes, after
//! the newest block, in its erase group) is left: the log goes on in the block after it.
//!
//! If the block holds written bytes beyond what a torn write explains (past the torn chunk as
//! far as its header reaches, and the word in flight) — the arbitrary bits of an interrupted
//! erase, or data that is not this log's — the log continues at the next block instead, where
//! nothing of that can hide what follows.
//!
//! # Power cuts on parts with per-word ECC
//!
//! On parts that keep an ECC per flash word (STM32L4/L5/U5/G4/H7 and others), a word may be
//! programmed only once between erases: a second program leaves a word whose ECC does not
//! match, its bytes lost (and, on several of these parts, reading it raises a fault). A
//! program a power cut interrupts leaves, per the reference manuals, a word whose reads
//! usually report an ECC error until it is erased; sometimes a word that still reads erased
//! yet may not be programmed again.
//!
//! - **A word whose reads fail** is a written word. `open`, [`WordReader`] and
//!   [`FlashSource`] read a failing read again a `READ_SIZE` unit at a time and take the units
//!   that still fail for written bytes that are no chunk's (bytes of value `0x80 | !erased`:
//!   a chunk header made of them declares a length past the block, so it looks cut short):
//!   a torn write, after which the log resumes with the resume marker; readers drop it
//!   silently before the marker, as any torn write. Such an error never fails `open`. Only
//!   errors of kind `Other` are taken so (`NotAligned` and `OutOfBounds` are returned); a HAL
//!   whose ECC error raises a fault instead of returning an error must turn it into one.
//! - **A word that reads erased** after the cut is covered by the extra word above when it is
//!   the word right after the log's last written byte — a cut in the middle of a session.
//! - **A cut at the very first program after a reopen** that leaves that word reading erased,
//!   with no ECC error, leaves the flash exactly as it was before that boot, so the next
//!   reopening — which must read the same flash the same way — picks the same word. No resume
//!   point computed from the flash alone can avoid that, however many words it skips: the cut
//!   left nothing to tell the two boots apart. So the writer *checks* instead: the first
//!   program of every session is read back, and a program the flash refuses (or that reads
//!   back wrong, on parts that accept a second program and spoil the word) is survived as
//!   every refused program is ([Refused programs and
//!   erases](self#refused-programs-and-erases)): the writer leaves that erase unit for the
//!   next one, erased first, and writes on there. Under the cut model of the simulated flash
//!   (the power fails after a uniformly random number of bytes of flash work), such a cut
//!   takes a cut on the first byte of a boot's first program: one cut in `B` for a boot that
//!   does `B` bytes of flash work, and every time in a brown-out loop that cuts each boot
//!   there.
//!
//! What each configuration costs per reboot (`W` the word, `E` the erase unit; a ring's unit
//! for [`FlashConfig::fresh_unit_on_reopen`] is its erase group, a block at least; figures
//! for 2 KiB pages, 4 KiB and 128 KiB sectors in the crate README, `cargo xtask bench flash`'s
//! `FLASH-REBOOT` lines):
//!
//! | configuration | a clean reboot | a reboot after a cut at the first program |
//! |---|---|---|
//! | default ([`FlashConfig::new`]) | `W` bytes (the extra word), a `W`-byte read; no erase | the next boot's first program is refused: the rest of that erase unit (`E / 2` on average) and one erase of a unit, once |
//! | [`FlashConfig::fresh_unit_on_reopen`] | the rest of the erase unit (a ring: group), nearly all of it after a short session, and one erase of it (a ring: and the group erased ahead) | the same |
//!
//! The default is safe on every part: it closes the cut at the first program on parts that
//! refuse a second program (STM32L4, L5, U5, G4, H7: PROGERR) and on parts that accept it and
//! spoil the word, at the cost of a `W`-byte read per reboot, and pays an erase unit only when
//! the cut happened. [`FlashConfig::fresh_unit_on_reopen`] never programs a word after a
//! reopen before erasing it, for parts whose read-back cannot be trusted (a second program
//! that reads back right, then decays); it costs an erase unit every reboot, which suits
//! small units and rare reboots only.
//!
//! Also considered and declined: a longer fixed skip (the same word, one place further); a
//! skip drawn from something that changes each boot — the library has nothing that survives
//! a power cut without being programmed itself (a boot counter in flash has the same first
//! program), and a caller's random number spreading first programs over `K` words costs
//! `K × W / 2` bytes a reboot and still picks a spoiled word with probability up to `m / K`
//! after `m` such cuts.
//!
//! # Refused programs and erases
//!
//! A flash log must never stop accepting records because one program failed. When the flash
//! driver fails a program or an erase with an error of kind `Other` (a part's PROGERR, an ECC
//! refusal, a worn cell), or the session's first program reads back other than it was
//! programmed ([`FlashError::Mismatch`]), the writer — every writer, blocking and async,
//! bounded and ring — is not poisoned:
//!
//! 1. it leaves the erase unit where the failure happened: the log goes on at the start of the
//!    next erase unit, which it erases first (a ring: the next unit of the same erase group
//!    once the block's ring header is on the flash, else the next group, with the ring's rules
//!    for what ages out; a group whose erase failed is left whole; a bounded region with no
//!    unit left is [`FlashError::Full`]);
//! 2. it puts the resume marker there, and the operation is done again: the record being added
//!    is written whole in the new unit, a flush or a cursor commit is done there;
//! 3. records added since the last flush whose last bytes were in what the flash refused (the
//!    small-RAM writers: the word refused; [`FlashWriter`]: its RAM block, programmed at the
//!    flush) are lost — they were never acknowledged — and the next `flush` (or `commit`)
//!    says so once, with [`FlashError::Lost`], after making every other record durable;
//! 4. [`FlashStats::abandoned_units`] and [`FlashStats::lost_records`] count what it cost;
//! 5. after [`MAX_ABANDONED`] units in a row fail in one operation, or an error of another
//!    kind (`NotAligned`, `OutOfBounds`), the error is returned and the writer is poisoned;
//!    a later `open` resumes, as after a power cut.
//!
//! What an abandoned unit leaves: the log's chunks before the failure, then the refused word
//! (as it was: erased-looking, an ECC error, or partly programmed) and erased bytes to the
//! unit's end (a ring: blocks with no ring header), then the resume marker. Readers read past
//! it as they read past a torn write: silently, the record in progress with it. Record
//! numbers (ring headers, read cursors) count the lost records as begun: a gap, never a
//! number used twice.
//!
//! # The guarantee
//!
//! A record is *acknowledged* once a `flush` after it has returned `Ok` (or
//! [`FlashError::Lost`], which reports records added before it that a refused program took).
//! After a power cut at any point — or, for `AsyncWordWriter`, a future dropped before it
//! completes — and a reopen, reading the region returns every acknowledged record, in order,
//! possibly followed by records that were being written, and nothing else; and a reopened
//! writer appends, whatever the cuts before (a brown-out loop cutting each boot's first
//! program, on parts that refuse a second program and on parts that spoil the word: the
//! tests). On parts that accept a second program of a word and read it back right, then lose
//! it, a record in that word can be lost, reported as damage: only
//! [`FlashConfig::fresh_unit_on_reopen`] excludes that. (The small-RAM writer programs words
//! as soon as they are complete, so unacknowledged records may survive too.)
//!
//! This holds **up to checksum collisions**: torn bytes that happen to form a chunk header (a
//! record type, a length that fits in the block) whose extent reaches past the resume marker
//! become a well-formed chunk if the bytes programmed after the reopening match its 32-bit
//! checksum; readers then take it, and it swallows the marker and the records it covers. For
//! bytes that are not crafted to collide, that is a chance of 2^-32 for each such header. The
//! hardening that closes it — resuming past the furthest extent any header-shaped run in the
//! torn bytes declares — was measured and declined: over 20 000 simulated torn records of 1 to
//! 300 bytes, torn at a random byte, it moves the resume point after a third of the torn
//! writes of random bytes (42 % for ASCII text), by 4.0 KiB on average (7.0 KiB for text, up
//! to the rest of the block), against a collision chance of 2^-32 a header.
//!
//! # Read cursors
//!
//! A device that logs while offline and uploads when it can must deliver each record once,
//! across reboots. A *read cursor* keeps how far it has delivered, in the log itself:
//!
//! - **Records are numbered** from 0, each record (or pack) begun one more, wrapping after
//!   `u32::MAX`: the count every ring header holds, so a number names one record across
//!   wrap-around. A [`Cursor`] is an id (`u8`: up to 256 cursors, each committed on its own,
//!   at no cost to the others) and `next`, the number of the first record not delivered.
//! - [`CursorReader::open`]`(flash, config, id)` reads from cursor `id`'s newest commit: the
//!   records not delivered, oldest first, with the items of [`WordReader`];
//!   [`cursor`](CursorReader::cursor) is where the records returned so far end.
//! - [`WordWriter::commit`]`(cursor)` (and [`FlashWriter::commit`], `AsyncWordWriter::commit`)
//!   appends the cursor as one 12-byte chunk of type
//!   [`CURSOR_TYPE`](crate::format::CURSOR_TYPE) (`0xB2`, ignorable; its bytes in
//!   [`cursor`](crate::cursor)) and flushes: once it returns `Ok`, a reader opened at the
//!   cursor after any power cut starts at record `cursor.next`. A commit a power cut
//!   interrupts leaves a torn chunk, which no reader takes for a cursor: the cursor is then
//!   where the commit before put it — the old one or the new one, never another.
//! - **Records that age out of a ring** before the cursor delivered them are counted in
//!   [`CursorReader::start`] (`aged_out`), never passed over silently; committing the reader's
//!   cursor acknowledges them. A cursor not committed for a whole lap ages out with its
//!   records and reads as never committed (from record 0: every record before the ring's
//!   oldest is counted as aged out).
//! - Every other reader passes a cursor chunk over: the flash readers and the block reader of
//!   a flash image ([`ReadOptions::erased`](crate::ReadOptions)) silently, LevelDB's reader as
//!   an unknown type, RocksDB's as an ignorable one.
//!
//! The writer's [`flash_mut`](WordWriter::flash_mut) lends its flash to a reader, so a device
//! delivers and commits without closing its log:
//!
//! ```
//! # #[cfg(not(feature = "mock-flash"))] fn main() {}
//! # #[cfg(feature = "mock-flash")]
//! # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
//! use logfmt_core::flash::{CursorReader, FlashConfig, FlashError, FlashItem, MockFlash, WordWriter};
//! use logfmt_core::BLOCK_SIZE;
//!
//! const UPLOAD: u8 = 0; // the cursor of the upload link
//! let (mut memory, mut programmed) = (vec![0xFFu8; 4 * BLOCK_SIZE], vec![false; BLOCK_SIZE / 2]);
//! let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
//! let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32).ring();
//! let mut log = WordWriter::open(&mut flash, config)?;
//! log.add_record(b"t=21.5")?;
//! log.add_record(b"t=21.6")?;
//! log.flush()?;
//! // The link is up: deliver what the cursor has not, then commit.
//! let mut buffer = [0u8; 256];
//! let mut reader = CursorReader::open(log.flash_mut(), config, UPLOAD).map_err(FlashError::Flash)?;
//! assert_eq!(reader.start().aged_out, 0);
//! let mut sent = 0;
//! while let Some(item) = reader.next(&mut buffer).map_err(FlashError::Flash)? {
//!     if let FlashItem::Record { len, .. } = item {
//!         sent += len; // upload(&buffer[..len])
//!     }
//! }
//! let cursor = reader.cursor();
//! log.commit(cursor)?; // after the upload was acknowledged
//! assert_eq!((sent, cursor.next), (12, 2));
//! # Ok(())
//! # }
//! ```
//!
//! What each call costs (`W` the write size):
//!
//! | call | flash programmed | erased | read |
//! |---|---|---|---|
//! | `commit` | `roundup(12, W)` after a flush (12 bytes at `W` ≤ 4, 16 at 8 and 16, 32 at 32); with records not yet flushed, their flush and 12 more bytes | nothing, except where the cursor does not fit in the rest of its block (fewer than 12 bytes left): it goes on in the next block, with the erase and ring header that block costs any record | nothing |
//! | `CursorReader::open` | nothing | nothing | the ring headers (as [`WordReader::open`]); the chunks of the newest blocks back to the cursor's newest commit (one block when a commit is made at least once a block; all of them when the cursor was never committed); `⌈log2 N⌉` ring headers of 19 bytes (`N` blocks) to find the block of the cursor's record, a binary search as [`WordReader::seek_record`]'s |
//! | `CursorReader::next` | nothing | nothing | as [`WordReader::next`], from the start of the block of the cursor's record (a bounded log: from its start) |
//!
//! # Testing aid
//!
//! `MockFlash` (feature `mock-flash`) simulates a NOR flash in RAM, with power cuts during
//! programs and erases (including the arbitrary bits a real interrupted erase leaves, and a
//! word whose reads report an ECC error), refusing a second program of a word. It is
//! for tests, fuzzing, benchmarks and demos, not part of the flash log's API.

#[cfg(feature = "embedded-storage-async")]
mod asynch;
mod config;
mod cursor;
mod engine;
mod error;
mod layout;
#[cfg(any(test, feature = "mock-flash"))]
mod mock;
mod order;
mod piece;
mod reader;
mod resume;
mod source;
mod word;
mod writer;

#[cfg(test)]
mod brownout_tests;
#[cfg(test)]
mod cursor_tests;
#[cfg(test)]
mod reader_tests;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod ring_tests;
#[cfg(test)]
mod seek_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod word_tests;

pub use crate::cursor::Cursor;
pub use crate::format::RESUME_TYPE;
#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub use asynch::AsyncWordWriter;
pub use config::FlashConfig;
#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub use cursor::AsyncCursorReader;
pub use cursor::{CursorReader, CursorStart};
pub use engine::MAX_ABANDONED;
pub use error::FlashError;
#[cfg(any(test, feature = "mock-flash"))]
#[cfg_attr(docsrs, doc(cfg(feature = "mock-flash")))]
pub use mock::{MAX_ECC_WORDS, MockError, MockFlash, MockStats, PowerCut, SecondProgram};
#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub use reader::AsyncWordReader;
pub use reader::{FlashItem, WordReader};
pub use source::FlashSource;
pub use word::WordWriter;
pub use writer::{FlashStats, FlashWriter};
