//! `--erased`: the byte erased flash reads as.

/// `--erased`: the erased byte of a flash image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Erased {
    /// NOR flash: erased bytes read 0xFF.
    #[value(name = "ff")]
    Ff,
    /// Parts whose erased bytes read 0x00.
    #[value(name = "00")]
    Zero,
}

impl Erased {
    /// The byte erased flash reads as.
    pub(crate) fn byte(self) -> u8 {
        match self {
            Self::Ff => 0xff,
            Self::Zero => 0x00,
        }
    }
}
