#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""otlp_test: OpenTelemetry profiles in, symbolized profiles out (issue 27).

An ExportProfilesServiceRequest built with the official .proto (otlp_pb.py), as
the OpenTelemetry eBPF profiler sends one (mapping identities as dictionary
attributes, ELF virtual addresses, the dictionary's row 0 the null entry),
holding: a C binary named by its GNU build ID, a C++ binary named by its file
hash only (it was uploaded by its GNU build ID: the alias finds it), a stripped
Go binary without a GNU build ID named by its Go build ID, a kernel-like image,
an interpreted frame (lines already, no mapping), a frame of an unknown file.
SymbolizeOTLP over Connect, binary and JSON: lines equal llvm-symbolizer's (Go:
symbolctl's, which go_test checks against the Go runtime), inline frames in
OTLP's order; everything else equal to the input; the unknown frame keeps its
address and mapping. `symbolctl otlp --debug-dir` (no daemon) answers, byte for
byte, what `symbolctl otlp --server` answers from a daemon reading the same
directory (binary and JSON). Hostile requests: indices out of range, another version's
fields, a dictionary of millions of locations, a gzip bomb, deep JSON, garbage:
a clear error each.

Usage: otlp_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR --go GO --src DIR
       --workdir DIR [CASE...]
"""
import argparse
import gzip
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys

import otlp_pb
from daemon_lib import Daemon
from upstream_lib import build_id, check, run_cases, tempdir

ARGS = None
TOKEN = "t0ken-for-otlp-tests-0123456789"
PATH = "/symbolizer.v1.SymbolizerService/SymbolizeOTLP"
PB = None  # (profiles_pb2, profiles_service_pb2, common_pb2, json_format)


def htlhash(path):
    with open(path, "rb") as f:
        b = f.read()
    p = min(len(b), 4096)
    return hashlib.sha256(b[:p] + b[len(b) - p:] + len(b).to_bytes(8, "big")).hexdigest()[:32]


def nm_addrs(path, names):
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt" and parts[2] in names:
            got[parts[2]] = int(parts[0], 16)
    check(all(n in got for n in names), "nm %s: %r of %r" % (path, got, names))
    return [got[n] for n in names]


def text_addrs(path, n):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    m = re.search(r"\s\.text\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", out)
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    return [start + size * (k + 1) // (n + 1) for k in range(n)]


def llvm_frames(path, addr):
    """[(function, line)] innermost first, as llvm-symbolizer prints them."""
    r = subprocess.run(["llvm-symbolizer", "--obj=" + path, "--inlining", "0x%x" % addr],
                       capture_output=True, text=True, check=True)
    lines = [x for x in r.stdout.split("\n") if x]
    # "??": no name (the OTLP function's name is then the empty string)
    return [(lines[i] if lines[i] != "??" else "", int(lines[i + 1].rsplit(":", 2)[1]))
            for i in range(0, len(lines), 2)]


def symbolctl_frames(path, addr):
    r = subprocess.run([ARGS.symbolctl, "addr2line", "-e", path, "--no-debug-lookup",
                        "0x%x" % addr], capture_output=True, text=True, check=True)
    lines = [x for x in r.stdout.split("\n") if x]
    return [(lines[i], int(lines[i + 1].rsplit(":", 2)[1])) for i in range(0, len(lines), 2)]


def token_file(work):
    p = os.path.join(work, "token")
    with open(p, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(p, 0o600)
    return p


def put(d, path, body):
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    c.request("PUT", path, body, {"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    c.close()
    check(r.status in (200, 201), "PUT %s: %d %s" % (path, r.status, text))


class Built:
    """The request and what each location must get."""

    def __init__(self):
        self.req = None
        self.want = {}  # location index -> [(function, line)] (None: must stay unsymbolized)


def build_request(files):
    """files: [(attrs {key: value}, path, [addresses], oracle)]."""
    profiles_pb2, service_pb2, common_pb2, _ = PB
    req = service_pb2.ExportProfilesServiceRequest()
    d = req.dictionary
    strings = {}

    def s(x):
        if x not in strings:
            strings[x] = len(d.string_table)
            d.string_table.append(x)
        return strings[x]

    s("")
    d.mapping_table.add()
    d.location_table.add()
    d.function_table.add()
    d.stack_table.add()
    d.attribute_table.add()
    d.link_table.add()
    b = Built()
    stack = []
    for attrs, path, addrs, oracle in files:
        m = d.mapping_table.add()
        m.memory_start, m.memory_limit, m.file_offset = 0x400000, 0x800000, 0
        m.filename_strindex = s(path or "[unknown]")
        mi = len(d.mapping_table) - 1
        for k, v in attrs.items():
            a = d.attribute_table.add()
            a.key_strindex = s(k)
            a.value.string_value = v
            m.attribute_indices.append(len(d.attribute_table) - 1)
        for addr in addrs:
            loc = d.location_table.add()
            loc.mapping_index = mi
            loc.address = addr
            li = len(d.location_table) - 1
            fa = d.attribute_table.add()
            fa.key_strindex = s("profile.frame.type")
            fa.value.string_value = "native"
            loc.attribute_indices.append(len(d.attribute_table) - 1)
            b.want[li] = oracle(path, addr) if oracle else None
            stack.append(li)
    # An interpreted frame: lines already, no mapping: left alone.
    fn = d.function_table.add()
    fn.name_strindex = s("handler")
    fn.filename_strindex = s("app.py")
    loc = d.location_table.add()
    ln = loc.lines.add()
    ln.function_index = len(d.function_table) - 1
    ln.line = 42
    stack.append(len(d.location_table) - 1)
    d.stack_table.add().location_indices.extend(stack)
    rp = req.resource_profiles.add()
    rp.resource.attributes.add(key="service.name").value.string_value = "otlp-test"
    sp = rp.scope_profiles.add()
    sp.scope.name = "ebpf-profiler"
    p = sp.profiles.add()
    p.sample_type.type_strindex = s("samples")
    p.sample_type.unit_strindex = s("count")
    p.profile_id = bytes(range(16))
    p.time_unix_nano = 1700000000000000000
    p.period = 50
    smp = p.samples.add()
    smp.stack_index = 1
    smp.values.append(7)
    smp.timestamps_unix_nano.append(1700000000000000123)
    b.req = req
    return b


def symbolize(d, req, as_json=False):
    _, service_pb2, _, json_format = PB
    if as_json:
        body = json_format.MessageToJson(req).encode()
        st, hdrs, data = d.post(body, {"Content-Type": "application/json"}, path=PATH)
        check(st == 200, "SymbolizeOTLP JSON: HTTP %d %r" % (st, data[:400]))
        out = service_pb2.ExportProfilesServiceRequest()
        json_format.Parse(data, out)
        return out
    st, hdrs, data = d.post(req.SerializeToString(), path=PATH)
    check(st == 200, "SymbolizeOTLP: HTTP %d %r" % (st, data[:400]))
    if hdrs.get("content-encoding") == "gzip":
        data = gzip.decompress(data)
    out = service_pb2.ExportProfilesServiceRequest()
    out.ParseFromString(data)
    return out


def check_enriched(b, out):
    _, service_pb2, _, _ = PB
    d = out.dictionary
    for li, want in b.want.items():
        loc = d.location_table[li]
        got = [(d.string_table[d.function_table[ln.function_index].name_strindex], ln.line)
               for ln in loc.lines]
        if want is None:
            check(not got, "location %d (unknown file) got lines %r" % (li, got))
            continue
        check(got == want, "location %d (0x%x): %r, oracle %r" % (li, loc.address, got, want))
    # Everything but the added lines, functions and strings is the input.
    back = service_pb2.ExportProfilesServiceRequest()
    back.CopyFrom(out)
    n_fn, n_str = len(b.req.dictionary.function_table), len(b.req.dictionary.string_table)
    for li in b.want:
        del back.dictionary.location_table[li].lines[:]
    del back.dictionary.function_table[n_fn:]
    del back.dictionary.string_table[n_str:]
    check(back == b.req, "fields other than the lines changed")


# SymbolizeOTLP carries no wait of its own: it waits --default-wait (2s unless
# set), too short for a first index build under ASan on a loaded machine.
LONG_WAIT = ["--default-wait", "120s"]


def setup(work, extra=()):
    c_bin = os.path.join(ARGS.fixtures, "c_O2_dw5")
    cxx_bin = os.path.join(ARGS.fixtures, "cxx_O2")
    kern = os.path.join(ARGS.fixtures, "kernel_like")
    import go_test
    go_bin = go_test.build(ARGS.go, ARGS.src, ARGS.workdir, "otlp_stripped", "prog",
                           ["-ldflags=-s -w"])
    gid = subprocess.run([ARGS.go, "tool", "buildid", go_bin], capture_output=True, text=True,
                         check=True).stdout.strip()
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               extra=["--upload-token-file", token_file(work)] + LONG_WAIT + list(extra))
    for path in (c_bin, cxx_bin, kern):
        with open(path, "rb") as f:
            put(d, "/buildid/%s/debuginfo" % build_id(path), f.read())
    with open(go_bin, "rb") as f:
        put(d, "/buildid/%s/executable?kind=htlhash" % htlhash(go_bin), f.read())
    c_addrs = nm_addrs(c_bin, ["main"])
    c_addrs += [c_addrs[0] + 0x10, c_addrs[0] + 0x30]
    cxx_addrs = text_addrs(cxx_bin, 4)
    k_addrs = text_addrs(kern, 2)
    files = [({"process.executable.build_id.gnu": build_id(c_bin)}, c_bin, c_addrs, llvm_frames),
             ({"process.executable.build_id.htlhash": htlhash(cxx_bin)}, cxx_bin, cxx_addrs,
              llvm_frames),
             ({"process.executable.build_id.go": gid}, go_bin, text_addrs(go_bin, 5),
              symbolctl_frames),
             ({"process.executable.build_id.profiling": htlhash(kern)}, kern, k_addrs,
              llvm_frames),
             ({"process.executable.build_id.gnu": "ab" * 20}, None, [0x1234], None)]
    return d, build_request(files)


def case_symbolize_proto_and_json():
    work = tempdir("otlp-")
    d, b = setup(work)
    try:
        check_enriched(b, symbolize(d, b.req))
        check_enriched(b, symbolize(d, b.req, as_json=True))
        # symbolctl otlp: binary in, binary out; JSON in, JSON out.
        _, service_pb2, _, json_format = PB
        for ext, data in (("pb", b.req.SerializeToString()),
                          ("json", json_format.MessageToJson(b.req).encode())):
            src, dst = os.path.join(work, "in." + ext), os.path.join(work, "out." + ext)
            with open(src, "wb") as f:
                f.write(data)
            r = subprocess.run([ARGS.symbolctl, "otlp", src, "-o", dst, "--server", d.url],
                               capture_output=True, text=True, timeout=300)
            check(r.returncode == 0, "symbolctl otlp %s: %d %s" % (ext, r.returncode, r.stderr))
            out = service_pb2.ExportProfilesServiceRequest()
            with open(dst, "rb") as f:
                if ext == "pb":
                    out.ParseFromString(f.read())
                else:
                    json_format.Parse(f.read(), out)
            check_enriched(b, out)
        m = d.metrics()
        check(re.search(r'^symbolizer_otlp_locations_total\{result="symbolized"\} [1-9]', m, re.M),
              "otlp metrics missing")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_symbolctl_offline():
    """symbolctl otlp --debug-dir DIR == symbolctl otlp --server (a daemon on DIR)."""
    work = tempdir("otlp-off-")
    d0, b = setup(work)
    d0.stop()
    dbg = os.path.join(work, "debug")
    c_bin = os.path.join(ARGS.fixtures, "c_O2_dw5")
    bid = build_id(c_bin)
    os.makedirs(os.path.join(dbg, ".build-id", bid[:2]))
    shutil.copy(c_bin, os.path.join(dbg, ".build-id", bid[:2], bid[2:] + ".debug"))
    os.makedirs(os.path.join(dbg, "bin"))
    for f in (os.path.join(ARGS.fixtures, "cxx_O2"), os.path.join(ARGS.fixtures, "kernel_like"),
              os.path.join(ARGS.workdir, "otlp_stripped")):
        shutil.copy(f, os.path.join(dbg, "bin", os.path.basename(f)))
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "data2"), os.path.join(work, "d2.log"),
               debug_dirs=[dbg], extra=LONG_WAIT)
    try:
        _, service_pb2, _, json_format = PB
        for ext, data in (("pb", b.req.SerializeToString()),
                          ("json", json_format.MessageToJson(b.req).encode())):
            src = os.path.join(work, "in." + ext)
            with open(src, "wb") as f:
                f.write(data)
            outs = []
            for how in (["--server", d.url], ["--debug-dir", dbg]):
                dst = os.path.join(work, "out-%s.%s" % (how[0][2:], ext))
                r = subprocess.run([ARGS.symbolctl, "otlp", src, "-o", dst] + how,
                                   capture_output=True, text=True, timeout=300)
                # the unknown file: the offline command says so (exit 1), the daemon's
                # answer leaves it as it is
                want_rc = 1 if how[0] == "--debug-dir" else 0
                check(r.returncode == want_rc and (want_rc == 0 or "not_found" in r.stderr),
                      "symbolctl otlp %s %s: %d %s" % (ext, how[0], r.returncode, r.stderr))
                with open(dst, "rb") as f:
                    outs.append(f.read())
            check(outs[0] == outs[1], "%s: --debug-dir answer differs from --server's" % ext)
            out = service_pb2.ExportProfilesServiceRequest()
            if ext == "pb":
                out.ParseFromString(outs[1])
            else:
                json_format.Parse(outs[1], out)
            check_enriched(b, out)
        garbage = os.path.join(work, "garbage.pb")
        with open(garbage, "wb") as f:
            f.write(b"\x0a\xff\xff\xff\xff\x0f")
        r = subprocess.run([ARGS.symbolctl, "otlp", garbage, "--debug-dir", dbg],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and r.stderr.strip(), "garbage offline: %d %r" %
              (r.returncode, r.stderr))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def expect_error(d, body, what, headers=None):
    st, code, msg = d.connect_error(body, headers=headers, path=PATH)
    check(st in (400, 413, 429) and re.search(what, msg), "%r: %d %s %r" % (what, st, code, msg))


def varint(v):
    out = b""
    while True:
        b7 = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b7 | 0x80])
        else:
            return out + bytes([b7])


def case_hostile():
    _, service_pb2, _, _ = PB
    work = tempdir("otlp-bad-")
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"))
    try:
        def req_with(fn):
            r = service_pb2.ExportProfilesServiceRequest()
            r.dictionary.string_table.append("")
            r.dictionary.mapping_table.add()
            r.dictionary.location_table.add()
            r.resource_profiles.add().scope_profiles.add().profiles.add()
            fn(r)
            return r.SerializeToString()

        def bad_mapping(r):
            r.dictionary.location_table.add().mapping_index = 7
        expect_error(d, req_with(bad_mapping), "mapping index 7 out of range")

        def bad_fn(r):
            r.dictionary.location_table.add().lines.add().function_index = 3
        expect_error(d, req_with(bad_fn), "function index 3 out of range")

        def bad_stack(r):
            r.dictionary.stack_table.add().location_indices.extend([0, -1])
        expect_error(d, req_with(bad_stack), "index -1 out of range")

        def bad_sample(r):
            r.resource_profiles[0].scope_profiles[0].profiles[0].samples.add().stack_index = 5
        expect_error(d, req_with(bad_sample), "stack or attribute index out of range")
        # Another version's Profile (a field v1.11.0 does not define).
        raw = req_with(lambda r: None)
        prof = b"\xa8\x06\x01"  # field 101, varint 1
        sp = b"\x12" + varint(len(prof)) + prof
        rp = b"\x12" + varint(len(sp)) + sp
        expect_error(d, raw + b"\x0a" + varint(len(rp)) + rp, "v1.11.0")
        # No dictionary but profiles: an older layout.
        expect_error(d, b"\x0a" + varint(len(rp)) + rp, "no ProfilesDictionary|v1.11.0")
        expect_error(d, b"\xff\xff\xff", "not a valid")
        # Millions of locations, a few bytes each: refused, not allocated.
        n = 3_000_000
        dic = b"\x12\x00" * n
        st, code, msg = d.connect_error(b"\x12" + varint(len(dic)) + dic, path=PATH)
        check(st in (400, 413, 429) and ("locations" in msg or "cap" in msg),
              "3M locations: %d %s %r" % (st, code, msg))
        # A gzip bomb: 256 MiB of zeros in a few hundred KB.
        bomb = gzip.compress(b"\0" * (1 << 28), 9)
        st, code, msg = d.connect_error(bomb, headers={"Content-Encoding": "gzip"}, path=PATH)
        check(st in (400, 413, 429), "gzip bomb: %d %s %r" % (st, code, msg))
        # Deep JSON.
        deep = '{"resourceProfiles":[{"resource":{"attributes":[{"key":"a","value":' + \
            '{"kvlistValue":{"values":[{"key":"a","value":' * 2000 + '{}' + \
            '}]}}' * 2000 + '}]}}]}'
        st, code, msg = d.connect_error(deep.encode(), headers={"Content-Type": "application/json"},
                                        path=PATH)
        check(st == 400, "deep JSON: %d %s %r" % (st, code, msg))
        # The daemon is still there and answers an empty request.
        st, _, data = d.post(b"", path=PATH)
        check(st == 200 and data == b"", "empty request: %d %r" % (st, data))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS, PB
    ap = argparse.ArgumentParser()
    for a in ("--symbolizerd", "--symbolctl", "--fixtures", "--go", "--src", "--workdir"):
        ap.add_argument(a, required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    PB = otlp_pb.load(ARGS.workdir)
    sys.exit(run_cases([("symbolize_proto_and_json", case_symbolize_proto_and_json),
                        ("symbolctl_offline", case_symbolctl_offline),
                        ("hostile", case_hostile)], ARGS.cases))


if __name__ == "__main__":
    main()
