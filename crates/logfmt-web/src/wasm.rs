//! The WebAssembly exports: the page's worker hands over a function that reads a slice of the
//! file the user opened, and gets JSON back.

use std::io;

use js_sys::{Function, Uint8Array};
use logfmt_core::{ReadOptions, parts::ReadFormat};
use wasm_bindgen::prelude::*;

use crate::{ContentKind, FindDialect, Inspection, Options, ReadAt, Window};

/// Bytes fetched from the file at a time where it is read synchronously (a ring image, a key
/// search): each fetch is one synchronous request through the browser (a ranged HTTP request,
/// or a `FileReaderSync` read), whose fixed cost a large window spreads; memory is about two
/// windows whatever the file's size.
const WINDOW: usize = 16 << 20;

/// A JavaScript function `(offset, len) => Uint8Array`.
#[derive(Debug)]
struct JsRead(Function);

impl ReadAt for JsRead {
    fn read_at(&mut self, offset: u64, len: usize, into: &mut Vec<u8>) -> io::Result<()> {
        let bytes = self
            .0
            .call2(
                &JsValue::NULL,
                &JsValue::from_f64(offset as f64),
                &JsValue::from_f64(len as f64),
            )
            .map_err(|e| io::Error::other(format!("reading the file failed: {e:?}")))?;
        // The array the function returned, copied once into the window's memory (a
        // `Uint8Array::new` of it would copy it in JavaScript first).
        let bytes = bytes
            .dyn_into::<Uint8Array>()
            .map_err(|_| io::Error::other("reading the file failed: not a Uint8Array"))?;
        let n = usize::try_from(bytes.length()).unwrap_or(0).min(len);
        into.resize(n, 0);
        bytes.subarray(0, n as u32).copy_to(into);
        Ok(())
    }
}

fn options(name: &str, format: &str) -> Options {
    let mut options = Options {
        content: ContentKind::by_name(name),
        ..Options::default()
    };
    // A dialect names whose log it is (what chunk types above 4 mean); its chunks decide
    // legacy or recyclable, as with auto.
    let dialect = match format {
        "leveldb" => Some(logfmt_core::parts::Dialect::LevelDb),
        "rocksdb" => Some(logfmt_core::parts::Dialect::RocksDb),
        "pebble" => Some(logfmt_core::parts::Dialect::Pebble),
        _ => None,
    };
    if let Some(dialect) = dialect {
        options.read = ReadOptions::default().dialect(dialect);
    }
    if format == "auto" || matches!(format, "rocksdb" | "pebble") {
        options.read = options.read.format(ReadFormat::Auto { log_number: None });
    }
    // As `logfmt` finds it: auto from the whole log, a dialect as named, and with none named
    // (`legacy`, the page's default) a Pebble WAL by its first chunk.
    options.find_dialect = match (format, dialect) {
        ("auto", _) => FindDialect::WholeLog,
        (_, Some(_)) => FindDialect::Given,
        _ => FindDialect::FirstChunk,
    };
    options
}

fn file(len: f64, read: Function) -> (Window<JsRead>, u64) {
    let len = length(len);
    (Window::new(JsRead(read), len, WINDOW), len)
}

/// An inspection of the file `name` of `len` bytes, handed over part after part
/// ([`push`](Self::push)) as the page reads them; `read(offset, len)` reads what it needs at
/// once (a ring image, and a record longer than what it holds); `format` is `legacy`, `auto`,
/// or a writer's dialect: `leveldb`, `rocksdb`, `pebble`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct FileInspection(Inspection<JsRead>);

#[wasm_bindgen]
impl FileInspection {
    /// Starts the inspection (a ring image is read whole here).
    ///
    /// # Errors
    /// A read error on a ring image's headers.
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, len: f64, read: Function, format: &str) -> Result<Self, JsError> {
        let len = length(len);
        let inspection = Inspection::new(JsRead(read), len, &options(name, format), WINDOW)?;
        Ok(Self(inspection))
    }

    /// The file offset of the bytes it wants next; -1 once it has read the file.
    pub fn wants(&self) -> f64 {
        self.0.wants().map_or(-1.0, |at| at as f64)
    }

    /// Hands over `bytes`, the file's bytes at `offset`, and reads as far as they go (copied
    /// once, into WebAssembly memory). Returns whether it wants more.
    ///
    /// # Errors
    /// A read of bytes it needed at once failed.
    pub fn push(&mut self, offset: f64, bytes: &Uint8Array) -> Result<bool, JsError> {
        let n = bytes.length();
        let wants = self.0.push_with(length(offset), n as usize, |skip, into| {
            bytes.subarray(skip as u32, n).copy_to(into);
            Ok(())
        })?;
        Ok(wants)
    }

    /// Bytes it read at once because a record needed them before they were handed over.
    pub fn caught_up(&self) -> f64 {
        self.0.caught_up() as f64
    }

    /// The report, as JSON.
    ///
    /// # Errors
    /// A read error at the end of the file.
    pub fn finish(self) -> Result<String, JsError> {
        Ok(serde_json::to_string(&self.0.finish()?)?)
    }
}

/// A length or offset from JavaScript: 0 if it is not a number of bytes.
fn length(len: f64) -> u64 {
    if len.is_finite() && len > 0.0 {
        len as u64
    } else {
        0
    }
}

/// Inspects the file `name` of `len` bytes, read through `read(offset, len)`; `format` is
/// `legacy`, `auto`, or a writer's dialect: `leveldb`, `rocksdb`, `pebble`. Returns the report as JSON.
///
/// # Errors
/// A seek or read error that ends the inspection.
#[wasm_bindgen]
pub fn inspect_file(name: &str, len: f64, read: Function, format: &str) -> Result<String, JsError> {
    let (file, len) = file(len, read);
    let report = crate::inspect(file, len, &options(name, format))?;
    Ok(serde_json::to_string(&report)?)
}

/// The records of the file that hold `key`, as JSON.
///
/// # Errors
/// A seek or read error that ends the search.
#[wasm_bindgen]
pub fn search_file(
    name: &str,
    len: f64,
    read: Function,
    format: &str,
    key: &str,
) -> Result<String, JsError> {
    let (file, len) = file(len, read);
    let hits = crate::search(file, len, key.as_bytes(), &options(name, format))?;
    Ok(serde_json::to_string(&hits)?)
}

/// The spans of one block (its bytes, and its file offset), as JSON; `erased` is 255 or 0
/// for a flash image's block, anything else for a plain log's.
///
/// # Errors
/// Never in practice (the spans serialise).
#[wasm_bindgen]
pub fn block_spans(
    block: &[u8],
    offset: f64,
    format: &str,
    erased: i32,
) -> Result<String, JsError> {
    let mut read = options("", format).read;
    read.erased = u8::try_from(erased).ok().filter(|&e| e == 0 || e == 0xFF);
    let spans = crate::block_spans(block, offset.max(0.0) as u64, &read);
    Ok(serde_json::to_string(&spans)?)
}
