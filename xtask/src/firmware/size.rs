//! `cargo xtask size [--check]`: flash and RAM of the reference firmware against a baseline
//! without logfmt, for each CRC table size, with state sizes and stack high-water marks (the
//! stack probe under QEMU); `--check` fails over budget.

use std::fmt::Write as _;
use std::path::Path;

use super::emulator::{QEMU_TIMEOUT, ensure_qemu, run_qemu};
use super::{build, executable};
use crate::cmd::{Error, Result, project_root};
use crate::toolchain::{THUMBV7EM, ensure_targets};

/// The budget for writer + reader + CRC (1 KiB table): the whole firmware log (ring,
/// small-RAM writer, small-RAM reader, CRC) in 9 KiB, the readers' padding rule (a full
/// region read at 1.08-1.19x the bytes returned), the record numbering of seeks and read
/// cursors, a refused program or erase survived (the unit left, the record written again,
/// the session's first program read back: about 1.6 KiB of the writer) and the one chunk
/// classifier (about 0.3 KiB of the reader) included. (7 KiB until the writer learnt to
/// survive a refused program.)
const FLASH_BUDGET: u64 = 9 * 1024;
/// The RAM budget for the small-RAM writer's and reader's state together, besides the caller's
/// record buffer (1 KiB).
const RAM_BUDGET: u64 = 1024;

/// Section sizes of an ELF image.
#[derive(Debug, Default, Clone, Copy)]
struct Sections {
    vector_table: u64,
    text: u64,
    rodata: u64,
    data: u64,
    bss: u64,
}

impl Sections {
    /// Flash: the vector table, code, constants and the initial values of `.data`.
    fn flash(&self) -> u64 {
        self.vector_table + self.text + self.rodata + self.data
    }

    /// Static RAM.
    fn ram(&self) -> u64 {
        self.data + self.bss
    }
}

/// Reads the section headers of a 32-bit little-endian ELF file.
fn elf_sections(path: &Path) -> Result<Sections> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", path.display())))?;
    parse_elf(&bytes).ok_or_else(|| {
        Error::Failed(format!(
            "{} is not a 32-bit little-endian ELF file",
            path.display()
        ))
    })
}

fn parse_elf(bytes: &[u8]) -> Option<Sections> {
    let u16_at = |at: usize| -> Option<u64> {
        Some(u64::from(u16::from_le_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let u32_at = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            bytes.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    // \x7fELF, ELFCLASS32, ELFDATA2LSB.
    if bytes.get(..6)? != b"\x7fELF\x01\x01" {
        return None;
    }
    let shoff = usize::try_from(u32_at(0x20)?).ok()?;
    let shentsize = usize::try_from(u16_at(0x2e)?).ok()?;
    let shnum = usize::try_from(u16_at(0x30)?).ok()?;
    let shstrndx = usize::try_from(u16_at(0x32)?).ok()?;
    let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let strtab = usize::try_from(u32_at(header(shstrndx)? + 16)?).ok()?;
    let mut sections = Sections::default();
    for i in 0..shnum {
        let h = header(i)?;
        let name_at = strtab.checked_add(usize::try_from(u32_at(h)?).ok()?)?;
        let name_len = bytes.get(name_at..)?.iter().position(|&b| b == 0)?;
        let name = bytes.get(name_at..name_at + name_len)?;
        let size = u32_at(h + 20)?;
        match name {
            b".vector_table" => sections.vector_table += size,
            b".text" => sections.text += size,
            b".rodata" => sections.rodata += size,
            b".data" => sections.data += size,
            b".bss" | b".uninit" => sections.bss += size,
            _ => {}
        }
    }
    Some(sections)
}

/// What the stack probe printed: `probe: KEY... VALUE` lines.
fn probe_value(output: &str, key: &str) -> Option<u64> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("probe: ")?.strip_prefix(key)?;
        rest.trim().parse().ok()
    })
}

