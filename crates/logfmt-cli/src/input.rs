//! Records read from standard input for `logfmt write`: one per line, or length-framed.

use std::fmt;
use std::io::{self, BufRead, ErrorKind};

/// How `write` reads records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum InputFormat {
    /// Each line is a record, without its newline ("\r" is kept). A last line without a
    /// newline is a record too; an empty line is an empty record.
    #[default]
    Lines,
    /// Each record is a u32 little-endian length followed by that many bytes (the output of
    /// `cat --output framed`).
    Framed,
}

/// Bytes in a frame header.
const FRAME_HEADER: usize = 4;

/// The longest line read as a record by default (`--line-limit`): 64 MiB. A line is held
/// whole in memory until it ends.
pub(crate) const LINE_LIMIT: usize = 64 << 20;

/// Why the input could not be read as records.
#[derive(Debug)]
pub(crate) enum InputError {
    /// Reading failed.
    Read(io::Error),
    /// The input ended inside a frame header.
    TruncatedHeader {
        /// Input offset of the frame.
        offset: u64,
        /// Header bytes present.
        got: usize,
    },
    /// The input ended inside a frame's payload.
    TruncatedFrame {
        /// Input offset of the frame (its header).
        offset: u64,
        /// The length the header declares.
        declared: u32,
        /// Payload bytes present.
        got: u64,
    },
    /// A line is longer than the limit (`--line-limit`).
    LineTooLong {
        /// Input offset of the line.
        offset: u64,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The record being read (a line under a --line-limit larger than memory, a frame) needs
    /// more memory than can be had.
    OutOfMemory {
        /// Input offset of the record.
        offset: u64,
        /// The bytes of it held when memory ran out.
        held: usize,
    },
}

impl InputError {
    /// Whether the input itself is malformed (rather than unreadable).
    pub(crate) fn is_malformed(&self) -> bool {
        matches!(
            self,
            Self::TruncatedHeader { .. } | Self::TruncatedFrame { .. }
        )
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(_) => f.write_str("cannot read standard input"),
            Self::TruncatedHeader { offset, got } => write!(
                f,
                "framed input ends inside the frame header at byte offset {offset} \
                 ({got} of {FRAME_HEADER} bytes)"
            ),
            Self::TruncatedFrame {
                offset,
                declared,
                got,
            } => write!(
                f,
                "framed input ends inside the frame at byte offset {offset}: \
                 it declares {declared} bytes, only {got} follow"
            ),
            Self::LineTooLong { offset, limit } => write!(
                f,
                "the line at byte offset {offset} of standard input is longer than \
                 {limit} bytes"
            ),
            Self::OutOfMemory { offset, held } => write!(
                f,
                "the record at byte offset {offset} of standard input does not fit in memory \
                 ({held} bytes of it held; a smaller --line-limit refuses such a line early)"
            ),
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for InputError {
    fn from(e: io::Error) -> Self {
        Self::Read(e)
    }
}

/// Splits an input stream into records.
#[derive(Debug)]
pub(crate) struct Records<R> {
    input: R,
    format: InputFormat,
    /// Input bytes consumed so far.
    offset: u64,
    /// The longest line read as a record.
    line_limit: usize,
}

impl<R: BufRead> Records<R> {
    /// Records of `format` from `input`, lines of at most [`LINE_LIMIT`] bytes.
    pub(crate) fn new(input: R, format: InputFormat) -> Self {
        Self {
            input,
            format,
            offset: 0,
            line_limit: LINE_LIMIT,
        }
    }

    /// Lines longer than `limit` bytes (without their newline) are an error
    /// ([`InputError::LineTooLong`]), found once `limit` bytes of the line are held.
    pub(crate) fn line_limit(mut self, limit: usize) -> Self {
        self.line_limit = limit;
        self
    }

    /// Reads the next record into `record` (replacing its contents); `false` at the end of the
    /// input. A record is only complete when this returns `Ok(true)`.
    pub(crate) fn next_into(&mut self, record: &mut Vec<u8>) -> Result<bool, InputError> {
        record.clear();
        match self.format {
            InputFormat::Lines => self.next_line(record),
            InputFormat::Framed => self.next_frame(record),
        }
    }

    fn next_line(&mut self, record: &mut Vec<u8>) -> Result<bool, InputError> {
        let start = self.offset;
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if available.is_empty() {
                // A last line without a newline is a record too.
                return Ok(self.offset > start);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let data = newline.map_or(available, |at| available.get(..at).unwrap_or_default());
            if data.len() > self.line_limit.saturating_sub(record.len()) {
                return Err(InputError::LineTooLong {
                    offset: start,
                    limit: self.line_limit,
                });
            }
            // Grown by doubling, but never past the limit; memory that cannot be had is an
            // error, not an abort (a --line-limit larger than memory).
            let needed = record.len() + data.len();
            if needed > record.capacity() {
                let grown = needed.max(record.capacity() * 2).min(self.line_limit);
                record
                    .try_reserve_exact(grown - record.len())
                    .or_else(|_| record.try_reserve_exact(data.len()))
                    .map_err(|_| InputError::OutOfMemory {
                        offset: start,
                        held: record.len(),
                    })?;
            }
            record.extend_from_slice(data);
            let used = newline.map_or(available.len(), |at| at + 1);
            self.input.consume(used);
            self.offset += used as u64;
            if newline.is_some() {
                return Ok(true);
            }
        }
    }

    fn next_frame(&mut self, record: &mut Vec<u8>) -> Result<bool, InputError> {
        let start = self.offset;
        let mut header = [0u8; FRAME_HEADER];
        let got = self.read_up_to(&mut header)?;
        if got == 0 {
            return Ok(false);
        }
        if got < FRAME_HEADER {
            return Err(InputError::TruncatedHeader { offset: start, got });
        }
        let declared = u32::from_le_bytes(header);
        // Read in the chunks the input hands over, so that a length the input cannot back is
        // found out without allocating it first.
        let mut remaining = u64::from(declared);
        while remaining > 0 {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if available.is_empty() {
                let got = u64::from(declared) - remaining;
                return Err(InputError::TruncatedFrame {
                    offset: start,
                    declared,
                    got,
                });
            }
            let take =
                usize::try_from(remaining).map_or(available.len(), |r| r.min(available.len()));
            record
                .try_reserve(take)
                .map_err(|_| InputError::OutOfMemory {
                    offset: start,
                    held: record.len(),
                })?;
            record.extend_from_slice(available.get(..take).unwrap_or_default());
            self.input.consume(take);
            self.offset += take as u64;
            remaining -= take as u64;
        }
        Ok(true)
    }

    /// Reads until `buf` is full or the input ends; returns the bytes read.
    fn read_up_to(&mut self, buf: &mut [u8]) -> Result<usize, InputError> {
        let mut got = 0;
        while let Some(rest) = buf.get_mut(got..) {
            if rest.is_empty() {
                break;
            }
            match self.input.read(rest) {
                Ok(0) => break,
                Ok(n) => {
                    let n = n.min(rest.len());
                    got += n;
                    self.offset += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    fn all(input: &[u8], format: InputFormat) -> Result<Vec<Vec<u8>>, InputError> {
        let mut records = Records::new(input, format);
        let mut out = Vec::new();
        let mut record = Vec::new();
        while records.next_into(&mut record)? {
            out.push(record.clone());
        }
        Ok(out)
    }

    fn frame(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            out.extend_from_slice(&(r.len() as u32).to_le_bytes());
            out.extend_from_slice(r);
        }
        out
    }

    #[test]
    fn lines() -> Result<(), InputError> {
        let lines = |input: &[u8]| all(input, InputFormat::Lines);
        assert_eq!(lines(b"")?, Vec::<Vec<u8>>::new());
        assert_eq!(lines(b"a\nbc\n")?, [&b"a"[..], b"bc"]);
        assert_eq!(lines(b"a\nbc")?, [&b"a"[..], b"bc"]);
        assert_eq!(lines(b"\n\n")?, [&b""[..], b""]);
        assert_eq!(lines(b"\n")?, [&b""[..]]);
        assert_eq!(lines(b"x\r\n\r\n")?, [&b"x\r"[..], b"\r"]);
        assert_eq!(lines(b"\xff\x00\n")?, [&b"\xff\x00"[..]]);
        Ok(())
    }

    #[test]
    fn frames() -> Result<(), InputError> {
        let records: [&[u8]; 4] = [b"", b"abc", &[0u8; 100_000], b"\n"];
        assert_eq!(all(&frame(&records), InputFormat::Framed)?, records);
        assert_eq!(all(b"", InputFormat::Framed)?, Vec::<Vec<u8>>::new());
        Ok(())
    }

    #[test]
    fn a_truncated_header_names_its_offset() {
        let mut input = frame(&[b"abc", b""]);
        input.extend_from_slice(&[1, 0]);
        let err = all(&input, InputFormat::Framed).err();
        assert!(
            matches!(
                err,
                Some(InputError::TruncatedHeader { offset: 11, got: 2 })
            ),
            "{err:?}"
        );
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("byte offset 11"), "{text}");
    }

    #[test]
    fn a_truncated_frame_names_its_offset() {
        let mut input = frame(&[b"abc"]);
        input.extend_from_slice(&[5, 0, 0, 0, b'x', b'y']);
        let err = all(&input, InputFormat::Framed).err();
        let expected = InputError::TruncatedFrame {
            offset: 7,
            declared: 5,
            got: 2,
        };
        assert_eq!(format!("{err:?}"), format!("{:?}", Some(expected)));
    }

    #[test]
    fn a_huge_declared_length_is_not_allocated_up_front() {
        let mut input = vec![0xff, 0xff, 0xff, 0xff];
        input.extend_from_slice(&[7; 10]);
        let mut records = Records::new(&input[..], InputFormat::Framed);
        let mut record = Vec::new();
        let err = records.next_into(&mut record).err();
        assert!(
            matches!(
                err,
                Some(InputError::TruncatedFrame {
                    offset: 0,
                    declared: u32::MAX,
                    got: 10
                })
            ),
            "{err:?}"
        );
        assert!(record.capacity() < 1 << 20);
    }

    #[test]
    fn lines_are_limited() {
        let limited = |input: &[u8], limit: usize| {
            let mut records = Records::new(input, InputFormat::Lines).line_limit(limit);
            let mut out = Vec::new();
            let mut record = Vec::new();
            loop {
                match records.next_into(&mut record) {
                    Ok(true) => out.push(record.clone()),
                    Ok(false) => return Ok(out),
                    Err(e) => return Err((out, e, record.capacity())),
                }
            }
        };
        // The newline is not counted; a line of exactly the limit is a record.
        assert_eq!(
            limited(b"abc\nd\nabc", 3).ok(),
            Some(vec![b"abc".to_vec(), b"d".to_vec(), b"abc".to_vec()])
        );
        let Err((before, err, _)) = limited(b"ab\nabcd\nx\n", 3) else {
            panic!("a line of 4 bytes passed a limit of 3")
        };
        assert_eq!(before, [b"ab".to_vec()]);
        assert!(
            matches!(
                err,
                InputError::LineTooLong {
                    offset: 3,
                    limit: 3
                }
            ),
            "{err:?}"
        );
        assert!(!err.is_malformed());
        assert!(err.to_string().contains("byte offset 3"), "{err}");
        // A line without an end is refused once it passes the limit, not held whole.
        let endless = vec![b'x'; 1 << 20];
        let reader = BufReader::with_capacity(4096, &endless[..]);
        let mut records = Records::new(reader, InputFormat::Lines).line_limit(10_000);
        let mut record = Vec::new();
        let err = records.next_into(&mut record).err();
        assert!(
            matches!(
                err,
                Some(InputError::LineTooLong {
                    offset: 0,
                    limit: 10_000
                })
            ),
            "{err:?}"
        );
        assert!(record.len() <= 10_000);
    }

    /// Hands out at most 3 bytes per read, interrupted before each.
    struct Trickle<'a>(&'a [u8], bool);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(3);
            self.0.read(&mut buf[..n])
        }
    }

    #[test]
    fn short_and_interrupted_reads() -> Result<(), InputError> {
        let records: [&[u8]; 3] = [b"hello", b"", b"world!"];
        let framed = frame(&records);
        for (input, format) in [
            (&framed[..], InputFormat::Framed),
            (b"hello\n\nworld!", InputFormat::Lines),
        ] {
            let mut reader =
                Records::new(BufReader::with_capacity(2, Trickle(input, false)), format);
            let mut got = Vec::new();
            let mut record = Vec::new();
            while reader.next_into(&mut record)? {
                got.push(record.clone());
            }
            assert_eq!(got, records, "{format:?}");
        }
        Ok(())
    }
}
