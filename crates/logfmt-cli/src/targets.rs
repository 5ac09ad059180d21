//! The files a reading command reads: its FILE arguments, with `-` for standard input and a
//! database directory standing for its MANIFEST and live write-ahead logs.

use std::io::Write as _;
use std::path::PathBuf;

use std::borrow::Cow;

use logfmt_std::content::{Database, DbFileKind};

use crate::error::CliError;
use crate::format::FormatName;
use crate::options::ReadArgs;

/// A file to read.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// Its path (`/dev/stdin` for `-`).
    pub(crate) path: PathBuf,
    /// What it is, for a file found in a database directory.
    pub(crate) kind: Option<DbFileKind>,
}

/// Runs `one` on each file `args` name ([`expand`]), with whether there are several; in text
/// (`json` false), each file's output is headed `==> PATH <==` when there are several.
pub(crate) fn each(
    args: &[PathBuf],
    json: bool,
    mut one: impl FnMut(&Target, bool) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let targets = expand(args)?;
    let several = targets.len() > 1;
    for target in &targets {
        if several && !json {
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "==> {} <==",
                logfmt_std::advanced::EscapedPath::new(&target.path)
            )?;
        }
        one(target, several)?;
    }
    Ok(())
}

/// The path `-` stands for.
pub(crate) const STDIN: &str = "/dev/stdin";

/// The files `args` name, in order: `-` is standard input; a directory is a LevelDB or
/// RocksDB database, read as its MANIFEST and then its live logs in log-number order (the
/// logs older than the MANIFEST's oldest needed log are noted on standard error, not read);
/// a database's file that is not a regular file is refused.
pub(crate) fn expand(args: &[PathBuf]) -> Result<Vec<Target>, CliError> {
    let mut targets = Vec::new();
    for arg in args {
        if arg.as_os_str() == "-" {
            targets.push(Target {
                path: PathBuf::from(STDIN),
                kind: None,
            });
        } else if arg.is_dir() {
            let db = Database::open(arg)?;
            let obsolete = db.obsolete_wals();
            if let (Some(first), Some(floor)) = (obsolete.first(), db.floor()) {
                let last = obsolete.last().unwrap_or(first);
                let which = if first.number == last.number {
                    format!("log {}", first.number)
                } else {
                    format!("logs {}..{}", first.number, last.number)
                };
                crate::notes::hint(
                    arg,
                    &format!(
                        "{} older than log {floor} ({which}) not read: the MANIFEST says they \
                         are no longer needed",
                        crate::notes::plural(obsolete.len() as u64, "write-ahead log"),
                    ),
                );
            }
            for file in db.files() {
                // A log is read to its end: a name that leads to a device or a FIFO (a
                // link to /dev/zero) would be read without end, or wait for a writer.
                if std::fs::metadata(&file.path).is_ok_and(|meta| !meta.is_file()) {
                    return Err(logfmt_std::Error::NotAFile {
                        path: file.path.clone(),
                    }
                    .into());
                }
                targets.push(Target {
                    path: file.path.clone(),
                    kind: Some(file.kind),
                });
            }
        } else {
            targets.push(Target {
                path: arg.clone(),
                kind: None,
            });
        }
    }
    Ok(targets)
}

impl Target {
    /// How to read this file: `args`, except that a write-ahead log of a database directory
    /// with no --format nor --log-number is read with --format auto (RocksDB may have written
    /// it in its recyclable format).
    pub(crate) fn read_args<'a>(&self, args: &'a ReadArgs) -> Cow<'a, ReadArgs> {
        if self.kind == Some(DbFileKind::Wal)
            && args.format.format.is_none()
            && args.format.log_number.is_none()
        {
            let mut args = args.clone();
            args.format.format = Some(FormatName::Auto);
            args.format.implied = true;
            Cow::Owned(args)
        } else {
            Cow::Borrowed(args)
        }
    }
}
