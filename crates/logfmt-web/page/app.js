// The inspector's page: opens local files (picker, directory, drag and drop), hands them to the
// worker, and draws what it reports. Nothing is uploaded: the worker reads the files here.
"use strict";

const BLOCK = 32768;
const STATES = ["clean", "damaged", "torn", "zero", "empty", "ring_head", "ring_tail", "ring_ahead"];
const STATE_TEXT = {
  clean: "records, nothing dropped", damaged: "damaged: bytes dropped", torn: "torn end of the log",
  zero: "zeros (preallocated, or a zero header)", empty: "nothing read here (erased, or past the end)",
  ring_head: "ring: newest block", ring_tail: "ring: oldest block", ring_ahead: "ring: not read (erased ahead, not in the log)",
};
const RANK = { empty: 0, clean: 1, zero: 2, torn: 3, damaged: 4, ring_head: 5, ring_tail: 5, ring_ahead: 5 };
const colour = (state) => getComputedStyle(document.documentElement).getPropertyValue(`--${state}`).trim();

const workerSource = document.getElementById("worker-src").textContent;
// ?inline=1 (the tests' screenshots): the reader runs on the page itself, over files fetched
// whole, so that a screenshot taken when the page settles shows the result.
const inline = new URLSearchParams(location.search).get("inline") === "1";
if (inline) {
  const script = document.createElement("script");
  script.textContent = workerSource;
  document.head.append(script);
}
const worker = inline ? null : new Worker(URL.createObjectURL(new Blob([workerSource], { type: "text/javascript" })));
const pending = new Map();
let nextId = 1;
if (worker) worker.onmessage = (event) => {
  const { id } = event.data;
  const done = pending.get(id);
  pending.delete(id);
  if (done) done(event.data);
};
if (worker) worker.onerror = (event) => {
  for (const done of pending.values()) done({ ok: false, error: event.message || "the worker failed" });
  pending.clear();
};
function call(message) {
  if (inline) return handle(message);
  return new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    worker.postMessage({ ...message, id });
  });
}

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
};
const n = (x) => Number(x).toLocaleString("en-US");
const format = () => document.getElementById("format").value;

// ---- the map: one cell per block (or per group of blocks, showing the worst of them)
function drawMap(report) {
  const blocks = report.blocks;
  const width = 960;
  const cell = blocks.length <= 80 ? 24 : blocks.length <= 2400 ? 12 : blocks.length <= 9600 ? 6 : 4;
  const cols = Math.max(1, Math.min(blocks.length, Math.floor(width / cell))), maxRows = 60;
  const perCell = Math.max(1, Math.ceil(blocks.length / (cols * maxRows)));
  const cells = Math.ceil(blocks.length / perCell);
  const rows = Math.max(1, Math.ceil(cells / cols));
  const canvas = el("canvas", { class: "map", width: String(cols * cell), height: String(rows * cell) });
  const ctx = canvas.getContext("2d");
  const states = [];
  for (let c = 0; c < cells; c++) {
    let worst = "empty";
    for (let b = c * perCell; b < Math.min(blocks.length, (c + 1) * perCell); b++) {
      if (RANK[blocks[b]] >= RANK[worst]) worst = blocks[b];
    }
    states.push(worst);
    ctx.fillStyle = colour(worst);
    ctx.fillRect((c % cols) * cell, Math.floor(c / cols) * cell, cell - 1, cell - 1);
  }
  const where = (event) => {
    const c = Math.floor(event.offsetY / cell) * cols + Math.floor(event.offsetX / cell);
    return c < cells ? c : -1;
  };
  const place = (block) => {
    const c = Math.floor(block / perCell);
    return { x: (c % cols) * cell + cell / 2, y: Math.floor(c / cols) * cell + cell / 2 };
  };
  return { canvas, perCell, states, where, place };
}

function legend() {
  return el("div", { class: "legend" }, ...STATES.map((s) =>
    el("span", {}, el("i", { style: `background:${colour(s)}` }), STATE_TEXT[s])));
}

function summary(report) {
  let text = `${n(report.records)} records, ${n(report.payload_bytes)} bytes of payload`;
  if (report.corruption_count > 0) {
    text += `, ${n(report.dropped_bytes)} bytes dropped in ${n(report.corruption_count)} corruption${report.corruption_count === 1 ? "" : "s"}`;
  } else {
    text += ", no corruption";
  }
  if (report.tail && report.tail.kind === "old_record") {
    text += `; the log ends at offset ${n(report.tail.offset)}: ${n(report.tail.bytes)} bytes after it are an earlier use's (or Pebble's end-of-log trailer), not damage`;
  } else if (report.tail) {
    text += `; ${report.tail.kind === "zero_fill" ? "zero-filled" : "torn"} tail of ${n(report.tail.bytes)} bytes at offset ${n(report.tail.offset)}`;
  }
  return el("p", { class: report.corruption_count > 0 ? "summary bad" : "summary" }, text);
}

