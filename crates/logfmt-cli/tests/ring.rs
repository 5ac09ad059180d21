//! Ring images made by the real flash writer (`WordWriter` over a simulated flash, wrapping
//! several times, with power cuts and reopenings) read by `cat`, `verify`, `dump` and `stats`
//! with no flag, and turned into plain LevelDB logs by `export`.

mod common;
#[path = "common/ring_image.rs"]
mod ring_image;

use std::path::{Path, PathBuf};

use common::*;
use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{BLOCK_SIZE, Entry, LogReader, RingImage},
};
use ring_image::{Run, Spec, check, run, sample};
use serde_json::Value;

/// Ring images of three shapes, written to `dir`.
fn images(dir: &Path) -> Vec<(PathBuf, Run)> {
    let mut out = Vec::new();
    let spec = Spec::new(4, 1_500, 11);
    out.push(("blocks.img", run::<4096>(&spec, sample)));
    let spec = Spec {
        erased: 0x00,
        first_lap: u32::MAX - 1,
        ..Spec::new(5, 1_500, 17)
    };
    out.push(("zero.img", run::<4096>(&spec, sample)));
    let spec = Spec::new(6, 1_500, 23);
    out.push(("groups.img", run::<{ 2 * BLOCK_SIZE }>(&spec, sample)));
    out.into_iter()
        .map(|(name, run)| {
            let path = dir.join(name);
            std::fs::write(&path, &run.image).expect("writes the image");
            assert!(run.laps >= 3 && run.cuts >= 4, "{name}: {} laps", run.laps);
            (path, run)
        })
        .collect()
}

fn json_lines(output: &std::process::Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The records of a plain log, read with absolute consistency (no damage, no torn tail).
fn plain_records(path: &Path) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).expect("reads");
    let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    let mut reader = LogReader::from_slice(&data, &options);
    let mut records = Vec::new();
    while let Some(entry) = reader.next().expect("a clean log") {
        match entry {
            Entry::Record(r) => records.push(r.data.to_vec()),
            Entry::Damage(d) => panic!("{}: {d}", path.display()),
            other => panic!("not expected here: {other:?}"),
        }
    }
    records
}

#[test]
fn cat_prints_the_records_the_ring_keeps_in_order() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (path, run) in images(dir.path()) {
        let out = logfmt(&["cat", "--output", "framed", p(&path)], b"");
        assert_eq!(status(&out), 0, "{}", stderr(&out));
        assert_eq!(stderr(&out), "");
        let records = unframe(&out.stdout);
        check(&run, &records);
        assert_eq!(records, run.reference, "{}", path.display());
        // Offsets are the image's: the record's first chunk is there.
        let out = logfmt(&["cat", "--output", "json", p(&path)], b"");
        let lines = json_lines(&out);
        assert_eq!(lines.len(), records.len());
        for (line, record) in lines.iter().zip(&records) {
            let at = line["offset"].as_u64().expect("an offset") as usize;
            let header = &run.image[at..at + 7];
            let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
            assert!(matches!(header[6], 1 | 2), "a FULL or FIRST chunk at {at}");
            assert_eq!(&run.image[at + 7..at + 7 + len], &record[..len], "at {at}");
        }
    }
    Ok(())
}

#[test]
fn verify_is_clean_and_says_it_read_a_ring() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (path, run) in images(dir.path()) {
        let ring = RingImage::find(&run.image).expect("a ring image");
        for mode in ["tolerate", "absolute", "skip", "point-in-time"] {
            let out = logfmt(&["verify", "--recovery", mode, p(&path)], b"");
            assert_eq!(status(&out), 0, "{mode}: {}", stdout(&out));
            let text = stdout(&out);
            assert!(text.contains("no corruption"), "{text}");
            assert!(
                text.contains(&format!(
                    "a ring image: ring of {} blocks",
                    ring.ring().blocks()
                )),
                "{text}"
            );
        }
        let out = logfmt(&["verify", "--json", p(&path)], b"");
        assert_eq!(status(&out), 0);
        let doc = json(&out);
        assert_eq!(doc["records"], run.reference.len());
        assert_eq!(doc["corruptions"], serde_json::json!([]));
        assert_eq!(doc["tail"], Value::Null);
        assert_eq!(doc["ring"]["newest"], ring.ring().head());
        assert_eq!(doc["ring"]["oldest"], ring.oldest());
        assert_eq!(doc["ring"]["lap"], ring.ring().lap());
        assert_eq!(doc["ring"]["erased"], format!("{:02x}", ring.erased()));
        // The value the headers give may be named; another is refused.
        let flag = if ring.erased() == 0 { "00" } else { "ff" };
        let out = logfmt(&["verify", "--erased", flag, p(&path)], b"");
        assert_eq!(status(&out), 0);
        let other = if ring.erased() == 0 { "ff" } else { "00" };
        let out = logfmt(&["verify", "--erased", other, p(&path)], b"");
        assert_eq!(status(&out), 2);
        assert!(stderr(&out).contains("its ring headers say erased flash reads"));
    }
    Ok(())
}

