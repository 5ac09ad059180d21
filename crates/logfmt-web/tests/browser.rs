//! The inspector page in a real browser (headless Chromium), against the `logfmt` command line:
//! for the LevelDB vectors, a damaged log, a ring image, a database directory and hostile
//! files, the records, offsets and damage the page shows are those `logfmt verify --json` and
//! `logfmt cat --output json` print, and the map draws the damage's colour at the damaged
//! block. A screenshot of each case is written for people to look at.
//!
//! These tests need the built page and Chromium: `cargo xtask web --test` builds the page,
//! installs Chromium where it is missing, and runs them (`--bench`: the benchmark).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../logfmt-cli/tests/common/ring_image.rs"]
mod ring_image;

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use common::log_of;
use logfmt_core::BLOCK_SIZE;
use serde_json::Value;

fn env_path(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(name).unwrap_or_else(|| {
        panic!("{name} is not set: run these tests with `cargo xtask web --test`")
    }))
}

/// A small xorshift generator: the hostile files are the same at every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// A `WriteBatch` of one put.
fn batch(sequence: u64, key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = sequence.to_le_bytes().to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.push(1);
    for part in [key, value] {
        out.push(u8::try_from(part.len()).unwrap());
        out.extend_from_slice(part);
    }
    out
}

/// The files of every case, under `root/CASE/`; returns the cases and their file names.
fn make_cases(root: &Path) -> Vec<(&'static str, Vec<String>)> {
    let write = |case: &str, name: &str, bytes: &[u8]| {
        let dir = root.join(case);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
        name.to_owned()
    };
    let mut cases = Vec::new();

    let (vectors, names) = common::vector_names();
    for name in &names {
        write("vectors", name, &std::fs::read(vectors.join(name)).unwrap());
    }
    assert_eq!(names.len(), 27, "the 27 LevelDB vectors");
    cases.push(("vectors", names));

    // Six blocks of records with one byte flipped in the third block.
    let mut log = log_of(
        (0..2000u32)
            .map(|i| format!("record {i:05} {}", "x".repeat((i % 97) as usize)).into_bytes()),
    );
    log[2 * BLOCK_SIZE + 1000] ^= 0x40;
    cases.push(("damaged", vec![write("damaged", "damaged.log", &log)]));

    let spec = ring_image::Spec::new(4, 1_500, 11);
    let ring = ring_image::run::<4096>(&spec, ring_image::sample);
    cases.push(("ring", vec![write("ring", "sensor.img", &ring.image)]));

    // A LevelDB database directory: CURRENT, its MANIFEST and a write-ahead log.
    let manifest = log_of([
        [&[1u8, 26][..], b"leveldb.BytewiseComparator"].concat(),
        vec![2, 3, 3, 4, 4, 0],
    ]);
    let wal = log_of((0..300u64).map(|i| batch(i + 1, format!("key{i:04}").as_bytes(), b"value")));
    let db = vec![
        write("db", "CURRENT", b"MANIFEST-000002\n"),
        write("db", "MANIFEST-000002", &manifest),
        write("db", "000003.log", &wal),
    ];
    cases.push(("db", db));

    // Pebble's own WALs (CockroachDB's engine), as `logfmt` reads them with no format given:
    // one in WAL-sync chunks (read as Pebble's, found by its first chunk), and copies of it
    // cut inside its last record and with a byte of that record flipped — both the log's torn
    // end as Pebble reads it, nothing after the damage saying the log was synced past it.
    let pebble = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/pebble");
    let mut wals = Vec::new();
    for path in [
        "find-val-sep-db/000007.log",
        "find-val-sep-db/000010.log",
        "db-stage-4/000005.log",
        "mixed/000002.log",
    ] {
        let bytes = std::fs::read(pebble.join(path)).unwrap();
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        wals.push(write("pebble", name, &bytes));
    }
    let wal_sync = std::fs::read(pebble.join("find-val-sep-db/000007.log")).unwrap();
    // The last record's chunk (19 bytes of header, 30 of payload) ends at the EOF trailer.
    let last = wal_sync.len() - 11 - 49;
    wals.push(write("pebble", "000107.log", &wal_sync[..last + 30]));
    let mut flipped = wal_sync.clone();
    flipped[last + 30] ^= 0x40;
    wals.push(write("pebble", "000207.log", &flipped));
    // Written on past block 0 with a synced offset past the sixth record, damaged there:
    // corruption, as Pebble reads it.
    let mut corrupt = common::pebbles_wal_written_on();
    corrupt[235 + 19 + 2] ^= 1;
    wals.push(write("pebble", "000307.log", &corrupt));
    cases.push(("pebble", wals));

    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut lengths = Vec::new();
    while lengths.len() < 3 * BLOCK_SIZE {
        lengths.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 1]);
    }
    let hostile = vec![
        write("hostile", "random.bin", &random.bytes(256 << 10)),
        write("hostile", "lengths.bin", &lengths),
        write("hostile", "empty.log", b""),
        write("hostile", "erased.bin", &[0xff; 64 << 10]),
        write(
            "hostile",
            "text.txt",
            "root:x:0:0:root:/root:/bin/bash\n".repeat(100).as_bytes(),
        ),
    ];
    cases.push(("hostile", hostile));
    cases
}

