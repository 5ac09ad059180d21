//! A minimal test harness for bare metal: a table of `fn`s, one line per test, a final
//! `N passed, M failed` line, and the exit status through semihosting (QEMU exits with it).

use core::fmt;

use cortex_m_semihosting::{debug, hprintln};

use crate::fmtbuf::FmtBuf;

/// Why a test failed.
pub struct Fail(pub FmtBuf<240>);

impl Fail {
    /// A failure described by `args`.
    pub fn new(args: fmt::Arguments<'_>) -> Self {
        Self(FmtBuf::format(args))
    }
}

/// What a test returns.
pub type TestResult = Result<(), Fail>;

/// Fails the current test with a formatted message.
#[macro_export]
macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::harness::Fail::new(format_args!($($arg)*)))
    };
}

/// Fails the current test with a formatted message unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            $crate::fail!($($arg)*);
        }
    };
}

/// One test: a name and a function of the shared context (the RAM buffers).
pub struct Case<C> {
    /// Printed in `test NAME ... ok`.
    pub name: &'static str,
    /// The test.
    pub run: fn(&mut C) -> TestResult,
}

/// Centiseconds since the program started (semihosting `SYS_CLOCK`; host time under QEMU).
pub fn clock_cs() -> u32 {
    // SAFETY: SYS_CLOCK takes no argument block and only returns a number.
    unsafe { cortex_m_semihosting::syscall1(cortex_m_semihosting::nr::CLOCK, 0) as u32 }
}

/// Which core this is, from the CPUID register: e.g. `Cortex-M4 r0p1`.
pub fn core_name() -> FmtBuf<32> {
    // SAFETY: CPUID is a read-only System Control Block register, always present.
    let cpuid = unsafe { (*cortex_m::peripheral::CPUID::PTR).base.read() };
    let part = (cpuid >> 4) & 0xfff;
    let name = match part {
        0xc23 => "Cortex-M3",
        0xc24 => "Cortex-M4",
        0xc27 => "Cortex-M7",
        0xc20 => "Cortex-M0",
        0xc60 => "Cortex-M0+",
        _ => "Cortex-M?",
    };
    FmtBuf::format(format_args!(
        "{name} r{}p{}",
        (cpuid >> 20) & 0xf,
        cpuid & 0xf
    ))
}

/// Runs every case against `ctx`, prints one line per case and the summary, and exits QEMU
/// with status 0 if all passed, 1 otherwise.
pub fn run_all<C>(suite: &str, ctx: &mut C, cases: &[Case<C>]) -> ! {
    hprintln!("running {} tests ({suite}) on {}", cases.len(), core_name());
    let (mut passed, mut failed) = (0u32, 0u32);
    for case in cases {
        let start = clock_cs();
        let result = (case.run)(ctx);
        let took = clock_cs().wrapping_sub(start);
        let secs = Secs(took);
        match result {
            Ok(()) => {
                passed += 1;
                hprintln!("test {} ... ok ({secs})", case.name);
            }
            Err(fail) => {
                failed += 1;
                hprintln!("test {} ... FAILED ({secs}): {}", case.name, fail.0);
            }
        }
    }
    hprintln!("{passed} passed, {failed} failed");
    exit(failed == 0)
}

/// Ends the program: QEMU exits with status 0 (`ok`) or 1.
pub fn exit(ok: bool) -> ! {
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Only reached without a debugger or semihosting host.
    #[allow(clippy::empty_loop)]
    loop {}
}

/// Centiseconds shown as seconds.
struct Secs(u32);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}s", self.0 / 100, self.0 % 100)
    }
}
