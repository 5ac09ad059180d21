//! Stack high-water marks by painting: fill the free stack below the current stack pointer with
//! a pattern, run the code, and find the deepest word that changed.

/// The paint.
const PAINT: u32 = 0xa5c3_5a3c;
/// How far below the stack pointer to paint (and so the most that can be measured).
pub const WINDOW: usize = 64 * 1024;

/// Runs `f` and returns the bytes of stack it used below this function's frame (the call into
/// `f` included). Interrupts must not run meanwhile (none are enabled in the probes).
#[inline(never)]
pub fn high_water(f: &mut dyn FnMut()) -> usize {
    let sp = cortex_m::register::msp::read() as usize & !3;
    let bottom = sp - WINDOW;
    // Paint with volatile stores in a loop that calls nothing, so that nothing of this
    // function lives below `sp` while painting.
    let mut at = bottom;
    while at < sp {
        // SAFETY: `bottom..sp` is free stack (below the stack pointer) inside the 4 MiB RAM.
        unsafe { core::ptr::write_volatile(at as *mut u32, PAINT) };
        at += 4;
    }
    f();
    let mut at = bottom;
    while at < sp {
        // SAFETY: as above.
        if unsafe { core::ptr::read_volatile(at as *const u32) } != PAINT {
            break;
        }
        at += 4;
    }
    sp - at
}
