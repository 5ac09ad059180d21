//! What a record holds, in one line: a `WriteBatch`, a `VersionEdit`, or its bytes.

use std::fmt::Write as _;

use logfmt_std::content::{Op, VersionEdit, WriteBatch};

/// What the records of a file hold, decided by its name as `logfmt` decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ContentKind {
    /// Anything: shown as bytes.
    #[default]
    Raw,
    /// A write-ahead log's `WriteBatch`es (`NNNNNN.log`).
    WriteBatch,
    /// A MANIFEST's `VersionEdit`s (`MANIFEST-NNNNNN`).
    VersionEdit,
}

impl ContentKind {
    /// The kind a file of this name holds: `NNNNNN.log` write batches, `MANIFEST-NNNNNN`
    /// version edits, anything else raw.
    ///
    /// ```
    /// use logfmt_web::ContentKind;
    /// assert_eq!(ContentKind::by_name("000005.log"), ContentKind::WriteBatch);
    /// assert_eq!(ContentKind::by_name("MANIFEST-000002"), ContentKind::VersionEdit);
    /// assert_eq!(ContentKind::by_name("flash.img"), ContentKind::Raw);
    /// ```
    #[must_use]
    pub fn by_name(name: &str) -> Self {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if name.strip_suffix(".log").is_some_and(digits) {
            Self::WriteBatch
        } else if name.strip_prefix("MANIFEST-").is_some_and(digits) {
            Self::VersionEdit
        } else {
            Self::Raw
        }
    }

    /// Its name in reports: `raw`, `write-batch`, `version-edit`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::WriteBatch => "write-batch",
            Self::VersionEdit => "version-edit",
        }
    }
}

/// How many operations or fields one line shows before it says how many more there are.
const SHOWN: usize = 8;
/// How many bytes of a key, value or raw record one line shows.
const BYTES_SHOWN: usize = 48;

/// The record `data` in one line, decoded as `kind`; `Err` with the reason when it does not
/// decode (the line then shows its bytes).
///
/// ```
/// use logfmt_web::{ContentKind, describe};
/// assert_eq!(describe(ContentKind::Raw, b"hi\n"), Ok("\"hi\\n\" (3 bytes)".to_owned()));
/// assert!(describe(ContentKind::WriteBatch, b"short").is_err());
/// ```
///
/// # Errors
/// The decoder's reason, for a record that is not what `kind` says.
pub fn describe(kind: ContentKind, data: &[u8]) -> Result<String, String> {
    match kind {
        ContentKind::Raw => Ok(bytes(data)),
        ContentKind::WriteBatch => write_batch(data),
        ContentKind::VersionEdit => version_edit(data),
    }
}

/// Whether the record `data` of `kind` holds `key`: as a key of its `WriteBatch`, or anywhere
/// in its bytes otherwise.
#[must_use]
pub(crate) fn holds_key(kind: ContentKind, data: &[u8], key: &[u8]) -> bool {
    if key.is_empty() {
        return false;
    }
    if kind == ContentKind::WriteBatch
        && let Ok(batch) = WriteBatch::new(data)
    {
        return batch
            .ops()
            .filter_map(Result::ok)
            .any(|op| op.key().is_some_and(|k| contains(k, key)));
    }
    contains(data, key)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn write_batch(data: &[u8]) -> Result<String, String> {
    let batch = WriteBatch::new(data).map_err(|e| e.to_string())?;
    let mut line = format!("seq {} count {}:", batch.sequence(), batch.count());
    let mut ops = 0usize;
    for op in batch.ops() {
        let op = op.map_err(|e| e.to_string())?;
        ops += 1;
        if ops > SHOWN {
            continue;
        }
        line.push(' ');
        line.push_str(op.name());
        if let Some(cf) = op.cf().filter(|&cf| cf != 0) {
            let _ = write!(line, "[cf {cf}]");
        }
        if let Some(key) = op.key() {
            let _ = write!(line, " {}", escape(key));
        }
        if let Op::DeleteRange { end, .. } = op {
            let _ = write!(line, "..{}", escape(end));
        }
        if let Some(value) = op.value() {
            let _ = write!(line, " = {}", escape(value));
        }
        line.push(';');
    }
    if ops > SHOWN {
        let _ = write!(line, " … {} more", ops - SHOWN);
    }
    Ok(line)
}

fn version_edit(data: &[u8]) -> Result<String, String> {
    let mut line = String::from("edit:");
    let mut fields = 0usize;
    for field in VersionEdit::new(data).fields() {
        let field = field.map_err(|e| e.to_string())?;
        fields += 1;
        if fields <= SHOWN {
            let _ = write!(line, " {};", field.name());
        }
    }
    if fields > SHOWN {
        let _ = write!(line, " … {} more", fields - SHOWN);
    }
    Ok(line)
}

/// A record's first bytes, escaped, and its length.
pub(crate) fn bytes(data: &[u8]) -> String {
    format!("{} ({} bytes)", escape(data), data.len())
}

/// Up to [`BYTES_SHOWN`] bytes as a quoted string: printable ASCII as it is, the rest escaped.
fn escape(data: &[u8]) -> String {
    let shown = data.get(..BYTES_SHOWN).unwrap_or(data);
    let mut out = String::from("\"");
    for &b in shown {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
    if data.len() > shown.len() {
        out.push('…');
    }
    out
}
