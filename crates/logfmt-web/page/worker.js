// The inspector's worker: the reader, compiled to WebAssembly, over a file read in slices with
// synchronous reads (FileReaderSync, or ranged requests for a file named in the page's URL).
// `wasm_bindgen` and WASM_BASE64 come before this in the worker's source.
"use strict";

function bytesOf(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

const ready = wasm_bindgen({ module_or_path: bytesOf(WASM_BASE64) });

// A function (offset, len) => Uint8Array over the source, and the bytes it has read and the
// milliseconds spent reading them.
function reader(source) {
  const counter = { bytes: 0, ms: 0 };
  const timed = (read) => (offset, len) => {
    const started = performance.now();
    const bytes = read(offset, len);
    counter.ms += performance.now() - started;
    return bytes;
  };
  if (source.bytes) {
    // Bytes already in memory (the page's screenshot mode for small test files).
    const read = (offset, len) => {
      const bytes = source.bytes.subarray(offset, offset + len);
      counter.bytes += bytes.length;
      return bytes;
    };
    return [timed(read), counter];
  }
  if (source.file) {
    const sync = new FileReaderSync();
    const read = (offset, len) => {
      const bytes = new Uint8Array(sync.readAsArrayBuffer(source.file.slice(offset, offset + len)));
      counter.bytes += bytes.length;
      return bytes;
    };
    return [timed(read), counter];
  }
  const read = (offset, len) => {
    if (len <= 0) return new Uint8Array(0);
    const request = new XMLHttpRequest();
    request.open("GET", source.url, false);
    request.responseType = "arraybuffer";
    request.setRequestHeader("Range", `bytes=${offset}-${offset + len - 1}`);
    request.send();
    if (request.status !== 206 && request.status !== 200) {
      throw new Error(`reading ${source.url} failed: HTTP ${request.status}`);
    }
    const bytes = new Uint8Array(request.response);
    counter.bytes += bytes.length;
    return bytes;
  };
  return [timed(read), counter];
}

// Carries out one message of the page; in the worker, each message that arrives.
async function handle(message) {
  try {
    await ready;
    const [read, counter] = reader(message.source);
    const started = performance.now();
    let json;
    if (message.op === "inspect") {
      json = wasm_bindgen.inspect_file(message.name, message.size, read, message.format);
    } else if (message.op === "search") {
      json = wasm_bindgen.search_file(message.name, message.size, read, message.format, message.key);
    } else if (message.op === "block") {
      const bytes = read(message.offset, Math.min(32768, message.size - message.offset));
      json = wasm_bindgen.block_spans(bytes, message.offset, message.format, message.erased);
    } else {
      throw new Error(`unknown operation ${message.op}`);
    }
    const ms = performance.now() - started;
    return { id: message.id, ok: true, json, ms, read: counter.bytes, read_ms: counter.ms };
  } catch (error) {
    return { id: message.id, ok: false, error: String(error && error.message || error) };
  }
}

if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  onmessage = async (event) => postMessage(await handle(event.data));
}
