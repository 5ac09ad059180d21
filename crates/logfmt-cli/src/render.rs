//! Report, then render: every command that reports on a file gathers one typed report of it,
//! and this one renderer prints it, as JSON (`--json`: the report serialized, one line, in
//! the layout of every JSON output) or as text (the report's own [`Report::write_text`]).
//! Text and JSON come from the same value, so they cannot disagree.

use std::io::{self, Write};

use serde::Serialize;

use crate::output::write_json_line;

/// A command's report of one file (or one run): its fields, serialized, are the command's
/// JSON; [`write_text`](Self::write_text) tells the same fields as text.
pub(crate) trait Report: Serialize {
    /// Writes the report as text.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()>;
}

/// How a report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rendering {
    /// Text, for a person.
    Text,
    /// One JSON object on one line (`--json`).
    Json,
}

impl Rendering {
    /// `--json` or not.
    pub(crate) fn json(json: bool) -> Self {
        if json { Self::Json } else { Self::Text }
    }
}

/// Prints `report` to `out` as `rendering` says.
pub(crate) fn render(
    out: &mut impl Write,
    report: &impl Report,
    rendering: Rendering,
) -> io::Result<()> {
    match rendering {
        Rendering::Json => write_json_line(out, report),
        Rendering::Text => report.write_text(out),
    }
}

/// Prints `report` on standard output, as JSON with `json`, else as text.
pub(crate) fn print(report: &impl Report, json: bool) -> io::Result<()> {
    render(&mut io::stdout().lock(), report, Rendering::json(json))
}

/// Tells `note` on standard error, as text, whatever the verbosity (it is data lost or left
/// out); nothing useful can be done if standard error is gone.
pub(crate) fn warn(note: &impl Report) {
    let _ = render(&mut io::stderr().lock(), note, Rendering::Text);
}

/// Tells the hint `note` on standard error, as text, unless `--quiet`.
pub(crate) fn hint(note: &impl Report) {
    if crate::notes::verbosity() > crate::notes::Verbosity::Quiet {
        warn(note);
    }
}

/// Damage, one line each, its offsets aligned: `  offset N: B bytes VERB: reason (gloss)`,
/// the verb (`dropped`, `torn`, ...) as `verb` names it for the damage's kind, if any.
pub(crate) fn write_damage_lines(
    out: &mut dyn Write,
    damage: &[logfmt_std::Damage],
    verb: impl Fn(&logfmt_std::DamageKind) -> Option<&'static str>,
) -> io::Result<()> {
    let width = damage
        .iter()
        .map(|d| d.offset.to_string().len())
        .max()
        .unwrap_or(0);
    for d in damage {
        let verb = verb(&d.kind).map_or(String::new(), |verb| format!(" {verb}"));
        writeln!(
            out,
            "  offset {:>width$}: {}{verb}: {}",
            d.offset,
            crate::notes::plural(d.bytes, "byte"),
            crate::gloss::Glossed(&d.kind)
        )?;
    }
    Ok(())
}

/// `n word` or `n words`, and from 1 KiB on what a person reads: `12345 bytes (12.06 KiB)`.
pub(crate) fn human_bytes(n: u64) -> String {
    if n < 1024 {
        crate::notes::plural(n, "byte")
    } else {
        format!("{n} bytes ({})", indicatif::HumanBytes(n))
    }
}
