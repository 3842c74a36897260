// SPDX-License-Identifier: Apache-2.0
// grpc_client.mjs: symbolizerd called by real gRPC clients from npm.
//
// @grpc/grpc-js (HTTP/2, h2c) with the service loaded from
// proto/symbolizer/v1/symbolizer.proto by @grpc/proto-loader, and `buf curl`
// (@bufbuild/buf) with --protocol connect, grpc and grpcweb. This script:
//
//   1. makes a debug dir with the c_O2_dw5 fixture and starts the real
//      symbolizerd on 127.0.0.1:0 (no upstream but a loopback one that never
//      answers, for the deadline);
//   2. calls every method of the service over grpc-js, with a real request
//      for Symbolize and an empty one for each, and compares each answer
//      (or status code) with the same call over Connect (fetch,
//      application/proto, decoded by protobufjs);
//   3. gzip both ways (grpc.default_compression_algorithm), a deadline (a
//      fetch that never ends answers PENDING within it), status codes and
//      grpc-message (malformed message, unknown method, over the cap, an
//      unknown service's health), grpc.health.v1 Check;
//   4. buf curl --protocol connect|grpc|grpcweb with --schema: the same answer
//      (and an error: its code and ErrorInfo detail in each protocol)
//      (grpcweb over HTTP/1.1 and over HTTP/2);
//      --protocol grpc without --schema (server reflection v1 and v1alpha):
//      every method listed, the same answer;
//   5. SIGTERM: exit status 0.
//
// Usage: node grpc_client.mjs --symbolizerd PATH --fixtures DIR --proto DIR --buf PATH
// Exits 0 when every check passed, 1 on the first failure.

import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const SERVICE = "symbolizer.v1.SymbolizerService";

function die(msg) {
  console.error("grpc_client: FAIL: " + msg);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

function ok(what) {
  console.log("ok   " + what);
}

function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, "");
    if (["symbolizerd", "fixtures", "proto", "buf"].includes(k)) a[k] = argv[++i];
    else die("unknown argument " + argv[i]);
  }
  if (!a.symbolizerd || !a.fixtures || !a.proto || !a.buf) die("usage: see the header");
  return a;
}

function run(cmd, args, input) {
  return execFileSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, input,
                                   stdio: ["pipe", "pipe", "pipe"] });
}

function buildId(file) {
  const m = /Build ID: ([0-9a-f]+)/.exec(run("readelf", ["-n", file]));
  if (!m) die("no GNU build ID in " + file);
  return m[1];
}

function functionAddresses(file, n) {
  const out = [];
  for (const line of run("nm", ["-S", "--defined-only", file]).split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length === 4 && /^[tT]$/.test(f[2]) && Number.parseInt(f[1], 16) > 0)
      out.push(Number.parseInt(f[0], 16) + 1);
  }
  check(out.length > 0, "no functions in " + file);
  return out.slice(0, n);
}

async function startDaemon(bin, work, debug, upstream) {
  const log = path.join(work, "d.log");
  const fd = fs.openSync(log, "w");
  const proc = spawn(bin, ["--listen", "127.0.0.1:0", "--data-dir", path.join(work, "data"),
                           "--debug-dir=" + debug, "--debuginfod-upstream-servers=" + upstream,
                           "--max-request-bytes", "64K", "--gzip-min-bytes", "512"],
                     { stdio: ["ignore", fd, fd] });
  for (let i = 0; i < 3000; i++) {
    const m = /msg="listening" addr=127\.0\.0\.1:(\d+)/.exec(fs.readFileSync(log, "utf8"));
    if (m) return { proc, port: Number(m[1]), log };
    if (proc.exitCode !== null) die("symbolizerd exited: " + fs.readFileSync(log, "utf8"));
    await new Promise((r) => setTimeout(r, 20));
  }
  die("symbolizerd did not start");
}

// A unary gRPC call of raw bytes: {err, value}.
function rawCall(client, method, bytes, options = {}) {
  return new Promise((resolve) => {
    client.makeUnaryRequest(method, (x) => x, (x) => x, bytes, new grpc.Metadata(), options,
                            (err, value) => resolve({ err, value }));
  });
}

