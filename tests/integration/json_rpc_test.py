#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Connect JSON end to end: the real symbolizerd answers application/json
calls of every method, from Python's http.client and from curl.

    json_rpc_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]

Cases: a JSON Symbolize (ELF, runtime and file-offset addresses; enums by
name and number; .proto and lowerCamelCase names; 64-bit integers as strings
and numbers; options) answers exactly what the same call in binary answers;
curl with --compressed gets a gzipped JSON answer, and a gzipped JSON request
is read; malformed JSON, wrong types, out-of-range integers, unknown enum
names and empty bodies get invalid_argument (HTTP 400, a Connect JSON error
naming the field), over-cap bodies resource_exhausted, and the daemon keeps
serving; unknown fields are ignored; GetTypeLayouts in JSON equals symbolctl
layout -e.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
from daemon_lib import RPC, Daemon  # noqa: E402
from daemon_test import function_addresses, loads  # noqa: E402
from upstream_lib import build_id, check, run_cases, tempdir  # noqa: E402

LAYOUTS = "/symbolizer.v1.SymbolizerService/GetTypeLayouts"
STATUS_NUM = {"STATUS_" + v: k for k, v in pb.STATUS.items()}
JSON_CT = {"Content-Type": "application/json"}


def from_json(j):
    """A JSON SymbolizeResponse as pb.decode_response's dicts (defaults filled in)."""
    def num(o, key, signed=False):
        v = o.get(key, 0)
        check(isinstance(v, str) or key in ("retryAfterMs",) or v == 0,
              "64-bit %s not a string: %r" % (key, v))
        return int(v)
    resp = {"strings": j.get("stringTable", []), "functions": [], "locations": [],
            "mappings": []}
    for f in j.get("functions", []):
        resp["functions"].append({"name": num(f, "name"), "system_name": num(f, "systemName"),
                                  "filename": num(f, "filename"),
                                  "start_line": num(f, "startLine")})
    for loc in j.get("locations", []):
        resp["locations"].append({
            "lines": [{"function_index": num(li, "functionIndex"), "line": num(li, "line"),
                       "column": num(li, "column")} for li in loc.get("lines", [])],
            "normalized_address": num(loc, "normalizedAddress")})
    for m in j.get("mappings", []):
        resp["mappings"].append({
            "status": STATUS_NUM[m.get("status", "STATUS_UNSPECIFIED")],
            "error": m.get("error", ""), "retry_after_ms": m.get("retryAfterMs", 0),
            "has_functions": m.get("hasFunctions", False),
            "has_filenames": m.get("hasFilenames", False),
            "has_line_numbers": m.get("hasLineNumbers", False),
            "has_inline_frames": m.get("hasInlineFrames", False)})
    return resp


