//! Golden outputs: what `logfmt` prints today, pinned byte for byte.
//!
//! Every LevelDB vector (`tests/leveldb/`, a link to the workspace's `tests/data/leveldb/`, so
//! that the packaged crate carries them) and a set of damaged logs made here are read by `cat`
//! (every output mode, and the recovery modes), `verify` (text and JSON, four recovery
//! modes), `dump`, `stats`, `split --parts 3` and `salvage`; the exit code, standard output,
//! standard error (and, for `salvage`, the log it writes) of each run are compared with the
//! files under `tests/golden/`, one file per input. Each stream is pinned by its length and
//! a hash, and shown as text (long lines shortened) so that a diff shows what changed.
//!
//! `LOGFMT_BLESS=1 cargo test -p logfmt-cli --test golden` (re)writes the golden files.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use logfmt_core::parts::checksum::{crc32c, mask};
use logfmt_std::{
    LogWriter, LogWriterOptions,
    advanced::{BLOCK_SIZE, Format, WriteOptions},
};
use similar::TextDiff;

mod common;

use common::*;

/// What a temporary directory's path is replaced with in the outputs.
const TMP: &str = "<TMP>";
/// An output line longer than this (once escaped) is shortened to its ends and a hash.
const LONG_LINE: usize = 400;
/// At most this many lines of one stream are shown (the hash covers the rest).
const MAX_LINES: usize = 200;

// ---------------------------------------------------------------------------------------------
// The inputs.

/// One input and how it is read.
struct Case {
    /// The golden file's name, without `.txt`.
    name: String,
    /// The log's file name (RocksDB's reader takes a log number from it).
    file: String,
    /// The log's bytes.
    bytes: Vec<u8>,
    /// Options given to every reading command.
    flags: Vec<&'static str>,
    /// `Some(n)`: only `cat` and `verify`, with `--offset n`.
    offset: Option<u64>,
}

impl Case {
    fn new(name: &str, bytes: Vec<u8>) -> Self {
        Self {
            name: name.to_owned(),
            file: format!("{name}.log"),
            bytes,
            flags: Vec::new(),
            offset: None,
        }
    }
    fn file(mut self, file: &str) -> Self {
        file.clone_into(&mut self.file);
        self
    }
    fn flags(mut self, flags: &[&'static str]) -> Self {
        self.flags = flags.to_vec();
        self
    }
    fn offset(mut self, offset: u64) -> Self {
        self.name = format!("{}.offset-{offset}", self.name);
        self.offset = Some(offset);
        self
    }
}

fn leveldb_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/leveldb")
}

/// The vectors, as `EXPECTED.txt` lists them.
fn leveldb_cases() -> Vec<Case> {
    let dir = leveldb_dir();
    let listing = fs::read_to_string(dir.join("EXPECTED.txt")).expect("EXPECTED.txt");
    let names: Vec<&str> = listing
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names.len(), 27, "the LevelDB vectors");
    let mut cases: Vec<Case> = names
        .iter()
        .map(|name| {
            let bytes = fs::read(dir.join(format!("{name}.log"))).expect("a LevelDB vector");
            Case::new(name, bytes)
        })
        .collect();
    // LevelDB's initial_offset tests read this one from inside its records.
    let log = fs::read(dir.join("initial_offset_log.log")).expect("a LevelDB vector");
    for offset in [1, 20_014 + 5, 98_304] {
        cases.push(Case::new("initial_offset_log", log.clone()).offset(offset));
    }
    cases
}

/// A record of `len` readable bytes naming record `i`.
fn text(i: usize, len: usize) -> Vec<u8> {
    format!("record {i:02} ")
        .bytes()
        .cycle()
        .take(len)
        .collect()
}

/// The log the library's writer lays out for `records`.
fn log_of(format: Format, records: &[Vec<u8>]) -> Vec<u8> {
    let mut writer = LogWriter::new(
        Vec::new(),
        &LogWriterOptions::new().write(WriteOptions::new().format(format)),
    );
    for r in records {
        writer.add_record(r).expect("writing to memory");
    }
    writer.close().expect("writing to memory")
}

/// The records of the undamaged multi-block log: sizes from 0 to 70000, some filling the rest
/// of a block, some spanning two or three blocks, one of every byte value.
fn base_records() -> Vec<Vec<u8>> {
    let sizes = [
        0, 5, 100, 1000, 3000, 20_000, 15_000, 256, 40_000, 8, 70_000, 1, 2000, 500,
    ];
    sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            if len == 256 {
                (0..=255u8).collect()
            } else {
                text(i, len)
            }
        })
        .collect()
}