// The same call over Connect: {status, body (Buffer), code}.
async function connectCall(port, method, bytes) {
  const r = await fetch(`http://127.0.0.1:${port}${method}`, {
    method: "POST", headers: { "Content-Type": "application/proto" }, body: bytes });
  const body = Buffer.from(await r.arrayBuffer());
  const code = r.status === 200 ? "ok" : JSON.parse(body.toString()).code;
  return { status: r.status, body, code };
}

const GRPC_CODES = ["ok", "canceled", "unknown", "invalid_argument", "deadline_exceeded",
  "not_found", "already_exists", "permission_denied", "resource_exhausted",
  "failed_precondition", "aborted", "out_of_range", "unimplemented", "internal",
  "unavailable", "data_loss", "unauthenticated"];

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "grpc-node-"));
  const fixture = path.join(a.fixtures, "c_O2_dw5");
  const bid = buildId(fixture);
  const debug = path.join(work, "debug");
  fs.mkdirSync(path.join(debug, ".build-id", bid.slice(0, 2)), { recursive: true });
  fs.copyFileSync(fixture, path.join(debug, ".build-id", bid.slice(0, 2), bid.slice(2) + ".debug"));
  // An upstream that takes connections and never answers.
  const hangs = [];
  const hang = net.createServer((s) => { hangs.push(s); s.on("error", () => {}); });
  hang.listen(0, "127.0.0.1");
  await once(hang, "listening");
  const d = await startDaemon(a.symbolizerd, work, debug,
                              `http://127.0.0.1:${hang.address().port}`);
  const target = `127.0.0.1:${d.port}`;
  const protoFile = path.join(a.proto, "symbolizer/v1/symbolizer.proto");
  // symbolizer.proto imports SymbolizeOTLP's request from proto/otlp.
  const includeDirs = [a.proto, path.join(a.proto, "otlp")];
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => {
    if (path.isAbsolute(target)) return target;
    for (const dir of includeDirs)
      if (fs.existsSync(path.join(dir, target))) return path.join(dir, target);
    return protobuf.util.path.resolve(origin, target);
  };
  root.loadSync(protoFile);
  const svc = root.lookupService(SERVICE);
  const def = protoLoader.loadSync(protoFile, { includeDirs, longs: String,
                                                 enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def);
  const stub = new pkg.symbolizer.v1.SymbolizerService(target, grpc.credentials.createInsecure());
  const raw = new grpc.Client(target, grpc.credentials.createInsecure());
  const addrs = functionAddresses(fixture, 200);
  const symReq = { mappings: [{ buildId: bid }], locations: addrs.map((x) => ({ address: x })),
                   options: { maxWaitMs: 30000 } };
  let failed = false;
  try {
    // 2. every method, gRPC against Connect
    for (const m of Object.values(svc.methods)) {
      m.resolve();
      const reqs = [["empty", Buffer.alloc(0)]];
      if (m.name === "Symbolize")
        reqs.push(["real", Buffer.from(m.resolvedRequestType.encode(symReq).finish())]);
      for (const [label, bytes] of reqs) {
        const route = `/${SERVICE}/${m.name}`;
        const c = await connectCall(d.port, route, bytes);
        const g = await rawCall(raw, route, bytes);
        if (c.status === 200) {
          check(!g.err, `${m.name} ${label}: gRPC error ${g.err && g.err.message}`);
          const T = m.resolvedResponseType;
          check(JSON.stringify(T.toObject(T.decode(g.value))) ===
                JSON.stringify(T.toObject(T.decode(c.body))),
                `${m.name} ${label}: gRPC and Connect answers differ`);
        } else {
          check(g.err && GRPC_CODES[g.err.code] === c.code,
                `${m.name} ${label}: gRPC ${g.err && g.err.code}, Connect ${c.code}`);
        }
        ok(`${m.name} (${label}): grpc-js == Connect (${c.code})`);
      }
    }
    // the generated-style client, with proto-loader's types
    const viaStub = await new Promise((res, rej) =>
      stub.Symbolize(symReq, { deadline: Date.now() + 60000 }, (e, v) => (e ? rej(e) : res(v))));
    check(viaStub.mappings[0].status === "STATUS_OK", "stub: " + JSON.stringify(viaStub.mappings));
    const lined = viaStub.locations.filter((l) => l.lines.length > 0).length;
    check(lined >= addrs.length * 0.9, `stub: lines for ${lined} of ${addrs.length}`);
    ok(`Symbolize through the stub: ${lined} of ${addrs.length} addresses with lines`);

    // 3. gzip both ways
    const symBytes = Buffer.from(svc.methods.Symbolize.resolvedRequestType.encode(symReq).finish());
    const plain = await rawCall(raw, `/${SERVICE}/Symbolize`, symBytes);
    const gzClient = new grpc.Client(target, grpc.credentials.createInsecure(),
                                     { "grpc.default_compression_algorithm": 2 });
    const gz = await rawCall(gzClient, `/${SERVICE}/Symbolize`, symBytes);
    check(!gz.err && Buffer.compare(gz.value, plain.value) === 0, "gzip: a different answer");
    gzClient.close();
    ok("gzip both ways: the same answer");

    // deadline: a fetch that never ends; the answer comes within the deadline
    const t0 = Date.now();
    const SymReq = svc.methods.Symbolize.resolvedRequestType;
    const pend = await rawCall(raw, `/${SERVICE}/Symbolize`,
                               Buffer.from(SymReq.encode({ mappings: [{ buildId: "ef".repeat(20) }],
                                 locations: [{ address: 1 }], options: { maxWaitMs: 60000 } }).finish()),
                               { deadline: Date.now() + 1500 });
    check(!pend.err, "deadline: " + (pend.err && pend.err.message));
    const pendResp = svc.methods.Symbolize.resolvedResponseType.decode(pend.value);
    check(pendResp.mappings[0].status === 3, "deadline: not PENDING: " + JSON.stringify(pendResp));
    ok(`deadline 1.5 s: PENDING after ${Date.now() - t0} ms`);

    // status codes and grpc-message
    const bad = await rawCall(raw, `/${SERVICE}/Symbolize`, Buffer.from([0xff, 0xff, 0xff]));
    check(bad.err && bad.err.code === grpc.status.INVALID_ARGUMENT, "malformed: " + bad.err);
    const unk = await rawCall(raw, `/${SERVICE}/Nope%41`, Buffer.alloc(0));
    check(unk.err && unk.err.code === grpc.status.UNIMPLEMENTED && unk.err.details.includes("Nope%41"),
          "unknown method: " + (unk.err && unk.err.details));
    const big = await rawCall(raw, `/${SERVICE}/Symbolize`, Buffer.alloc(70000, 0));
    check(big.err && big.err.code === grpc.status.RESOURCE_EXHAUSTED, "over the cap: " + big.err);
    const svcName = Buffer.from("caf\u00e9 %\n");
    const hNF = await rawCall(raw, "/grpc.health.v1.Health/Check",
                              Buffer.concat([Buffer.from([0x0a, svcName.length]), svcName]));
    check(hNF.err && hNF.err.code === grpc.status.NOT_FOUND &&
          hNF.err.details.includes("caf\u00e9 %\n"), "health NOT_FOUND: " + (hNF.err && hNF.err.details));
    const hOK = await rawCall(raw, "/grpc.health.v1.Health/Check", Buffer.alloc(0));
    check(!hOK.err && Buffer.compare(hOK.value, Buffer.from([8, 1])) === 0, "health: SERVING");
    ok("status codes 3, 12, 8, 5 and grpc-message (percent-encoded UTF-8); health SERVING");

    // 4. buf curl, three protocols, with --schema
    const small = JSON.stringify({ mappings: [{ buildId: bid }],
                                   locations: addrs.slice(0, 5).map((x) => ({ address: String(x) })) });
    let ref = null;
    // grpcweb twice: over HTTP/1.1, then on an h2c stream (--http2-prior-knowledge)
    for (const [proto, h2] of [["connect", false], ["grpc", true], ["grpcweb", false],
                               ["grpcweb", true]]) {
      const args = ["curl", "--schema", a.proto, "--protocol", proto, "--data", small,
                    `http://${target}/${SERVICE}/Symbolize`];
      if (h2) args.splice(1, 0, "--http2-prior-knowledge");
      const out = JSON.parse(run(a.buf, args));
      check(out.mappings[0].status === "STATUS_OK", `buf curl ${proto}: ` + JSON.stringify(out));
      if (ref) check(JSON.stringify(out) === ref, `buf curl ${proto}: a different answer`);
      ref = JSON.stringify(out);
      ok(`buf curl --protocol ${proto}${h2 ? " (HTTP/2)" : ""} --schema: STATUS_OK, the same answer`);
    }
    // 4a. an error through buf curl, three protocols: the code, and the one
    // ErrorInfo detail (Connect's JSON "details", gRPC's and gRPC-Web's
    // grpc-status-details-bin) decoded by buf from each protocol's wire.
    const badReq = JSON.stringify({ locations: [{ mappingIndex: 3, address: "1" }] });
    for (const [proto, h2] of [["connect", false], ["grpc", true], ["grpcweb", false]]) {
      const args = ["curl", "--schema", a.proto, "--protocol", proto, "--data", badReq,
                    `http://${target}/${SERVICE}/Symbolize`];
      if (h2) args.splice(1, 0, "--http2-prior-knowledge");
      let err = null;
      try {
        run(a.buf, args);
      } catch (e) {
        err = JSON.parse(e.stderr);
      }
      const d = err && err.details;
      check(err && err.code === "invalid_argument" && d && d.length === 1 &&
            d[0].type === "google.rpc.ErrorInfo" &&
            Buffer.from(d[0].value, "base64").equals(
              Buffer.concat([Buffer.from([10, 7]), Buffer.from("INVALID"), Buffer.from([18, 10]),
                             Buffer.from("symbolizer")])),
            `buf curl ${proto} error: ` + JSON.stringify(err));
      ok(`buf curl --protocol ${proto} error: invalid_argument, details [ErrorInfo INVALID/symbolizer]`);
    }
    // 4b. without --schema: server reflection (v1, then v1alpha)
    for (const rp of ["grpc-v1", "grpc-v1alpha"]) {
      const env = ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect-protocol", rp];
      const methods = run(a.buf, [...env, "--list-methods", `http://${target}`]).trim().split("\n");
      for (const m of Object.values(svc.methods))
        check(methods.includes(`${SERVICE}/${m.name}`), `reflection ${rp}: ${m.name} not listed: ${methods}`);
      const out = JSON.parse(run(a.buf, [...env, "--data", small, `http://${target}/${SERVICE}/Symbolize`]));
      check(JSON.stringify(out) === ref, `buf curl without --schema (${rp}): a different answer`);
      ok(`buf curl --protocol grpc without --schema (reflection ${rp}): every method listed, the same answer`);
    }
    // 4c. SymbolizeOTLP (its request and answer from the OTLP files symbolizer.proto
    // imports): with --schema and through reflection, the locations get lines.
    const otlp = JSON.stringify({ dictionary: {
      stringTable: ["", "process.executable.build_id.gnu"],
      attributeTable: [{}, { keyStrindex: 1, value: { stringValue: bid } }],
      mappingTable: [{}, { memoryStart: "4194304", memoryLimit: "8388608", attributeIndices: [1] }],
      locationTable: [{}, ...addrs.slice(0, 5).map((x) => ({ mappingIndex: 1, address: String(x) }))] } });
    let otlpRef = null;
    for (const schema of [true, false]) {
      const args = ["curl", "--protocol", "grpc", "--http2-prior-knowledge",
                    ...(schema ? ["--schema", a.proto] : []), "--data", otlp,
                    `http://${target}/${SERVICE}/SymbolizeOTLP`];
      const out = JSON.parse(run(a.buf, args));
      const lined = out.dictionary.locationTable.filter((l) => l.lines && l.lines.length).length;
      check(lined === 5, `buf curl SymbolizeOTLP (schema ${schema}): ${lined} of 5 lined: ` +
            JSON.stringify(out).slice(0, 400));
      if (otlpRef) check(JSON.stringify(out) === otlpRef, "SymbolizeOTLP: reflection answers differently");
      otlpRef = JSON.stringify(out);
    }
    ok("buf curl --protocol grpc SymbolizeOTLP, with --schema and by reflection: 5 of 5 lined");
  } catch (e) {
    failed = true;
    console.error("grpc_client: FAIL: " + e.message);
  } finally {
    stub.close();
    raw.close();
    for (const s of hangs) s.destroy();
    hang.close();
    d.proc.kill("SIGTERM");
    const [code] = await once(d.proc, "exit");
    if (code !== 0) {
      console.error("grpc_client: FAIL: exit status " + code + "\n" + fs.readFileSync(d.log, "utf8"));
      failed = true;
    }
  }
  if (!failed) fs.rmSync(work, { recursive: true, force: true });
  console.log(failed ? "FAILED" : "all passed");
  process.exit(failed ? 1 : 0);
}

main().catch((e) => die(e.stack || String(e)));