def post_json(d, obj, headers=None, path=RPC):
    """(status, headers, parsed JSON body) of a JSON call; obj may be raw bytes."""
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    h = dict(JSON_CT)
    h.update(headers or {})
    status, hdrs, data = d.post(body, h, path=path)
    if hdrs.get("content-encoding") == "gzip":
        data = gzip.decompress(data)
    check(hdrs.get("content-type") == "application/json",
          "JSON call answered %r: %r" % (hdrs.get("content-type"), data[:200]))
    return status, hdrs, json.loads(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    fx = lambda name: os.path.join(args.fixtures, name)  # noqa: E731
    work = tempdir("json-rpc-test-")
    debug = os.path.join(work, "debug")
    os.makedirs(debug)
    for name in ("c_O2_dw5", "cxx_O2", "layout_c_dw5"):
        bid = build_id(fx(name))
        os.makedirs(os.path.join(debug, ".build-id", bid[:2]), exist_ok=True)
        shutil.copy(fx(name), os.path.join(debug, ".build-id", bid[:2], bid[2:] + ".debug"))
    d = Daemon(args.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               debug_dirs=[debug], extra=["--max-request-bytes", "64K"])

    def same_as_binary(label, mappings_json, mappings_pb, addrs, req_addrs, opts_json=None,
                       opts_pb=None, is_return=False):
        """A JSON call and the same binary call answer the same."""
        locs = [{"mappingIndex": 0, "address": str(a)} if i % 2 else
                {"mapping_index": 0, "address": a} for i, a in enumerate(req_addrs)]
        if is_return:
            for loc in locs:
                loc["isReturnAddress"] = True
        req = {"mappings": mappings_json, "locations": locs,
               "options": dict({"maxWaitMs": 30000}, **(opts_json or {}))}
        status, _, j = post_json(d, req)
        check(status == 200, "%s: HTTP %d %r" % (label, status, j))
        ours = from_json(j)
        ref = d.symbolize(mappings_pb, [pb.location(0, a, is_return) for a in req_addrs],
                          max_wait_ms=30000, **(opts_pb or {}))
        check(pb.STATUS[ref["mappings"][0]["status"]] == "OK", "%s: binary call not OK" % label)
        check(ours == ref, "%s: JSON and binary answers differ:\n%r\n%r"
              % (label, ours["locations"][:2], ref["locations"][:2]))
        check(any(loc["lines"] for loc in ours["locations"]), "%s: no lines" % label)
        print("  %s: %d locations, JSON == binary" % (label, len(req_addrs)))

    def case_json_equals_binary():
        for name in ("c_O2_dw5", "cxx_O2"):
            path = fx(name)
            bid = build_id(path)
            addrs = function_addresses(path, 300, 11)
            same_as_binary(name + " elf", [{"buildId": bid}], [pb.mapping(bid)], addrs, addrs)
            same_as_binary(name + " return addresses, no_inline (proto names)",
                           [{"build_id": bid, "address_kind": "ADDRESS_KIND_ELF"}],
                           [pb.mapping(bid)], addrs, [a + 1 for a in addrs],
                           {"no_inline": True}, {"no_inline": True}, is_return=True)
            same_as_binary(name + " no_demangle", [{"buildId": bid}], [pb.mapping(bid)], addrs,
                           addrs, {"noDemangle": True}, {"no_demangle": True})
            off, vaddr, _, memsz, _ = [s for s in loads(path) if "E" in s[4]][0]
            text = [a for a in addrs if vaddr <= a < vaddr + memsz]
            base = 0x7f3a12340000
            start, limit = base + (vaddr & ~0xfff), base + ((vaddr + memsz + 0xfff) & ~0xfff)
            same_as_binary(name + " runtime (enum by name, 64-bit strings)",
                           [{"buildId": bid, "memoryStart": str(start), "memoryLimit": str(limit),
                             "fileOffset": str(off & ~0xfff),
                             "addressKind": "ADDRESS_KIND_RUNTIME"}],
                           [pb.mapping(bid, start, limit, off & ~0xfff, pb.RUNTIME)],
                           text, [base + a for a in text])
            same_as_binary(name + " file offsets (enum by number, 64-bit numbers)",
                           [{"buildId": bid, "addressKind": 2}],
                           [pb.mapping(bid, kind=pb.FILE_OFFSET)], text,
                           [a - vaddr + off for a in text])
        # A request over 16 KB: parsed on a worker (SVC_RPC_JSON_WORKER_MIN), the same answer;
        # gzipped too.
        path = fx("c_O2_dw5")
        bid = build_id(path)
        addrs = function_addresses(path, 1400, 13)
        same_as_binary("c_O2_dw5 1,400 addresses (a worker parses the JSON)",
                       [{"buildId": bid}], [pb.mapping(bid)], addrs, addrs)
        big = json.dumps({"mappings": [{"buildId": bid}],
                          "locations": [{"address": str(a)} for a in addrs]}).encode()
        check(len(big) > 16384, "the big request is only %d bytes" % len(big))
        status, _, j = post_json(d, gzip.compress(big), {"Content-Encoding": "gzip"})
        check(status == 200 and len(j["locations"]) == len(addrs), "big gzipped JSON: %d" % status)
        status, code, msg = d.connect_error(big[:-1], JSON_CT)
        check(status == 400 and code == "invalid_argument",
              "big truncated JSON: %d %s" % (status, msg))
        # A mapping nobody has, and unknown fields (ignored, as Connect-Go does).
        status, _, j = post_json(d, {"mappings": [{"buildId": "00" * 20, "someday": {"x": 1}}],
                                     "locations": [{"address": "4096", "note": "hi"}],
                                     "futureOption": [1, 2, 3]})
        check(status == 200, "unknown fields: HTTP %d %r" % (status, j))
        check(j["mappings"][0]["status"] == "STATUS_NOT_FOUND" and j["mappings"][0]["error"],
              "unknown build ID: %r" % j["mappings"])
        check(j["locations"] == [{}], "a location without lines: %r" % j["locations"])

    def curl(args_, data):
        """curl's (headers text, body bytes) for a call."""
        hdr = os.path.join(work, "curl.hdr")
        out = subprocess.run(["curl", "-sS", "-D", hdr, "-o", "-", "-X", "POST"] + args_ +
                             [d.url + RPC], input=data, capture_output=True, timeout=60)
        check(out.returncode == 0, "curl: %s" % out.stderr.decode())
        with open(hdr) as f:
            return f.read().lower(), out.stdout

    def case_curl_and_gzip():
        bid = build_id(fx("c_O2_dw5"))
        addrs = function_addresses(fx("c_O2_dw5"), 500, 12)
        req = json.dumps({"mappings": [{"buildId": bid}],
                          "locations": [{"address": str(a)} for a in addrs],
                          "options": {"maxWaitMs": 30000}}).encode()
        ref = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs],
                          max_wait_ms=30000)
        hdrs, body = curl(["-H", "Content-Type: application/json", "--data-binary", "@-"], req)
        check("content-type: application/json" in hdrs and "content-encoding" not in hdrs,
              "plain curl: %s" % hdrs)
        check(from_json(json.loads(body)) == ref, "curl JSON answer differs from binary")
        # --compressed: Accept-Encoding gzip, the answer gzipped (curl inflates it).
        hdrs, body = curl(["--compressed", "-H", "Content-Type: application/json",
                           "--data-binary", "@-"], req)
        check("content-encoding: gzip" in hdrs, "curl --compressed: not gzipped: %s" % hdrs)
        check(from_json(json.loads(body)) == ref, "gzipped JSON answer differs")
        # A gzipped JSON request.
        hdrs, body = curl(["-H", "Content-Type: application/json", "-H",
                           "Content-Encoding: gzip", "--data-binary", "@-"], gzip.compress(req))
        check(hdrs.startswith("http/1.1 200"), "gzipped JSON request: %s %r" % (hdrs, body[:200]))
        check(from_json(json.loads(body)) == ref, "gzipped request's answer differs")
        # Content-Type with a charset parameter.
        status, _, j = post_json(d, req, {"Content-Type": "application/json; charset=utf-8"})
        check(status == 200 and from_json(j) == ref, "charset parameter: %d" % status)

    def still_serving():
        bid = build_id(fx("c_O2_dw5"))
        status, _, j = post_json(d, {"mappings": [{"buildId": bid}],
                                     "locations": [{"address": "4096"}]})
        check(status == 200 and j["mappings"][0]["status"] in ("STATUS_OK", "STATUS_PENDING"),
              "after a bad request: %d %r" % (status, j))

    def case_bad_json():
        bid = build_id(fx("c_O2_dw5"))
        cases = [
            ("malformed", b'{"mappings":[{"buildId":', 400, "invalid_argument", "ends early"),
            ("not JSON", b"\x08\x01", 400, "invalid_argument", "invalid JSON"),
            ("empty body", b"", 400, "invalid_argument", "empty body"),
            ("an array", b"[1,2]", 400, "invalid_argument", "expected an object"),
            ("trailing bytes", b"{} {}", 400, "invalid_argument", "invalid JSON"),
            ("wrong type", {"mappings": [{"buildId": 12}]}, 400, "invalid_argument",
             "mappings[0].buildId: expected a string"),
            ("not a list", {"locations": {"address": 1}}, 400, "invalid_argument",
             "locations: expected an array"),
            ("negative address", {"locations": [{"address": "-4"}]}, 400, "invalid_argument",
             "locations[0].address: negative"),
            ("address past 64 bits", {"locations": [{}, {"address": "18446744073709551616"}]},
             400, "invalid_argument", "locations[1].address: integer out of"),
            ("fraction", {"options": {"maxWaitMs": 1.5}}, 400, "invalid_argument",
             "options.maxWaitMs: not an integer"),
            ("32-bit overflow", {"locations": [{"mappingIndex": 4294967296}]}, 400,
             "invalid_argument", "locations[0].mappingIndex: integer out of"),
            ("bool as number", {"options": {"noInline": 1}}, 400, "invalid_argument",
             "options.noInline: expected true or false"),
            ("unknown enum name", {"mappings": [{"buildId": bid, "addressKind": "RUNTIME"}]},
             400, "invalid_argument", "mappings[0].addressKind: unknown enum value name"),
            ("invalid UTF-8", b'{"mappings":[{"buildId":"\xff"}]}', 400, "invalid_argument",
             "invalid"),
            ("too deep", b'{"x":' + b"[" * 100 + b"]" * 100 + b"}", 400, "invalid_argument",
             "invalid JSON"),
            ("body over the cap", json.dumps({"locations": [{"address": str(i)} for i in
                                                            range(4000)]}).encode(),
             429, "resource_exhausted", "over the limit"),
            ("objects over the cap", b'{"x":[' + b",".join([b"{}"] * 6000) + b"]}", 429,
             "resource_exhausted", "objects and arrays"),
        ]
        for name, body, want_status, want_code, want_msg in cases:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            status, code, msg = d.connect_error(raw, JSON_CT)
            check(status == want_status and code == want_code and want_msg in msg,
                  "%s: HTTP %d %s %r, expected %d %s %r" % (name, status, code, msg, want_status,
                                                            want_code, want_msg))
            print("  %s: %d %s: %s" % (name, status, code, msg))
            still_serving()
        # Other content types are still 415, and say which two are served.
        status, hdrs, _ = d.post(b"{}", {"Content-Type": "text/json"})
        check(status == 415 and "application/json" in hdrs.get("accept-post", ""),
              "text/json: %d %r" % (status, hdrs))
        # The calls are counted under their method.
        text = d.metrics()
        check('symbolizer_rpc_requests_total{method="Symbolize",code="invalid_argument"}' in text,
              "JSON errors not counted")

    def case_layouts_json():
        path = fx("layout_c_dw5")
        bid = build_id(path)
        req = {"buildId": bid, "types": ["struct holder", "nope"],
               "fields": ["holder.grid", "holder.zz"], "options": {"maxWaitMs": 30000}}
        status, _, j = post_json(d, req, path=LAYOUTS)
        check(status == 200, "GetTypeLayouts: %d %r" % (status, j))
        check(j["result"]["status"] == "STATUS_OK", "layouts: %r" % j.get("result"))
        local = json.loads(subprocess.run(
            [args.symbolctl, "layout", "-e", path, "--json", "struct holder", "nope",
             "--field", "holder.grid", "--field", "holder.zz"],
            capture_output=True, text=True).stdout)  # exit 1: something not found
        check(len(j["types"]) == 2 and j["types"][0]["found"] and "found" not in j["types"][1],
              "types: %r" % j["types"])
        ours = j["types"][0]["layouts"][0]
        theirs = local["types"][0]["layouts"][0]
        check(ours["name"] == theirs["name"] and int(ours["size"]) == theirs["size"] and
              ours["compileUnit"] == theirs["cu"], "layout header: %r" % ours)
        got = [(m.get("name", ""), m["type"], int(m.get("offset", "0")), int(m["size"]),
                [int(x) for x in m.get("dims", [])]) for m in ours["members"]]
        want = [(m["name"], m["type"], m["offset"], m["size"], m.get("dims", []))
                for m in theirs["members"]]
        check(got == want, "members:\n%r\n%r" % (got, want))
        f = j["fields"]
        check(f[0]["found"] and int(f[0]["offset"]) == local["fields"][0]["offset"] and
              not f[1].get("found") and f[1]["error"], "fields: %r" % f)
        status, code, msg = d.connect_error(json.dumps({"buildId": bid, "types": "x"}).encode(),
                                            JSON_CT, path=LAYOUTS)
        check(status == 400 and "types: expected an array" in msg, "layouts wrong type: %s" % msg)
        print("  GetTypeLayouts in JSON: %d members equal symbolctl layout -e" % len(got))

    try:
        rc = run_cases([("json_equals_binary", case_json_equals_binary),
                        ("curl_and_gzip", case_curl_and_gzip), ("bad_json", case_bad_json),
                        ("layouts_json", case_layouts_json)], args.cases)
    finally:
        check(d.stop() == 0, "symbolizerd exit status")
    shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
