//! The WebAssembly exports: the page's worker hands over a function that reads a slice of the
//! file the user opened, and gets JSON back.

use std::io;

use js_sys::{Function, Uint8Array};
use logfmt_core::{ReadOptions, parts::ReadFormat};
use wasm_bindgen::prelude::*;

use crate::{ContentKind, Options, ReadAt, Window};

/// Bytes fetched from the file at a time: each fetch is one synchronous request through the
/// browser (a ranged HTTP request, or a `FileReaderSync` read), whose fixed cost a large window
/// spreads; memory is about two windows whatever the file's size.
const WINDOW: usize = 16 << 20;

/// A JavaScript function `(offset, len) => Uint8Array`.
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
    if format == "auto" {
        options.read = ReadOptions::default().format(ReadFormat::Auto { log_number: None });
    }
    options
}

fn file(len: f64, read: Function) -> (Window<JsRead>, u64) {
    let len = if len.is_finite() && len > 0.0 {
        len as u64
    } else {
        0
    };
    (Window::new(JsRead(read), len, WINDOW), len)
}

/// Inspects the file `name` of `len` bytes, read through `read(offset, len)`; `format` is
/// `legacy` or `auto`. Returns the report as JSON.
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
