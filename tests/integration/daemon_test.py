#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""symbolizerd end to end: the real daemon on a free loopback port, a fresh data
dir, a real elfutils debuginfod (and the fault server) as upstreams.

    daemon_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]

Cases: answers in ELF-address, runtime and file-offset form equal symbolctl
addr2line's and agree with llvm-symbolizer; fifty concurrent calls for one
unseen build ID cause one upstream download; a restart with the upstream gone
answers from the store; PENDING while a fetch is slow, then OK; malformed
requests get the right Connect error and the daemon keeps serving; /metrics
passes promtool; SIGTERM lets a waiting call finish and exits 0; an index built
from an executable alone is rebuilt once its debug file appears in a local
debug dir, and calls are answered all along.
"""
import argparse
import gzip
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
from daemon_lib import Daemon, llvm_lines  # noqa: E402
from upstream_lib import (Debuginfod, FaultServer, build_id, check, run_cases,  # noqa: E402
                          tempdir)


def function_addresses(path, n, seed):
    """n addresses drawn at random inside the function symbols of a file."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW" and int(parts[1], 16) > 0:
            funcs.append((int(parts[0], 16), int(parts[1], 16)))
    check(funcs, "no function symbols in %s" % path)
    rnd = random.Random(seed)
    return [start + rnd.randrange(size) for start, size in
            (rnd.choice(funcs) for _ in range(n))]


def llvm_symbolizer(path, addrs, extra=()):
    out = subprocess.run(["llvm-symbolizer", "--obj=" + path] + list(extra),
                         input="".join("0x%x\n" % a for a in addrs),
                         capture_output=True, text=True, check=True).stdout
    blocks = out.split("\n\n")
    return [b + "\n" for b in blocks[:len(addrs)]]


def locations_only(block):
    """A block's file:line:column lines, innermost first (the names left out).

    Names are where llvm-symbolizer has quirks of its own: it names the
    outermost frame by a .symtab name when it finds one (a GCC clone's
    "checked_div.cold", "f(int) (.isra.0)"), and its demangler prints some C++
    names differently. compare_llvm.py proves each such case against
    llvm-symbolizer's own --functions=short or the mangled names, on these same
    fixtures, through `symbolctl addr2line`; here names are checked by exact
    equality with `symbolctl addr2line`, and the chain's locations with
    llvm-symbolizer.
    """
    return "\n".join(block.split("\n")[1::2])


def addr2line(symbolctl, path, addrs, extra=()):
    out = subprocess.run([symbolctl, "addr2line", "-e", path] + list(extra) +
                         ["%x" % a for a in addrs], capture_output=True, text=True,
                         check=True).stdout
    return [b + "\n" for b in out.split("\n\n")[:len(addrs)]]


