//! `cargo xtask web`: the inspector page — `logfmt-web` compiled to WebAssembly, its
//! JavaScript bindings (wasm-bindgen), and the page around them — as one self-contained
//! `index.html` in `target/web/` that works from `file://` and from any static server (the
//! WebAssembly module is inside it, so nothing is fetched). `--test` also drives the page in
//! headless Chromium (`crates/logfmt-web/tests/browser.rs`); `--bench` reads a 1 GiB log in it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::apt;
use crate::cmd::{Cmd, Error, Result, project_root, runs};
use crate::toolchain::ensure_targets;

/// The target the inspector is compiled for.
const WASM: &str = "wasm32-unknown-unknown";
/// Where the page's sources are.
const PAGE: &str = "crates/logfmt-web/page";

/// `cargo xtask web [--test] [--bench [--size MIB]…]`: `--size` sets the benchmark's log
/// sizes (default 256 and 1024 MiB).
pub(crate) fn run(args: &[String]) -> Result {
    let (mut test, mut bench, mut sizes) = (false, false, Vec::new());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test" => test = true,
            "--bench" => bench = true,
            "--size" => {
                let size = args
                    .next()
                    .and_then(|s| s.parse::<u64>().ok())
                    .filter(|&s| s > 0);
                let size = size.ok_or_else(|| {
                    Error::Usage("`--size` takes a size in MiB (a whole number above 0)".to_owned())
                })?;
                sizes.push(size.to_string());
            }
            _ => {
                return Err(Error::Usage(format!(
                    "unexpected argument `{arg}` for `web`"
                )));
            }
        }
    }
    let page = build()?;
    println!("the inspector: {}", page.display());
    if test {
        browser_test(&page, None)?;
    }
    if bench {
        browser_test(&page, Some(&sizes.join(",")))?;
    }
    Ok(())
}

/// CI's step: the page built and tested in Chromium.
pub(crate) fn ci() -> Result {
    let page = build()?;
    browser_test(&page, None)
}

/// Where cargo builds: `CARGO_TARGET_DIR` or the workspace's `target/`.
fn target_dir() -> PathBuf {
    let root = project_root();
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d))
}

/// Builds the page; returns the path of its `index.html`.
fn build() -> Result<PathBuf> {
    ensure_targets(&[WASM])?;
    Cmd::cargo()
        .args([
            "build",
            "-p",
            "logfmt-web",
            "--lib",
            "--release",
            "--target",
            WASM,
        ])
        .run()?;
    let target = target_dir();
    let wasm = target.join(WASM).join("release").join("logfmt_web.wasm");
    let bindgen = ensure_wasm_bindgen()?;
    let out = target.join("web");
    let pkg = out.join("pkg");
    let _ = fs::remove_dir_all(&pkg);
    Cmd::new(&bindgen.to_string_lossy())
        .args(["--target", "no-modules", "--no-typescript", "--out-dir"])
        .args([pkg.to_string_lossy(), wasm.to_string_lossy()])
        .run()?;
    let read =
        |path: &Path| fs::read(path).map_err(|e| Error::Failed(format!("{}: {e}", path.display())));
    let text = |path: &Path| read(path).map(|b| String::from_utf8_lossy(&b).into_owned());
    let page = project_root().join(PAGE);
    let worker = format!(
        "{}\nconst WASM_BASE64 = \"{}\";\n{}",
        text(&pkg.join("logfmt_web.js"))?,
        base64(&read(&pkg.join("logfmt_web_bg.wasm"))?),
        text(&page.join("worker.js"))?
    );
    // `</script` cannot appear inside the script elements the page is made of.
    let safe = |s: String| s.replace("</script", "<\\/script");
    let html = text(&page.join("index.html"))?
        .replacen("/*STYLE*/", &text(&page.join("style.css"))?, 1)
        .replacen("/*WORKER*/", &safe(worker), 1)
        .replacen("/*APP*/", &safe(text(&page.join("app.js"))?), 1);
    fs::create_dir_all(&out).map_err(|e| Error::Failed(format!("{}: {e}", out.display())))?;
    let index = out.join("index.html");
    let partial = out.join(".index.html.tmp");
    fs::write(&partial, html)
        .and_then(|()| fs::rename(&partial, &index))
        .map_err(|e| Error::Failed(format!("{}: {e}", index.display())))?;
    Ok(index)
}

