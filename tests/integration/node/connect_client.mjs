// SPDX-License-Identifier: Apache-2.0
// connect_client.mjs: symbolizerd called by a real Connect client.
//
// The client is @connectrpc/connect-node's Connect transport (HTTP/1.1,
// binary protobuf, then JSON: steps 3 and 4 run with useBinaryFormat true,
// then false) with code that @bufbuild/protoc-gen-es generated from
// proto/symbolizer/v1/symbolizer.proto into ./gen at test time (see
// connect_client_test.sh, which also runs `npm ci` and protoc). This script:
//
//   1. makes a debug dir (.build-id/xx/rest.debug) with two fixtures: c_O2_dw5
//      (chains of always_inline calls 4+ deep) and c_stripped.debug;
//   2. starts the real symbolizerd on 127.0.0.1:0 with a fresh data dir and no
//      upstream, and reads its port from the `msg="listening"` log line;
//   3. sends every byte address of every sized FUNC symbol of the fixtures
//      and compares each answer, frame by frame (function, file, line, column,
//      innermost first, whole inline chain), with llvm-symbolizer's JSON output;
//   4. checks return addresses, runtime addresses, an unknown build ID
//      (NOT_FOUND, no lines), malformed build IDs (INVALID, the other mapping
//      still answered), an out-of-range mapping_index (ConnectError
//      invalid_argument, its google.rpc.ErrorInfo detail read with
//      findDetails), gzip both ways and a per-call timeout, the last two
//      observed on the wire through a loopback proxy that records the headers;
//   5. stops the daemon with SIGTERM and expects exit status 0.
//
// Usage: node connect_client.mjs --symbolizerd PATH --fixtures DIR
// Exits 0 when every check passed, 1 on the first failure (with what differed).

import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import { create } from "@bufbuild/protobuf";
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport, compressionGzip } from "@connectrpc/connect-node";
import {
  SymbolizerService,
  SymbolizeRequestSchema,
  AddressKind,
  MappingResult_Status as Status,
} from "./gen/symbolizer/v1/symbolizer_pb.js";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

const STARTUP_TIMEOUT_MS = 60_000; // an ASan build starts slowly
const STOP_TIMEOUT_MS = 30_000;

function die(msg) {
  console.error("connect_client: FAIL: " + msg);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

let checks = 0;
function ok(what) {
  checks++;
  console.log("ok   " + what);
}

function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--symbolizerd" || k === "--fixtures") a[k.slice(2)] = argv[++i];
    else die("unknown argument " + k);
  }
  if (!a.symbolizerd || !a.fixtures) die("usage: connect_client.mjs --symbolizerd PATH --fixtures DIR");
  return a;
}

function run(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 256 << 20, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    die(`${cmd} ${args.join(" ")}: ${e.message} ${e.stderr || ""}`);
  }
}

function buildId(file) {
  const m = /Build ID: ([0-9a-f]+)/.exec(run("readelf", ["-n", file]));
  if (!m) die("no GNU build ID in " + file);
  return m[1];
}

// Sized FUNC symbols of FILE (from .symtab): [{name, start, size}].
function functions(file) {
  const out = [];
  for (const line of run("nm", ["-S", "--defined-only", file]).split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length === 4 && /^[tTwW]$/.test(f[2])) {
      const size = Number.parseInt(f[1], 16);
      if (size > 0) out.push({ name: f[3], start: Number.parseInt(f[0], 16), size });
    }
  }
  if (out.length === 0) die("no sized functions in " + file);
  return out;
}

// llvm-symbolizer's frames for each address: [[{fn, file, line, col}], ...].
function llvmFrames(file, addrs) {
  const text = run("llvm-symbolizer", [
    "--obj=" + file, "--output-style=JSON", "--inlines", "--demangle",
    ...addrs.map((a) => "0x" + a.toString(16)),
  ]);
  const arr = JSON.parse(text);
  check(arr.length === addrs.length, `llvm-symbolizer answered ${arr.length} of ${addrs.length}`);
  return arr.map((e) => llvmOutermostName(
    e.Symbol.map((s) => ({
      fn: s.FunctionName === "??" ? "" : s.FunctionName,
      file: s.FileName,
      line: s.Line,
      col: s.Column,
    }))));
}

