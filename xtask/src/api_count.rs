//! `cargo xtask api-count`: how many public items each library crate offers at its top level.
//!
//! The rule: every name a user can write as `logfmt_core::NAME` or `logfmt_std::NAME` counts
//! once — each name a `pub use` brings in at the crate root (a `{…}` group counts each of its
//! names, `self` the module), each `pub mod`, and each `pub` item (`fn`, `struct`, `enum`,
//! `trait`, `const`, `static`, `type`, `macro`) declared in `lib.rs` itself. Items under a
//! feature count too (the count is of the full API), items only for tests or doc tests
//! (`#[cfg(test)]`, `#[cfg(doctest)]`) and `pub(crate)` ones do not. What a module holds is
//! not counted: the top level is what a reader of the crate's front page sees first.
//!
//! It reads `src/lib.rs` as text (no build, no nightly): a `pub use` of a glob (`*`) is
//! refused, since it could not be counted.

use std::fs;

use crate::cmd::{Error, Result, banner, project_root};

/// The crates counted, by their directory under `crates/`.
const CRATES: &[(&str, &str)] = &[("logfmt-core", "logfmt_core"), ("logfmt-std", "logfmt_std")];

/// Prints the count of each library crate and its names.
pub(crate) fn run(_args: &[String]) -> Result {
    banner("api-count: public names at each library crate's top level");
    for (dir, name) in CRATES {
        let path = project_root().join("crates").join(dir).join("src/lib.rs");
        let text = fs::read_to_string(&path)
            .map_err(|e| Error::Failed(format!("reading {}: {e}", path.display())))?;
        let names = top_level_names(&text)?;
        println!("{name}: {} names", names.len());
        println!("  {}", names.join(" "));
    }
    Ok(())
}

/// The public names at the top level of a crate whose root is `text`, in order.
fn top_level_names(text: &str) -> Result<Vec<String>> {
    let code = strip_comments(text);
    let mut names = Vec::new();
    let mut skip_next = false;
    let mut rest = code.as_str();
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        if let Some(attr) = rest.strip_prefix("#[").or_else(|| rest.strip_prefix("#![")) {
            let end = attr.find(']').unwrap_or(attr.len());
            let body = &attr[..end];
            if body.starts_with("cfg(test") || body.starts_with("cfg(doctest") {
                skip_next = true;
            }
            rest = &attr[(end + 1).min(attr.len())..];
            continue;
        }
        let (item, after) = split_item(rest);
        rest = after;
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if let Some(tree) = item.strip_prefix("pub use ") {
            names.extend(use_names(tree)?);
        } else if let Some(decl) = item.strip_prefix("pub ") {
            names.push(declared_name(decl));
        }
    }
    Ok(names)
}

/// The name a `pub` declaration (after `pub `) declares: the word after its keyword.
fn declared_name(decl: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "mod", "fn", "struct", "enum", "trait", "static", "type", "macro", "union",
    ];
    let mut words = decl
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .peekable();
    while let Some(word) = words.next() {
        let is_const_item = word == "const" && words.peek() != Some(&"fn");
        if KEYWORDS.contains(&word) || is_const_item {
            return words.next().unwrap_or("").to_owned();
        }
    }
    String::new()
}

/// The first item of `code` (up to its `;` or its balanced `{…}`) and what follows it.
fn split_item(code: &str) -> (&str, &str) {
    let mut depth = 0usize;
    for (i, c) in code.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && !code.starts_with("pub use") {
                    return (&code[..=i], &code[i + 1..]);
                }
            }
            ';' if depth == 0 => return (&code[..=i], &code[i + 1..]),
            _ => {}
        }
    }
    (code, "")
}

/// The names a `use` tree (after `pub use `, up to its `;`) brings in.
fn use_names(tree: &str) -> Result<Vec<String>> {
    let tree = tree.trim_end_matches(';').trim();
    if tree.contains('*') {
        return Err(Error::Failed(format!(
            "cannot count a glob: pub use {tree}"
        )));
    }
    let Some(open) = tree.find('{') else {
        return Ok(vec![leaf_name(tree)]);
    };
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let prefix = tree[..open].trim_end_matches("::");
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut part = String::new();
    for c in inner.chars().chain([',']) {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let p = part.trim();
                if p == "self" {
                    names.push(leaf_name(prefix));
                } else if p.contains('{') {
                    names.extend(use_names(p)?);
                } else if !p.is_empty() {
                    names.push(leaf_name(p));
                }
                part.clear();
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    Ok(names)
}

/// The name a simple use path brings in: its last segment, or the name after `as`.
fn leaf_name(path: &str) -> String {
    let path = path.trim();
    match path.rsplit_once(" as ") {
        Some((_, alias)) => alias.trim().to_owned(),
        None => path.rsplit("::").next().unwrap_or(path).trim().to_owned(),
    }
}

/// `text` without `//` and `/* */` comments (doc comments included); strings are not
/// special-cased, which a crate root's items do not need.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
    }
    while let Some(start) = out.find("/*") {
        let end = out[start..].find("*/").map_or(out.len(), |e| start + e + 2);
        out.replace_range(start..end, "");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::top_level_names;

    #[test]
    fn counts_each_name_a_user_can_write() {
        let lib = r#"
//! Docs with `pub use` in them.
#![no_std]
pub mod parts;
mod private;
#[cfg(feature = "x")]
pub mod flash;
#[cfg(test)]
mod tests;
#[cfg(doctest)]
pub struct Readme;
pub use a::{B, C as D, e::{F, self}};
pub use g::H;
pub(crate) use i::J;
/// A module inline.
pub mod on_disk {}
pub fn open() {}
pub const BLOCK: usize = 1;
"#;
        assert_eq!(
            top_level_names(lib).unwrap(),
            [
                "parts", "flash", "B", "D", "F", "e", "H", "on_disk", "open", "BLOCK"
            ]
        );
    }

    #[test]
    fn refuses_a_glob() {
        assert!(top_level_names("pub use a::*;").is_err());
    }
}
