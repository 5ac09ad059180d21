//! Logs their readers read whole: an append after a recyclable log's trailer garbage keeps the
//! new records readable; records known lost set `verify`'s exit status; and logfmt's own
//! chunks (packs) are not written into a LevelDB or RocksDB log unless asked for, and
//! `verify` says what LevelDB and RocksDB will drop of them.

use std::fs;

mod common;

use common::*;

/// A WriteBatch: sequence `sequence`, one put of `key` = `value`.
fn batch(sequence: u64, key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut record = sequence.to_le_bytes().to_vec();
    record.extend_from_slice(&1u32.to_le_bytes());
    record.push(1);
    record.push(key.len() as u8);
    record.extend_from_slice(key);
    record.push(value.len() as u8);
    record.extend_from_slice(value);
    record
}

fn lines(output: &std::process::Output) -> Vec<String> {
    stdout(output).lines().map(str::to_owned).collect()
}

// ------------------------------------------------------------------------- the append

#[test]
fn an_append_after_recyclable_trailer_garbage_keeps_the_new_records() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000007.log");
    // One record that ends 7 bytes before the block's end, then 5 bytes of garbage.
    let mut line = vec![b'a'; 32_750];
    line.push(b'\n');
    let out = logfmt(
        &[
            "write",
            "--format",
            "recyclable",
            "--log-number",
            "7",
            p(&log),
        ],
        &line,
    );
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(fs::metadata(&log)?.len(), 32_761);
    let mut data = fs::read(&log)?;
    data.extend_from_slice(b"\x11\x22\x33\x44\x55");
    fs::write(&log, &data)?;

    // Refused as a torn tail: nothing written.
    let append = logfmt(&["write", "--append", p(&log)], b"NEW\n");
    assert_eq!(status(&append), 1, "{}", stderr(&append));
    assert!(stderr(&append).contains("5 torn bytes at offset 32761"));
    assert_eq!(stderr(&append).lines().count(), 1);
    assert_eq!(fs::read(&log)?, data);

    // Cut off when asked: the new record is read in every recovery mode, and nothing is
    // reported.
    let append = logfmt(
        &["write", "--append", "--truncate-torn-tail", p(&log)],
        b"NEW\n",
    );
    assert_eq!(status(&append), 0, "{}", stderr(&append));
    for mode in ["tolerate", "point-in-time", "skip", "absolute"] {
        let cat = logfmt(
            &[
                "cat",
                "--format",
                "auto",
                "--decode",
                "raw",
                "--recovery",
                mode,
                p(&log),
            ],
            b"",
        );
        assert_eq!(status(&cat), 0, "{mode}: {}", stderr(&cat));
        let got = lines(&cat);
        assert_eq!(got.len(), 2, "{mode}");
        assert_eq!(got[1], "NEW", "{mode}");
        let verify = logfmt(
            &["verify", "--format", "auto", "--recovery", mode, p(&log)],
            b"",
        );
        assert_eq!(status(&verify), 0, "{mode}: {}", stdout(&verify));
    }
    Ok(())
}

// ------------------------------------------------------------------------- records lost

#[test]
fn a_log_that_ends_in_damage_with_chunks_after_it_fails_verify() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("lost.log");
    // 60 records of 10 bytes (17-byte chunks), all in the one (last) block.
    let input: Vec<u8> = (0..60)
        .flat_map(|i| format!("record{i:03}!\n").into_bytes())
        .collect();
    let out = logfmt(&["write", p(&log)], &input);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let mut data = fs::read(&log)?;
    assert_eq!(data.len(), 60 * 17);
    // The 11th chunk's length: a bad length, 49 well-formed chunks after it.
    data[10 * 17 + 4..10 * 17 + 6].copy_from_slice(&[0xff, 0xff]);
    fs::write(&log, &data)?;

    let verify = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&verify), 1, "{}", stdout(&verify));
    let text = stdout(&verify);
    // LevelDB's records are as they were; the loss is said.
    assert!(text.contains("10 records"), "{text}");
    assert!(text.contains("850 bytes lost at offset 170"), "{text}");
    assert!(text.contains("49 well-formed chunks"), "{text}");

    let verify = logfmt(&["verify", "--json", p(&log)], b"");
    assert_eq!(status(&verify), 1);
    let doc = json(&verify);
    assert_eq!(doc["records"], 10);
    assert_eq!(doc["dropped_bytes"], 850);
    assert_eq!(doc["corruptions"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc["corruptions"][0]["offset"], 170);
    assert_eq!(doc["corruptions"][0]["bytes"], 850);
    assert_eq!(doc["tail"]["kind"], "damage");
    assert_eq!(doc["tail"]["chunks_after"], 49);

    // Several threads say the same.
    let threads = logfmt(&["verify", "--json", "--threads", "2", p(&log)], b"");
    assert_eq!(status(&threads), 1);
    assert_eq!(json(&threads)["corruptions"][0]["offset"], 170);

    // A torn tail (no chunk after it) is still no loss: exit 0.
    let torn = dir.path().join("torn.log");
    fs::write(&torn, &data[..10 * 17 + 9])?;
    let verify = logfmt(&["verify", p(&torn)], b"");
    assert_eq!(status(&verify), 0, "{}", stdout(&verify));
    Ok(())
}