// The daemon's frames for location I of response RESP, in the same shape.
function ourFrames(resp, i) {
  const st = resp.stringTable;
  return resp.locations[i].lines.map((l) => {
    check(l.functionIndex < BigInt(resp.functions.length),
      `location ${i}: function_index ${l.functionIndex} out of ${resp.functions.length}`);
    const f = resp.functions[Number(l.functionIndex)];
    check(f.name < BigInt(st.length) && f.filename < BigInt(st.length), "string index out of range");
    return { fn: st[Number(f.name)], file: st[Number(f.filename)], line: Number(l.line), col: Number(l.column) };
  });
}

const fmt = (fr) => fr.map((f) => `${f.fn} ${f.file}:${f.line}:${f.col}`).join(" <- ");

// llvm-symbolizer names the outermost frame after the symbol table entry
// covering the address, so a GCC part or clone (checked_div.cold,
// foo.constprop.0, foo@@GLIBC_2.2.5) shows its symbol name where the DWARF
// (and the daemon) name the function itself; compare_llvm.py treats them the
// same way. Only these suffixes are dropped, only on the outermost frame.
const CLONE_RE = /((\.|  ?\(\.)(cold|part|isra|constprop|lto_priv|localalias|hot)(\.\d+)*\)?)+$/;
const VERSION_RE = /@@?[A-Za-z0-9_.]+$/;
let renamedOutermost = 0;
function llvmOutermostName(frames) {
  if (frames.length === 0) return frames;
  const last = frames[frames.length - 1];
  const fn = last.fn.replace(VERSION_RE, "").replace(CLONE_RE, "");
  if (fn !== last.fn) renamedOutermost++;
  return [...frames.slice(0, -1), { ...last, fn }];
}
const hex = (a) => "0x" + a.toString(16);