/// The `wasm-bindgen` of the version `Cargo.lock` records for the crate (its bindings must
/// match the CLI's version exactly): the one on `PATH` if it is that version, else installed
/// with `cargo install --locked` into `target/tools`.
fn ensure_wasm_bindgen() -> Result<PathBuf> {
    let version = locked_version("wasm-bindgen")?;
    let wanted = format!("wasm-bindgen {version}");
    let answers = |program: &Path| {
        std::process::Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == wanted)
    };
    if answers(Path::new("wasm-bindgen")) {
        return Ok(PathBuf::from("wasm-bindgen"));
    }
    let root = target_dir().join("tools");
    let installed = root.join("bin").join("wasm-bindgen");
    if answers(&installed) {
        return Ok(installed);
    }
    println!("installing wasm-bindgen-cli {version} (the version of Cargo.lock's wasm-bindgen)");
    let install = |locked: &[&str]| {
        Cmd::cargo()
            // A debug build: it compiles in about half the time, and runs for a second on a
            // module this size.
            .args([
                "install",
                "--debug",
                "wasm-bindgen-cli",
                "--version",
                &version,
                "--root",
            ])
            .args([root.to_string_lossy()])
            .args(locked.iter().copied())
            .run()
    };
    // Its own lock file first; a dependency it pins can be gone from the registry (yanked), and
    // then the newest compatible versions are taken.
    install(&["--locked"])
        .or_else(|_| install(&[]))
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  wasm-bindgen-cli {version} (crates.io) makes the page's bindings and could \
                 not be installed"
            ))
        })?;
    Ok(installed)
}

/// The version of `package` in `Cargo.lock`.
fn locked_version(package: &str) -> Result<String> {
    let lock = fs::read_to_string(project_root().join("Cargo.lock"))
        .map_err(|e| Error::Failed(format!("Cargo.lock: {e}")))?;
    let name = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == name
            && let Some(version) = lines.next().and_then(|l| l.strip_prefix("version = "))
        {
            return Ok(version.trim_matches('"').to_owned());
        }
    }
    Err(Error::Failed(format!("Cargo.lock records no {package}")))
}

/// Debian's Chromium, installed when missing; fails (never skips) where it cannot be had.
fn ensure_chromium() -> Result<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        if runs(name, &["--version"]) {
            return Ok(PathBuf::from(name));
        }
    }
    apt::install(&["chromium"])?;
    if runs("chromium", &["--version"]) {
        Ok(PathBuf::from("chromium"))
    } else {
        Err(Error::Failed(
            "Chromium was installed but `chromium --version` does not run".to_owned(),
        ))
    }
}

/// Runs the browser test (or, with `bench`, the browser benchmark over logs of those sizes in
/// MiB, comma-separated, or its default sizes if empty) against `page`, with the `logfmt`
/// command line to compare with.
fn browser_test(page: &Path, bench: Option<&str>) -> Result {
    let chromium = ensure_chromium()?;
    let sizes = bench.unwrap_or_default();
    let bench = bench.is_some();
    let logfmt = if bench {
        crate::cmd::build_release_bin("logfmt-cli", "logfmt")?
    } else {
        Cmd::cargo()
            .args(["build", "-p", "logfmt-cli", "--bin", "logfmt"])
            .run()?;
        target_dir().join("debug").join("logfmt")
    };
    let test = if bench { "bench" } else { "browser" };
    Cmd::cargo()
        .args([
            "test",
            "--release",
            "-p",
            "logfmt-web",
            "--test",
            "browser",
            test,
        ])
        .args(["--", "--ignored", "--nocapture", "--test-threads=1"])
        .env("LOGFMT_WEB_PAGE", &page.to_string_lossy())
        .env("LOGFMT_CLI", &logfmt.to_string_lossy())
        .env("CHROMIUM", &chromium.to_string_lossy())
        .env(
            "LOGFMT_WEB_OUT",
            &target_dir().join("web").to_string_lossy(),
        )
        .env("LOGFMT_WEB_BENCH_MIB", sizes)
        .run()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let word = group
            .iter()
            .enumerate()
            .fold(0u32, |w, (i, &b)| w | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(word >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_of_rfc4648s_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }
}
