//! `logfmt stats`: what a log holds, in numbers.

use std::io::{self, Write};
use std::path::PathBuf;

use logfmt_std::block::{BlockParser, ChunkRules};
use logfmt_std::{
    BlockSource, Damage, LogFile, LogReader, ReadOptions, ReaderOptions, RecoveryMode,
};

use super::dump::Layout;
use crate::error::CliError;
use crate::options::Erased;
use crate::output::Json;
use crate::progress::Progress;
use crate::scan::{Found, scan};

/// Print statistics about a log: records and their sizes, chunks per type, blocks, the space
/// taken by headers and trailers, and damage.
///
/// Records are read as LevelDB reads them; damage is everything --recovery skip reports (what
/// LevelDB reports, plus a torn tail and silently skipped regions).
///
/// --json prints one JSON object with these keys, in this order: "bytes", "blocks",
/// "records", "payload_bytes", "record_size" (null without records, else {"min", "median",
/// "max"}), "chunks" ({"full", "first", "middle", "last", "unknown"}), "header_bytes",
/// "trailer_bytes", "skipped_bytes" (zero headers, erased flash), "damage" ({"regions",
/// "bytes"}), "tail" (null or {"offset", "bytes"}).
#[derive(Debug, clap::Args)]
pub(crate) struct StatsArgs {
    /// One JSON object (keys above).
    #[arg(long)]
    json: bool,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    erased: Option<Erased>,
    /// The log file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// A source that counts the physical layout of each block it loads.
struct Counted<S> {
    source: S,
    rules: ChunkRules,
    layout: Layout,
}

impl<S: BlockSource> BlockSource for Counted<S> {
    type Error = S::Error;

    fn load_next(&mut self) -> Result<(), S::Error> {
        self.source.load_next()?;
        let block = self.source.block();
        if !block.is_empty() {
            self.layout.blocks += 1;
            self.layout.bytes += block.len() as u64;
            for item in BlockParser::new(block).rules(self.rules) {
                self.layout.count(&item);
            }
        }
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.source.block()
    }

    fn skip(&mut self, bytes: u64) -> Result<(), S::Error> {
        self.source.skip(bytes)
    }
}

/// Runs `stats`.
pub(crate) fn run(args: &StatsArgs) -> Result<(), CliError> {
    let log = LogFile::open(&args.file)?;
    let erased = args.erased.map(Erased::byte);
    let mut rules = ChunkRules::default();
    rules.erased = erased;
    let source = Counted {
        source: log.source(),
        rules,
        layout: Layout::default(),
    };
    let options = ReaderOptions::new()
        .read(ReadOptions::new().erased(erased))
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::new(source, &options);
    let mut sizes = Vec::new();
    let mut damage: Vec<Damage> = Vec::new();
    let mut read_error = None;
    let progress = Progress::bytes("stats", log.len_at_open());
    let outcome = scan(&mut reader, &progress, |found| -> Result<(), CliError> {
        match found {
            Found::Record { data, .. } => sizes.push(data.len() as u64),
            Found::Damage(d) => damage.push(d),
            Found::ReadError { error, .. } => read_error = Some(error),
        }
        Ok(())
    })?;
    drop(progress);
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    let layout = reader.into_inner().layout;
    sizes.sort_unstable();
    let size = |at: usize| sizes.get(at).copied().unwrap_or(0);
    let record_size =
        (!sizes.is_empty()).then(|| (size(0), size((sizes.len() - 1) / 2), size(sizes.len() - 1)));
    let payload: u64 = sizes.iter().sum();
    let damaged: u64 = damage.iter().map(|d| d.bytes).sum();
    let [full, first, middle, last] = layout.by_type;
    let mut out = io::stdout().lock();
    if args.json {
        let doc = Json::obj([
            ("bytes", layout.bytes.into()),
            ("blocks", layout.blocks.into()),
            ("records", (sizes.len() as u64).into()),
            ("payload_bytes", payload.into()),
            (
                "record_size",
                record_size
                    .map(|(min, median, max)| {
                        Json::obj([
                            ("min", min.into()),
                            ("median", median.into()),
                            ("max", max.into()),
                        ])
                    })
                    .into(),
            ),
            (
                "chunks",
                Json::obj([
                    ("full", full.into()),
                    ("first", first.into()),
                    ("middle", middle.into()),
                    ("last", last.into()),
                    ("unknown", layout.unknown.into()),
                ]),
            ),
            ("header_bytes", layout.header_bytes.into()),
            ("trailer_bytes", layout.trailer_bytes.into()),
            ("skipped_bytes", layout.skipped_bytes.into()),
            (
                "damage",
                Json::obj([
                    ("regions", (damage.len() as u64).into()),
                    ("bytes", damaged.into()),
                ]),
            ),
            (
                "tail",
                outcome
                    .tail
                    .map(|t| Json::obj([("offset", t.offset.into()), ("bytes", t.bytes.into())]))
                    .into(),
            ),
        ]);
        writeln!(out, "{doc}")?;
        return Ok(());
    }
    use super::plural;
    let percent = |n: u64| {
        if layout.bytes == 0 {
            0.0
        } else {
            n as f64 * 100.0 / layout.bytes as f64
        }
    };
    let rows: Vec<(&str, String)> = vec![
        (
            "size",
            format!(
                "{} in {}",
                plural(layout.bytes, "byte"),
                plural(layout.blocks, "block")
            ),
        ),
        (
            "records",
            format!("{}, {} of payload", sizes.len(), plural(payload, "byte")),
        ),
        (
            "record sizes",
            record_size.map_or_else(
                || "-".to_owned(),
                |(min, median, max)| format!("min {min}, median {median}, max {max}"),
            ),
        ),
        (
            "chunks",
            format!(
                "{}: FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}, other {}",
                layout.chunks(),
                layout.unknown
            ),
        ),
        (
            "overhead",
            format!(
                "{} of headers ({:.2}%), {} of trailers ({:.2}%)",
                plural(layout.header_bytes, "byte"),
                percent(layout.header_bytes),
                plural(layout.trailer_bytes, "byte"),
                percent(layout.trailer_bytes)
            ),
        ),
        (
            "skipped",
            if layout.skipped_bytes == 0 {
                "none".to_owned()
            } else {
                format!(
                    "{} (zero headers or erased flash)",
                    plural(layout.skipped_bytes, "byte")
                )
            },
        ),
        (
            "damage",
            if damage.is_empty() {
                "none".to_owned()
            } else {
                format!(
                    "{}, {} (see `logfmt verify --recovery skip`)",
                    plural(damage.len() as u64, "region"),
                    plural(damaged, "byte")
                )
            },
        ),
        (
            "end",
            match outcome.tail {
                None => "clean".to_owned(),
                Some(t) => format!(
                    "torn tail: {} at offset {}",
                    plural(t.bytes, "byte"),
                    t.offset
                ),
            },
        ),
    ];
    writeln!(out, "{}", log.path().display())?;
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (key, value) in rows {
        writeln!(out, "  {key:<width$}  {value}")?;
    }
    Ok(())
}