#[test]
fn a_bit_flip_in_a_record_is_found_at_its_image_offset() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, run) = images(dir.path()).swap_remove(0);
    let ring = RingImage::find(&run.image).expect("a ring image");
    let out = logfmt(&["cat", "--output", "json", p(&path)], b"");
    let lines = json_lines(&out);
    // A record of more than 20 bytes a third of the way in, outside the newest block.
    let head = u64::from(ring.ring().head());
    let (offset, length) = lines
        .iter()
        .skip(lines.len() / 3)
        .map(|l| {
            (
                l["offset"].as_u64().unwrap_or(0),
                l["length"].as_u64().unwrap_or(0),
            )
        })
        .find(|&(offset, length)| offset / BLOCK_SIZE as u64 != head && length > 20)
        .expect("such a record");
    let mut image = run.image.clone();
    image[offset as usize + 7 + 5] ^= 0x04;
    let damaged = dir.path().join("damaged.img");
    std::fs::write(&damaged, &image)?;

    let out = logfmt(&["verify", p(&damaged)], b"");
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("offset {offset}: ")) && text.contains("checksum mismatch"),
        "{text}"
    );
    let out = logfmt(&["verify", "--json", p(&damaged)], b"");
    assert_eq!(status(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["corruptions"][0]["offset"], offset);
    assert_eq!(doc["corruptions"][0]["reason"], "checksum mismatch");
    assert_eq!(doc["records"], run.reference.len() - 1);

    // cat prints every other record and notes the drop where it is.
    let out = logfmt(&["cat", "--output", "framed", p(&damaged)], b"");
    assert_eq!(status(&out), 0);
    assert!(
        stderr(&out).contains(&format!("at offset {offset}: checksum mismatch")),
        "{}",
        stderr(&out)
    );
    let records = unframe(&out.stdout);
    let lost: Vec<&Vec<u8>> = run
        .reference
        .iter()
        .filter(|r| !records.contains(r))
        .collect();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].len() as u64, length);

    // Absolute consistency: an error, and export writes nothing.
    let out = logfmt(&["cat", "--recovery", "absolute", p(&damaged)], b"");
    assert_eq!(status(&out), 1);
    let target = dir.path().join("out.log");
    let out = logfmt(
        &["export", "--recovery", "absolute", p(&damaged), p(&target)],
        b"",
    );
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    assert!(!target.exists());
    // By default, export copies what cat prints.
    let out = logfmt(&["export", p(&damaged), p(&target)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("at offset {offset}")));
    assert_eq!(plain_records(&target), records);
    Ok(())
}

#[test]
fn stats_reports_the_ring_and_the_records_aged_out() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (path, run) in images(dir.path()) {
        let ring = RingImage::find(&run.image).expect("a ring image");
        let out = logfmt(&["stats", "--json", p(&path)], b"");
        assert_eq!(status(&out), 0, "{}", stderr(&out));
        let doc = json(&out);
        assert_eq!(doc["records"], run.reference.len());
        let payload: usize = run.reference.iter().map(Vec::len).sum();
        assert_eq!(doc["payload_bytes"], payload);
        assert_eq!(doc["damage"]["regions"], 0);
        let blocks_read = ring.order().count();
        assert_eq!(doc["blocks"], blocks_read);
        let r = &doc["ring"];
        assert_eq!(r["blocks"], run.image.len() / BLOCK_SIZE);
        assert_eq!(r["group"], ring.ring().group());
        assert_eq!(r["newest"], ring.ring().head());
        assert_eq!(r["lap"], ring.ring().lap());
        assert_eq!(r["blocks_read"], blocks_read);
        // Records begun before the oldest block (its header), at least the records written
        // before the first one read (more if power cuts made some be written twice).
        let start = check(&run, &run.reference) as u64;
        let aged = r["records_aged_out"].as_u64().expect("a count");
        let oldest = ring.header(ring.oldest()).expect("the oldest's header");
        assert_eq!(aged, u64::from(oldest.records));
        assert!(
            aged >= start,
            "{aged} aged out, {start} before the first read"
        );
        let text = stdout(&logfmt(&["stats", p(&path)], b""));
        assert!(
            text.contains(&format!("aged out      {aged} records")),
            "{text}"
        );
        assert!(
            text.contains(&format!("in lap {}", ring.ring().lap())),
            "{text}"
        );
        // The image's own size, besides the blocks read in ring order.
        assert_eq!(r["image_bytes"], run.image.len());
        assert!(
            text.contains(&format!("image         {} bytes", run.image.len())),
            "{text}"
        );
    }
    Ok(())
}

