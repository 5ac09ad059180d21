//! [`StdSink`]: a [`Sink`] over any [`std::io::Write`].

use std::io::{self, Write};

use logfmt_core::Sink;

/// A [`Sink`] over any [`std::io::Write`]: each run of bytes from the
/// [`Writer`](logfmt_core::Writer) is written with [`Write::write_all`], and the writer's
/// flush is [`Write::flush`] (which does not make the data durable: see
/// [`LogWriter::sync`](crate::LogWriter::sync)).
///
/// The writer hands over whole blocks, so an unbuffered [`File`](std::fs::File) is a good
/// destination; a [`BufWriter`](std::io::BufWriter) only helps when records are flushed one by
/// one.
///
/// ```
/// use logfmt_core::Writer;
/// use logfmt_std::advanced::{BLOCK_SIZE, StdSink};
///
/// let mut writer = Writer::new(StdSink::new(Vec::new()), Box::new([0u8; BLOCK_SIZE]));
/// writer.add_record(b"foo")?;
/// writer.flush()?;
/// let (sink, _) = writer.into_parts();
/// assert_eq!(sink.into_inner(), [0xdd, 0x5f, 0xb3, 0x7a, 3, 0, 1, b'f', b'o', b'o']);
/// # Ok::<(), logfmt_core::WriteError<std::io::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StdSink<W>(W);

impl<W: Write> StdSink<W> {
    /// A sink writing to `writer`.
    pub fn new(writer: W) -> Self {
        Self(writer)
    }
}

impl<W> StdSink<W> {
    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.0
    }

    /// The underlying writer, mutably. Writing to it directly corrupts the log.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.0
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.0
    }
}

impl<W: Write> Sink for StdSink<W> {
    type Error = io::Error;

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::{BLOCK_SIZE, WriteError, Writer};

    /// Accepts `room` bytes, then fails.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from(io::ErrorKind::StorageFull));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn blocks_reach_the_writer_whole() -> Result<(), WriteError<io::Error>> {
        let mut writer = Writer::new(StdSink::new(Vec::new()), Box::new([0u8; BLOCK_SIZE]));
        writer.add_record(&[1u8; 40_000])?;
        assert_eq!(writer.sink().get_ref().len(), BLOCK_SIZE);
        writer.flush()?;
        assert_eq!(writer.sink().get_ref().len() as u64, writer.position());
        Ok(())
    }

    #[test]
    fn a_failing_writer_poisons_the_log_writer() {
        let mut writer = Writer::new(
            StdSink::new(Full { room: 100 }),
            Box::new([0u8; BLOCK_SIZE]),
        );
        let first = writer.add_record(&[1u8; 40_000]);
        assert!(
            matches!(first, Err(WriteError::Sink(ref e)) if e.kind() == io::ErrorKind::StorageFull)
        );
        assert!(matches!(writer.add_record(b"x"), Err(WriteError::Poisoned)));
    }
}