/// `cargo xtask size [--check]`.
pub(crate) fn run(check: bool) -> Result {
    ensure_targets(&[THUMBV7EM])?;
    let target = THUMBV7EM;
    // (row label, features, binaries)
    let probes = ["size-probe", "size-writer", "size-reader", "size-cursor"];
    let variants: [(&str, &[&str]); 3] = [
        ("CRC 1 KiB table (default)", &[]),
        ("CRC without table (crc-no-table)", &["crc-no-table"]),
        ("CRC 16 KiB table (crc-table-16k)", &["crc-table-16k"]),
    ];
    // (label, sections); a row without sections is a group heading.
    let mut rows: Vec<(String, Option<Sections>)> = Vec::new();
    let mut baseline = None;
    let mut stack_elf = None;
    // The defmt flight recorder: (size-writer, size-defmt), and its cost probe.
    let mut defmt_sizes = None;
    let mut cost_elf = None;
    for (i, (label, features)) in variants.iter().enumerate() {
        let mut bins: Vec<&str> = probes.to_vec();
        if i == 0 {
            bins.extend(["size-baseline", "stack-probe", "size-defmt", "defmt-cost"]);
        }
        let built = build(target, &bins, features)?;
        if i == 0 {
            baseline = Some(elf_sections(&executable(&built, "size-baseline")?)?);
            // Copy: the next builds overwrite it.
            let elf = executable(&built, "stack-probe")?;
            let copy = elf.with_file_name("stack-probe.size-task");
            std::fs::copy(&elf, &copy)
                .map_err(|e| Error::Failed(format!("copying {}: {e}", elf.display())))?;
            stack_elf = Some(copy);
            defmt_sizes = Some((
                elf_sections(&executable(&built, "size-writer")?)?,
                elf_sections(&executable(&built, "size-defmt")?)?,
            ));
            let elf = executable(&built, "defmt-cost")?;
            let copy = elf.with_file_name("defmt-cost.size-task");
            std::fs::copy(&elf, &copy)
                .map_err(|e| Error::Failed(format!("copying {}: {e}", elf.display())))?;
            cost_elf = Some(copy);
        }
        rows.push(((*label).to_owned(), None));
        for (bin, what) in probes.iter().zip([
            "writer + reader",
            "writer only",
            "reader only",
            "writer + reader + read cursor",
        ]) {
            let sections = elf_sections(&executable(&built, bin)?)?;
            rows.push((format!("  {what}"), Some(sections)));
        }
    }
    let baseline = baseline.unwrap_or_default();
    // The nRF52840 example, whole: a firmware on a real chip's HAL.
    let example = elf_sections(&super::example::build()?)?;

    // State sizes and stack high-water marks, from the stack probe under QEMU.
    let stack = match stack_elf {
        Some(elf) => match ensure_qemu() {
            Ok(_) => {
                println!("\n-- stack probe under QEMU (mps2-an386, Cortex-M4F) --");
                let run = run_qemu("mps2-an386", &elf, &project_root(), QEMU_TIMEOUT, "  ")?;
                if run.status.is_some_and(|s| s.success()) {
                    Some(run.stdout)
                } else {
                    return Err(Error::Failed(
                        "the stack probe failed under QEMU".to_owned(),
                    ));
                }
            }
            Err(e) => {
                println!("no stack figures: {e}");
                None
            }
        },
        None => None,
    };

    // The report.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nReference firmware: {target}, opt-level \"s\", LTO, codegen-units 1, panic-halt; a \
         NOR-flash log kept as a ring (the small-RAM WordWriter and WordReader: no block buffer) over a \
         memory-mapped flash driver.\n\
         The baseline is the same firmware without logfmt (it programs and reads the records raw).\n\
         In both, the 1 KiB scratch (the caller's record buffer) is a static (.bss), as a firmware's \
         large buffers are.\nlogfmt's cost = flash (.vector_table + .text + .rodata + .data) \
         minus the baseline's.\n"
    );
    let _ = writeln!(
        out,
        "  {:<44} {:>6} {:>7} {:>5} {:>5} {:>6} {:>14}",
        "firmware", ".text", ".rodata", ".data", ".bss", "flash", "logfmt's cost"
    );
    let line = |out: &mut String, label: &str, s: &Sections, cost: Option<i64>| {
        let cost = cost.map_or_else(|| "-".to_owned(), |c| format!("{c} B"));
        let _ = writeln!(
            out,
            "  {label:<44} {:>6} {:>7} {:>5} {:>5} {:>6} {cost:>14}",
            s.text,
            s.rodata,
            s.data,
            s.bss,
            s.flash()
        );
    };
    line(&mut out, "baseline (no logfmt)", &baseline, None);
    let cost_of = |s: &Sections| s.flash() as i64 - baseline.flash() as i64;
    for (label, sections) in &rows {
        match sections {
            Some(sections) => line(&mut out, label, sections, Some(cost_of(sections))),
            None => {
                let _ = writeln!(out, "  {label}");
            }
        }
    }
    let _ = writeln!(out);
    line(
        &mut out,
        "nRF52840 example (whole firmware)",
        &example,
        None,
    );
    let _ = writeln!(
        out,
        "  (crates/logfmt-example-nrf: embassy-nrf's NVMC driver made async, the ring's async \
         writer and reader, an executor, a timer, defmt over RTT; flash {} B, static RAM {} B \
         (.data + .bss, defmt-rtt's 1 KiB buffer included), its main task's futures included)",
        example.flash(),
        example.ram()
    );
    // The first probe row: writer + reader with the default 1 KiB table.
    let first = rows.iter().find_map(|(_, s)| *s).unwrap_or_default();
    let flash_cost = cost_of(&first);
    let static_ram = first.ram() as i64 - baseline.ram() as i64;

    let mut over = Vec::new();
    let _ = writeln!(out);
    let flash_ok = flash_cost <= FLASH_BUDGET as i64;
    let _ = writeln!(
        out,
        "  flash: writer + reader + CRC (1 KiB table) = {flash_cost} B ({:.2} KiB); budget {} B: {}",
        flash_cost as f64 / 1024.0,
        FLASH_BUDGET,
        if flash_ok {
            "ok".to_owned()
        } else {
            format!("OVER by {} B", flash_cost - FLASH_BUDGET as i64)
        }
    );
    if !flash_ok {
        over.push("flash");
        // Which CRC choice would fit.
        let mut group = "";
        for (label, sections) in &rows {
            match sections {
                None => group = label.as_str(),
                Some(s)
                    if label.trim() == "writer + reader" && cost_of(s) <= FLASH_BUDGET as i64 =>
                {
                    let _ = writeln!(out, "    within the budget with {group}: {} B", cost_of(s));
                }
                Some(_) => {}
            }
        }
    }
    let _ = writeln!(
        out,
        "  static RAM added by logfmt (.data + .bss): {static_ram} B"
    );
    match &stack {
        Some(text) => {
            let v = |key: &str| probe_value(text, key);
            let writer = v("size_of WordWriter").unwrap_or(0);
            let reader = v("size_of Reader").unwrap_or(0);
            let scratch_ref = v("size_of scratch_ref").unwrap_or(0);
            let statics = static_ram.max(0) as u64;
            let ram_ok = statics + writer + reader <= RAM_BUDGET;
            let _ = writeln!(
                out,
                "  RAM besides the caller's record buffer (no block buffer):\n    \
                 WordWriter {writer} B, WordReader {reader} B (the flash driver's handle \
                 included; a record buffer ref is {scratch_ref} B); both open at once {} B\n    \
                 budget {RAM_BUDGET} B together: {}",
                writer + reader,
                if ram_ok { "ok" } else { "OVER" }
            );
            if !ram_ok {
                over.push("RAM");
            }
            let q = |key: &str| v(key).map_or_else(|| "?".to_owned(), |b| format!("{b} B"));
            let _ = writeln!(
                out,
                "    async: AsyncWordWriter {} (over a reference to the simulated flash), its \
                 add_record future {}, its flush future {}",
                q("size_of AsyncWordWriter"),
                q("size_of add_record_future"),
                q("size_of flush_future")
            );
            let _ = writeln!(
                out,
                "    async: AsyncWordReader {} (over a reference to the simulated flash), its \
                 next future {}",
                q("size_of AsyncWordReader"),
                q("size_of next_future")
            );
            let _ = writeln!(
                out,
                "  stack high-water marks (stack painting under QEMU mps2-an386, the size probe's code):"
            );
            for (key, what) in [
                (
                    "stack open",
                    "WordWriter::open on an erased region (resume walk)",
                ),
                (
                    "stack reopen",
                    "WordWriter::open on a written region (resume walk)",
                ),
                (
                    "stack append",
                    "open + add_record (records up to 40 000 B) + flush",
                ),
                ("stack read", "WordReader::next, the whole log"),
                ("stack read_damaged", "WordReader::next over a damaged log"),
                (
                    "stack async_append",
                    "async: open + add_record + flush (block_on), a ring wrapping",
                ),
                (
                    "stack async_read",
                    "async: open + next (block_on), the whole ring",
                ),
            ] {
                let value = v(key).map_or_else(|| "?".to_owned(), |b| format!("{b} B"));
                let _ = writeln!(out, "    {what:<62} {value:>7}");
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  RAM state and stack: not measured (the stack probe needs qemu-system-arm)"
            );
        }
    }
    defmt_report(&mut out, defmt_sizes, cost_elf.as_deref())?;
    print!("{out}");
    if check && !over.is_empty() {
        return Err(Error::Failed(format!(
            "over budget: {} (see the table above)",
            over.join(", ")
        )));
    }
    Ok(())
}

