//! Runs on the host: puts `memory.x` on the linker's search path, links the binaries with
//! cortex-m-rt's `link.x`, and turns `tests/data/leveldb/EXPECTED.txt` (what LevelDB's own reader
//! returned for each vector) into a Rust table with the vectors embedded by `include_bytes!`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    // The linker script, for bare-metal targets only.
    let target = env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumb") {
        fs::copy(manifest.join("memory.x"), out.join("memory.x")).expect("copy memory.x");
        println!("cargo:rustc-link-search={}", out.display());
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
        // defmt's linker script (its string table, the level markers), for the defmt binary.
        println!("cargo:rustc-link-arg-bin=defmt-recorder=-Tdefmt.x");
        for bin in ["defmt-minimal", "size-defmt", "defmt-cost"] {
            println!("cargo:rustc-link-arg-bin={bin}=-Tdefmt.x");
        }
    }
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");

    let data = manifest.join("../data/leveldb");
    let expected = data.join("EXPECTED.txt");
    println!("cargo:rerun-if-changed={}", expected.display());
    let text = fs::read_to_string(&expected).expect("read tests/data/leveldb/EXPECTED.txt");
    let table = generate(&text, &data);
    fs::write(out.join("expected.rs"), table).expect("write expected.rs");
}

/// One `Vector { .. }` per line of EXPECTED.txt.
fn generate(text: &str, data: &Path) -> String {
    let mut s = String::from("pub static VECTORS: &[Vector] = &[\n");
    let mut count = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, rest) = line.split_once(' ').expect("name");
        let (size, rest) = rest
            .strip_prefix("size=")
            .and_then(|r| r.split_once(' '))
            .expect("size=N");
        let size: usize = size.parse().expect("size");
        let (records, drops) = rest
            .strip_prefix("records: ")
            .and_then(|r| r.split_once("EOF"))
            .expect("records: ... EOF");

        let file = data.join(format!("{name}.log"));
        println!("cargo:rerun-if-changed={}", file.display());
        let len = fs::metadata(&file).expect("vector file").len();
        assert_eq!(len as usize, size, "{name}: size in EXPECTED.txt");

        let _ = writeln!(s, "    Vector {{");
        let _ = writeln!(s, "        name: {name:?},");
        let _ = writeln!(
            s,
            "        data: include_bytes!({:?}),",
            file.display().to_string()
        );
        let _ = write!(s, "        records: &[");
        for record in records.split('[').skip(1) {
            let record = record.split(']').next().expect("]");
            let mut len = None;
            let mut off = None;
            let mut crc = None;
            for field in record.split_whitespace() {
                match field.split_once('=') {
                    Some(("len", v)) => len = Some(v.parse::<u32>().expect("len")),
                    Some(("off", v)) => off = Some(v.parse::<u64>().expect("off")),
                    Some(("crc32c", v)) => crc = Some(u32::from_str_radix(v, 16).expect("crc")),
                    _ => panic!("{name}: unexpected field {field:?}"),
                }
            }
            let _ = write!(
                s,
                "Expected {{ len: {}, offset: {}, crc32c: 0x{:08x} }}, ",
                len.expect("len"),
                off.expect("off"),
                crc.expect("crc32c")
            );
        }
        let _ = writeln!(s, "],");
        let _ = write!(s, "        drops: &[");
        // ` drop(3,Corruption: partial record without end(1)) drop(...)`
        for drop in drops.split(" drop(").skip(1) {
            let drop = drop.trim_end();
            let drop = drop.strip_suffix(')').expect("drop(...)");
            let (bytes, reason) = drop.split_once(',').expect("drop(bytes,reason)");
            let reason = reason.strip_prefix("Corruption: ").unwrap_or(reason);
            let _ = write!(
                s,
                "Drop {{ bytes: {}, reason: {:?} }}, ",
                bytes.parse::<u64>().expect("bytes"),
                reason
            );
        }
        let _ = writeln!(s, "],");
        let _ = writeln!(s, "    }},");
        count += 1;
    }
    s.push_str("];\n");
    assert_eq!(count, 27, "EXPECTED.txt lists the 27 LevelDB vectors");
    s
}