// ---------------------------------------------------------------- a server on 127.0.0.1

/// Serves the page, the case files (with ranged reads) and takes the page's report.
struct Server {
    port: u16,
    reports: Receiver<String>,
}

impl Server {
    fn start(page: PathBuf, files: PathBuf) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (send, reports) = mpsc::channel();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (page, files, send) = (page.clone(), files.clone(), send.clone());
                thread::spawn(move || {
                    let _ = serve(stream, &page, &files, &send);
                });
            }
        });
        Self { port, reports }
    }

    fn url(&self, query: &str) -> String {
        format!("http://127.0.0.1:{}/index.html?{query}", self.port)
    }
}

fn serve(
    stream: TcpStream,
    page: &Path,
    files: &Path,
    reports: &Sender<String>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let mut out = stream;
    let path = target.split('?').next().unwrap_or("/");
    if method == "POST" {
        let len: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        let _ = reports.send(String::from_utf8_lossy(&body).into_owned());
        return out.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
    }
    let file = match path {
        "/" | "/index.html" => Some(page.to_path_buf()),
        p => p
            .strip_prefix("/files/")
            .map(|rest| files.join(percent_decode(rest))),
    };
    let Some(mut file) = file.and_then(|f| std::fs::File::open(f).ok()) else {
        return out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    };
    let len = file.metadata()?.len();
    let kind = if path.ends_with(".html") {
        "text/html; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    let range = headers
        .get("range")
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| {
            let (a, b) = r.split_once('-')?;
            Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
        });
    let (status, from, count, extra) = match range {
        Some((from, to)) if from < len => {
            let to = to.min(len - 1);
            (
                "206 Partial Content",
                from,
                to - from + 1,
                format!("Content-Range: bytes {from}-{to}/{len}\r\n"),
            )
        }
        Some(_) => (
            "206 Partial Content",
            0,
            0,
            format!("Content-Range: bytes */{len}\r\n"),
        ),
        None => ("200 OK", 0, len, String::new()),
    };
    // Not kept in the browser's cache: the benchmark's memory is the page's reading.
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {count}\r\n{extra}Accept-Ranges: bytes\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    );
    out.write_all(head.as_bytes())?;
    if method != "HEAD" {
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(from))?;
        std::io::copy(&mut file.take(count), &mut out)?;
    }
    Ok(())
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// ---------------------------------------------------------------- Chromium

