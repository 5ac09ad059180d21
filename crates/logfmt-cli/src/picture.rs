//! `map --html`: the block map as one self-contained HTML file — every block a row of its byte
//! spans with their details on hover, and the damage list linked to its place.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;

use logfmt_std::advanced::{BLOCK_SIZE, EscapedPath, ReadOptions};
use logfmt_std::layout::{BlockMap, BlockState, Span, SpanKind};

use crate::cmd::map_report::MapReport;
use crate::error::CliError;
use crate::image::Input;

/// Blocks drawn one by one from the start of each file; after them, runs of clean blocks are
/// drawn as one row each (every other block is drawn in full).
const FIRST_BLOCKS: u64 = 256;
/// Rows at most per file: a picture stays small enough to open.
const MAX_ROWS: usize = 20_000;
/// Spans drawn one by one in a block's row at most: the spans after the first
/// `MAX_SPANS - 1` are drawn as one (a block of tiny damaged chunks holds thousands).
const MAX_SPANS: usize = 64;
/// The page's size at most, roughly: past it, no more damage is listed and no more rows are
/// drawn (a row, a line of the list and the page's end are the most it runs over by, a few
/// tens of KiB), and the page says where it was cut.
const MAX_PAGE_BYTES: u64 = 8 << 20;

/// One file's picture: what `map` found, the input and how it was read.
pub(crate) struct Picture {
    pub(crate) report: MapReport,
    pub(crate) input: Input,
    pub(crate) read: ReadOptions,
}