#[test]
fn a_ring_image_read_from_a_pipe_says_to_give_its_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (_, run) = images(dir.path()).swap_remove(0);
    // A pipe cannot be read in ring order: its first chunk, a ring header, says what it is.
    let out = logfmt(&["verify", "-"], &run.image);
    assert!(
        stdout(&out).contains("a flash ring's block header: this is a ring image")
            && stdout(&out).contains("give its path rather than a pipe"),
        "{}",
        stdout(&out)
    );
    Ok(())
}

#[test]
fn records_aged_out_and_records_kept_are_all_records_written() -> TestResult {
    // No power cut: every record is begun once.
    let dir = tempfile::tempdir()?;
    let spec = Spec {
        cuts: 0,
        sessions: 2,
        ..Spec::new(4, 1_200, 3)
    };
    let run = run::<4096>(&spec, sample);
    let path = dir.path().join("flash.img");
    std::fs::write(&path, &run.image)?;
    let doc = json(&logfmt(&["stats", "--json", p(&path)], b""));
    let aged = doc["ring"]["records_aged_out"].as_u64().expect("a count");
    let kept = doc["records"].as_u64().expect("a count");
    assert!(aged > 0);
    assert_eq!(aged + kept, run.written.len() as u64);
    Ok(())
}

#[test]
fn dump_shows_every_block_and_the_reading_order() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (path, run) in images(dir.path()) {
        let ring = RingImage::find(&run.image).expect("a ring image");
        let out = logfmt(&["chunks", "--json", p(&path)], b"");
        assert_eq!(status(&out), 0, "{}", stderr(&out));
        let lines = json_lines(&out);
        assert_eq!(lines[0]["kind"], "ring");
        assert_eq!(lines[0]["oldest"], ring.oldest());
        assert_eq!(lines[0]["newest"], ring.ring().head());
        // Every block once; the blocks read in the ring's order, each before its chunks.
        let blocks: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "ring_block").collect();
        let mut seen: Vec<u64> = blocks.iter().filter_map(|b| b["block"].as_u64()).collect();
        let read: Vec<u64> = blocks
            .iter()
            .filter(|b| b["place"].is_u64())
            .filter_map(|b| b["block"].as_u64())
            .collect();
        assert_eq!(
            read,
            ring.order().map(u64::from).collect::<Vec<_>>(),
            "{}",
            path.display()
        );
        seen.sort_unstable();
        let all: Vec<u64> = (0..(run.image.len() / BLOCK_SIZE) as u64).collect();
        assert_eq!(seen, all);
        for block in &blocks {
            let index = block["block"].as_u64().unwrap_or(u64::MAX) as u32;
            match block["role"].as_str() {
                Some("read") => {
                    let header = ring.header(index).expect("a read block's header");
                    assert_eq!(block["lap"], header.lap);
                    assert_eq!(block["records"], header.records);
                }
                Some("ahead") => assert!(block["place"].is_null()),
                other => panic!("block {index}: {other:?}"),
            }
        }
        // Each block read begins with its ring header chunk, at the block's offset.
        for (k, line) in lines.iter().enumerate() {
            if line["kind"] == "ring_block" && line["role"] == "read" {
                let chunk = &lines[k + 1];
                assert_eq!(chunk["kind"], "chunk");
                assert_eq!(chunk["type_byte"], 0xB0);
                assert_eq!(chunk["offset"], line["offset"]);
            }
        }
        let summary = lines.last().expect("a summary");
        assert_eq!(summary["kind"], "summary");
        assert_eq!(summary["damaged_bytes"], 0);
        assert_eq!(summary["blocks"], read.len());
        let text = stdout(&logfmt(&["chunks", p(&path)], b""));
        let order: Vec<String> = ring.order().map(|b| b.to_string()).collect();
        assert!(
            text.contains(&format!("reading order: blocks {}", order.join(", "))),
            "{text}"
        );
        assert!(text.contains("ring header, not a record (lap"), "{text}");
    }
    Ok(())
}