/// A legacy chunk as laid out in a log.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    /// The record it belongs to.
    record: usize,
    offset: usize,
    kind: u8,
    len: usize,
}

impl Chunk {
    fn payload(&self) -> usize {
        self.offset + 7
    }
    fn end(&self) -> usize {
        self.offset + 7 + self.len
    }
}

/// The chunks of an undamaged legacy log.
fn chunks(log: &[u8]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let (mut pos, mut record) = (0, 0);
    while pos + 7 <= log.len() {
        let left = BLOCK_SIZE - pos % BLOCK_SIZE;
        if left < 7 {
            pos += left;
            continue;
        }
        let len = usize::from(u16::from_le_bytes([log[pos + 4], log[pos + 5]]));
        let kind = log[pos + 6];
        out.push(Chunk {
            record,
            offset: pos,
            kind,
            len,
        });
        if kind == 1 || kind == 4 {
            record += 1;
        }
        pos += 7 + len;
    }
    out
}

/// The `nth` chunk of record `record`.
fn chunk(chunks: &[Chunk], record: usize, nth: usize) -> Chunk {
    *chunks
        .iter()
        .filter(|c| c.record == record)
        .nth(nth)
        .expect("the chunk exists")
}

/// A legacy chunk of type `kind` with a valid checksum.
fn raw_chunk(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut covered = vec![kind];
    covered.extend_from_slice(payload);
    let mut out = mask(crc32c(&covered)).to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    out.extend_from_slice(&covered);
    out
}

