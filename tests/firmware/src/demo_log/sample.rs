//! What the sensor logs: one reading a second and a summary every minute, as text formatted
//! without an allocator; and the sample number a record read back names.

use core::fmt;

/// A sample's record: text, formatted without an allocator.
#[derive(Clone)]
pub struct Text {
    buf: [u8; 512],
    len: usize,
}

impl Text {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("?")
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let dst = self
            .buf
            .get_mut(self.len..self.len + s.len())
            .ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len += s.len();
        Ok(())
    }
}

/// Centi-degrees at sample `n`: jitter on a slow sawtooth.
fn temperature(n: u32) -> u32 {
    2000 + (n * 53) % 61 + (n / 60) % 240
}

/// The record of sample `n`: one reading a second, e.g. `t=12000ms temp=21.37C hum=41.2%`;
/// every minute, a summary of the minute's 60 temperatures instead (about 420 bytes).
pub fn sample(n: u32) -> Text {
    let mut text = Text {
        buf: [0; 512],
        len: 0,
    };
    let t_ms = 1000 * n;
    let _ = if n % 60 == 59 {
        let first = n - 59;
        let (min, max) = (first..=n)
            .map(temperature)
            .fold((u32::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        let _ = fmt::write(
            &mut text,
            format_args!(
                "t={t_ms}ms minute summary: min={}.{:02}C max={}.{:02}C readings=",
                min / 100,
                min % 100,
                max / 100,
                max % 100
            ),
        );
        (first..=n).try_for_each(|k| {
            let t = temperature(k);
            let sep = if k == n { "" } else { "," };
            fmt::write(&mut text, format_args!("{}.{:02}{sep}", t / 100, t % 100))
        })
    } else {
        let hum = 400 + (n * 29) % 45; // per mille
        let temp = temperature(n);
        fmt::write(
            &mut text,
            format_args!(
                "t={t_ms}ms temp={}.{:02}C hum={}.{}%",
                temp / 100,
                temp % 100,
                hum / 10,
                hum % 10
            ),
        )
    };
    text
}

/// The sample a record read back is, if it is exactly [`sample`]`(n)` for some `n`.
pub fn sample_of(data: &[u8]) -> Option<u32> {
    let rest = data.strip_prefix(b"t=")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let t: u32 = core::str::from_utf8(rest.get(..digits)?)
        .ok()?
        .parse()
        .ok()?;
    let n = t / 1000;
    (t.is_multiple_of(1000) && sample(n).as_bytes() == data).then_some(n)
}
