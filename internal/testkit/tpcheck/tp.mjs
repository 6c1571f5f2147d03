// tp.mjs drives Perfetto's trace processor, built to WebAssembly, from Node.
//
//   node tp.mjs DIR        (or TPCHECK_DIR=DIR node tp.mjs)
//
// DIR holds engine_bundle.node.js and trace_processor.wasm (see
// scripts/fetch-trace-processor.sh). With TPCHECK_SHELL=PATH it drives that
// trace_processor_shell through --stdiod instead. The process reads one JSON request per
// line on stdin and answers each with one JSON line on stdout:
//
//   {"op":"load","path":"/x.pftrace"}  -> {"ok":true} or {"error":"..."}
//   {"op":"query","sql":"select ..."} -> {"columns":[...],"rows":[[...]]} or {"error":"..."}
//
// A load resets the processor first, so one process serves many traces and
// pays Node's start-up and the wasm compile once. Integers come out exact:
// they are written as JSON numbers from BigInt, never rounded to a double.
// The process ends when stdin closes.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import vm from 'node:vm';

// The bundle and the wasm module print through console; stdout is ours.
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const dir = process.argv[2] || process.env.TPCHECK_DIR;
if (!dir && !process.env.TPCHECK_SHELL) {
  process.stderr.write('usage: node tp.mjs DIR (or TPCHECK_DIR=DIR)\n');
  process.exit(2);
}

// TraceProcessorRpc methods (perfetto/protos/perfetto/trace_processor).
const TPM_APPEND_TRACE_DATA = 1;
const TPM_FINALIZE_TRACE_DATA = 2;
const TPM_QUERY_STREAMING = 3;
const TPM_RESET_TRACE_PROCESSOR = 11;

// ---- Loading the engine ---------------------------------------------------

function loadEngine() {
  let src = fs.readFileSync(path.join(dir, 'engine_bundle.node.js'), 'utf8');
  const wasm = fs.readFileSync(path.join(dir, 'trace_processor.wasm'));
  // Two edits to the bundle: take the 32-bit build (Node 20 has no
  // memory64), and hand it the wasm bytes instead of fetching them.
  const edits = [
    ['this.useMemory64 = hasMemory64Support();', 'this.useMemory64 = false;'],
    ['locateFile: (s) => s,', 'locateFile: (s) => s, wasmBinary: globalThis.__tpWasmBinary,'],
  ];
  for (const [from, to] of edits) {
    if (!src.includes(from)) {
      throw new Error(`engine bundle not as expected: missing ${JSON.stringify(from)}`);
    }
    src = src.replace(from, to);
  }
  // Look like a Web Worker: that is the environment the bundle was built for.
  globalThis.self = globalThis;
  globalThis.location = { href: 'file://' + path.resolve(dir) + '/' };
  globalThis.WorkerGlobalScope = class WorkerGlobalScope {};
  globalThis.__tpWasmBinary = new Uint8Array(wasm.buffer, wasm.byteOffset, wasm.byteLength);
  vm.runInThisContext(src, { filename: 'engine_bundle.node.js' });
  if (typeof globalThis.onmessage !== 'function') {
    throw new Error('engine bundle did not install its message handler');
  }
  const { port1, port2 } = new MessageChannel();
  globalThis.onmessage({ data: port1 });
  return port2;
}

// ---- Protobuf, just what the RPC needs -------------------------------------

class Writer {
  constructor() { this.bytes = []; }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v));
    while (n >= 0x80n) {
      this.bytes.push(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.bytes.push(Number(n));
    return this;
  }
  tag(field, wire) { return this.varint((field << 3) | wire); }
  uint(field, v) { return this.tag(field, 0).varint(v); }
  bytesField(field, b) {
    this.tag(field, 2).varint(b.length);
    for (const x of b) this.bytes.push(x);
    return this;
  }
  finish() { return Uint8Array.from(this.bytes); }
}

class Reader {
  constructor(buf, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }
  done() { return this.pos >= this.end; }
  varint() {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  small() { return Number(this.varint()); }
  sub() {
    const n = this.small();
    if (this.pos + n > this.end) throw new Error('truncated field');
    const r = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }
  skip(wire) {
    switch (wire) {
      case 0: this.varint(); break;
      case 1: this.pos += 8; break;
      case 2: {
        const n = this.small();
        this.pos += n;
        break;
      }
      case 5: this.pos += 4; break;
      default: throw new Error(`bad wire type ${wire}`);
    }
  }
  string(r) { return new TextDecoder().decode(this.buf.subarray(r.pos, r.end)); }
}

// ---- RPC -------------------------------------------------------------------

class Engine {
  constructor(port) {
    this.port = port;
    this.seq = 0;
    this.rx = new Uint8Array(0);
    this.waiters = []; // one per request, in order
    port.on('message', (data) => this.onData(new Uint8Array(data)));
  }

