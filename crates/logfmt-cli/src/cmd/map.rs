//! `logfmt map`: where a log is damaged, at a glance — one cell per block.

use std::io::Write;
use std::path::{Path, PathBuf};

use logfmt_std::DamageKind;
use logfmt_std::layout::{BlockState, Survey};
use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{EscapedPath, LogReader, ReadOptions, recovery_in},
};

use crate::cmd::map_report::{DamageLine, MapReport, RingLine, TailLine};
use crate::error::CliError;
use crate::image::Input;
use crate::options::ChunkArgs;

/// Draw the block map of a log, a flash image or a ring image.
///
/// One cell per 32 KiB block (or per group of blocks, the worst of them shown, when the file
/// has more blocks than the terminal has room for), a colour and a letter per state: `.`
/// clean, `X` damaged (bytes LevelDB's reader drops), `T` the torn end, `0` zeros
/// (preallocated, or a zero header), blank for nothing read (erased flash, past the end), and
/// for a ring image `H` its newest block, `O` its oldest and `-` the blocks not read (erased
/// ahead of the writer). A legend and a one-line summary follow. Colours as --color says: by
/// default only on a terminal, and never with NO_COLOR set; letters only otherwise.
///
/// --json prints the model instead, one object per file: "file", "bytes", "blocks" (a string
/// of one letter per block, as above), "records", "payload_bytes", "corruptions" (count),
/// "dropped_bytes", "damage" (the first --max-errors corruptions: [{"offset", "bytes",
/// "reason", "gloss"}]), "tail" (null or {"offset", "bytes", "kind": "torn" or "zero_fill"}),
/// read as Pebble's "pebble_synced" ({"damage_offset", "chunk", "synced_offset"}: the WAL-sync
/// chunk whose synced offset is past the first damage, which makes it corruption; without one
/// Pebble reads the damage as the log's torn end, the "tail"), "ring" (null, or the ring's
/// "blocks", "group", "newest", "lap", "oldest").
///
/// --html OUT also writes a picture: one self-contained HTML file (no script or font from
/// elsewhere) with every block as a row of its byte spans, the details of each on hover
/// (offset, length, chunk type, checksum, what the reader does, in plain words) and the damage
/// list linked to its place. OUT is written to a temporary file and renamed; an existing OUT
/// is replaced only with --force, and never when it is one of the files read. With OUT `-`,
/// the picture is printed on standard output instead of the map. The picture stays under
/// 10 MB whatever the input: a block of more than 64 spans has the rest drawn as one, and
/// past 8 MiB no more is listed or drawn (the page says so where it is cut).
#[derive(Debug, clap::Args)]
pub(crate) struct MapArgs {
    /// Also write the picture to this HTML file.
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
    /// Replace OUT if it exists.
    #[arg(long)]
    force: bool,
    /// Cells per line (default: the terminal's width, or 64).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(8..))]
    width: Option<u16>,
    /// Corruptions listed in the picture and the JSON (the rest are counted).
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_errors: usize,
    #[command(flatten)]
    chunks: ChunkArgs,
}

/// Largest record assembled while mapping: a larger one is counted, not held.
const RECORD_LIMIT: usize = 1 << 20;
/// Lines of cells at most: a larger file gets several blocks per cell.
const MAX_LINES: u64 = 32;

pub(crate) fn run(args: &MapArgs) -> Result<(), CliError> {
    let picture_only = args.html.as_ref().is_some_and(|out| out.as_os_str() == "-");
    if picture_only && args.chunks.json {
        return Err(CliError::Usage(
            "--html - and --json both print on standard output: give --html a file".into(),
        ));
    }
    let mut pictures = Vec::new();
    // With the picture on standard output, the files are not headed there either.
    let quiet_heads = args.chunks.json || picture_only;
    crate::targets::each(&args.chunks.files.files, quiet_heads, |target, _| {
        let (report, input, read) = gather(args, &target.path)?;
        if picture_only {
            // The picture is the output.
        } else if args.chunks.json {
            crate::output::write_json_line(&mut std::io::stdout().lock(), &report)?;
        } else {
            render(&report, args.width)?;
        }
        if args.html.is_some() {
            pictures.push(crate::picture::Picture {
                report,
                input,
                read,
            });
        }
        Ok(())
    })?;
    if let Some(out) = &args.html {
        crate::picture::write(out, &pictures, args.force)?;
    }
    Ok(())
}