async function showBlock(file, report, block, detail) {
  detail.replaceChildren(el("p", { class: "muted" }, `reading block ${n(block)}…`));
  const erased = report.ring ? report.ring.erased : -1;
  const answer = await call({ op: "block", source: file.source, name: file.name, size: file.size,
    format: report.dialect || format(), offset: block * BLOCK, erased });
  if (!answer.ok) { detail.replaceChildren(el("p", { class: "error" }, answer.error)); return []; }
  const spans = JSON.parse(answer.json);
  const total = spans.reduce((sum, s) => sum + s.len, 0) || 1;
  const bar = el("div", { class: "spans" }, ...spans.map((s) => el("div", {
    class: `k-${s.kind}`, style: `width:${(100 * s.len / total).toFixed(3)}%`,
    title: `offset ${s.offset}, ${s.len} bytes: ${s.kind}${s.chunk_type ? ` ${s.chunk_type} (type ${s.type_byte}), checksum ${s.checksum_ok ? "ok" : "not checked"}` : ""}${s.note ? `\n${s.note}` : ""}`,
  })));
  const rows = spans.map((s) => el("tr", {}, el("td", { class: "num" }, n(s.offset)), el("td", { class: "num" }, n(s.len)),
    el("td", {}, s.chunk_type ? `${s.chunk_type} chunk` : s.kind.replace("_", " ")),
    el("td", {}, s.checksum_ok === undefined ? "" : s.checksum_ok ? "checksum ok" : "not checked"),
    el("td", {}, s.note || "")));
  detail.replaceChildren(el("h3", {}, `Block ${n(block)} (offset ${n(block * BLOCK)})`), bar,
    el("table", {}, el("tr", {}, el("th", { class: "num" }, "offset"), el("th", { class: "num" }, "bytes"),
      el("th", {}, "what"), el("th", {}, "checksum"), el("th", {}, "note")), ...rows));
  return spans;
}

async function search(file, key, out) {
  out.replaceChildren(el("p", { class: "muted" }, "searching…"));
  const answer = await call({ op: "search", source: file.source, name: file.name, size: file.size, format: format(), key });
  if (!answer.ok) { out.replaceChildren(el("p", { class: "error" }, answer.error)); return; }
  const hits = JSON.parse(answer.json);
  out.replaceChildren(el("p", {}, `${hits.length} record${hits.length === 1 ? "" : "s"} hold "${key}"${hits.length >= 100 ? " (the first 100)" : ""}`),
    records(hits));
}

function records(list) {
  return el("table", {}, el("tr", {}, el("th", { class: "num" }, "#"), el("th", { class: "num" }, "offset"),
    el("th", { class: "num" }, "length"), el("th", {}, "content")),
    ...list.map((r) => el("tr", {}, el("td", { class: "num" }, n(r.index)), el("td", { class: "num" }, n(r.offset)),
      el("td", { class: "num" }, r.length === undefined ? "" : n(r.length)), el("td", { class: "text" }, r.text))));
}

// Inspects one file and draws it; returns what the tests read back.
async function show(file, out) {
  const section = el("section", { class: "file" }, el("h2", {}, file.name), el("p", { class: "muted" }, `reading ${n(file.size)} bytes…`));
  out.append(section);
  const answer = await call({ op: "inspect", source: file.source, name: file.name, size: file.size, format: format() });
  if (!answer.ok) {
    section.replaceChildren(el("h2", {}, file.name), el("p", { class: "error" }, `could not be read: ${answer.error}`));
    return { name: file.name, error: answer.error };
  }
  const report = JSON.parse(answer.json);
  const map = drawMap(report);
  const detail = el("div", { class: "detail" });
  const hover = el("p", { class: "muted" }, "point at a block to see what it is; click it to see its chunks");
  map.canvas.addEventListener("mousemove", (event) => {
    const c = map.where(event);
    if (c < 0) return;
    const first = c * map.perCell;
    hover.textContent = `block${map.perCell > 1 ? `s ${n(first)}–${n(Math.min(report.blocks.length, first + map.perCell) - 1)}` : ` ${n(first)}`} ` +
      `(offset ${n(first * BLOCK)}): ${STATE_TEXT[map.states[c]]}`;
  });
  map.canvas.addEventListener("click", (event) => {
    const c = map.where(event);
    if (c >= 0) showBlock(file, report, c * map.perCell, detail);
  });
  const parts = [el("h2", {}, file.name), summary(report)];
  if (report.ring) {
    const r = report.ring;
    parts.push(el("p", {}, `Ring image: ${r.blocks} blocks in groups of ${r.group}; newest block ${r.newest} (lap ${r.lap}), ` +
      `read from block ${r.oldest}: ${r.order.join(" → ")}. Erased value 0x${r.erased.toString(16).toUpperCase()}.`));
  }
  parts.push(legend(), map.canvas, hover, detail);
  const damage = report.corruptions.map((c) => el("tr", {},
    el("td", { class: "num" }, el("a", { class: "jump", onclick: () => showBlock(file, report, Math.floor(c.offset / BLOCK), detail) }, n(c.offset))),
    el("td", { class: "num" }, n(c.bytes)), el("td", {}, c.reason), el("td", {}, c.gloss)));
  parts.push(el("h3", {}, `Damage (${n(report.corruption_count)})`));
  if (damage.length) {
    parts.push(el("table", {}, el("tr", {}, el("th", { class: "num" }, "offset"), el("th", { class: "num" }, "bytes"),
      el("th", {}, "LevelDB's reason"), el("th", {}, "what it means")), ...damage));
    if (report.corruption_count > damage.length) parts.push(el("p", { class: "muted" }, `…and ${n(report.corruption_count - damage.length)} more`));
  } else {
    parts.push(el("p", {}, "none"));
  }
  const results = el("div");
  const key = el("input", { type: "search", placeholder: report.content === "write-batch" ? "a key" : "bytes to find" });
  key.addEventListener("keydown", (event) => { if (event.key === "Enter" && key.value) search(file, key.value, results); });
  parts.push(el("h3", {}, `Records (${report.content}${report.records > report.first_records.length ? `, the first ${n(report.first_records.length)} of ${n(report.records)}` : ""})`),
    el("p", {}, "Search: ", key), results, records(report.first_records));
  section.replaceChildren(...parts);

  // What a test reads back: the report, and the colour drawn at the first damaged block.
  const check = { name: file.name, report, ms: answer.ms, read: answer.read, read_ms: answer.read_ms,
    wait_ms: answer.wait, scan_ms: answer.scan, caught_up: answer.caught_up, memory: answer.memory, path: file.path };
  const firstDamaged = report.blocks.indexOf("damaged");
  if (firstDamaged >= 0) {
    const { x, y } = map.place(firstDamaged);
    const [r, g, b] = map.canvas.getContext("2d").getImageData(x, y, 1, 1).data;
    check.damaged_block = firstDamaged;
    check.drawn_colour = `rgb(${r}, ${g}, ${b})`;
    check.spans = await showBlock(file, report, firstDamaged, detail);
  }
  return check;
}