fn chromium(url: &str, profile: &Path, extra: &[String]) -> Command {
    let mut command = Command::new(env_path("CHROMIUM"));
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Ends the browser when dropped (its helper processes end with it).
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_in_group(mut command: Command) -> Browser {
    Browser(command.spawn().expect("Chromium starts"))
}

/// Opens `url` in headless Chromium and waits for the page's report.
fn page_report(server: &Server, url: &str, profile: &Path, within: Duration) -> (Value, Browser) {
    let browser = spawn_in_group(chromium(
        url,
        profile,
        &["--remote-debugging-port=0".into()],
    ));
    let report = server
        .reports
        .recv_timeout(within)
        .unwrap_or_else(|_| panic!("the page sent no report within {within:?}: {url}"));
    (serde_json::from_str(&report).unwrap(), browser)
}

/// A screenshot of `url` once it has drawn (Chromium's own `--screenshot`).
fn screenshot(url: &str, profile: &Path, path: &Path) {
    let mut browser = spawn_in_group(chromium(
        url,
        profile,
        &[
            format!("--screenshot={}", path.display()),
            "--virtual-time-budget=20000".into(),
        ],
    ));
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(90) {
        if let Ok(Some(_)) = browser.0.try_wait() {
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    assert!(path.is_file(), "no screenshot at {}", path.display());
}

// ---------------------------------------------------------------- the command line

fn logfmt(args: &[&str], file: &Path) -> String {
    let output = Command::new(env_path("LOGFMT_CLI"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap()
}

fn verify(file: &Path) -> Value {
    serde_json::from_str(&logfmt(&["verify", "--json"], file)).unwrap()
}

fn cat_offsets(file: &Path) -> Vec<u64> {
    logfmt(&["cat", "--output", "json"], file)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["offset"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

fn rgb(hex: &str) -> String {
    let hex = hex.trim_start_matches('#');
    let c = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap();
    format!("rgb({}, {}, {})", c(0), c(2), c(4))
}

/// The page's report of one file agrees with the command line's.
fn agrees(check: &Value, file: &Path, colours: &Value) {
    let name = file.display();
    assert!(
        check.get("error").is_none(),
        "{name}: the page failed: {check}"
    );
    let page = &check["report"];
    let cli = verify(file);
    for key in ["records", "payload_bytes", "dropped_bytes"] {
        assert_eq!(page[key], cli[key], "{name}: {key}");
    }
    // Read as Pebble's, the proof that the first damage is corruption (none: a torn end).
    assert_eq!(
        page["pebble_synced"],
        *cli.get("pebble_synced").unwrap_or(&Value::Null),
        "{name}: pebble_synced"
    );
    let damage = |list: &Value| -> Vec<(u64, u64, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["offset"].as_u64().unwrap(),
                    c["bytes"].as_u64().unwrap(),
                    c["reason"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        damage(&page["corruptions"]),
        damage(&cli["corruptions"]),
        "{name}: corruptions"
    );
    let tail = |t: &Value| {
        t.as_object()
            .map(|t| (t["offset"].clone(), t["bytes"].clone()))
    };
    assert_eq!(tail(&page["tail"]), tail(&cli["tail"]), "{name}: tail");
    let shown: Vec<u64> = page["first_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["offset"].as_u64().unwrap())
        .collect();
    let offsets = cat_offsets(file);
    assert_eq!(
        shown,
        offsets[..shown.len().min(offsets.len())],
        "{name}: record offsets"
    );
    if let Some(colour) = check.get("drawn_colour") {
        assert_eq!(
            colour.as_str().unwrap(),
            rgb(colours["damaged"].as_str().unwrap()),
            "{name}: the damaged block's colour"
        );
        assert!(
            !check["spans"].as_array().unwrap().is_empty(),
            "{name}: the damaged block's spans"
        );
    }
}

#[test]
#[ignore = "needs the built page and Chromium: cargo xtask web --test"]
fn browser() {
    let page = env_path("LOGFMT_WEB_PAGE");
    let out = env_path("LOGFMT_WEB_OUT");
    let root = tempfile_dir("logfmt-web-cases");
    let cases = make_cases(&root);
    let server = Server::start(page, root.clone());
    let shots = out.join("shots");
    std::fs::create_dir_all(&shots).unwrap();
    for (case, names) in &cases {
        let started = Instant::now();
        let query = format!(
            "files={}&base=/files/{case}/&report=/report",
            names.join(",")
        );
        let profile = tempfile_dir(&format!("logfmt-web-profile-{case}"));
        eprintln!("{case}: opening the page");
        let (report, browser) = page_report(
            &server,
            &server.url(&query),
            &profile,
            Duration::from_secs(120),
        );
        drop(browser);
        let checks = report["files"].as_array().unwrap();
        let expected = if *case == "db" {
            names.len() - 1
        } else {
            names.len()
        };
        assert_eq!(checks.len(), expected, "{case}: files shown");
        for check in checks {
            let file = root.join(case).join(check["name"].as_str().unwrap());
            agrees(check, &file, &report["colours"]);
        }
        let damaged = checks
            .iter()
            .filter(|c| c.get("drawn_colour").is_some())
            .count();
        if matches!(*case, "damaged" | "vectors") {
            assert!(damaged > 0, "{case}: a damaged block drawn");
        }
        eprintln!("{case}: the page agrees; a screenshot");
        let shot = shots.join(format!("{case}.png"));
        let profile = tempfile_dir(&format!("logfmt-web-shot-{case}"));
        screenshot(
            &server.url(&query.replace("&report=/report", "&inline=1")),
            &profile,
            &shot,
        );
        println!(
            "{case}: {} files agree with logfmt verify and cat ({:.1?}); screenshot {}",
            checks.len(),
            started.elapsed(),
            shot.display()
        );
    }
}

fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The resident memory of every process whose command line names `profile` (one browser's
/// processes), in bytes.
fn browser_memory(profile: &Path) -> u64 {
    let needle = profile.to_string_lossy().into_owned();
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let dir = entry.path();
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(&needle) {
            continue;
        }
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        if let Some(kb) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            total += kb * 1024;
        }
    }
    total
}

// ---------------------------------------------------------------- the DevTools protocol

/// A page of Chromium, driven through its DevTools protocol (a WebSocket to the port Chromium
/// started with `--remote-debugging-port=0` writes to its profile): enough to hand the page's
/// file input a file from disk, as the file picker does.
struct DevTools {
    stream: TcpStream,
    next_id: u64,
}

/// An HTTP GET of `path` on 127.0.0.1:`port`: the body (as long as its `Content-Length`:
/// DevTools' server may keep the connection open).
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    write!(
        &stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

impl DevTools {
    /// Connects to the page of the browser whose profile is `profile` once it shows `url`.
    fn connect(profile: &Path, url: &str) -> Self {
        let started = Instant::now();
        let (port, socket) = loop {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "Chromium's DevTools did not answer"
            );
            thread::sleep(Duration::from_millis(100));
            let Some(port) = std::fs::read_to_string(profile.join("DevToolsActivePort"))
                .ok()
                .and_then(|text| text.lines().next()?.trim().parse::<u16>().ok())
            else {
                continue;
            };
            let Ok(list) = http_get(port, "/json/list") else {
                continue;
            };
            let targets: Value = serde_json::from_str(&list).unwrap_or(Value::Null);
            let page = targets.as_array().into_iter().flatten().find(|t| {
                t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(url))
            });
            if let Some(socket) = page.and_then(|p| p["webSocketDebuggerUrl"].as_str()) {
                break (port, socket.to_owned());
            }
        };
        let path = socket
            .split_once("/devtools/")
            .map(|(_, rest)| format!("/devtools/{rest}"))
            .unwrap();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: bG9nZm10LWRldnRvb2xzIQ==\r\n\
             Sec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "DevTools: {head}");
        Self { stream, next_id: 1 }
    }

    /// Calls `method` with `params`; its result, or the error it answered.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        let message = serde_json::json!({ "id": id, "method": method, "params": params });
        self.send(message.to_string().as_bytes());
        loop {
            let answer: Value = serde_json::from_slice(&self.receive()).unwrap();
            if answer["id"] == id {
                return match answer.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(answer["result"].clone()),
                };
            }
        }
    }

    /// Sends one text frame (masked, as a client's must be).
    fn send(&mut self, text: &[u8]) {
        let mask = [0x6c, 0x6f, 0x67, 0x21];
        let mut frame = vec![0x81];
        match text.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n < 1 << 16 => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(text.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame).unwrap();
    }

    /// Receives one message (its frames joined).
    fn receive(&mut self) -> Vec<u8> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.stream.read_exact(&mut head).unwrap();
            let len = match head[1] & 0x7f {
                126 => {
                    let mut n = [0u8; 2];
                    self.stream.read_exact(&mut n).unwrap();
                    u64::from(u16::from_be_bytes(n))
                }
                127 => {
                    let mut n = [0u8; 8];
                    self.stream.read_exact(&mut n).unwrap();
                    u64::from_be_bytes(n)
                }
                n => u64::from(n),
            };
            let mut payload = vec![0u8; usize::try_from(len).unwrap()];
            self.stream.read_exact(&mut payload).unwrap();
            if head[0] & 0x0f == 0x9 {
                // A ping: answered by the next call's traffic, nothing to keep.
                continue;
            }
            message.extend_from_slice(&payload);
            if head[0] & 0x80 != 0 {
                return message;
            }
        }
    }

    /// Hands the page's file input (`selector`) the file at `path`, as the file picker does.
    fn choose_file(&mut self, selector: &str, path: &Path) {
        // The document may still be replaced while the page loads: asked again until the
        // input is there and takes the file.
        let started = Instant::now();
        loop {
            let chosen = self
                .call("DOM.getDocument", serde_json::json!({}))
                .and_then(|root| {
                    self.call(
                        "DOM.querySelector",
                        serde_json::json!({ "nodeId": root["root"]["nodeId"], "selector": selector }),
                    )
                })
                .and_then(|node| {
                    self.call(
                        "DOM.setFileInputFiles",
                        serde_json::json!({
                            "nodeId": node["nodeId"],
                            "files": [path.to_string_lossy()],
                        }),
                    )
                });
            match chosen {
                Ok(_) => return,
                Err(error) => assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "{selector} takes no file: {error}"
                ),
            }
            thread::sleep(Duration::from_millis(200));
        }
    }
}

// ---------------------------------------------------------------- the benchmark

/// How the benchmark hands the page its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// A ranged HTTP request to 127.0.0.1, its body streamed in the worker.
    Http,
    /// The file picker: the file is chosen through the DevTools protocol
    /// (`DOM.setFileInputFiles`), and the worker streams the `File` from disk.
    Picker,
}