  send(method, field, payload) {
    const rpc = new Writer().uint(1, this.seq++).uint(2, method);
    if (field) rpc.bytesField(field, payload);
    const stream = new Writer().bytesField(1, rpc.finish()).finish();
    return new Promise((resolve, reject) => {
      this.waiters.push({ method, resolve, reject, query: method === TPM_QUERY_STREAMING ? newQuery() : null });
      this.port.postMessage(stream, [stream.buffer]);
    });
  }

  onData(chunk) {
    const buf = new Uint8Array(this.rx.length + chunk.length);
    buf.set(this.rx);
    buf.set(chunk, this.rx.length);
    let off = 0;
    for (;;) {
      // Each message is a TraceProcessorRpcStream field 1: tag, length, bytes.
      const r = new Reader(buf, off);
      let body;
      try {
        if (r.done()) break;
        const tag = r.small();
        if (tag !== 0x0a) throw new Error(`bad RPC stream tag ${tag}`);
        const n = r.small();
        if (r.pos + n > buf.length) break;
        body = new Reader(buf, r.pos, r.pos + n);
        off = r.pos + n;
      } catch (e) {
        if (/truncated/.test(e.message)) break;
        throw e;
      }
      this.onRpc(body);
    }
    this.rx = buf.slice(off);
  }

  onRpc(r) {
    let response = 0;
    let fatal = '';
    let result = null;
    let resultField = 0;
    while (!r.done()) {
      const key = r.small();
      const field = key >>> 3;
      const wire = key & 7;
      if (field === 3 && wire === 0) response = r.small();
      else if (field === 5 && wire === 2) fatal = r.string(r.sub());
      else if ((field === 201 || field === 203 || field === 212) && wire === 2) {
        result = r.sub();
        resultField = field;
      } else r.skip(wire);
    }
    const w = this.waiters[0];
    if (!w) throw new Error(`unexpected RPC response ${response}`);
    if (fatal) {
      this.waiters.shift();
      w.reject(new Error(`trace processor: ${fatal}`));
      return;
    }
    if (response !== w.method) {
      this.waiters.shift();
      w.reject(new Error(`RPC response ${response} to request ${w.method}`));
      return;
    }
    if (w.method === TPM_QUERY_STREAMING) {
      const done = result ? addQueryResult(w.query, result) : true;
      if (!done) return;
      this.waiters.shift();
      w.resolve(w.query);
      return;
    }
    this.waiters.shift();
    // AppendTraceDataResult {error 2}, FinalizeDataResult {error 1}.
    const errField = resultField === 201 ? 2 : 1;
    let err = '';
    while (result && !result.done()) {
      const key = result.small();
      if ((key >>> 3) === errField && (key & 7) === 2) err = result.string(result.sub());
      else result.skip(key & 7);
    }
    if (err) w.reject(new Error(err));
    else w.resolve();
  }

  async load(file) {
    await this.send(TPM_RESET_TRACE_PROCESSOR, 107, new Uint8Array(0));
    const fd = fs.openSync(file, 'r');
    try {
      const chunk = Buffer.alloc(1 << 20);
      for (;;) {
        const n = fs.readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0) break;
        await this.send(TPM_APPEND_TRACE_DATA, 101, chunk.subarray(0, n));
      }
    } finally {
      fs.closeSync(fd);
    }
    await this.send(TPM_FINALIZE_TRACE_DATA, 0, null);
  }

  query(sql) {
    const args = new Writer().bytesField(1, new TextEncoder().encode(sql)).finish();
    return this.send(TPM_QUERY_STREAMING, 103, args);
  }
}

function newQuery() {
  return { columns: [], rows: [], error: '', cells: [] };
}

// addQueryResult folds one QueryResult into q; true when it was the last.
// QueryResult: column_names 1, error 2, batch 3. CellsBatch: cells 1
// (packed enum), varint_cells 2 (packed), float64_cells 3 (packed),
// blob_cells 4, string_cells 5 (NUL-joined), is_last_batch 6.
function addQueryResult(q, r) {
  let last = false;
  while (!r.done()) {
    const key = r.small();
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 1 && wire === 2) q.columns.push(r.string(r.sub()));
    else if (field === 2 && wire === 2) q.error = r.string(r.sub());
    else if (field === 3 && wire === 2) last = addBatch(q, r.sub()) || last;
    else r.skip(wire);
  }
  return last;
}

// splitStrings splits string_cells (NUL-terminated strings) into JS
// strings; one that is not valid UTF-8 comes out as {str: base64} so that
// its bytes survive exactly.
const utf8 = new TextDecoder('utf-8', { fatal: true });
function splitStrings(r) {
  const out = [];
  let start = r.pos;
  for (let i = r.pos; i < r.end; i++) {
    if (r.buf[i] !== 0) continue;
    const b = r.buf.subarray(start, i);
    try {
      out.push(utf8.decode(b));
    } catch {
      out.push({ str: Buffer.from(b).toString('base64') });
    }
    start = i + 1;
  }
  return out;
}