/// The defmt flight recorder's lines: flash and static RAM over the writer-only probe, and
/// the cost of an `info!` and of the drain under QEMU with `-icount shift=0`.
fn defmt_report(
    out: &mut String,
    sizes: Option<(Sections, Sections)>,
    cost_elf: Option<&std::path::Path>,
) -> Result {
    if let Some((writer, defmt)) = sizes {
        let _ = writeln!(
            out,
            "  defmt flight recorder (logfmt-defmt, size-defmt over size-writer: the global \
             logger, its 1 KiB staging buffer, the drain with packs, the panic path, defmt's \
             encoding of three messages): flash +{} B, static RAM +{} B",
            defmt.flash() as i64 - writer.flash() as i64,
            defmt.ram() as i64 - writer.ram() as i64
        );
    }
    if let Some(elf) = cost_elf
        && ensure_qemu().is_ok()
    {
        println!("\n-- the cost of a defmt frame under QEMU (mps2-an386, -icount shift=0) --");
        let run = super::emulator::run_qemu_with(
            "mps2-an386",
            elf,
            &project_root(),
            QEMU_TIMEOUT,
            "  ",
            &["-icount", "shift=0"],
        )?;
        if !run.status.is_some_and(|s| s.success()) {
            return Err(Error::Failed(
                "the defmt cost probe failed under QEMU".to_owned(),
            ));
        }
        for line in run.stdout.lines() {
            let _ = writeln!(out, "    {}", line.trim());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elf_of_nothing_is_refused() {
        assert!(parse_elf(b"not an elf").is_none());
    }
}
