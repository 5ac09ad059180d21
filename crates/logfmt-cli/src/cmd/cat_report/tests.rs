//! `cat`'s notes: each one line of text, or of JSON.

use super::*;
use crate::render::{Rendering, render};

/// `report` rendered as text.
fn text(report: &impl Report) -> String {
    let mut out = Vec::new();
    render(&mut out, report, Rendering::Text).expect("memory");
    String::from_utf8(out).expect("UTF-8")
}

/// `report` rendered as JSON.
fn json(report: &impl Report) -> String {
    let mut out = Vec::new();
    render(&mut out, report, Rendering::Json).expect("memory");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn damage_is_one_warning_line_with_its_gloss() {
    use logfmt_std::advanced::CorruptionKind;
    let damage = Damage::new(
        32768,
        100,
        logfmt_std::DamageKind::Corruption(CorruptionKind::ChecksumMismatch),
    );
    let note = CatDamage {
        file: Path::new("dir/x\u{1b}.log"),
        damage: &damage,
    };
    let gloss = crate::gloss::Suffix(&damage.kind).to_string();
    assert!(!gloss.is_empty());
    assert_eq!(
        text(&note),
        format!(
            "logfmt: dir/x\\u{{1b}}.log: dropped 100 bytes at offset 32768: checksum mismatch{gloss}\n"
        )
    );
    assert_eq!(
        json(&note),
        "{\"file\": \"dir/x\\u001b.log\", \"offset\": 32768, \"bytes\": 100, \
         \"reason\": \"checksum mismatch\"}\n"
    );
}

#[test]
fn a_record_not_printed_is_told_with_its_offset_and_length() {
    let mut note = CatOversized {
        file: Path::new("000003.log"),
        offset: 9,
        length: 20 << 20,
        coded: false,
        limit: 16 << 20,
    };
    assert_eq!(
        text(&note),
        "logfmt: 000003.log: offset 9: a record of 20971520 bytes, more than the 16777216 \
         bytes a record is decoded in (see --buffer-limit): not printed (--decode raw prints \
         it)\n"
    );
    note.coded = true;
    assert!(
        text(&note).starts_with(
            "logfmt: 000003.log: offset 9: a pack or compressed record of 20971520 bytes or \
             more once decoded"
        ),
        "{}",
        text(&note)
    );
    assert_eq!(
        json(&note),
        "{\"file\": \"000003.log\", \"offset\": 9, \"length\": 20971520, \"coded\": true, \
         \"limit\": 16777216}\n"
    );
}

#[test]
fn a_files_header_heads_its_records() {
    let header = FileHeader {
        file: Path::new("db/000003.log"),
    };
    assert_eq!(text(&header), "==> db/000003.log <==\n");
    assert_eq!(json(&header), "{\"file\": \"db/000003.log\"}\n");
}

#[test]
fn the_other_notes_are_one_line_each() {
    let file = Path::new("000005.log");
    let error = crate::decode::first_error(Content::WriteBatch, b"abc").expect("too short");
    let undecoded = CatUndecoded {
        file,
        offset: 7,
        error,
    };
    assert_eq!(
        text(&undecoded),
        format!("logfmt: 000005.log: the record at offset 7: {error}\n")
    );
    assert_eq!(
        json(&undecoded),
        format!("{{\"file\": \"000005.log\", \"offset\": 7, \"error\": \"{error}\"}}\n")
    );
    let raw = CatPrintedRaw {
        file,
        offset: 0,
        named: Content::WriteBatch,
    };
    assert_eq!(
        text(&raw),
        "logfmt: 000005.log: the record at offset 0 is not a WriteBatch: the log is printed raw \
         (--decode write-batch decodes it anyway)\n"
    );
    assert_eq!(
        json(&raw),
        "{\"file\": \"000005.log\", \"offset\": 0, \"named\": \"write-batch\"}\n"
    );
    let stopped = CatStopped {
        file,
        offset: 32768,
    };
    assert_eq!(
        text(&stopped),
        "logfmt: 000005.log: stopped at offset 32768 (point-in-time recovery)\n"
    );
}

#[test]
fn a_followed_file_read_again_says_why() {
    let file = Path::new("LOG");
    let replaced = CatRestarted {
        file,
        why: Restart::Replaced,
    };
    assert_eq!(
        text(&replaced),
        "logfmt: LOG: replaced by a new file: reading the new file from its start\n"
    );
    assert_eq!(
        json(&replaced),
        "{\"file\": \"LOG\", \"why\": \"replaced\"}\n"
    );
    let truncated = CatRestarted {
        file,
        why: Restart::Truncated,
    };
    assert_eq!(
        text(&truncated),
        "logfmt: LOG: file truncated: reading it again from its start\n"
    );
    assert_eq!(
        json(&truncated),
        "{\"file\": \"LOG\", \"why\": \"truncated\"}\n"
    );
}