/// `len` bytes from a xorshift generator with a fixed seed.
fn garbage(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Logs written by the library, then damaged, cut or rewritten; each read with the options
/// that matter to it.
fn damaged_cases() -> Vec<Case> {
    let base = log_of(Format::Legacy, &base_records());
    let c = chunks(&base);
    assert_eq!(c.iter().filter(|c| c.kind == 1 || c.kind == 4).count(), 14);
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut log = base.clone();
        f(&mut log);
        log
    };
    let mut cases = vec![Case::new("clean", base.clone())];

    // Bit flips and bad fields in block 0.
    let r3 = chunk(&c, 3, 0); // 1000 bytes, FULL
    let r4 = chunk(&c, 4, 0); // 3000 bytes, FULL
    let r2 = chunk(&c, 2, 0); // 100 bytes, FULL
    cases.push(Case::new(
        "payload_bit_flip",
        edit(&|l| l[r3.payload() + 17] ^= 0x10),
    ));
    cases.push(Case::new(
        "checksum_bit_flip",
        edit(&|l| l[r4.offset + 2] ^= 0x01),
    ));
    cases.push(Case::new(
        "length_bit_flip",
        edit(&|l| l[r2.offset + 4] ^= 0x04),
    ));
    cases.push(Case::new(
        "type_bit_flip",
        edit(&|l| l[r2.offset + 6] ^= 0x02),
    ));
    cases.push(Case::new(
        "bad_length",
        edit(&|l| l[r4.offset + 4..r4.offset + 6].copy_from_slice(&60_000u16.to_le_bytes())),
    ));
    cases.push(Case::new(
        "zeroed_header_mid_block",
        edit(&|l| l[r2.offset..r2.payload()].fill(0)),
    ));
    cases.push(Case::new(
        "zeroed_chunk",
        edit(&|l| l[r3.offset..r3.end()].fill(0)),
    ));
    cases.push(Case::new(
        "zero_window_8000",
        edit(&|l| l[BLOCK_SIZE + 2000..BLOCK_SIZE + 10_000].fill(0)),
    ));
    let garbage_block =
        edit(&|l| l[2 * BLOCK_SIZE..3 * BLOCK_SIZE].copy_from_slice(&garbage(BLOCK_SIZE)));
    cases.push(Case::new("garbage_block", garbage_block.clone()));

    // Ends: torn, cut at chunk boundaries, erased flash.
    let last = *c.last().expect("chunks");
    cases.push(Case::new(
        "torn_tail",
        base[..last.payload() + last.len / 2].to_vec(),
    ));
    let r10_middle = chunk(&c, 10, 1); // 70000 bytes: FIRST, MIDDLE, LAST
    assert_eq!(r10_middle.kind, 3);
    cases.push(Case::new(
        "torn_inside_spanning_record",
        base[..r10_middle.payload() + 1234].to_vec(),
    ));
    cases.push(Case::new(
        "cut_after_first_chunk",
        base[..chunk(&c, 10, 0).end()].to_vec(),
    ));
    let r8_last = chunk(&c, 8, 1); // 40000 bytes, ends mid-block
    assert_eq!(r8_last.kind, 4);
    cases.push(Case::new(
        "cut_at_record_boundary",
        base[..r8_last.end()].to_vec(),
    ));
    let r7 = chunk(&c, 7, 0); // every byte value, mid-block
    let mut erased = base[..r7.end()].to_vec();
    erased.resize((r7.end() / BLOCK_SIZE + 2) * BLOCK_SIZE, 0xff);
    cases.push(Case::new("erased_ff_tail", erased.clone()).flags(&["--erased", "ff"]));
    cases.push(Case::new("erased_ff_tail_unflagged", erased));

    // A record across four blocks, its third block damaged.
    let spanning = log_of(
        Format::Legacy,
        &[b"first".to_vec(), text(1, 120_000), b"last".to_vec()],
    );
    let sc = chunks(&spanning);
    assert_eq!(sc.len(), 6, "FULL, FIRST, MIDDLE, MIDDLE, LAST, FULL");
    let damaged_middle = chunk(&sc, 1, 2);
    let mut log = spanning;
    log[damaged_middle.payload() + 100] ^= 0x80;
    cases.push(Case::new("spanning_record_middle_block_damaged", log));

    // Recyclable logs: read as such, with a wrong log number, as legacy; a recycled file.
    let recycled_records = [
        text(0, 10),
        text(1, 50_000),
        Vec::new(),
        text(3, 300),
        text(4, 40_000),
    ];
    let log42 = log_of(Format::Recyclable { log_number: 42 }, &recycled_records);
    cases.push(Case::new("recyclable_auto", log42.clone()).flags(&["--format", "auto"]));
    cases.push(
        Case::new("recyclable_wrong_log_number", log42.clone()).flags(&[
            "--format",
            "recyclable",
            "--log-number",
            "41",
        ]),
    );
    cases.push(Case::new("recyclable_read_as_legacy", log42.clone()));
    let log43 = log_of(
        Format::Recyclable { log_number: 43 },
        &[text(5, 20), text(6, 33_000)],
    );
    let mut file = log42.clone();
    file[..log43.len()].copy_from_slice(&log43);
    cases.push(
        Case::new("recycled_file", file)
            .file("000043.log")
            .flags(&["--format", "auto"]),
    );

    // Unknown types: with bit 7 (ignorable to RocksDB) and without.
    let mut log = log_of(Format::Legacy, &[b"before".to_vec(), text(1, 40)]);
    log.extend(raw_chunk(0x85, b"extension"));
    log.extend(raw_chunk(0xff, b""));
    log.extend(log_of(Format::Legacy, &[b"between".to_vec()]));
    log.extend(raw_chunk(0x09, b"not ignorable"));
    log.extend(log_of(Format::Legacy, &[b"after".to_vec()]));
    cases.push(Case::new("unknown_types_reported", log.clone()));
    cases.push(
        Case::new("unknown_types_ignorable_skipped", log).flags(&["--ignorable-types", "skip"]),
    );

    // Initial offsets into the middle of records.
    for offset in [
        r3.payload() + 10,                 // a record in block 0
        chunk(&c, 10, 0).payload() + 1000, // a record across three blocks
        BLOCK_SIZE,                        // a block boundary inside a record
        chunk(&c, 10, 2).offset,           // the LAST chunk of a record
    ] {
        cases.push(Case::new("clean", base.clone()).offset(offset as u64));
    }
    cases.push(Case::new("garbage_block", garbage_block).offset(2 * BLOCK_SIZE as u64 + 5));
    cases
}

// ---------------------------------------------------------------------------------------------
// Running and recording.

/// FNV-1a, 64 bits: enough to tell outputs apart.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `bytes` with every occurrence of `from` replaced by `to`.
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.starts_with(from) {
            out.extend_from_slice(to);
            rest = &rest[from.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

/// Printable ASCII as is, `\` doubled, every other byte as `\xNN`.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => write!(out, "\\x{b:02x}").expect("writing to a String"),
        }
    }
    out
}

/// One line of output, shortened to its ends and a hash if long.
fn show_line(line: &[u8]) -> String {
    let escaped = escape(line);
    if escaped.len() <= LONG_LINE {
        return escaped;
    }
    let head = escape(&line[..line.len().min(100)]);
    let tail = escape(&line[line.len().saturating_sub(40)..]);
    format!(
        "{head} … {tail} [{} bytes, fnv1a64 {:016x}]",
        line.len(),
        fnv1a64(line)
    )
}