#[test]
fn export_writes_a_plain_log_of_the_records_cat_prints() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (path, _) in images(dir.path()) {
        let target = path.with_extension("log");
        let out = logfmt(&["export", p(&path), p(&target)], b"");
        assert_eq!(status(&out), 0, "{}", stderr(&out));
        assert!(stdout(&out).contains("exported to"), "{}", stdout(&out));
        let cat = logfmt(&["cat", "--output", "framed", p(&path)], b"");
        let records = unframe(&cat.stdout);
        assert_eq!(plain_records(&target), records);
        // A plain log: LevelDB's chunk types only, nothing erased, no ring.
        let dump = logfmt(&["chunks", "--json", p(&target)], b"");
        for line in json_lines(&dump) {
            match line["kind"].as_str() {
                Some("chunk") => {
                    assert!(matches!(line["type_byte"].as_u64(), Some(1..=4)), "{line}")
                }
                Some("summary" | "trailer") => {}
                other => panic!("{other:?}: {line}"),
            }
        }
        let out = logfmt(&["export", "--json", "--force", p(&path), p(&target)], b"");
        assert_eq!(status(&out), 0);
        let doc = json(&out);
        assert_eq!(doc["records"], records.len());
        assert_eq!(doc["dropped_bytes"], 0);
    }
    Ok(())
}

#[test]
fn export_never_overwrites_unless_told_and_never_its_input() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, _) = images(dir.path()).swap_remove(0);
    let target = dir.path().join("out.log");
    std::fs::write(&target, b"keep me")?;
    let out = logfmt(&["export", p(&path), p(&target)], b"");
    assert_eq!(status(&out), 1);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&target)?, b"keep me");
    let out = logfmt(&["export", "--force", p(&path), p(&target)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_ne!(std::fs::read(&target)?, b"keep me");
    // The input under another name.
    let link = dir.path().join("link.img");
    std::fs::hard_link(&path, &link)?;
    let before = std::fs::read(&path)?;
    for output in [&path, &link] {
        let out = logfmt(&["export", "--force", p(&path), p(output)], b"");
        assert_eq!(status(&out), 2);
        assert!(stderr(&out).contains("the output is the input"));
    }
    assert_eq!(std::fs::read(&path)?, before);
    // No temporary file left.
    let names: Vec<_> = std::fs::read_dir(dir.path())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(names, Vec::<String>::new());
    Ok(())
}

#[test]
fn positions_and_ranges_do_not_apply_to_a_ring_image() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, _) = images(dir.path()).swap_remove(0);
    for args in [
        &["cat", "--offset", "10"][..],
        &["cat", "--range", "0..100"],
        &["verify", "--offset", "32768"],
        &["split", "--parts", "2"],
    ] {
        let mut args = args.to_vec();
        args.push(p(&path));
        let out = logfmt(&args, b"");
        assert_eq!(status(&out), 2, "{args:?}");
        assert!(stderr(&out).contains("is a ring image"), "{}", stderr(&out));
    }
    Ok(())
}

#[test]
fn salvage_reads_a_ring_image_in_ring_order() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, run) = images(dir.path()).swap_remove(2);
    let target = dir.path().join("salvaged.log");
    let out = logfmt(&["salvage", p(&path), p(&target)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nothing was lost"),
        "{}",
        stdout(&out)
    );
    assert_eq!(plain_records(&target), run.reference);
    Ok(())
}

/// The ring header of `block` in `image`, rewritten by `change`.
fn rewrite_header(
    image: &mut [u8],
    block: u32,
    change: impl FnOnce(&mut logfmt_core::parts::ring::RingHeader),
) {
    let at = block as usize * BLOCK_SIZE;
    let mut header =
        logfmt_core::parts::ring::RingHeader::parse(&image[at..at + 19]).expect("a ring header");
    change(&mut header);
    image[at..at + 19].copy_from_slice(&header.encode());
}