// A loopback TCP proxy that records every byte both ways, so the test can
// see the HTTP headers the Connect client and the daemon really exchanged.
async function startProxy(targetPort) {
  const log = { up: [], down: [] };
  const server = net.createServer((c) => {
    const u = net.connect(targetPort, "127.0.0.1");
    c.on("data", (d) => { log.up.push(d); u.write(d); });
    u.on("data", (d) => { log.down.push(d); c.write(d); });
    c.on("end", () => u.end());
    u.on("end", () => c.end());
    c.on("error", () => u.destroy());
    u.on("error", () => c.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: server.address().port,
    take() {
      const r = { up: Buffer.concat(log.up).toString("latin1"), down: Buffer.concat(log.down).toString("latin1") };
      log.up = []; log.down = [];
      return r;
    },
    close() { server.close(); },
  };
}

// A debuginfod upstream on loopback: 404 for every build ID but HANG_ID, whose
// download it holds open (headers never sent) until close(), so a call for it
// can only end by its wait budget.
const HANG_ID = "fedcba9876543210fedcba9876543210fedcba98";
async function startUpstream() {
  const held = new Set();
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url);
    if (req.url.includes(HANG_ID)) {
      held.add(res);
      return;
    }
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("not found\n");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close() {
      for (const r of held) r.socket?.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}

async function startDaemon(bin, tmp, debugDir, upstream) {
  const args = [
    "--listen", "127.0.0.1:0", "--data-dir", path.join(tmp, "data"), "--debug-dir", debugDir,
    "--debuginfod-upstream-servers=" + upstream, "--workers", "2", "--default-wait", "2s",
    "--upstream-retries", "0",
  ];
  const child = spawn(bin, args, { stdio: ["ignore", "inherit", "pipe"] });
  let stderr = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no 'listening' line within " + STARTUP_TIMEOUT_MS + " ms:\n" + stderr)), STARTUP_TIMEOUT_MS);
    child.stderr.on("data", (d) => {
      process.stderr.write(d);
      stderr += d.toString();
      const m = /msg="listening".*\baddr=127\.0\.0\.1:(\d+)/.exec(stderr);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on("exit", (code, sig) => { clearTimeout(timer); reject(new Error(`symbolizerd exited (${code ?? sig}) before listening:\n${stderr}`)); });
  });
  child.removeAllListeners("exit");
  return { child, port };
}

async function stopDaemon(child) {
  if (child.exitCode !== null || child.signalCode !== null)
    return { code: child.exitCode, signal: child.signalCode };
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  const [code, signal] = await exited;
  clearTimeout(t);
  return { code, signal };
}

// Symbolize, asking again while a mapping is PENDING (the first call may come
// before the index is built), for at most 60 s.
async function symbolizeSettled(client, req, opts) {
  const t0 = Date.now();
  for (;;) {
    const resp = await client.symbolize(req, opts);
    if (!resp.mappings.some((m) => m.status === Status.PENDING) || Date.now() - t0 > 60_000) return resp;
    const wait = Math.min(1000, Math.max(...resp.mappings.map((m) => m.retryAfterMs), 50));
    await new Promise((r) => setTimeout(r, wait));
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "connect-node-"));
  const debugDir = path.join(tmp, "debug");
  const fixtures = [
    { name: "c_O2_dw5", file: path.join(args.fixtures, "c_O2_dw5") },
    { name: "c_stripped.debug", file: path.join(args.fixtures, "c_stripped.debug") },
  ];
  for (const f of fixtures) {
    if (!fs.existsSync(f.file)) die("fixture missing: " + f.file + " (build the `fixtures` target)");
    f.id = buildId(f.file);
    const dir = path.join(debugDir, ".build-id", f.id.slice(0, 2));
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(f.file, path.join(dir, f.id.slice(2) + ".debug"));
    f.addrs = [];
    for (const fn of functions(f.file))
      for (let a = fn.start; a < fn.start + fn.size; a++) f.addrs.push(a);
    f.want = llvmFrames(f.file, f.addrs);
  }

  const upstream = await startUpstream();
  const { child, port } = await startDaemon(args.symbolizerd, tmp, debugDir, upstream.url);
  let failure = null;
  try {
    await tests(port, fixtures, upstream);
  } catch (e) {
    failure = e;
  }
  upstream.close();
  const st = await stopDaemon(child);
  fs.rmSync(tmp, { recursive: true, force: true });
  if (failure) die(failure.stack || String(failure));
  if (st.code !== 0) die(`symbolizerd did not exit 0 after SIGTERM (code ${st.code}, signal ${st.signal})`);
  ok("SIGTERM: symbolizerd exited 0");
  console.log(`connect_client: PASS (${checks} checks)`);
}

async function tests(port, fixtures, upstream) {
  const proxy = await startProxy(port);
  try {
    // Every case in both of Connect's codecs: binary protobuf, then JSON
    // (application/json, the protobuf JSON mapping the daemon transcodes).
    for (const binary of [true, false]) {
      console.log(`== ${binary ? "binary (application/proto)" : "JSON (application/json)"}`);
      await testsVia(port, proxy, fixtures, upstream, binary);
    }
  } finally {
    proxy.close();
  }
}

async function testsVia(port, proxy, fixtures, upstream, binary) {
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = createClient(SymbolizerService,
    createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: binary }));
  const [dw5, stripped] = fixtures;

  // 1. Every address of both fixtures in one call, two mappings; frames equal
  //    to llvm-symbolizer's, whole chains.
  const req = create(SymbolizeRequestSchema, {
    mappings: fixtures.map((f) => ({ buildId: f.id })),
    locations: fixtures.flatMap((f, mi) => f.addrs.map((a) => ({ mappingIndex: mi, address: BigInt(a) }))),
    options: { maxWaitMs: 20_000 },
  });
  const resp = await symbolizeSettled(client, req);
  check(resp.stringTable[0] === "", "string_table[0] is not empty");
  check(resp.mappings.length === 2, `${resp.mappings.length} mapping results for 2 mappings`);
  check(resp.locations.length === req.locations.length,
    `${resp.locations.length} location results for ${req.locations.length} locations`);
  let k = 0, deepest = 0, deepestAt = null, mismatches = [];
  for (const [mi, f] of fixtures.entries()) {
    const m = resp.mappings[mi];
    check(m.status === Status.OK, `${f.name}: status ${Status[m.status]} (${m.error})`);
    check(m.hasFunctions && m.hasFilenames && m.hasLineNumbers, `${f.name}: has_* flags not set`);
    for (let i = 0; i < f.addrs.length; i++, k++) {
      const got = ourFrames(resp, k), want = f.want[i];
      check(resp.locations[k].normalizedAddress === BigInt(f.addrs[i]),
        `${f.name} ${hex(f.addrs[i])}: normalized_address ${resp.locations[k].normalizedAddress}`);
      if (fmt(got) !== fmt(want))
        mismatches.push(`${f.name} ${hex(f.addrs[i])}:\n  daemon: ${fmt(got)}\n  llvm:   ${fmt(want)}`);
      if (got.length > deepest) { deepest = got.length; deepestAt = `${f.name} ${hex(f.addrs[i])}: ${fmt(got)}`; }
    }
  }
  check(mismatches.length === 0,
    `${mismatches.length} of ${k} addresses differ from llvm-symbolizer:\n${mismatches.slice(0, 20).join("\n")}`);
  check(resp.mappings[0].hasInlineFrames, "c_O2_dw5: has_inline_frames not set");
  check(deepest >= 5, `deepest inline chain is ${deepest} frames, want >= 5 (fx_leaf..compute)`);
  ok(`${k} addresses (2 mappings) equal llvm-symbolizer, function/file/line/column, whole chains` +
    ` (${renamedOutermost} outermost llvm names without a .cold/.part/@VERSION suffix); deepest: ${deepestAt}`);

  // Each distinct name and file is sent once.
  check(new Set(resp.stringTable).size === resp.stringTable.length, "string_table has duplicates");
  ok(`string_table: ${resp.stringTable.length} distinct strings, functions: ${resp.functions.length}`);

  // 2. Return addresses are looked up at address - 1; runtime addresses are
  //    normalized through the PT_LOAD headers (PIE loaded at BASE).
  const inl = dw5.addrs.filter((a, i) => dw5.want[i].length >= 4).slice(0, 50);
  check(inl.length > 0, "no c_O2_dw5 address inside a 4-deep inline chain");
  const BASE = 0x555555554000n;
  const seg = /LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+R E/
    .exec(run("readelf", ["-lW", dw5.file]));
  check(seg, "no executable PT_LOAD in " + dw5.file);
  const [off, vaddr, , memsz] = seg.slice(1).map((x) => BigInt("0x" + x));
  const resp2 = await client.symbolize({
    mappings: [
      { buildId: dw5.id },
      { buildId: dw5.id, addressKind: AddressKind.RUNTIME, memoryStart: BASE + vaddr,
        memoryLimit: BASE + vaddr + memsz, fileOffset: off },
    ],
    locations: inl.flatMap((a) => [
      { mappingIndex: 0, address: BigInt(a + 1), isReturnAddress: true },
      { mappingIndex: 1, address: BASE + BigInt(a) },
    ]),
  });
  check(resp2.mappings.every((m) => m.status === Status.OK), "return/runtime call: status not OK");
  for (let i = 0; i < inl.length; i++) {
    const want = fmt(dw5.want[dw5.addrs.indexOf(inl[i])]);
    const r = fmt(ourFrames(resp2, 2 * i)), rt = fmt(ourFrames(resp2, 2 * i + 1));
    check(r === want, `return address ${hex(inl[i] + 1)}: ${r}, want ${want}`);
    check(rt === want, `runtime address ${hex(BASE + BigInt(inl[i]))}: ${rt}, want ${want}`);
    check(resp2.locations[2 * i + 1].normalizedAddress === BigInt(inl[i]),
      `runtime address normalized to ${hex(resp2.locations[2 * i + 1].normalizedAddress)}, want ${hex(inl[i])}`);
  }
  ok(`${inl.length} return addresses (address - 1) and runtime addresses (base ${hex(BASE)}) equal the ELF answers`);

  // 3. An unknown build ID: NOT_FOUND (after PENDING at most), no lines.
  const unknown = "0123456789abcdef0123456789abcdef01234567";
  const resp3 = await symbolizeSettled(client, {
    mappings: [{ buildId: unknown }],
    locations: [{ mappingIndex: 0, address: 0x1000n }, { mappingIndex: 0, address: 0x2000n }],
    options: { maxWaitMs: 5000 },
  });
  check(resp3.mappings[0].status === Status.NOT_FOUND,
    `unknown build ID: status ${Status[resp3.mappings[0].status]}, want NOT_FOUND`);
  check(resp3.locations.length === 2 && resp3.locations.every((l) => l.lines.length === 0),
    "unknown build ID: locations have lines");
  ok("unknown build ID: NOT_FOUND, 2 locations without lines");

  // 4. Malformed build IDs: INVALID with a reason; the good mapping in the same
  //    call is still answered.
  const bad = ["xyz0", "abc", "ABCDEF01", ""];
  const resp4 = await client.symbolize({
    mappings: [...bad.map((b) => ({ buildId: b })), { buildId: dw5.id }],
    locations: [...bad.map((_, i) => ({ mappingIndex: i, address: BigInt(inl[0]) })),
      { mappingIndex: bad.length, address: BigInt(inl[0]) }],
  });
  for (let i = 0; i < bad.length; i++) {
    const m = resp4.mappings[i];
    check(m.status === Status.INVALID, `build_id ${JSON.stringify(bad[i])}: status ${Status[m.status]}, want INVALID`);
    check(m.error.length > 0, `build_id ${JSON.stringify(bad[i])}: INVALID without an error message`);
    check(resp4.locations[i].lines.length === 0, `build_id ${JSON.stringify(bad[i])}: location has lines`);
  }
  check(resp4.mappings[bad.length].status === Status.OK, "good mapping beside malformed ones not OK");
  check(fmt(ourFrames(resp4, bad.length)) === fmt(dw5.want[dw5.addrs.indexOf(inl[0])]),
    "good mapping beside malformed ones: wrong frames");
  ok(`malformed build IDs ${JSON.stringify(bad)}: INVALID ("${resp4.mappings[0].error}"); the good mapping still OK`);

  // 5. A request the server rejects as a whole: a ConnectError with its code.
  let err = null;
  try {
    await client.symbolize({ mappings: [{ buildId: dw5.id }], locations: [{ mappingIndex: 3, address: 1n }] });
  } catch (e) {
    err = e;
  }
  check(err instanceof ConnectError, "mapping_index out of range: no ConnectError");
  check(err.code === Code.InvalidArgument, `mapping_index out of range: code ${Code[err.code]}, want InvalidArgument`);
  ok(`mapping_index out of range: ConnectError ${Code[err.code]} ("${err.rawMessage}")`);
  //    Its details: one google.rpc.ErrorInfo naming our error (as gRPC's
  //    grpc-status-details-bin does), decoded by the client from the JSON.
  check(err.details.length === 1, `error details: ${err.details.length}, want 1`);
  check(err.details[0].type === "google.rpc.ErrorInfo", `error detail type ${err.details[0].type}`);
  const infos = err.findDetails(ErrorInfoSchema);
  check(infos.length === 1, `findDetails(ErrorInfo): ${infos.length} found, want 1`);
  check(infos[0].reason === "INVALID" && infos[0].domain === "symbolizer",
    `ErrorInfo ${JSON.stringify(infos[0])}, want reason INVALID, domain symbolizer`);
  check(err.details[0].debug?.reason === "INVALID", `detail debug ${JSON.stringify(err.details[0].debug)}`);
  ok(`mapping_index out of range: details [ErrorInfo{reason ${infos[0].reason}, domain ${infos[0].domain}}]`);

  // 6. gzip both ways, through the recording proxy: the request goes out
  //    compressed, the answer comes back compressed, the frames are the same.
  const viaProxy = `http://127.0.0.1:${proxy.port}`;
  const gz = createClient(SymbolizerService, createConnectTransport({
    baseUrl: viaProxy, httpVersion: "1.1", useBinaryFormat: binary,
    sendCompression: compressionGzip, acceptCompression: [compressionGzip], compressMinBytes: 0,
  }));
  proxy.take();
  const resp6 = await gz.symbolize(req);
  const wire = proxy.take();
  check(/\r\ncontent-encoding: gzip\r\n/i.test(wire.up), "request was not sent with Content-Encoding: gzip:\n" + wire.up.slice(0, 600));
  check(/\r\naccept-encoding: [^\r]*gzip/i.test(wire.up), "request did not accept gzip");
  check(/\r\ncontent-encoding: gzip\r\n/i.test(wire.down), "response was not gzip:\n" + wire.down.slice(0, 400));
  const ctype = binary ? "application/proto" : "application/json";
  check(new RegExp(`\r\ncontent-type: ${ctype}\r\n`, "i").test(wire.up), `request was not ${ctype}`);
  check(new RegExp(`\r\ncontent-type: ${ctype}\r\n`, "i").test(wire.down), `response was not ${ctype}`);
  const reqBytes = create(SymbolizeRequestSchema, req);
  check(resp6.locations.length === reqBytes.locations.length, "gzip: wrong number of locations");
  for (let i = 0; i < resp6.locations.length; i++)
    check(fmt(ourFrames(resp6, i)) === fmt(ourFrames(resp, i)), `gzip: location ${i} differs`);
  ok(`gzip both ways (seen on the wire, ${ctype}): ${resp6.locations.length} locations, same frames as uncompressed`);

  // 7. A per-call timeout: sent as Connect-Timeout-Ms, the call succeeds.
  const plain = createClient(SymbolizerService,
    createConnectTransport({ baseUrl: viaProxy, httpVersion: "1.1", useBinaryFormat: binary }));
  proxy.take();
  const resp7 = await plain.symbolize({
    mappings: [{ buildId: dw5.id }],
    locations: inl.map((a) => ({ mappingIndex: 0, address: BigInt(a) })),
  }, { timeoutMs: 4000 });
  const wire7 = proxy.take();
  const tm = /\r\nconnect-timeout-ms: (\d+)\r\n/i.exec(wire7.up);
  check(tm && Number(tm[1]) > 0 && Number(tm[1]) <= 4000, "no Connect-Timeout-Ms header in (0, 4000]:\n" + wire7.up.slice(0, 600));
  check(/^HTTP\/1\.1 200 /.test(wire7.down), "timeout call: not HTTP/1.1 200");
  check(resp7.mappings[0].status === Status.OK, "timeout call: status not OK");
  for (let i = 0; i < inl.length; i++)
    check(fmt(ourFrames(resp7, i)) === fmt(dw5.want[dw5.addrs.indexOf(inl[i])]), `timeout call: ${hex(inl[i])} differs`);
  ok(`timeoutMs 4000 (Connect-Timeout-Ms: ${tm[1]}): ${inl.length} locations answered correctly`);

  // 8. A build ID whose upstream download hangs, asked with max_wait_ms 60 s
  //    under a 2 s deadline: the deadline bounds the wait (the server keeps a
  //    fifth of it, at most 200 ms, for the lookups), so the call answers
  //    PENDING with a retry hint in time instead of failing deadline_exceeded.
  const t0 = Date.now();
  const resp8 = await plain.symbolize({
    mappings: [{ buildId: HANG_ID }],
    locations: [{ mappingIndex: 0, address: 0x1000n }],
    options: { maxWaitMs: 60_000 },
  }, { timeoutMs: 2000 });
  const took = Date.now() - t0;
  const st8 = resp8.mappings[0];
  check(upstream.seen.some((u) => u.includes(HANG_ID)), "the hanging upstream was never asked for " + HANG_ID);
  check(st8.status === Status.PENDING, `hanging upstream: status ${Status[st8.status]} (${st8.error}), want PENDING`);
  check(st8.retryAfterMs > 0, "hanging upstream: PENDING without retry_after_ms");
  check(resp8.locations[0].lines.length === 0, "hanging upstream: location has lines");
  // (Later than the deadline the client itself would have thrown DeadlineExceeded.)
  check(took >= 1000, `hanging upstream: answered after ${took} ms, before the wait budget (~1800 ms) was spent`);
  ok(`timeoutMs 2000 with a hanging upstream: PENDING (retry after ${st8.retryAfterMs} ms) after ${took} ms`);
  check(upstream.seen.some((u) => u.includes(unknown)), "the upstream was never asked for the unknown build ID");
  ok(`upstream asked for: ${upstream.seen.join(", ")}`);
}

main().catch((e) => die(e.stack || String(e)));