/// A stream: its length and hash, then its lines.
fn show_stream(label: &str, bytes: &[u8], out: &mut String) {
    if bytes.is_empty() {
        writeln!(out, "{label}: empty").expect("writing to a String");
        return;
    }
    writeln!(
        out,
        "{label}: {} bytes, fnv1a64 {:016x}",
        bytes.len(),
        fnv1a64(bytes)
    )
    .expect("writing to a String");
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    for line in lines.iter().take(MAX_LINES) {
        writeln!(out, "  |{}", show_line(line)).expect("writing to a String");
    }
    if lines.len() > MAX_LINES {
        writeln!(out, "  … {} more lines", lines.len() - MAX_LINES).expect("writing to a String");
    }
    if !bytes.ends_with(b"\n") {
        writeln!(out, "  (no newline at end)").expect("writing to a String");
    }
}

/// `cat --output framed`'s output as text: a line per frame, its length then its payload in
/// hex; `None` if the frames do not parse.
fn frames_as_text(mut bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let (len, rest) = bytes.split_at_checked(4)?;
        let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
        let (payload, rest) = rest.split_at_checked(len)?;
        out.extend(format!("frame {len}: ").bytes());
        out.extend(payload.iter().flat_map(|b| format!("{b:02x}").into_bytes()));
        out.push(b'\n');
        bytes = rest;
    }
    Some(out)
}

/// Runs one command and records it: the command, exit code, standard output and error.
struct Recorder<'a> {
    tmp: &'a str,
    out: String,
    runs: usize,
}

impl Recorder<'_> {
    fn normalise(&self, bytes: &[u8]) -> Vec<u8> {
        replace(bytes, self.tmp.as_bytes(), TMP.as_bytes())
    }

    fn run(&mut self, args: &[String]) -> Output {
        let output = logfmt(args, b"");
        self.runs += 1;
        let command =
            String::from_utf8_lossy(&self.normalise(args.join(" ").as_bytes())).into_owned();
        writeln!(self.out, "\n## logfmt {command}").expect("writing to a String");
        writeln!(self.out, "exit: {}", status(&output)).expect("writing to a String");
        let stdout = self.normalise(&output.stdout);
        // Framed output is binary: shown a frame a line (its length and hash are the raw bytes').
        let frames = args
            .iter()
            .any(|a| a == "framed")
            .then(|| frames_as_text(&stdout))
            .flatten()
            .filter(|_| !stdout.is_empty());
        if let Some(frames) = frames {
            writeln!(
                self.out,
                "stdout: {} bytes, fnv1a64 {:016x}",
                stdout.len(),
                fnv1a64(&stdout)
            )
            .expect("writing to a String");
            show_stream("stdout as frames", &frames, &mut self.out);
        } else {
            show_stream("stdout", &stdout, &mut self.out);
        }
        show_stream("stderr", &self.normalise(&output.stderr), &mut self.out);
        output
    }

    fn file(&mut self, label: &str, path: &Path) {
        let bytes = fs::read(path).unwrap_or_default();
        writeln!(
            self.out,
            "{label}: {} bytes, fnv1a64 {:016x}",
            bytes.len(),
            fnv1a64(&bytes)
        )
        .expect("writing to a String");
    }
}

fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|&s| s.to_owned()).collect()
}