/// What one run of the page measured.
struct Run {
    /// The worker's time for the inspection, in seconds.
    seconds: f64,
    /// Of which waiting for the file's bytes (reads not overlapped by the scan).
    waiting: f64,
    /// Of which scanning (in WebAssembly).
    scanning: f64,
    /// Bytes the inspection read at once, outside the stream.
    caught_up: u64,
    /// The browser's peak memory (every process's resident size, summed).
    peak: u64,
    /// The page's own memory: the WebAssembly memory at its peak.
    wasm: u64,
}

/// Reads the log `name` in the page (the worker, through `path`): its time and the browser's
/// peak memory while it reads.
fn page_run(server: &Server, root: &Path, name: &str, path: Via) -> Run {
    let profile = tempfile_dir(&format!("logfmt-web-bench-profile-{name}"));
    let url = match path {
        Via::Http => server.url(&format!("files={name}&base=/files/&report=/report")),
        Via::Picker => server.url("report=/report"),
    };
    let browser = spawn_in_group(chromium(
        &url,
        &profile,
        &["--remote-debugging-port=0".into()],
    ));
    if path == Via::Picker {
        DevTools::connect(&profile, &url).choose_file("#files", &root.join(name));
    }
    let mut peak = 0;
    let started = Instant::now();
    let report = loop {
        peak = peak.max(browser_memory(&profile));
        if let Ok(report) = server.reports.try_recv() {
            break report;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "no report from the page"
        );
        thread::sleep(Duration::from_millis(50));
    };
    drop(browser);
    let _ = std::fs::remove_dir_all(&profile);
    let report: Value = serde_json::from_str(&report).unwrap();
    let check = &report["files"][0];
    assert!(check.get("error").is_none(), "{check}");
    let expected = if path == Via::Picker { "file" } else { "http" };
    assert_eq!(check["path"], expected, "{check}");
    let ms = |key: &str| check[key].as_f64().unwrap_or(0.0) / 1000.0;
    Run {
        seconds: ms("ms"),
        waiting: ms("wait_ms"),
        scanning: ms("scan_ms"),
        caught_up: check["caught_up"].as_u64().unwrap_or(0),
        peak,
        wasm: check["memory"]["wasm"].as_u64().unwrap_or(0),
    }
}

