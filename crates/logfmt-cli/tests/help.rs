//! Every command's `--help` names only flags that exist: those of the command itself, or of
//! a command it names on the same line (`logfmt write --append`, "write, salvage: see --wait").

use std::collections::{BTreeMap, BTreeSet};

mod common;

use common::*;

/// The commands `logfmt --help` lists.
fn commands() -> Vec<String> {
    let help = stdout(&logfmt(&["--help"], b""));
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The long flags (`--name`) in `text`, each with the line it is on.
fn flags_named(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in text.lines() {
        let bytes = line.as_bytes();
        let mut i = 0;
        while let Some(at) = line[i..].find("--") {
            let start = i + at;
            let before = start.checked_sub(1).map(|b| bytes[b]);
            let mut end = start + 2;
            while end < bytes.len() && (bytes[end].is_ascii_lowercase() || bytes[end] == b'-') {
                end += 1;
            }
            let name = &line[start..end];
            let word_start = before.is_none_or(|b| !b.is_ascii_alphanumeric() && b != b'-');
            if word_start && name.len() > 2 && !name.ends_with('-') {
                found.push((name.to_owned(), line.to_owned()));
            }
            i = end.max(start + 2);
        }
    }
    found
}

/// The flags a command defines: its options section, `-x, --name` or `--name`.
fn flags_defined(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Options:"))
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix('-')
                .filter(|rest| rest.len() > 2 && rest.as_bytes()[1] == b',')
                .map_or(line, |rest| rest[2..].trim_start());
            line.starts_with("--")
                .then(|| {
                    line.split(|c: char| c.is_whitespace() || c == '=' || c == '[' || c == '<')
                })
                .and_then(|mut words| words.next())
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn every_flag_a_help_names_exists() {
    let commands = commands();
    assert!(commands.len() >= 10, "{commands:?}");
    for expected in ["chunks", "completions", "man", "verify", "cat"] {
        assert!(commands.iter().any(|c| c == expected), "{commands:?}");
    }
    let helps: BTreeMap<String, String> = commands
        .iter()
        .map(|c| (c.clone(), stdout(&logfmt(&[c.as_str(), "--help"], b""))))
        .collect();
    let defined: BTreeMap<&str, BTreeSet<String>> = helps
        .iter()
        .map(|(c, help)| (c.as_str(), flags_defined(help)))
        .collect();
    let mut wrong = Vec::new();
    for (command, help) in &helps {
        for (flag, line) in flags_named(help) {
            // A command the line names (`logfmt write --append`, "(write, salvage, export: see
            // --wait)") that has the flag.
            let quoted = line
                .split(|c: char| !c.is_ascii_lowercase())
                .filter_map(|word| defined.get(word))
                .any(|flags| flags.contains(&flag));
            if !defined[command.as_str()].contains(&flag) && !quoted {
                wrong.push(format!(
                    "logfmt {command} --help names {flag}: {}",
                    line.trim()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn short_flags_and_synonyms() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("a.log");
    let lines: String = (1..=100).map(|i| format!("record {i}\n")).collect();
    let out = logfmt(&["write", p(&log)], lines.as_bytes());
    assert_eq!(status(&out), 0, "{}", stderr(&out));

    let out = logfmt(&["cat", "-n", "3", "-j", "2", "-q", p(&log)], b"");
    assert_eq!(
        stdout(&out),
        "record 1\nrecord 2\nrecord 3\n",
        "{}",
        stderr(&out)
    );
    let out = logfmt(&["cat", "--limit", "0", p(&log)], b"");
    assert_eq!(stdout(&out), "");
    assert_eq!(status(&out), 0);
    let long = logfmt(&["cat", "--output", "json", p(&log)], b"");
    let short = logfmt(&["cat", "-o", "json", p(&log)], b"");
    let synonym = logfmt(&["cat", "--json", p(&log)], b"");
    assert_eq!(stdout(&long).lines().count(), 100);
    assert_eq!(stdout(&long), stdout(&short));
    assert_eq!(stdout(&long), stdout(&synonym));
    assert_ne!(
        status(&logfmt(&["cat", "--json", "-o", "hex", p(&log)], b"")),
        0,
        "--json and --output conflict"
    );
    let out = logfmt(&["verify", "-q", "-j", "1", p(&log)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
}

#[test]
fn dump_is_a_deprecated_alias_of_chunks() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("a.log");
    let out = logfmt(&["write", p(&log)], b"one\ntwo\n");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let chunks = logfmt(&["chunks", p(&log)], b"");
    let dump = logfmt(&["dump", p(&log)], b"");
    assert_eq!(status(&dump), 0);
    assert_eq!(stdout(&chunks), stdout(&dump));
    assert_eq!(stderr(&chunks), "");
    assert!(
        stderr(&dump).contains("`logfmt dump` is now `logfmt chunks`"),
        "{}",
        stderr(&dump)
    );
}

#[test]
fn completions_and_man_are_commands_and_generate_still_works() {
    let bash = logfmt(&["completions", "bash"], b"");
    assert_eq!(status(&bash), 0, "{}", stderr(&bash));
    assert!(stdout(&bash).contains("logfmt"));
    let old = logfmt(&["generate", "completions", "bash"], b"");
    assert_eq!(stdout(&bash), stdout(&old));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = logfmt(&["man", p(dir.path())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(dir.path().join("logfmt-chunks.1").is_file());
    assert!(dir.path().join("logfmt.1").is_file());
}

#[test]
fn every_command_that_reports_takes_json() {
    // The commands' names, not the words of a description wrapped onto the next line.
    let help = stdout(&logfmt(&["--help"], b""));
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(commands.len() >= 12, "{commands:?}");
    for command in commands {
        if matches!(command, "completions" | "man" | "help") {
            continue;
        }
        let help = stdout(&logfmt(&[command, "--help"], b""));
        assert!(
            flags_defined(&help).contains("--json"),
            "`logfmt {command}` has no --json:\n{help}"
        );
    }
}