function addBatch(q, r) {
  const types = [];
  const ints = [];
  const floats = [];
  const blobs = [];
  let strings = [];
  let last = false;
  while (!r.done()) {
    const key = r.small();
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 1 || field === 2) {
      const into = field === 1 ? types : ints;
      if (wire === 2) {
        const s = r.sub();
        while (!s.done()) into.push(field === 1 ? s.small() : BigInt.asIntN(64, s.varint()));
      } else into.push(field === 1 ? r.small() : BigInt.asIntN(64, r.varint()));
    } else if (field === 3) {
      const s = wire === 2 ? r.sub() : null;
      const from = s || r;
      const n = s ? (s.end - s.pos) / 8 : 1;
      for (let i = 0; i < n; i++) {
        floats.push(new DataView(from.buf.buffer, from.buf.byteOffset + from.pos, 8).getFloat64(0, true));
        from.pos += 8;
      }
    } else if (field === 4 && wire === 2) {
      const s = r.sub();
      blobs.push(Buffer.from(s.buf.subarray(s.pos, s.end)).toString('base64'));
    } else if (field === 5 && wire === 2) {
      strings = splitStrings(r.sub());
    } else if (field === 6 && wire === 0) last = r.small() !== 0;
    else r.skip(wire);
  }
  let ii = 0, fi = 0, si = 0, bi = 0;
  for (const t of types) {
    switch (t) {
      case 1: q.cells.push(null); break;
      case 2: q.cells.push(ints[ii++]); break;
      case 3: q.cells.push(floats[fi++]); break;
      case 4: q.cells.push(strings[si++]); break; // a string, or {str: base64} when not UTF-8
      case 5: q.cells.push({ blob: blobs[bi++] }); break;
      default: throw new Error(`bad cell type ${t}`);
    }
  }
  const nc = q.columns.length;
  if (nc > 0) {
    let i = 0;
    for (; i + nc <= q.cells.length; i += nc) q.rows.push(q.cells.slice(i, i + nc));
    q.cells = q.cells.slice(i);
  }
  return last;
}

// ---- JSON out ----------------------------------------------------------------

function toJSON(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    // Numbers here are FLOAT64 cells (integers are BigInt): keep them
    // recognisable as floats even when integral.
    if (!Number.isFinite(v)) return JSON.stringify(String(v)); // NaN, Infinity
    const s = JSON.stringify(v);
    return /[.eE]/.test(s) ? s : s + '.0';
  }
  if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(toJSON).join(',') + ']';
  return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + toJSON(x)).join(',') + '}';
}

// ---- Main loop ---------------------------------------------------------------

// A trace_processor_shell speaks the same RPC on its stdin and stdout when
// started with --stdiod; tp.mjs then only relays.
function startShell(shell) {
  const child = spawn(shell, ['--stdiod'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const handlers = [];
  child.stdout.on('data', (b) => handlers.forEach((h) => h(b)));
  child.on('exit', (code, sig) => {
    process.stdout.write(toJSON({ fatal: `trace_processor_shell exited (${code ?? sig})` }) + '\n');
    process.exit(1);
  });
  return {
    on(_, h) { handlers.push(h); },
    postMessage(b) { child.stdin.write(b); },
  };
}

// TPCHECK_RELAY=1 makes this process a stand-in for `trace_processor_shell
// --stdiod`: the wasm engine's RPC byte stream on stdin and stdout. The
// tests use it to exercise the shell path without a shell binary.
if (process.env.TPCHECK_RELAY === '1') {
  const port = loadEngine();
  port.on('message', (b) => process.stdout.write(b));
  process.stdin.on('data', (b) => port.postMessage(new Uint8Array(b)));
  process.stdin.on('end', () => process.exit(0));
} else {
  await serve();
}

async function serve() {
let engine;
try {
  engine = new Engine(process.env.TPCHECK_SHELL ? startShell(process.env.TPCHECK_SHELL) : loadEngine());
} catch (e) {
  process.stdout.write(toJSON({ fatal: String(e && e.stack || e) }) + '\n');
  process.exit(1);
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let out;
  try {
    const req = JSON.parse(line);
    if (req.op === 'load') {
      await engine.load(req.path);
      out = { ok: true };
    } else if (req.op === 'query') {
      const q = await engine.query(req.sql);
      out = q.error ? { error: q.error } : { columns: q.columns, rows: q.rows };
    } else {
      out = { error: `unknown op ${JSON.stringify(req.op)}` };
    }
  } catch (e) {
    out = { error: String(e && e.message || e) };
  }
  process.stdout.write(toJSON(out) + '\n');
}
process.exit(0);
}