#[test]
#[ignore = "a benchmark: cargo xtask web --bench"]
fn bench() {
    let root = tempfile_dir("logfmt-web-bench");
    let record = vec![b'x'; 1000];
    let mut sizes = Vec::new();
    // `LOGFMT_WEB_BENCH_MIB` (`cargo xtask web --bench --size MIB`): the sizes, in MiB.
    let sizes_mib: Vec<u64> = std::env::var("LOGFMT_WEB_BENCH_MIB")
        .ok()
        .filter(|list| !list.trim().is_empty())
        .map(|list| list.split(',').map(|s| s.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| vec![256, 1024]);
    for (name, mib) in sizes_mib
        .iter()
        .map(|&mib| (format!("log-{mib}m.log"), mib))
    {
        let count = mib * (1 << 20) / 1007;
        let log = log_of((0..count).map(|_| record.clone()));
        std::fs::write(root.join(&name), &log).unwrap();
        sizes.push((name, log.len() as u64));
    }
    let server = Server::start(env_path("LOGFMT_WEB_PAGE"), root.clone());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("CPU: {cpu}; load average {}", load.trim());
    for (name, bytes) in sizes {
        let file = root.join(&name);
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let mut native = Vec::new();
        for _ in 0..3 {
            let started = Instant::now();
            let status = Command::new(env_path("LOGFMT_CLI"))
                .args(["verify", "--threads", "1"])
                .arg(&file)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            native.push(started.elapsed().as_secs_f64());
        }
        let native = median(&mut native);
        let mb = bytes as f64 / 1e6;
        println!(
            "{name} ({} MiB): logfmt verify --threads 1 {:.0} MB/s",
            bytes >> 20,
            mb / native
        );
        for path in [Via::Http, Via::Picker] {
            let runs: Vec<Run> = (0..3)
                .map(|_| page_run(&server, &root, &name, path))
                .collect();
            let take = |f: fn(&Run) -> f64| median(&mut runs.iter().map(f).collect());
            let (page, waiting, scanning) = (
                take(|r| r.seconds),
                take(|r| r.waiting),
                take(|r| r.scanning),
            );
            let max = |f: fn(&Run) -> u64| runs.iter().map(f).max().unwrap_or(0) >> 20;
            println!(
                "  the page, {}: {:.0} MB/s ({:.0} % of native); scanning {:.0} %, waiting \
                 for reads {:.0} % of its time (scan alone {:.0} MB/s); {} bytes read outside \
                 the stream; memory: WebAssembly {} MiB, the browser's processes {} MiB at most",
                match path {
                    Via::Http => "a ranged HTTP request to 127.0.0.1",
                    Via::Picker => "a File from the picker, read from disk",
                },
                mb / page,
                100.0 * native / page,
                100.0 * scanning / page,
                100.0 * waiting / page,
                mb / scanning,
                runs.iter().map(|r| r.caught_up).max().unwrap_or(0),
                max(|r| r.wasm),
                max(|r| r.peak),
            );
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}