/// Every run of `case`, recorded; and how many runs.
fn record_case(case: &Case) -> (String, usize) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tmp = p(dir.path()).to_owned();
    let log = dir.path().join(&case.file);
    fs::write(&log, &case.bytes).expect("writing the input");
    let log = p(&log).to_owned();
    let mut rec = Recorder {
        tmp: &tmp,
        out: String::new(),
        runs: 0,
    };
    writeln!(
        rec.out,
        "# input {}: {} bytes, fnv1a64 {:016x}",
        case.file,
        case.bytes.len(),
        fnv1a64(&case.bytes)
    )
    .expect("writing to a String");
    let mut flags = strings(&case.flags);
    if let Some(offset) = case.offset {
        flags.extend(["--offset".to_owned(), offset.to_string()]);
    }
    writeln!(rec.out, "# options {}", flags.join(" ")).expect("writing to a String");
    let run = |rec: &mut Recorder<'_>, command: &[&str], file: &[&str]| {
        let mut args = strings(command);
        args.extend(flags.iter().cloned());
        args.extend(strings(file));
        rec.run(&args)
    };

    for output in ["lines", "hex", "json", "framed"] {
        run(&mut rec, &["cat", "--output", output], &[&log]);
    }
    for recovery in ["absolute", "point-in-time", "skip"] {
        run(
            &mut rec,
            &["cat", "--output", "json", "--recovery", recovery],
            &[&log],
        );
    }
    run(&mut rec, &["verify"], &[&log]);
    run(&mut rec, &["verify", "--json"], &[&log]);
    let recoveries: &[&str] = if case.offset.is_some() {
        &["skip"]
    } else {
        &["absolute", "point-in-time", "skip"]
    };
    for recovery in recoveries {
        run(&mut rec, &["verify", "--recovery", recovery], &[&log]);
        run(
            &mut rec,
            &["verify", "--json", "--recovery", recovery],
            &[&log],
        );
    }
    if case.offset.is_none() {
        run(&mut rec, &["chunks"], &[&log]);
        run(&mut rec, &["chunks", "--json"], &[&log]);
        run(&mut rec, &["stats"], &[&log]);
        run(&mut rec, &["stats", "--json"], &[&log]);
        run(&mut rec, &["split", "--parts", "3"], &[&log]);
        run(&mut rec, &["split", "--parts", "3", "--json"], &[&log]);
        let salvaged = dir.path().join("salvaged.log");
        let salvaged = p(&salvaged);
        run(&mut rec, &["salvage"], &[&log, salvaged]);
        rec.file("salvaged file", Path::new(salvaged));
        let salvaged_json = dir.path().join("salvaged-json.log");
        let salvaged_json = p(&salvaged_json);
        run(&mut rec, &["salvage", "--json"], &[&log, salvaged_json]);
        rec.file("salvaged file", Path::new(salvaged_json));
        run(&mut rec, &["cat", "--output", "json"], &[salvaged]);
    }
    (rec.out, rec.runs)
}

// ---------------------------------------------------------------------------------------------
// Comparing and blessing.

fn blessing() -> bool {
    std::env::var_os("LOGFMT_BLESS").is_some_and(|v| v == "1")
}

/// The first differences between `expected` and `actual`, each under the command it is in.
fn first_differences(expected: &str, actual: &str) -> String {
    let diff = TextDiff::from_lines(expected, actual);
    let old_lines: Vec<&str> = expected.lines().collect();
    let mut out = String::new();
    let mut unified = diff.unified_diff();
    for hunk in unified.context_radius(2).iter_hunks().take(3) {
        let start = hunk.ops().first().map_or(0, |op| op.old_range().start);
        let command = old_lines
            .iter()
            .take(start + 3)
            .rev()
            .find(|l| l.starts_with("## "))
            .map_or("(the header)", |l| &l[3..]);
        writeln!(out, "in `{command}`:\n{hunk}").expect("writing to a String");
    }
    out
}

/// Records every case and compares it with (or, blessing, writes it to) `golden/<group>/`.
fn check(group: &str, cases: &[Case]) -> TestResult {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(group);
    let bless = blessing();
    if bless {
        fs::create_dir_all(&dir)?;
    }
    let names: BTreeSet<String> = cases.iter().map(|c| format!("{}.txt", c.name)).collect();
    assert_eq!(names.len(), cases.len(), "case names are unique");
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in cases {
        let (actual, n) = record_case(case);
        runs += n;
        let path = dir.join(format!("{}.txt", case.name));
        if bless {
            fs::write(&path, &actual)?;
            continue;
        }
        match fs::read_to_string(&path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{group}/{}.txt: the output of `logfmt` changed\n{}",
                case.name,
                first_differences(&expected, &actual)
            )),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    // Golden files no case writes any more.
    for entry in fs::read_dir(&dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !names.contains(&name) {
            if bless {
                fs::remove_file(entry.path())?;
            } else {
                failures.push(format!("{group}/{name}: no case writes it"));
            }
        }
    }
    eprintln!("{group}: {} inputs, {runs} runs", cases.len());
    assert!(
        failures.is_empty(),
        "{} problem(s) with the {} golden files of {group} (lines marked - are the golden \
         file's, + today's; if the change is intended, rerun with LOGFMT_BLESS=1 and review \
         the diff):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    Ok(())
}

#[test]
fn leveldb_vectors() -> TestResult {
    check("leveldb", &leveldb_cases())
}

#[test]
fn damaged_logs() -> TestResult {
    check("damaged", &damaged_cases())
}
