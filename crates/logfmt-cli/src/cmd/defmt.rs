//! `logfmt defmt`: the defmt frames of a log (a flash image, a ring image, a plain log) kept by
//! `logfmt-defmt`, decoded with the firmware's ELF.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;

use logfmt_std::advanced::LogReader;

use super::cat_report::CatDamage;
use super::defmt_report::{DefmtFrame, DefmtNoTable, DefmtUndecoded};
use crate::defmt_frames::Firmware;
use crate::error::CliError;
use crate::image::Input;
use crate::options::InputArgs;
use crate::progress::Progress;
use crate::render::{Rendering, render, warn};
use crate::scan::{Found, scan};

/// A frame is held whole up to this many bytes (defmt frames are tens of bytes).
const FRAME_LIMIT: usize = 1 << 20;

/// Print the defmt frames of a log, decoded with the firmware's ELF.
///
/// Each record (or record of a pack) of a log written by the `logfmt-defmt` logger holds one
/// defmt frame. They are printed in order as `defmt-print` prints them: the timestamp (if the
/// firmware declares one), the level, the message, then `└─ module @ file:line` (file names
/// relative to the current directory). --json prints one object per frame: {"offset",
/// "index" (in a pack), "level", "timestamp", "message", "file", "line", "module"}.
///
/// A record that is not a frame of this firmware — its string index not in the ELF's defmt
/// table, or its arguments not those of the message — is told in its place (on standard
/// output, with its bytes in hex; in JSON {"offset", "index", "error", "hex"}), and the frames
/// after it are decoded as usual; an ELF without a defmt table makes every record so. Damage
/// is noted on standard error as by `cat`. The log is read as `cat` reads it: a flash image
/// with --erased, a ring image from its oldest block.
#[derive(Debug, clap::Args)]
pub(crate) struct DefmtArgs {
    /// The firmware's ELF (with its debug information for the file:line of each message).
    #[arg(long, value_name = "ELF")]
    elf: PathBuf,
    /// One JSON object per frame.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    input: InputArgs,
}

/// Runs `defmt`.
pub(crate) fn run(args: &DefmtArgs) -> Result<(), CliError> {
    let firmware = Firmware::load(&args.elf)?;
    if !firmware.has_table() {
        warn(&DefmtNoTable { elf: &args.elf });
    }
    let stdout = io::stdout();
    crate::defmt_frames::set_colours(stdout.is_terminal() && !args.json);
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let rendering = if args.json {
        Rendering::Json
    } else {
        Rendering::Text
    };
    for target in crate::targets::expand(&args.input.files.files)? {
        let read = target.read_args(&args.input.read);
        let input = Input::open(&target.path, read.erased)?;
        input.say_disagreements();
        let options = read.options(&input, 0, None)?;
        let mut reader = LogReader::new(input.source()?, &options);
        let mut read_error = None;
        let outcome = scan(&mut reader, &Progress::none(), FRAME_LIMIT, |found| {
            print_found(
                &firmware,
                &input,
                rendering,
                found,
                &mut out,
                &mut read_error,
            )
        })?;
        out.flush()?;
        if let Some(error) = read_error {
            return Err(input.log.read_error(error).into());
        }
        if let Some(first) = outcome.failed_on {
            return Err(input.stopped_at_damage(
                first,
                "--recovery absolute stops at any damage; the frames before it were printed",
            ));
        }
    }
    out.flush()?;
    Ok(())
}

/// Prints what the reader found: a frame (decoded or told undecodable), or a note of damage.
fn print_found(
    firmware: &Firmware,
    input: &Input,
    rendering: Rendering,
    found: Found<'_>,
    out: &mut impl Write,
    read_error: &mut Option<io::Error>,
) -> Result<(), CliError> {
    match found {
        Found::Record {
            offset,
            index,
            data,
        } => {
            let offset = input.offset(offset);
            match firmware.decode(data) {
                Ok(frame) => render(
                    out,
                    &DefmtFrame {
                        offset,
                        index,
                        frame: &frame,
                    },
                    rendering,
                )?,
                Err(error) => render(
                    out,
                    &DefmtUndecoded {
                        offset,
                        index,
                        error: &error,
                        data,
                    },
                    rendering,
                )?,
            }
        }
        Found::Oversized(record) => render(
            out,
            &DefmtUndecoded {
                offset: input.offset(record.offset),
                index: None,
                error: &crate::defmt_frames::Undecodable::TooLong(record.len),
                data: &[],
            },
            rendering,
        )?,
        Found::Damage(damage) => {
            out.flush()?;
            warn(&CatDamage {
                file: input.log.path(),
                damage: &input.damage(damage),
            });
        }
        Found::ReadError { error, corruption } => {
            out.flush()?;
            if let Some(corruption) = corruption {
                warn(&CatDamage {
                    file: input.log.path(),
                    damage: &input.damage(corruption.into()),
                });
            }
            *read_error = Some(error);
        }
    }
    Ok(())
}