// ------------------------------------------------------------------------- logfmt's chunks

#[test]
fn packs_are_refused_in_a_log_leveldb_reads() -> TestResult {
    let dir = tempfile::tempdir()?;
    let input = b"one\ntwo\nthree\n";
    // By name: nothing created.
    for name in ["000005.log", "MANIFEST-000001"] {
        let path = dir.path().join(name);
        for flags in [&["--pack"][..], &["--compress", "zstd"], &["--pack=64"]] {
            let mut args = vec!["write"];
            args.extend_from_slice(flags);
            args.push(p(&path));
            let out = logfmt(&args, input);
            assert_eq!(status(&out), 2, "{name} {flags:?}: {}", stderr(&out));
            let message = stderr(&out);
            assert_eq!(message.lines().count(), 1, "{message}");
            assert!(message.contains("--allow-logfmt-chunks"), "{message}");
            assert!(message.contains("drop"), "{message}");
            assert!(!path.exists(), "{name} {flags:?}");
        }
    }

    // By content: a log of WriteBatches under another name, refused and unchanged.
    let wal = dir.path().join("wal-copy");
    let batches = framed(&[batch(1, b"a", b"1"), batch(2, b"b", b"2")]);
    let out = logfmt(&["write", "--input", "framed", p(&wal)], &batches);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let before = fs::read(&wal)?;
    let out = logfmt(&["write", "--append", "--pack", p(&wal)], input);
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("WriteBatches"), "{}", stderr(&out));
    assert_eq!(fs::read(&wal)?, before);
    // Plain records are still appended.
    let out = logfmt(&["write", "--append", p(&wal)], input);
    assert_eq!(status(&out), 0, "{}", stderr(&out));

    // A log of text lines takes packs.
    let text = dir.path().join("events.log");
    let out = logfmt(&["write", "--pack", p(&text)], input);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let out = logfmt(&["write", "--append", "--pack", p(&text)], input);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    Ok(())
}

#[test]
fn verify_says_leveldb_drops_the_records_of_packs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000005.log");
    let plain = framed(&[batch(1, b"a", b"1")]);
    let out = logfmt(&["write", "--input", "framed", p(&log)], &plain);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let packed = framed(&[
        batch(2, b"b", b"2"),
        batch(3, b"c", b"3"),
        batch(4, b"d", b"4"),
    ]);
    let out = logfmt(
        &[
            "write",
            "--append",
            "--input",
            "framed",
            "--pack",
            "--allow-logfmt-chunks",
            p(&log),
        ],
        &packed,
    );
    assert_eq!(status(&out), 0, "{}", stderr(&out));

    let verify = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&verify), 0, "{}", stdout(&verify));
    let text = stdout(&verify);
    assert!(text.contains("4 records"), "{text}");
    assert!(
        text.contains("3 records in 1 logfmt pack (from offset 24)"),
        "{text}"
    );
    assert!(text.contains("LevelDB and RocksDB"), "{text}");
    assert!(text.contains("drop their records"), "{text}");

    let verify = logfmt(&["verify", "--json", p(&log)], b"");
    let doc = json(&verify);
    assert_eq!(doc["logfmt_only"]["records"], 3);
    assert_eq!(doc["logfmt_only"]["packs"], 1);
    assert_eq!(doc["logfmt_only"]["offset"], 24);

    // A log without packs has no such key, and no such line.
    let clean = dir.path().join("000006.log");
    let out = logfmt(&["write", "--input", "framed", p(&clean)], &plain);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let doc = json(&logfmt(&["verify", "--json", p(&clean)], b""));
    assert!(doc.get("logfmt_only").is_none(), "{doc}");
    Ok(())
}