/// Reads `path` once with the reader, marking each block with what it found.
fn gather(args: &MapArgs, path: &Path) -> Result<(MapReport, Input, ReadOptions), CliError> {
    let input = Input::open(path, args.chunks.erased)?;
    let read = ReadOptions::new().erased(input.erased(args.chunks.erased));
    let read = input.read_options(args.chunks.format.read_options(&input.log, read)?);
    args.chunks.format.say_dialect(&input.log)?;
    let mut len = input.log.len_at_open();
    // Read as Pebble's, reading stops at the first damage, as Pebble's reader (and `verify`).
    let recovery = recovery_in(RecoveryMode::TolerateCorruptedTailRecords, read.dialect);
    let options = LogReaderOptions::new()
        .read(read.clone())
        .recovery(recovery);
    let mut reader = LogReader::new(input.source()?, &options);
    // A pipe's length is known once it is read: its blocks are those read.
    let regular = input.log.is_regular();
    let mut survey = if regular {
        Survey::new(len)
    } else {
        Survey::growing()
    };
    survey.read_on(
        &mut reader,
        input.ring.as_ref(),
        args.max_errors,
        RECORD_LIMIT,
        |_, _, _, _| {},
        |_| false,
    );
    if !regular && reader.position() > 0 {
        len = reader.position();
        survey
            .marks
            .mark(len.saturating_sub(1), len, BlockState::Empty);
    }
    drop(reader);
    // Read as Pebble's: the first damage ends the log, as corruption or as its torn end.
    let pebble = crate::story::pebble_end(&input.log, &read, survey.first_damage())?;
    if let Some(end) = &pebble {
        survey.pebble_end(end);
    }
    let mut tail = survey.tail.map(|t| TailLine {
        offset: t.offset,
        bytes: t.bytes,
        kind: match t.kind {
            // Well-formed chunks follow: damage, not a torn write (as `verify` tells it).
            DamageKind::LostTail { .. } => "damage",
            _ => "torn",
        },
    });
    if input.ring.is_none()
        && let Some(torn) = survey
            .tail
            .filter(|t| t.kind == DamageKind::TornTail)
            .as_ref()
        && let Some(zeros) = logfmt_std::advanced::zero_fill(&input.log, torn)
    {
        survey.marks.zero_fill(zeros.offset);
        tail = tail.map(|t| TailLine {
            kind: "zero_fill",
            ..t
        });
    }
    if let Some(ring) = &input.ring {
        survey.marks.ring(ring);
    }
    let states = survey.marks.into_states();
    let report = MapReport {
        file: EscapedPath::new(path).to_string(),
        bytes: len,
        blocks: states.iter().map(|s| s.letter()).collect(),
        records: survey.records,
        payload_bytes: survey.payload_bytes,
        corruptions: survey.corruption_count,
        dropped_bytes: survey.dropped_bytes,
        damage: survey
            .corruptions
            .iter()
            .map(|d| DamageLine {
                offset: d.offset,
                bytes: d.bytes,
                reason: d.kind.to_string(),
                gloss: logfmt_std::layout::gloss(&d.kind).unwrap_or_default(),
            })
            .collect(),
        tail,
        pebble_synced: super::PebbleSyncedJson::of(pebble.as_ref()),
        pebble: pebble.as_ref().map(super::pebble_line),
        ring: input.ring.as_ref().map(|image| {
            let ring = image.ring();
            RingLine {
                blocks: ring.blocks(),
                group: ring.group(),
                newest: ring.head(),
                lap: ring.lap(),
                oldest: image.oldest(),
            }
        }),
        states,
    };
    Ok((report, input, read))
}

/// The map, its legend and its summary, on standard output.
fn render(report: &MapReport, width: Option<u16>) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let colour = crate::colour::stdout();
    let columns = width.map_or_else(terminal_width, usize::from).max(8);
    let blocks = report.states.len() as u64;
    let per = blocks.div_ceil(columns as u64 * MAX_LINES).max(1);
    let cells: Vec<BlockState> = report
        .states
        .chunks(usize::try_from(per).unwrap_or(usize::MAX))
        .map(|group| {
            group
                .iter()
                .copied()
                .max_by_key(|s| s.rank())
                .unwrap_or(BlockState::Empty)
        })
        .collect();
    let mut out = stdout.lock();
    for line in cells.chunks(columns) {
        let mut text = String::new();
        for &cell in line {
            text.push_str(&paint(cell, colour));
        }
        writeln!(out, "{text}")?;
    }
    let cell = if per == 1 {
        "one cell per 32 KiB block".to_owned()
    } else {
        format!("one cell per {per} blocks of 32 KiB (the worst shown)")
    };
    let present: Vec<String> = BlockState::ALL
        .iter()
        .filter(|s| report.states.contains(s))
        .map(|&s| format!("{} {}", paint(s, colour), s.meaning()))
        .collect();
    writeln!(out, "{cell}: {}", present.join("; "))?;
    writeln!(out, "{}", summary(report))?;
    if let Some(line) = &report.pebble {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The one-line summary.
fn summary(report: &MapReport) -> String {
    let blocks = report.states.len() as u64;
    let mut line = format!(
        "{}: {}, {}, {} bytes of payload",
        report.file,
        super::plural(blocks, "block"),
        super::plural(report.records, "record"),
        report.payload_bytes
    );
    if report.corruptions > 0 {
        let damaged = report
            .states
            .iter()
            .filter(|&&s| s == BlockState::Damaged)
            .count();
        line += &format!(
            ", {} bytes dropped in {} ({} damaged)",
            report.dropped_bytes,
            super::plural(report.corruptions, "corruption"),
            super::plural(damaged as u64, "block")
        );
    } else {
        line += ", no corruption";
    }
    if let Some(tail) = &report.tail {
        line += &format!("; {}", tail.describe());
    }
    if let Some(ring) = &report.ring {
        line += &format!(
            "; ring of {} blocks, newest {} (lap {}), oldest {}",
            ring.blocks, ring.newest, ring.lap, ring.oldest
        );
    }
    line
}

/// A cell: its letter, on its colour where colour is wanted.
fn paint(state: BlockState, colour: bool) -> String {
    let letter = state.letter();
    if !colour {
        return letter.to_string();
    }
    // Background, foreground (ANSI 256-colour).
    let (bg, fg) = match state {
        BlockState::Clean => (28, 15),
        BlockState::Damaged => (160, 15),
        BlockState::Torn => (208, 0),
        BlockState::Zero => (245, 0),
        BlockState::Empty => (254, 0),
        BlockState::RingHead => (25, 15),
        BlockState::RingTail => (37, 0),
        _ => (183, 0),
    };
    format!("\x1b[48;5;{bg};38;5;{fg}m{letter}\x1b[0m")
}

/// Standard output's width in columns (`COLUMNS`, or the terminal's), or 64.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .or_else(|| {
            console::Term::stdout()
                .size_checked()
                .map(|(_, cols)| usize::from(cols))
        })
        .filter(|&c| c >= 8)
        .unwrap_or(64)
}