/// Writes the picture of `pictures` to `out`: to a temporary file beside it, renamed over it.
/// An existing `out` is replaced only with `force`, never when it is one of the files read,
/// and never when it is not a regular file.
pub(crate) fn write(out: &Path, pictures: &[Picture], force: bool) -> Result<(), CliError> {
    if out.as_os_str() == "-" {
        let mut html = Counted::new(BufWriter::new(std::io::stdout().lock()));
        page(&mut html, pictures)?;
        html.inner.flush()?;
        return Ok(());
    }
    if let Ok(meta) = fs::symlink_metadata(out) {
        if !meta.is_file() {
            return Err(CliError::Usage(format!(
                "{}: not a regular file; the picture is written only to a regular file",
                EscapedPath::new(out)
            )));
        }
        let read = pictures
            .iter()
            .any(|p| logfmt_std::advanced::is_same_file(p.input.log.file(), out).unwrap_or(false));
        if read {
            return Err(CliError::SameFile { path: out.into() });
        }
        if !force {
            return Err(CliError::Usage(format!(
                "{} exists: give --force to replace it",
                EscapedPath::new(out)
            )));
        }
    }
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out
        .file_name()
        .map_or_else(|| "map".into(), |n| n.to_string_lossy().into_owned());
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let failed = |error| {
        CliError::Output(crate::output::OutputError::File {
            path: out.to_path_buf(),
            error,
        })
    };
    let result = (|| -> Result<(), CliError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .map_err(failed)?;
        let mut html = Counted::new(BufWriter::new(file));
        page(&mut html, pictures).map_err(|e| match e {
            CliError::Output(crate::output::OutputError::Write(e)) => failed(e),
            e => e,
        })?;
        let file = html
            .inner
            .into_inner()
            .map_err(|e| failed(e.into_error()))?;
        file.sync_all().map_err(failed)?;
        fs::rename(&temporary, out).map_err(failed)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// A writer that counts the bytes written through it: the page's size so far.
struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Counted<W> {
    fn new(inner: W) -> Self {
        Self { inner, bytes: 0 }
    }

    /// Whether the page has reached [`MAX_PAGE_BYTES`].
    fn full(&self) -> bool {
        self.bytes >= MAX_PAGE_BYTES
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The note where the page stops growing.
const CUT: &str = "the picture is cut short here, to keep the page under 8 MiB";

fn page<W: Write>(html: &mut Counted<W>, pictures: &[Picture]) -> Result<(), CliError> {
    write!(html, "{}", HEAD)?;
    for (index, picture) in pictures.iter().enumerate() {
        if html.full() {
            writeln!(
                html,
                "<p class=\"muted\">… {CUT}: {} not drawn</p>",
                crate::notes::plural((pictures.len() - index) as u64, "more file")
            )?;
            break;
        }
        file(html, index, picture)?;
    }
    write!(html, "</body>\n</html>\n")?;
    Ok(())
}

fn file<W: Write>(html: &mut Counted<W>, index: usize, picture: &Picture) -> Result<(), CliError> {
    let report = &picture.report;
    writeln!(html, "<section><h2>{}</h2>", escape(&report.file))?;
    writeln!(
        html,
        "<p class=\"summary\">{}</p>",
        escape(&summary(report))
    )?;
    legend(html, &report.states)?;
    damage(html, index, report)?;
    writeln!(html, "<h3>Blocks</h3><div class=\"blocks\">")?;
    let reread = picture.input.log.reread()?.into_inner();
    let mut map = BlockMap::new(reread, picture.input.log.len_at_open(), &picture.read)?;
    let mut rows = 0usize;
    let mut clean_run: Option<(u64, u64)> = None;
    let mut summarised = false;
    while let Some(block) = map.next_block()? {
        let state = report
            .states
            .get(usize::try_from(block.index).unwrap_or(usize::MAX))
            .copied()
            .unwrap_or(block.state);
        if block.index >= FIRST_BLOCKS && state == BlockState::Clean {
            clean_run =
                Some(clean_run.map_or((block.index, block.index), |(a, _)| (a, block.index)));
            continue;
        }
        if let Some(run) = clean_run.take() {
            collapsed(html, run)?;
            rows += 1;
        }
        if rows >= MAX_ROWS {
            writeln!(
                html,
                "<p class=\"muted\">… the rest of the file is not drawn (more than {MAX_ROWS} rows)</p>"
            )?;
            break;
        }
        if html.full() {
            writeln!(
                html,
                "<p class=\"muted\">… {CUT}: the blocks from {} on are not drawn</p>",
                block.index
            )?;
            break;
        }
        summarised |= row(html, index, block.index, state, &block.spans)?;
        rows += 1;
    }
    if let Some(run) = clean_run {
        collapsed(html, run)?;
    }
    writeln!(html, "</div>")?;
    if summarised {
        writeln!(
            html,
            "<p class=\"muted\">In blocks of more than {MAX_SPANS} spans, the spans after the \
             first {} are not drawn one by one: they are drawn as one, its details saying what \
             it holds.</p>",
            MAX_SPANS - 1
        )?;
    }
    writeln!(html, "</section>")?;
    Ok(())
}

fn collapsed(html: &mut impl Write, (first, last): (u64, u64)) -> Result<(), CliError> {
    writeln!(
        html,
        "<div class=\"row s-clean\"><span class=\"label\">{first}–{last}</span><div class=\"bar collapsed\">{} clean blocks from offset {}</div></div>",
        last - first + 1,
        first * BLOCK_SIZE as u64
    )?;
    Ok(())
}

/// A block's row: its spans, at most [`MAX_SPANS`] of them drawn one by one. Returns whether
/// the rest were drawn as one.
fn row(
    html: &mut impl Write,
    file: usize,
    index: u64,
    state: BlockState,
    spans: &[Span],
) -> Result<bool, CliError> {
    let offset = index * BLOCK_SIZE as u64;
    write!(
        html,
        "<div class=\"row s-{}\" id=\"f{file}-b{index}\"><span class=\"label\" title=\"offset {offset}: {}\">{index}</span><div class=\"bar\">",
        state.name(),
        state.meaning()
    )?;
    let (drawn, rest) = if spans.len() > MAX_SPANS {
        spans.split_at(MAX_SPANS - 1)
    } else {
        (spans, &[][..])
    };
    for span in drawn {
        let width = span.len as f64 * 100.0 / BLOCK_SIZE as f64;
        write!(
            html,
            "<i class=\"k-{}\" style=\"width:{width:.3}%\" title=\"{}\"></i>",
            class(&span.kind),
            escape(&details(span))
        )?;
    }
    if let Some(first) = rest.first() {
        let bytes: u64 = rest.iter().map(|s| s.len).sum();
        let damaged = rest.iter().filter(|s| s.kind.is_damage()).count();
        let width = bytes as f64 * 100.0 / BLOCK_SIZE as f64;
        let class = if damaged > 0 {
            "dropped"
        } else {
            class(&first.kind)
        };
        write!(
            html,
            "<i class=\"k-{class}\" style=\"width:{width:.3}%\" title=\"offset {}, {bytes} bytes: {} more spans, {damaged} of them damage, not drawn one by one\"></i>",
            first.offset,
            rest.len(),
        )?;
    }
    writeln!(html, "</div></div>")?;
    Ok(!rest.is_empty())
}

/// The class a span is drawn with.
fn class(kind: &SpanKind) -> &'static str {
    match kind {
        SpanKind::Chunk { .. } if kind.is_damage() => "dropped",
        SpanKind::Chunk { .. } => "chunk",
        other => other.name(),
    }
}

/// A span's hover text: offset, length, type, checksum, and what the reader does with it.
fn details(span: &Span) -> String {
    let mut text = format!("offset {}, {} bytes: ", span.offset, span.len);
    match span.kind {
        SpanKind::Chunk {
            record_type,
            log_number,
            checked,
            type_name,
            ..
        } => {
            let _ = write!(text, "{type_name} chunk (type {record_type})");
            if let Some(n) = log_number {
                let _ = write!(text, ", log number {n}");
            }
            text += if checked {
                ", checksum ok"
            } else {
                ", checksum not checked"
            };
        }
        other => text += &other.name().replace('_', " "),
    }
    if let Some(note) = span.kind.note() {
        text += "\n";
        text += &note;
    }
    text
}

fn legend(html: &mut impl Write, states: &[BlockState]) -> Result<(), CliError> {
    write!(html, "<p class=\"legend\">")?;
    for state in BlockState::ALL.iter().filter(|s| states.contains(s)) {
        write!(
            html,
            "<span><i class=\"s-{}\"></i>{}</span>",
            state.name(),
            state.meaning()
        )?;
    }
    writeln!(html, "</p>")?;
    Ok(())
}

fn damage<W: Write>(
    html: &mut Counted<W>,
    file: usize,
    report: &MapReport,
) -> Result<(), CliError> {
    writeln!(html, "<h3>Damage ({})</h3>", report.corruptions)?;
    if report.damage.is_empty() {
        writeln!(html, "<p>none</p>")?;
        return Ok(());
    }
    writeln!(
        html,
        "<table><tr><th>offset</th><th>bytes</th><th>LevelDB's reason</th><th>what it means</th></tr>"
    )?;
    let mut listed = 0u64;
    for line in &report.damage {
        if html.full() {
            break;
        }
        listed += 1;
        let block = line.offset / BLOCK_SIZE as u64;
        writeln!(
            html,
            "<tr><td class=\"num\"><a href=\"#f{file}-b{block}\">{}</a></td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            line.offset,
            line.bytes,
            escape(&line.reason),
            escape(line.gloss)
        )?;
    }
    writeln!(html, "</table>")?;
    if listed < report.damage.len() as u64 {
        writeln!(
            html,
            "<p class=\"muted\">… {CUT}: {} more not listed</p>",
            report.corruptions - listed
        )?;
    } else if report.corruptions > listed {
        writeln!(
            html,
            "<p class=\"muted\">… and {} more (--max-errors)</p>",
            report.corruptions - listed
        )?;
    }
    Ok(())
}

fn summary(report: &MapReport) -> String {
    let mut line = format!(
        "{} bytes in {} blocks: {} records, {} bytes of payload",
        report.bytes,
        report.states.len(),
        report.records,
        report.payload_bytes
    );
    if report.corruptions > 0 {
        let _ = write!(
            line,
            ", {} bytes dropped in {} corruptions",
            report.dropped_bytes, report.corruptions
        );
    } else {
        line += ", no corruption";
    }
    if let Some(tail) = &report.tail {
        let _ = write!(line, "; {}", tail.describe());
    }
    if let Some(ring) = &report.ring {
        let _ = write!(
            line,
            "; a ring of {} blocks (groups of {}), newest block {} (lap {}), oldest {}",
            ring.blocks, ring.group, ring.newest, ring.lap, ring.oldest
        );
    }
    line
}

/// Text escaped for HTML (in an element or an attribute).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

const HEAD: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>logfmt map</title>
<style>
:root { --clean:#3a7d44; --damaged:#d62728; --torn:#ff7f0e; --zero:#9e9e9e; --empty:#e6e6e6;
        --ring_head:#1f77b4; --ring_tail:#17becf; --not_read:#c5b0d5; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 0 16px 40px; color:#222; }
h2 { font-size: 18px; margin: 24px 0 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 14px 0 6px; }
.summary { font-weight: 600; }
.muted { color: #777; }
.legend span { margin-right: 14px; }
.legend i { display:inline-block; width:12px; height:12px; margin-right:4px; vertical-align:-1px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.row { display:flex; align-items:center; height:14px; margin:1px 0; }
.row:target { outline: 2px solid #000; }
.label { width: 70px; font: 11px ui-monospace, monospace; text-align:right; padding-right:6px; color:#555; }
.bar { display:flex; flex:1; height:12px; background:#f4f4f4; }
.bar.collapsed { font-size: 11px; color:#fff; background: var(--clean); padding-left: 6px; line-height: 12px; }
.bar i { height:100%; box-sizing:border-box; border-right:1px solid #fff6; }
i.s-clean, .k-chunk { background: var(--clean); }
i.s-damaged, .k-dropped, .k-bad_length, .k-checksum_mismatch { background: var(--damaged); }
i.s-torn, .k-torn { background: var(--torn); }
i.s-zero, .k-zero_header { background: var(--zero); }
i.s-empty, .k-erased { background: var(--empty); }
.k-trailer, .k-padding { background: #bcd; }
.k-old_record { background: #8c564b; }
i.s-ring_head { background: var(--ring_head); } i.s-ring_tail { background: var(--ring_tail); }
i.s-not_read { background: var(--not_read); }
.row.s-damaged .label { color: var(--damaged); font-weight: 700; }
.row.s-ring_head .label { color: var(--ring_head); font-weight: 700; }
.row.s-ring_tail .label { color: var(--ring_tail); font-weight: 700; }
.row.s-not_read .bar { background: var(--not_read); }
</style>
</head>
<body>
<h1>logfmt map</h1>
<p class="muted">Every block of 32 KiB as a row of its byte spans; point at a span for its details. Offsets are file offsets.</p>
"#;

impl From<std::io::IntoInnerError<BufWriter<File>>> for CliError {
    fn from(e: std::io::IntoInnerError<BufWriter<File>>) -> Self {
        e.into_error().into()
    }
}