#[test]
fn blocks_of_another_lap_or_geometry_are_reported_not_resolved() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, run) = images(dir.path()).swap_remove(0);
    let ring = RingImage::find(&run.image).expect("a ring image");
    let order: Vec<u32> = ring.order().collect();
    let lap = ring.ring().lap();
    // Block order[1] says it was written four laps earlier: its records are not read.
    let mut image = run.image.clone();
    let victim = order[1];
    rewrite_header(&mut image, victim, |h| h.lap = h.lap.wrapping_sub(4));
    let mixed = dir.path().join("mixed.img");
    std::fs::write(&mixed, &image)?;
    let out = logfmt(&["verify", p(&mixed)], b"");
    let text = stdout(&out);
    assert_eq!(status(&out), 1, "{text}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("the ring image disagrees"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    let expected = ring.ring().expected_lap(victim);
    assert!(
        lines[0].contains(&format!(
            "block {victim} holds lap {} where the ring's order needs lap {expected}",
            expected.wrapping_sub(4)
        )),
        "{text}"
    );
    let out = logfmt(&["verify", "--json", p(&mixed)], b"");
    assert_eq!(status(&out), 1);
    let doc = json(&out);
    assert_eq!(
        doc["ring"]["disagreements"].as_array().map(Vec::len),
        Some(1)
    );
    // cat says so on standard error, once.
    let out = logfmt(&["cat", "--output", "framed", p(&mixed)], b"");
    let said = stderr(&out);
    assert_eq!(said.matches("ring image: block").count(), 1, "{said}");
    // export too, and what it writes is what cat prints.
    let exported = dir.path().join("mixed.log");
    let out = logfmt(&["export", p(&mixed), p(&exported)], b"");
    assert_eq!(
        stderr(&out).matches("ring image: block").count(),
        1,
        "{}",
        stderr(&out)
    );
    // dump and stats too.
    let out = logfmt(&["chunks", p(&mixed)], b"");
    assert!(stdout(&out).contains("the ring image disagrees: block"));
    let out = logfmt(&["stats", p(&mixed)], b"");
    assert!(stdout(&out).contains("disagrees"), "{}", stdout(&out));

    // A block whose header gives other erase groups, and one of another ring size.
    let mut image = run.image.clone();
    rewrite_header(&mut image, order[0], |h| h.group = 2);
    rewrite_header(&mut image, order[2], |h| h.blocks += 3);
    let groups = dir.path().join("groups.img");
    std::fs::write(&groups, &image)?;
    let out = logfmt(&["verify", p(&groups)], b"");
    let text = stdout(&out);
    assert_eq!(status(&out), 1, "{text}");
    assert_eq!(
        text.matches("ring header disagrees with the newest block's")
            .count(),
        2,
        "{text}"
    );
    assert!(text.contains("2 per erase group"), "{text}");
    assert!(
        text.contains(&format!("{} blocks", ring.ring().blocks() + 3)),
        "{text}"
    );
    // The writer's own image: nothing disagrees.
    let out = logfmt(&["verify", p(&path)], b"");
    assert_eq!(status(&out), 0);
    assert!(!stdout(&out).contains("disagrees"));
    assert_eq!(lap, ring.ring().lap());
    Ok(())
}

#[test]
fn an_image_cut_short_is_read_in_ring_order_and_its_shortfall_reported() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (path, run) in images(dir.path()) {
        let ring = RingImage::find(&run.image).expect("a ring image");
        let cut = dir.path().join("cut.img");
        std::fs::write(&cut, &run.image[..run.image.len() - 1000])?;
        let out = logfmt(&["verify", p(&cut)], b"");
        let text = stdout(&out);
        assert_eq!(status(&out), 1, "{text}");
        assert!(
            text.contains(&format!(
                "a ring image: ring of {} blocks",
                ring.ring().blocks()
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "the image is {} bytes, 1000 short of the {} bytes",
                run.image.len() - 1000,
                run.image.len()
            )),
            "{text}"
        );
        assert!(!text.contains("unknown record type"), "{text}");
        // cat: the records in the ring's order, those of the whole image less what the cut
        // took; the shortfall said on standard error.
        let out = logfmt(&["cat", "--output", "framed", p(&cut)], b"");
        assert!(stderr(&out).contains("1000 short"), "{}", stderr(&out));
        assert!(
            !stderr(&out).contains("unknown record type"),
            "{}",
            stderr(&out)
        );
        let records = unframe(&out.stdout);
        assert!(
            records.len() + 40 >= run.reference.len() && !records.is_empty(),
            "{} of {}",
            records.len(),
            run.reference.len()
        );
        let mut rest = run.reference.iter();
        for record in &records {
            assert!(
                rest.any(|r| r == record),
                "{}: out of order",
                path.display()
            );
        }
        let out = logfmt(&["chunks", p(&cut)], b"");
        assert!(stdout(&out).contains("reading order: blocks"));
        assert!(stdout(&out).contains("the ring image disagrees: the image is"));
        assert!(!stdout(&out).contains("unknown"), "{}", stdout(&out));
    }
    Ok(())
}