def loads(path):
    """PT_LOAD segments of a file: (offset, vaddr, filesz, memsz, flags)."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    segs = []
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "LOAD":
            segs.append((int(w[1], 16), int(w[2], 16), int(w[4], 16), int(w[5], 16),
                         " ".join(w[6:-1])))
    return segs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--promtool", default=shutil.which("promtool"))
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    fx = lambda name: os.path.join(args.fixtures, name)  # noqa: E731
    work = tempdir("daemon-test-")
    files = [fx("c_O2_dw5"), fx("cxx_O2"), fx("c_stripped"), fx("c_stripped.debug"),
             fx("c_O2_split")]
    up = Debuginfod(work, "debuginfod", files)
    state = {}

    def start(name, upstreams=None, extra=()):
        data = os.path.join(work, name + ".data")
        return Daemon(args.symbolizerd, data, os.path.join(work, name + ".log"),
                      upstreams=[up.url] if upstreams is None else upstreams, extra=extra)

    def daemon():
        if "d" not in state:
            state["d"] = start("main")
        return state["d"]

    def check_against_peers(d, path, bid, addrs, kind_args, label, llvm_min=0.99):
        """Daemon answers for addrs given as kind_args (mapping) equal addr2line's
        for the ELF addresses, and agree with llvm-symbolizer on >= llvm_min."""
        elf_addrs, req_addrs, mapping = kind_args
        resp = d.symbolize([mapping], [pb.location(0, a) for a in req_addrs],
                           max_wait_ms=30000)
        check(pb.STATUS[resp["mappings"][0]["status"]] == "OK",
              "%s: mapping %r" % (label, resp["mappings"][0]))
        ours = [llvm_lines(pb.frames(resp, i)) for i in range(len(req_addrs))]
        for i, a in enumerate(elf_addrs):
            got = resp["locations"][i]["normalized_address"]
            check(got == a, "%s: normalized 0x%x, expected 0x%x" % (label, got, a))
        local = addr2line(args.symbolctl, path, elf_addrs)
        diff = [i for i in range(len(elf_addrs)) if ours[i] != local[i]]
        check(not diff, "%s: %d answers differ from symbolctl addr2line, first at 0x%x:\n%s---\n%s"
              % (label, len(diff), elf_addrs[diff[0]] if diff else 0,
                 ours[diff[0]] if diff else "", local[diff[0]] if diff else ""))
        ref = llvm_symbolizer(path, elf_addrs)
        same = sum(1 for i in range(len(elf_addrs))
                   if locations_only(ours[i]) == locations_only(ref[i]))
        print("  %s: %d/%d inline chains (file:line:column) equal llvm-symbolizer's" % (label, same, len(elf_addrs)))
        check(same >= llvm_min * len(elf_addrs), "%s: only %d/%d equal llvm-symbolizer"
              % (label, same, len(elf_addrs)))

    def case_elf_addresses():
        d = daemon()
        for name in ("c_O2_dw5", "cxx_O2"):
            path = fx(name)
            bid = build_id(path)
            addrs = function_addresses(path, 400, 1)
            check_against_peers(d, path, bid, addrs,
                                (addrs, addrs, pb.mapping(bid)), name + " elf")

    def case_runtime_addresses():
        d = daemon()
        # A PIE with its DWARF, then a stripped PIE whose index comes from its
        # separate debug file (PT_LOADs without offsets there).
        for name, sym_file in (("c_O2_dw5", "c_O2_dw5"), ("c_stripped", "c_stripped.debug")):
            path = fx(name)
            bid = build_id(path)
            addrs = function_addresses(fx(sym_file), 300, 2)
            base = 0x7f3a12340000
            # The executable segment mapped on its own, as /proc/PID/maps shows it.
            off, vaddr, filesz, memsz, flags = [s for s in loads(path) if "E" in s[4]][0]
            start = base + (vaddr & ~0xfff)
            limit = base + ((vaddr + memsz + 0xfff) & ~0xfff)
            mapping = pb.mapping(bid, start, limit, off & ~0xfff, pb.RUNTIME)
            text = [a for a in addrs if vaddr <= a < vaddr + memsz]
            check(len(text) > 100, "too few text addresses")
            check_against_peers(d, fx(sym_file), bid, text,
                                (text, [base + a for a in text], mapping),
                                name + " runtime (text mapping)")
            # The whole file as one mapping from offset 0.
            mapping = pb.mapping(bid, base, 0, 0, pb.RUNTIME)
            check_against_peers(d, fx(sym_file), bid, text,
                                (text, [base + a for a in text], mapping),
                                name + " runtime (whole-file mapping)")
            # File offsets.
            fo = [a - vaddr + off for a in text]
            check_against_peers(d, fx(sym_file), bid, text,
                                (text, fo, pb.mapping(bid, kind=pb.FILE_OFFSET)),
                                name + " file offsets")
        # Addresses outside the mapping: no lines, normalized 0.
        bid = build_id(fx("c_O2_dw5"))
        resp = d.symbolize([pb.mapping(bid, 0x7f0000001000, 0x7f0000002000, 0x1000, pb.RUNTIME)],
                           [pb.location(0, 0x7f0000000fff), pb.location(0, 0x7f0000002000)])
        for i in range(2):
            check(resp["locations"][i]["lines"] == [], "outside address got lines")

    def case_return_addresses_and_options():
        d = daemon()
        path = fx("cxx_O2")
        bid = build_id(path)
        addrs = function_addresses(path, 200, 3)
        # A return address is looked up at address - 1.
        r1 = d.symbolize([pb.mapping(bid)], [pb.location(0, a + 1, True) for a in addrs])
        r2 = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs])
        for i, a in enumerate(addrs):
            check(pb.frames(r1, i) == pb.frames(r2, i), "return address 0x%x" % (a + 1))
            check(r1["locations"][i]["normalized_address"] == a + 1, "normalized return address")
        # no_inline and no_demangle against llvm-symbolizer's same options.
        for opt, llvm_opt in (("no_inline", "--no-inlines"), ("no_demangle", "--no-demangle")):
            r = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs], **{opt: True})
            ref = llvm_symbolizer(path, addrs, [llvm_opt])
            local = addr2line(args.symbolctl, path, addrs, [llvm_opt])
            same = sum(1 for i in range(len(addrs)) if llvm_lines(pb.frames(r, i)) == local[i])
            check(same == len(addrs), "%s: %d/%d equal symbolctl addr2line" % (opt, same, len(addrs)))
            same = sum(1 for i in range(len(addrs))
                       if locations_only(llvm_lines(pb.frames(r, i))) == locations_only(ref[i]))
            check(same >= 0.95 * len(addrs), "%s: %d/%d equal llvm-symbolizer" % (opt, same, len(addrs)))
        # Each distinct string and function is sent once.
        resp = d.symbolize([pb.mapping(bid), pb.mapping(bid)],
                           [pb.location(i % 2, a) for i, a in enumerate(addrs * 2)])
        check(resp["strings"][0] == "", "string_table[0] must be empty")
        check(len(set(resp["strings"])) == len(resp["strings"]), "duplicate strings")
        keys = [(f["name"], f["system_name"], f["filename"], f["start_line"]) for f in resp["functions"]]
        check(len(set(keys)) == len(keys), "duplicate functions")

    def case_symbolctl_symbolize():
        d = daemon()
        path = fx("cxx_O2")
        bid = build_id(path)
        addrs = function_addresses(path, 300, 4)
        out = subprocess.run([args.symbolctl, "symbolize", "--server", d.url, "--build-id", bid],
                             input="".join("%x\n" % a for a in addrs), capture_output=True,
                             text=True, timeout=120)
        check(out.returncode == 0, "symbolctl symbolize: %s" % out.stderr)
        local = subprocess.run([args.symbolctl, "addr2line", "-e", path],
                               input="".join("%x\n" % a for a in addrs), capture_output=True,
                               text=True, check=True).stdout
        check(out.stdout == local, "symbolctl symbolize and addr2line differ")
        # Runtime form through the flags.
        off, vaddr, filesz, memsz, flags = [s for s in loads(path) if "E" in s[4]][0]
        base = 0x555500000000
        text = [a for a in addrs if vaddr <= a < vaddr + memsz]
        out = subprocess.run([args.symbolctl, "symbolize", "--server", d.url, "--build-id", bid,
                              "--runtime", "--memory-start", "%x" % (base + (vaddr & ~0xfff)),
                              "--file-offset", "%x" % (off & ~0xfff)] +
                             ["%x" % (base + a) for a in text], capture_output=True, text=True,
                             timeout=120)
        local = subprocess.run([args.symbolctl, "addr2line", "-e", path] + ["%x" % a for a in text],
                               capture_output=True, text=True, check=True).stdout
        check(out.returncode == 0 and out.stdout == local, "symbolctl symbolize --runtime differs")
        # An unknown build ID: ?? frames, the status on stderr, exit 1.
        out = subprocess.run([args.symbolctl, "symbolize", "--server", d.url, "--build-id",
                              "00" * 20, "--wait", "5s", "1234"], capture_output=True, text=True,
                             timeout=60)
        check(out.returncode == 1 and out.stdout == "??\n??:0:0\n\n" and "not_found" in out.stderr,
              "unknown build id: rc=%d %r %r" % (out.returncode, out.stdout, out.stderr))

    def case_single_download():
        # A fresh daemon and a build ID nobody asked for yet.
        d = start("single")
        try:
            path = fx("c_O2_split")
            bid = build_id(path)
            before = up_requests()
            addrs = function_addresses(path, 50, 5)
            results = [None] * 50
            barrier = threading.Barrier(50)

            def client(i):
                try:
                    barrier.wait()
                    results[i] = d.symbolize([pb.mapping(bid)], [pb.location(0, addrs[i])],
                                             max_wait_ms=30000)
                except Exception as e:  # noqa: BLE001
                    results[i] = e

            threads = [threading.Thread(target=client, args=(i,)) for i in range(50)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            for i, r in enumerate(results):
                check(isinstance(r, dict), "client %d: %r" % (i, r))
                check(pb.STATUS[r["mappings"][0]["status"]] == "OK", "client %d: %r" % (i, r["mappings"]))
                check(r["locations"][0]["lines"], "client %d: no lines" % i)
            downloads = up_requests() - before
            check(downloads == 1, "50 concurrent calls made %d upstream downloads" % downloads)
            builds = d.metric('symbolizer_index_builds_total{result="ok"}')
            check(builds == 1, "50 concurrent calls built %s indexes" % builds)
        finally:
            check(d.stop() == 0, "symbolizerd exit status")

    def up_requests():
        import urllib.request
        with urllib.request.urlopen(up.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        m = re.search(r'^http_requests_total\{type="debuginfo"\} (\d+)', text, re.M)
        return int(m.group(1)) if m else 0

    def case_restart_from_store():
        d = start("restart")
        path = fx("c_O2_dw5")
        bid = build_id(path)
        addrs = function_addresses(path, 200, 6)
        first = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs], max_wait_ms=30000)
        check(pb.STATUS[first["mappings"][0]["status"]] == "OK", "first call")
        check(d.stop() == 0, "symbolizerd exit status after SIGTERM")
        # The upstream is gone (a port nobody listens on): the store answers.
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        d = start("restart", upstreams=[dead])
        try:
            again = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs], max_wait_ms=5000)
            check(pb.STATUS[again["mappings"][0]["status"]] == "OK", "after restart: %r" % again["mappings"])
            for i in range(len(addrs)):
                check(pb.frames(again, i) == pb.frames(first, i), "answer changed after restart")
            hits = d.metric('symbolizer_cache_requests_total{tier="store_index",result="hit"}')
            check(hits == 1, "expected the index from the store, metrics say %s" % hits)
            builds = d.metric('symbolizer_index_builds_total{result="ok"}')
            check(builds == 0, "rebuilt the index after a restart")
        finally:
            check(d.stop() == 0, "symbolizerd exit status")

    def case_pending_then_ok():
        fault_dir = os.path.join(work, "slow")
        os.makedirs(fault_dir, exist_ok=True)
        path = fx("cxx_O2_dw4")
        bid = build_id(path)
        fs = FaultServer(work, "slowserver", {bid + "/debuginfo": "slow:" + path})
        d = start("pending", upstreams=[fs.url])
        try:
            addrs = function_addresses(path, 20, 7)
            t0 = time.monotonic()
            r = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs], max_wait_ms=50)
            took = time.monotonic() - t0
            m = r["mappings"][0]
            check(pb.STATUS[m["status"]] == "PENDING", "slow fetch: %r" % m)
            check(m["retry_after_ms"] > 0, "PENDING without a retry hint")
            check(all(not loc["lines"] for loc in r["locations"]), "PENDING with lines")
            check(took < 5, "a 50 ms wait took %.1f s" % took)
            # The work went on: soon a call finds it done.
            deadline = time.monotonic() + 30
            while True:
                r = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs], max_wait_ms=100)
                if pb.STATUS[r["mappings"][0]["status"]] == "OK":
                    break
                check(time.monotonic() < deadline, "never became OK: %r" % r["mappings"])
                time.sleep(r["mappings"][0]["retry_after_ms"] / 1000.0)
            check(all(loc["lines"] for loc in r["locations"]), "OK without lines")
            check(fs.requests(bid + "/debuginfo") == 1, "fetched more than once")
            # Connect-Timeout-Ms bounds the wait too: a hanging upstream.
            bid2 = "ab" * 20
            fs2 = FaultServer(work, "hangserver", {bid2 + "/debuginfo": "hang"})
            d2 = start("pending2", upstreams=[fs2.url])
            try:
                t0 = time.monotonic()
                status, hdrs, data = d2.post(pb.request([pb.mapping(bid2)], [pb.location(0, 1)],
                                                        max_wait_ms=60000),
                                             {"Connect-Timeout-Ms": "300"})
                took = time.monotonic() - t0
                check(status == 200, "timeout call: HTTP %d" % status)
                m = pb.decode_response(data)["mappings"][0]
                check(pb.STATUS[m["status"]] == "PENDING", "hanging upstream: %r" % m)
                check(took < 0.3 + 0.5, "answered after %.2f s, deadline 0.3 s" % took)
                # SIGTERM while a call waits: the call is answered, exit 0.
                result = {}

                def waiting_call():
                    result["r"] = d2.post(pb.request([pb.mapping(bid2)], [pb.location(0, 1)],
                                                     max_wait_ms=60000))

                t = threading.Thread(target=waiting_call)
                t.start()
                time.sleep(0.5)
                rc = d2.stop(timeout=30)
                t.join(30)
                check(rc == 0, "exit status %s after SIGTERM" % rc)
                check("r" in result and result["r"][0] == 200, "waiting call not answered: %r" % result)
                m = pb.decode_response(result["r"][2])["mappings"][0]
                check(pb.STATUS[m["status"]] == "PENDING", "waiting call at shutdown: %r" % m)
            finally:
                d2.stop()
                fs2.stop()
        finally:
            d.stop()
            fs.stop()

    def case_bad_requests():
        d = start("bad", extra=["--max-request-bytes", "64K", "--max-locations", "1000"])
        try:
            bid = build_id(fx("c_O2_dw5"))
            good = pb.request([pb.mapping(bid)], [pb.location(0, function_addresses(fx("c_O2_dw5"), 1, 8)[0])],
                              max_wait_ms=30000)

            def still_serving():
                r = d.symbolize([pb.mapping(bid)], [pb.location(0, 0x1)])
                check(r["mappings"][0]["status"] in (1, 3), "after a bad request: %r" % r["mappings"])
                status, _, body = d.post(good)
                check(status == 200 and pb.decode_response(body)["locations"][0]["lines"],
                      "the daemon stopped serving")

            still_serving()
            cases = [
                ("garbage body", b"\xff\xff\xff\xff\x0f", {}, 400, "invalid_argument"),
                ("truncated message", good[:-3], {}, 400, "invalid_argument"),
                ("JSON of a wrong type", b'{"mappings":{}}', {"Content-Type": "application/json"},
                 400, "invalid_argument"),
                ("no content type", good, {"Content-Type": ""}, 415, None),
                ("text content type", good, {"Content-Type": "text/plain"}, 415, None),
                ("bad timeout", good, {"Connect-Timeout-Ms": "soon"}, 400, "invalid_argument"),
                ("timeout too long", good, {"Connect-Timeout-Ms": "12345678901"}, 400, "invalid_argument"),
                ("protocol version", good, {"Connect-Protocol-Version": "2"}, 400, "invalid_argument"),
                ("unknown encoding", good, {"Content-Encoding": "br"}, 501, "unimplemented"),
                ("corrupt gzip", b"\x1f\x8b\x08\x00garbage", {"Content-Encoding": "gzip"}, 400,
                 "invalid_argument"),
                ("gzip bomb", gzip.compress(b"\x00" * (1 << 20)), {"Content-Encoding": "gzip"}, 429,
                 "resource_exhausted"),
                ("body over the cap", b"\x00" * (80 * 1024), {}, 429, "resource_exhausted"),
                ("too many locations", pb.request([pb.mapping(bid)], [pb.location(0, i) for i in range(1001)]),
                 {}, 429, "resource_exhausted"),
                # Empty Locations: 2 bytes each, refused from the framing before decoding.
                ("30000 empty locations", b"\x12\x00" * 30000, {}, 429, "resource_exhausted"),
                ("mapping index out of range", pb.request([pb.mapping(bid)], [pb.location(3, 1)]), {}, 400,
                 "invalid_argument"),
            ]
            for name, body, headers, want_status, want_code in cases:
                status, code, msg = d.connect_error(body, headers)
                check(status == want_status, "%s: HTTP %d, expected %d (%s)" % (name, status, want_status, msg))
                if want_code:
                    check(code == want_code, "%s: code %s, expected %s" % (name, code, want_code))
                check(msg, "%s: error without a message" % name)
                still_serving()
            status, code, _ = d.connect_error(good, path="/symbolizer.v1.SymbolizerService/Nope")
            check(status == 501 and code == "unimplemented", "unknown method: %d %s" % (status, code))
            status, code, _ = d.connect_error(None, method="GET")
            check(status == 405, "GET Symbolize: %d" % status)
            # A body far over the cap is refused before it is read.
            c = d.conn(timeout=10)
            c.putrequest("POST", "/symbolizer.v1.SymbolizerService/Symbolize")
            c.putheader("Content-Type", "application/proto")
            c.putheader("Content-Length", str(100 << 20))
            c.endheaders()
            r = c.getresponse()
            check(r.status == 413, "huge Content-Length: HTTP %d" % r.status)
            c.close()
            still_serving()
            # Per-mapping problems do not fail the call.
            r = d.symbolize([pb.mapping("ABCD"), pb.mapping("abc"), pb.mapping(""), pb.mapping("zz"),
                             pb.mapping("ab" * 65), pb.mapping(bid, kind=9),
                             pb.mapping(bid, 0x2000, 0x1000, 0, pb.RUNTIME), pb.mapping(bid)],
                            [pb.location(i, 0x1000) for i in range(8)], max_wait_ms=30000)
            statuses = [pb.STATUS[m["status"]] for m in r["mappings"]]
            check(statuses == ["INVALID"] * 7 + ["OK"], "per-mapping statuses: %r" % statuses)
            check(all(r["mappings"][i]["error"] for i in range(7)), "INVALID without an error text")
            # gzip both ways, and a chunked request body (Connect's Node client sends those).
            status, hdrs, body = d.post(gzip.compress(good), {"Content-Encoding": "gzip",
                                                               "Accept-Encoding": "gzip"})
            check(status == 200, "gzip request: %d" % status)
            data = gzip.decompress(body) if hdrs.get("content-encoding") == "gzip" else body
            check(pb.decode_response(data)["locations"][0]["lines"], "gzip request: no lines")
            big = pb.request([pb.mapping(bid)], [pb.location(0, a) for a in
                                                 function_addresses(fx("c_O2_dw5"), 500, 9)])
            status, hdrs, body = d.post(big, {"Accept-Encoding": "gzip"})
            check(status == 200 and hdrs.get("content-encoding") == "gzip", "gzip response: %r" % hdrs)
            check(len(pb.decode_response(gzip.decompress(body))["locations"]) == 500, "gzip response body")
            # The same response gzipped by libdeflate at its level 9 (--gzip-library,
            # --gzip-level): a different stream than ISA-L's at its level 0 (the
            # defaults), the same answers once inflated.
            d3 = start("libdeflate", extra=["--gzip-library", "libdeflate", "--gzip-level", "9"])
            try:
                big3 = pb.request([pb.mapping(bid)], [pb.location(0, a) for a in
                                                      function_addresses(fx("c_O2_dw5"), 500, 9)],
                                  max_wait_ms=30000)
                s3, h3, b3 = d3.post(big3, {"Accept-Encoding": "gzip"})
                check(s3 == 200 and h3.get("content-encoding") == "gzip", "libdeflate: %r" % h3)
                check(pb.decode_response(gzip.decompress(b3))["locations"] ==
                      pb.decode_response(gzip.decompress(body))["locations"],
                      "--gzip-library libdeflate: the answers differ from ISA-L's once inflated")
                check(len(b3) < len(body), "libdeflate's level 9 (%d bytes) is not smaller than "
                      "ISA-L's level 0 (%d)" % (len(b3), len(body)))
            finally:
                check(d3.stop() == 0, "daemon exit status")
            p = subprocess.run([args.symbolizerd, "--gzip-library", "zstd"], capture_output=True,
                               text=True, timeout=30)
            check(p.returncode != 0 and "--gzip-library" in p.stderr and "isal" in p.stderr,
                  "--gzip-library zstd: exit %d, %r" % (p.returncode, p.stderr))
            # The "listening" line names the malloc: mimalloc when the binary links it.
            linked = subprocess.run(["ldd", args.symbolizerd], capture_output=True, text=True,
                                    timeout=30).stdout
            m = re.search(r'msg="listening" .* malloc=(mimalloc-\d+\.\d+\.\d+|libc)\b',
                          d.log_text())
            check(m and (m.group(1) != "libc") == ("libmimalloc" in linked),
                  "listening line's malloc=%r, ldd %r" % (m and m.group(1), "libmimalloc" in linked))
            # Levels out of the library's range: refused at start, saying the range.
            for lv, want in (("4", "0 to 3"), ("13", "0 to 12"), ("-1", "0 to 12")):
                p = subprocess.run([args.symbolizerd, "--gzip-level", lv, "--data-dir",
                                    os.path.join(work, "badlevel.data")],
                                   capture_output=True, text=True, timeout=30)
                check(p.returncode != 0 and "--gzip-level" in p.stderr and want in p.stderr,
                      "--gzip-level %s: exit %d, %r" % (lv, p.returncode, p.stderr))
            # --gzip-min-bytes above the response's size: served uncompressed all the same.
            d2 = start("nogzip", extra=["--gzip-min-bytes", "1G"])
            try:
                big2 = pb.request([pb.mapping(bid)], [pb.location(0, a) for a in
                                                      function_addresses(fx("c_O2_dw5"), 500, 9)],
                                  max_wait_ms=30000)
                status, hdrs, body = d2.post(big2, {"Accept-Encoding": "gzip"})
                check(status == 200 and "content-encoding" not in hdrs,
                      "--gzip-min-bytes 1G: %r" % hdrs)
                check(len(pb.decode_response(body)["locations"]) == 500, "uncompressed body")
            finally:
                check(d2.stop() == 0, "daemon exit status")
            c = d.conn()
            c.putrequest("POST", "/symbolizer.v1.SymbolizerService/Symbolize")
            c.putheader("Content-Type", "application/proto")
            c.putheader("Transfer-Encoding", "chunked")
            c.endheaders()
            for i in range(0, len(good), 7):
                piece = good[i:i + 7]
                c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            c.send(b"0\r\n\r\n")
            r = c.getresponse()
            data = r.read()
            check(r.status == 200 and pb.decode_response(data)["locations"][0]["lines"], "chunked request")
            # Keep-alive: many calls on one connection.
            c = d.conn()
            for _ in range(20):
                status, _, _ = d.post(good, conn=c)
                check(status == 200, "keep-alive call")
            c.close()
            still_serving()
        finally:
            check(d.stop() == 0, "symbolizerd exit status")

    def case_metrics_and_health():
        d = daemon()
        c = d.conn()
        c.request("GET", "/healthz")
        r = c.getresponse()
        check(r.status == 200 and r.read() == b"ok\n", "/healthz")
        text = d.metrics()
        for name in ("symbolizer_rpc_requests_total", "symbolizer_rpc_duration_seconds_bucket",
                     "symbolizer_frames_symbolized_total", "symbolizer_cache_requests_total",
                     "symbolizer_upstream_requests_total", "symbolizer_upstream_bytes_total",
                     "symbolizer_index_builds_total", "symbolizer_index_build_duration_seconds_bucket",
                     "symbolizer_store_bytes", "symbolizer_http_requests_total"):
            check(re.search("^" + name, text, re.M), "/metrics lacks " + name)
        check(d.metric("symbolizer_frames_symbolized_total") > 0, "no frames counted")
        check(args.promtool, "promtool not found (Debian's prometheus package)")
        p = subprocess.run([args.promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True)
        check(p.returncode == 0, "promtool check metrics:\n%s%s" % (p.stdout, p.stderr))

    def case_debuginfo_arrives_later():
        # A local debug dir with only the executable (.symtab): the daemon answers
        # with function names. Then the debug file appears (a -dbg package is
        # installed): within a negative-cache period the index is rebuilt with it,
        # calls are answered all along, and the stored index is the new one.
        ddir = os.path.join(work, "late-debug")
        path = fx("c_stripped")
        bid = build_id(path)
        bdir = os.path.join(ddir, ".build-id", bid[:2])
        os.makedirs(bdir)
        shutil.copy(path, os.path.join(bdir, bid[2:]))
        data = os.path.join(work, "late.data")
        extra = ["--negative-cache-ttl=1s"]
        d = Daemon(args.symbolizerd, data, os.path.join(work, "late.log"), upstreams=[],
                   debug_dirs=[ddir], extra=extra)
        try:
            addrs = function_addresses(fx("c_stripped.debug"), 100, 11)
            locs = [pb.location(0, a) for a in addrs]
            resp = d.symbolize([pb.mapping(bid)], locs, max_wait_ms=30000)
            m = resp["mappings"][0]
            check(pb.STATUS[m["status"]] == "OK" and m["has_functions"]
                  and not m["has_line_numbers"], "executable only: %r" % m)
            named = sum(1 for i in range(len(addrs)) if pb.frames(resp, i)
                        and pb.frames(resp, i)[0][0])
            check(named > len(addrs) // 2, "executable only: %d/%d named" % (named, len(addrs)))
            shutil.copy(fx("c_stripped.debug"), os.path.join(bdir, bid[2:] + ".debug"))
            deadline = time.monotonic() + 60
            calls = 0
            while True:
                resp = d.symbolize([pb.mapping(bid)], locs, max_wait_ms=0)
                calls += 1
                m = resp["mappings"][0]
                check(pb.STATUS[m["status"]] == "OK", "while rechecking: %r" % m)
                if m["has_line_numbers"]:
                    break
                check(time.monotonic() < deadline, "debug info not picked up in 60 s")
                time.sleep(0.2)
            print("  debug info picked up after %d calls" % calls)
            check(d.metric('symbolizer_debuginfo_rechecks_total{result="found"}') == 1,
                  "rechecks found != 1")
            check_against_peers(d, fx("c_stripped.debug"), bid, addrs,
                                (addrs, addrs, pb.mapping(bid)), "c_stripped after the upgrade")
        finally:
            check(d.stop() == 0, "daemon exit status")
        # The store holds the debug info and its index: a restart answers with lines.
        d = Daemon(args.symbolizerd, data, os.path.join(work, "late2.log"), upstreams=[],
                   debug_dirs=[], extra=extra)
        try:
            resp = d.symbolize([pb.mapping(bid)], locs[:10], max_wait_ms=30000)
            check(resp["mappings"][0]["has_line_numbers"], "after restart: %r" % resp["mappings"][0])
        finally:
            check(d.stop() == 0, "daemon exit status")

    cases = [
        ("elf_addresses", case_elf_addresses),
        ("runtime_addresses", case_runtime_addresses),
        ("return_addresses_and_options", case_return_addresses_and_options),
        ("symbolctl_symbolize", case_symbolctl_symbolize),
        ("metrics_and_health", case_metrics_and_health),
        ("single_download", case_single_download),
        ("restart_from_store", case_restart_from_store),
        ("pending_then_ok", case_pending_then_ok),
        ("bad_requests", case_bad_requests),
        ("debuginfo_arrives_later", case_debuginfo_arrives_later),
    ]
    try:
        rc = run_cases(cases, args.cases)
        if "d" in state:
            if state["d"].stop() != 0:
                print("FAIL main daemon exit status")
                rc = 1
    finally:
        up.stop()
    if rc == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("logs kept in", work)
    return rc


if __name__ == "__main__":
    sys.exit(main())
