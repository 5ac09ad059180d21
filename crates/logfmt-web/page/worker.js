// The inspector's worker: the reader, compiled to WebAssembly, over a file read in slices
// (Blob reads, or ranged requests for a file named in the page's URL).
// `wasm_bindgen` and WASM_BASE64 come before this in the worker's source.
"use strict";

function bytesOf(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

const ready = wasm_bindgen({ module_or_path: bytesOf(WASM_BASE64) });

// The worker's own memory at its peak: the WebAssembly memory (a worker's JavaScript heap is
// not told: Chromium's performance.memory is the window's).
const memory = { wasm: 0 };
function sampleMemory(exports) {
  memory.wasm = Math.max(memory.wasm, exports.memory.buffer.byteLength);
}

// A stream's reader that reads into one buffer, used again part after part (a "byob" reader,
// where the stream is a byte stream): the parts leave no garbage behind them, so the worker's
// memory does not grow with the file between collections.
const PART = 1 << 20;
function chunked(stream) {
  let reader;
  try {
    reader = stream.getReader({ mode: "byob" });
  } catch {
    return stream.getReader();
  }
  let buffer = new ArrayBuffer(PART);
  return {
    read: async () => {
      const part = await reader.read(new Uint8Array(buffer));
      if (part.value) buffer = part.value.buffer;
      return part;
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

// The reads of a source: `read(offset, len)`, synchronous (a ring image, a key search, and a
// record longer than what the inspection holds), and `stream(offset)`, a promise of its bytes
// from `offset` on as a stream (`at`, where it starts, and `chunks`, a stream reader: what an
// inspection reads); and the bytes and milliseconds of the synchronous reads.
function reader(source) {
  const counter = { bytes: 0, ms: 0 };
  const timed = (read) => (offset, len) => {
    const started = performance.now();
    const bytes = read(offset, len);
    counter.bytes += bytes.length;
    counter.ms += performance.now() - started;
    return bytes;
  };
  if (source.bytes) {
    // Bytes already in memory (the page's screenshot mode for small test files).
    const read = (offset, len) => source.bytes.subarray(offset, offset + len);
    const stream = async (offset) => {
      let sent = false;
      const chunks = {
        read: async () => (sent ? { done: true } : (sent = true, { done: false, value: read(offset, source.bytes.length) })),
        cancel: async () => {},
      };
      return { at: offset, chunks };
    };
    return { read: timed(read), stream, counter };
  }
  if (source.file) {
    const sync = new FileReaderSync();
    const read = (offset, len) => new Uint8Array(sync.readAsArrayBuffer(source.file.slice(offset, offset + len)));
    const stream = async (offset) => ({ at: offset, chunks: chunked(source.file.slice(offset).stream()) });
    return { read: timed(read), stream, counter };
  }
  const range = (offset, len) => `bytes=${offset}-${offset + len - 1}`;
  // A server that ignores the range sends the whole file: the bytes asked for are cut from it.
  const part = (status, buffer, offset, len) => {
    if (status !== 206 && status !== 200) throw new Error(`reading ${source.url} failed: HTTP ${status}`);
    const bytes = new Uint8Array(buffer);
    return status === 200 ? bytes.subarray(offset, offset + len) : bytes;
  };
  const read = (offset, len) => {
    if (len <= 0) return new Uint8Array(0);
    const request = new XMLHttpRequest();
    request.open("GET", source.url, false);
    request.responseType = "arraybuffer";
    request.setRequestHeader("Range", range(offset, len));
    request.send();
    return part(request.status, request.response, offset, len);
  };
  const stream = async (offset) => {
    const response = await fetch(source.url, { headers: { Range: `bytes=${offset}-` } });
    if (response.status !== 206 && response.status !== 200) throw new Error(`reading ${source.url} failed: HTTP ${response.status}`);
    // A server that ignores the range sends the whole file.
    return { at: response.status === 200 ? 0 : offset, chunks: chunked(response.body) };
  };
  return { read: timed(read), stream, counter };
}

// Inspects a file: its bytes streamed from where the inspection wants them, each part handed
// to the WebAssembly inspection as it arrives (the browser reads on while it scans). Returns
// the report (JSON) and the milliseconds spent waiting for bytes and scanning.
async function inspect(message, io) {
  const inspection = new wasm_bindgen.FileInspection(message.name, message.size, io.read, message.format);
  const times = { wait: 0, scan: 0 };
  const exports = await ready;
  let stream = null;
  let done = false;
  try {
    let want = inspection.wants();
    if (want >= 0 && want < message.size) stream = await io.stream(want);
    let at = stream ? stream.at : want;
    while (want >= 0) {
      let started = performance.now();
      const part = stream ? await stream.chunks.read() : { done: true };
      times.wait += performance.now() - started;
      // The end of the stream where it wants more: the file ends there.
      const bytes = part.done ? new Uint8Array(0) : part.value;
      started = performance.now();
      inspection.push(part.done ? want : at, bytes);
      times.scan += performance.now() - started;
      at += bytes.length;
      sampleMemory(exports);
      want = inspection.wants();
      if (part.done && want >= 0) throw new Error("the file ended, and the inspection wants more");
    }
    const caught_up = inspection.caught_up();
    done = true;
    const started = performance.now();
    const json = inspection.finish();
    times.scan += performance.now() - started;
    return { json, caught_up, ...times };
  } finally {
    if (stream) stream.chunks.cancel().catch(() => {});
    if (!done) inspection.free();
  }
}

// Carries out one message of the page; in the worker, each message that arrives.
async function handle(message) {
  try {
    await ready;
    const io = reader(message.source);
    const started = performance.now();
    let json, times = {};
    if (message.op === "inspect") {
      ({ json, ...times } = await inspect(message, io));
    } else if (message.op === "search") {
      json = wasm_bindgen.search_file(message.name, message.size, io.read, message.format, message.key);
    } else if (message.op === "block") {
      const bytes = io.read(message.offset, Math.min(32768, message.size - message.offset));
      json = wasm_bindgen.block_spans(bytes, message.offset, message.format, message.erased);
    } else {
      throw new Error(`unknown operation ${message.op}`);
    }
    const ms = performance.now() - started;
    sampleMemory(await ready);
    return { id: message.id, ok: true, json, ms, read: io.counter.bytes, read_ms: io.counter.ms, ...times,
      memory: { ...memory } };
  } catch (error) {
    return { id: message.id, ok: false, error: String(error && error.message || error) };
  }
}

if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  onmessage = async (event) => postMessage(await handle(event.data));
}
