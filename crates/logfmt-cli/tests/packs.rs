//! Packs at the command line: `write --pack` gathers records into packs that every command
//! reads back record by record (`cat --output json` gives each its pack's offset and its
//! index), `dump` shows what a pack holds, `stats` what packing saved, `split` keeps a pack
//! in one range, and packing a recyclable log is refused.

mod common;

use common::*;
use serde_json::Value;

/// `count` records of 16 bytes.
fn samples(count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| format!("sample{i:010}").into_bytes())
        .collect()
}

fn lines(output: &std::process::Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

#[test]
fn packed_records_read_back_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("packed.log");
    let records = samples(1_000);
    let written = logfmt(
        &["write", "--input", "framed", "--pack=1024", p(&log)],
        &framed(&records),
    );
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    // 16-byte records in packs of at most 1 KiB: 17 bytes a record, 12 a pack of 59.
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size <= 1_000 * 18, "{size} bytes");

    let cat = logfmt(&["cat", "--output", "json", p(&log)], b"");
    assert_eq!(status(&cat), 0, "{}", stderr(&cat));
    let items = lines(&cat);
    assert_eq!(items.len(), 1_000);
    assert_eq!(items[0]["offset"], 0);
    assert_eq!(items[0]["index"], 0);
    assert_eq!(items[58]["index"], 58);
    assert_eq!(items[59]["index"], 0);
    assert!(items[59]["offset"].as_u64().unwrap() > 0);
    let framed_out = logfmt(&["cat", "--output", "framed", p(&log)], b"");
    assert_eq!(unframe(framed_out.stdout.as_slice()), records);

    let verify = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&verify), 0, "{}", stderr(&verify));
    assert!(
        stdout(&verify).contains("1000 records"),
        "{}",
        stdout(&verify)
    );

    let dump = logfmt(&["chunks", p(&log)], b"");
    let text = stdout(&dump);
    assert!(text.contains("PACK_FULL"), "{text}");
    assert!(text.contains("a pack of 59 records of 16, 16"), "{text}");

    let stats = logfmt(&["stats", "--json", p(&log)], b"");
    let doc = json(&stats);
    assert_eq!(doc["records"], 1_000);
    assert_eq!(doc["packs"]["records"], 1_000);
    assert_eq!(doc["packs"]["plain_bytes"], 1_000 * 23);
    assert_eq!(
        doc["packs"]["bytes_saved"].as_i64().unwrap(),
        1_000 * 23 - doc["packs"]["bytes"].as_i64().unwrap()
    );
}

#[test]
fn split_ranges_keep_each_pack_whole() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("packed.log");
    let records = samples(20_000);
    let written = logfmt(
        &["write", "--input", "framed", "--pack", p(&log)],
        &framed(&records),
    );
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    let split = logfmt(&["split", "--parts", "4", p(&log)], b"");
    assert_eq!(status(&split), 0, "{}", stderr(&split));
    let mut all = Vec::new();
    for range in stdout(&split)
        .split_whitespace()
        .filter(|w| w.contains(".."))
    {
        let part = logfmt(
            &["cat", "--output", "framed", "--range", range, p(&log)],
            b"",
        );
        assert_eq!(status(&part), 0, "{}", stderr(&part));
        all.extend(unframe(part.stdout.as_slice()));
    }
    assert_eq!(all, records, "every record exactly once, in order");
}

#[test]
fn packing_a_recyclable_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("000007.log");
    let written = logfmt(
        &[
            "write",
            "--format",
            "recyclable",
            "--log-number",
            "7",
            "--pack",
            p(&log),
        ],
        b"a\n",
    );
    assert_eq!(status(&written), 2, "{}", stderr(&written));
    assert!(stderr(&written).contains("legacy logs only"));
    assert!(!log.exists());
}

#[test]
fn salvage_of_a_damaged_packed_log_keeps_every_record_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("packed.log");
    let records = samples(5_000);
    let written = logfmt(
        &["write", "--input", "framed", "--pack", p(&log)],
        &framed(&records),
    );
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    // Damage a pack in the second block: that pack alone is lost, reported with its records;
    // the chunks after it in the block and the other packs are kept.
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[40_000] ^= 0xff;
    std::fs::write(&log, &bytes).unwrap();
    let out = dir.path().join("salvaged.log");
    let salvage = logfmt(&["salvage", "--json", p(&log), p(&out)], b"");
    assert_eq!(status(&salvage), 0, "{}", stderr(&salvage));
    let report = json(&salvage);
    let kept = report["records"].as_u64().unwrap() as usize;
    assert_eq!(report["lost"].as_array().unwrap().len(), 1, "{report}");
    let reason = report["lost"][0]["reason"].as_str().unwrap();
    let lost: usize = reason
        .strip_prefix("bad pack (checksum mismatch): ")
        .and_then(|r| r.strip_suffix(" records lost"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{report}"));
    assert!(lost > 0 && lost < 1_000, "{report}");
    assert_eq!(kept + lost, 5_000, "{report}");
    // The salvaged log holds the records that survived, in order, plain.
    let cat = logfmt(&["cat", "--output", "framed", p(&out)], b"");
    let back = unframe(cat.stdout.as_slice());
    assert_eq!(back.len(), kept);
    let mut next = records.iter();
    assert!(
        back.iter().all(|r| next.any(|w| w == r)),
        "records in order, each one written"
    );
}