let lastOpened = null;
async function openAll(files) {
  lastOpened = files;
  const out = document.getElementById("out");
  out.replaceChildren();
  const checks = [];
  for (const file of files) checks.push(await show(file, out));
  return checks;
}

// A database directory: its MANIFEST (named by CURRENT) and its write-ahead logs, in order.
// Each entry has a name and a text() that reads it whole (CURRENT is one line).
async function databaseFiles(list) {
  const byName = new Map(list.map((f) => [f.name, f]));
  const current = byName.get("CURRENT");
  if (!current) return list;
  const chosen = [];
  const manifest = (await current.text()).trim();
  if (byName.has(manifest)) chosen.push(byName.get(manifest));
  const logs = list.filter((f) => /^\d+\.log$/.test(f.name)).sort((a, b) => parseInt(a.name, 10) - parseInt(b.name, 10));
  return chosen.concat(logs);
}

const params = new URLSearchParams(location.search);
const local = (file) => ({ name: file.name, size: file.size, source: { file }, path: "file" });
// ?report=URL: what the page shows is posted there as JSON (the tests, the benchmark).
async function report(checks) {
  const expected = {};
  for (const s of STATES) expected[s] = colour(s);
  document.body.dataset.done = "1";
  if (params.get("report")) {
    await fetch(params.get("report"), { method: "POST", body: JSON.stringify({ files: checks, colours: expected }) });
  }
}
document.getElementById("files").addEventListener("change", async (e) => report(await openAll([...e.target.files].map(local))));
document.getElementById("dir").addEventListener("change", async (e) => openAll((await databaseFiles([...e.target.files])).map(local)));
document.getElementById("format").addEventListener("change", () => { if (lastOpened) openAll(lastOpened); });
document.addEventListener("dragover", (e) => { e.preventDefault(); document.body.classList.add("dragging"); });
document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
document.addEventListener("drop", (e) => {
  e.preventDefault();
  document.body.classList.remove("dragging");
  openAll([...e.dataTransfer.files].map(local));
});

// Files named in the page's URL (?files=a,b&base=/files/&report=/report/case): read over HTTP
// with ranged requests, and the results posted back for the tests.
(async () => {
  if (!params.get("files")) return;
  if (params.get("format")) document.getElementById("format").value = params.get("format");
  const base = params.get("base") || "";
  const listed = [];
  for (const name of params.get("files").split(",")) {
    // Absolute: the worker, made from a blob, has no base to resolve a relative URL against.
    const url = new URL(base + encodeURIComponent(name), location.href).href;
    const head = await fetch(url, { method: "HEAD" });
    const source = inline ? { bytes: new Uint8Array(await (await fetch(url)).arrayBuffer()) } : { url };
    const path = source.bytes ? "memory" : "http";
    listed.push({ name, size: Number(head.headers.get("content-length") || 0), source, path,
      text: async () => (await fetch(url)).text() });
  }
  await report(await openAll(await databaseFiles(listed)));
})();
