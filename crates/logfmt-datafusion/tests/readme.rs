//! The `logfmt-sql` sessions of the project's README, run against the built `logfmt-sql`: each
//! `$ logfmt-sql ...` line of a `console` block, from the repository's root, must print exactly
//! the lines that follow it (up to the blank line that ends the output). The README's other
//! sessions are run by `crates/logfmt-cli/tests/readme.rs`.
//!
//! After a change to the output, `TRYCMD=overwrite cargo test --test readme` (in this crate)
//! writes the new outputs into the README, as trycmd does for the CLI's sessions.

use std::path::Path;
use std::process::Command;

/// A session: the line of its command, its arguments, and its output as the README shows it.
struct Session {
    command_line: usize,
    args: Vec<String>,
    shown: Vec<String>,
}

/// The `logfmt-sql` sessions of `readme`. Arguments are split as a shell splits words in
/// double quotes or none (what the README uses).
fn sessions(readme: &str) -> Vec<Session> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut found = Vec::new();
    let mut in_console = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("```") {
            in_console = !in_console && line.trim() == "```console";
        } else if in_console && let Some(command) = line.strip_prefix("$ logfmt-sql ") {
            let mut shown = Vec::new();
            let mut j = i + 1;
            while j < lines.len() && !lines[j].is_empty() && !lines[j].starts_with("```") {
                shown.push(lines[j].to_string());
                j += 1;
            }
            found.push(Session {
                command_line: i,
                args: split(command),
                shown,
            });
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// Words separated by spaces; double quotes group words.
fn split(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[test]
fn readme_sql_sessions_print_what_the_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("README.md");
    let readme = std::fs::read_to_string(&path).expect("reads the README");
    let found = sessions(&readme);
    assert!(!found.is_empty(), "the README shows a logfmt-sql session");
    let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
    let overwrite = std::env::var("TRYCMD").is_ok_and(|mode| mode == "overwrite");
    // From the last, so that rewriting one keeps the others' line numbers.
    for session in found.iter().rev() {
        let output = Command::new(env!("CARGO_BIN_EXE_logfmt-sql"))
            .args(&session.args)
            .current_dir(&root)
            .output()
            .expect("runs logfmt-sql");
        assert!(
            output.status.success(),
            "{:?}: {}",
            session.args,
            String::from_utf8_lossy(&output.stderr)
        );
        let printed: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        if overwrite {
            let at = session.command_line + 1;
            lines.splice(at..at + session.shown.len(), printed);
        } else {
            assert_eq!(
                printed,
                session.shown,
                "README.md line {}",
                session.command_line + 1
            );
        }
    }
    if overwrite {
        std::fs::write(&path, lines.join("\n") + "\n").expect("writes the README");
    }
}
