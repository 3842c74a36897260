#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""debuginfod_serve_test: symbolizerd as a debuginfod server (issue 13, items 1
and 2). debuginfod-find (debuginfo, executable, section) against the daemon gets
the files' bytes; HEAD gives headers only; X-DEBUGINFOD-MAXSIZE gets 406;
hostile paths get 400/404 and the daemon keeps serving; gdb loads a stripped
fixture's debug info through the daemon; /metrics passes promtool; an elfutils
debuginfod upstream's file is fetched and served; two daemons listing each
other as upstreams answer an unknown build ID with 404 quickly (hop limit) and
serve a file one of them holds locally through the other.

Usage: debuginfod_serve_test.py --symbolizerd BIN --fixtures DIR [CASE...]
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time

import pb
from daemon_lib import Daemon
from upstream_lib import (Debuginfod, build_id, check, free_port, run_cases, tempdir)

ARGS = None


def sha(data):
    return hashlib.sha256(data).hexdigest()


def put(debug_dir, path, exe=False):
    bid = build_id(path)
    d = os.path.join(debug_dir, ".build-id", bid[:2])
    os.makedirs(d, exist_ok=True)
    shutil.copy(path, os.path.join(d, bid[2:] + ("" if exe else ".debug")))
    return bid


def fx(name):
    return os.path.join(ARGS.fixtures, name)


def request(d, path, method="GET", headers=None):
    return d.request(path, method, headers)


def find(d, work, *what):
    env = dict(os.environ, DEBUGINFOD_URLS=d.url,
               DEBUGINFOD_CACHE_PATH=os.path.join(work, "cache-%d" % time.monotonic_ns()))
    r = subprocess.run(["debuginfod-find"] + list(what), capture_output=True, text=True,
                       env=env, timeout=60)
    check(r.returncode == 0, "debuginfod-find %s: %s" % (" ".join(what), r.stderr))
    return open(r.stdout.strip(), "rb").read()


def dump_section(path, name, work):
    """The section's bytes, decompressed, as objcopy sees them."""
    plain = os.path.join(work, "plain")
    subprocess.run(["objcopy", "--decompress-debug-sections", path, plain], check=True)
    out = os.path.join(work, "sec.bin")
    subprocess.run(["objcopy", "--dump-section", "%s=%s" % (name, out), plain,
                    os.path.join(work, "junk")], check=True)
    return open(out, "rb").read()


def daemon(work, name, debug_dirs=(), upstreams=(), extra=()):
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), upstreams=upstreams,
                  debug_dirs=debug_dirs, extra=extra)


def case_serve():
    work = tempdir("dbgd-serve-")
    dbg = os.path.join(work, "dbg")
    stripped = put(dbg, fx("c_stripped.debug"))
    put(dbg, fx("c_stripped"), exe=True)
    keep = os.path.join(work, "c_O0_dw5.debug")  # a debug file alone
    subprocess.run(["objcopy", "--only-keep-debug", fx("c_O0_dw5"), keep], check=True)
    put(dbg, keep)
    full = put(dbg, fx("c_O2_dw5"))
    zlib = put(dbg, fx("c_O2_zlib"))
    d = daemon(work, "d", debug_dirs=[dbg])
    try:
        check(sha(find(d, work, "debuginfo", stripped)) ==
              sha(open(fx("c_stripped.debug"), "rb").read()), "debuginfo bytes differ")
        check(sha(find(d, work, "executable", full)) == sha(open(fx("c_O2_dw5"), "rb").read()),
              "executable bytes differ")
        got = find(d, work, "section", zlib, ".debug_info")
        check(got == dump_section(fx("c_O2_zlib"), ".debug_info", work),
              "compressed .debug_info not served inflated")
        got = find(d, work, "section", stripped, ".debug_line")
        check(got == dump_section(fx("c_stripped.debug"), ".debug_line", work),
              ".debug_line bytes differ")
        # the store holds the debug file; the executable comes from the local dir
        check(sha(find(d, work, "executable", stripped)) ==
              sha(open(fx("c_stripped"), "rb").read()), "stripped executable bytes differ")
        # a debug file without code is no executable
        only = build_id(fx("c_O0_dw5"))
        status, _, _ = request(d, "/buildid/%s/executable" % only)
        check(status == 404, "no executable anywhere: %d" % status)
        # HEAD: headers only
        status, h, body = request(d, "/buildid/%s/debuginfo" % stripped, "HEAD")
        size = os.path.getsize(fx("c_stripped.debug"))
        check(status == 200 and body == b"", "HEAD: %d %r" % (status, body[:40]))
        check(h.get("content-length") == str(size) and h.get("x-debuginfod-size") == str(size),
              "HEAD sizes: %r" % h)
        check(h.get("x-debuginfod-file") and "last-modified" in h, "HEAD headers: %r" % h)
        check(h.get("content-type") == "application/octet-stream", "content type %r" % h)
        # One byte range (a resumed download): 206 with Content-Range; past the
        # end 416; anything not read (several ranges) the whole file (issue 25, item 11)
        whole = open(fx("c_stripped.debug"), "rb").read()
        check(h.get("accept-ranges") == "bytes", "no Accept-Ranges: %r" % h)
        for rng, lo, hi in (("bytes=100-199", 100, 199), ("bytes=1000-", 1000, size - 1),
                            ("bytes=-500", size - 500, size - 1), ("bytes=0-0", 0, 0)):
            status, rh, body = request(d, "/buildid/%s/debuginfo" % stripped,
                                       headers={"Range": rng})
            check(status == 206 and body == whole[lo:hi + 1] and
                  rh.get("content-range") == "bytes %d-%d/%d" % (lo, hi, size) and
                  rh.get("content-length") == str(hi - lo + 1),
                  "%s: %d %r %d bytes" % (rng, status, rh.get("content-range"), len(body)))
        status, rh, _ = request(d, "/buildid/%s/debuginfo" % stripped,
                                headers={"Range": "bytes=%d-" % size})
        check(status == 416 and rh.get("content-range") == "bytes */%d" % size,
              "past the end: %d %r" % (status, rh))
        for rng in ("bytes=0-1,5-6", "lines=1-2"):
            status, _, body = request(d, "/buildid/%s/debuginfo" % stripped,
                                      headers={"Range": rng})
            check(status == 200 and body == whole, "%s: %d %d bytes" % (rng, status, len(body)))
        # curl resuming a cut download gets the same bytes
        part = os.path.join(work, "resumed.debug")
        with open(part, "wb") as f:
            f.write(whole[:len(whole) // 3])
        r = subprocess.run(["curl", "-sSf", "-C", "-", "-o", part,
                            d.url + "/buildid/%s/debuginfo" % stripped],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and open(part, "rb").read() == whole,
              "curl -C -: %d %s" % (r.returncode, r.stderr))
        # HEAD of a 404: the GET's headers, its Content-Length included (issue 25, item 11)
        gst, gh, gbody = request(d, "/buildid/%s/executable" % only)
        status, h, body = request(d, "/buildid/%s/executable" % only, "HEAD")
        check(status == 404 == gst and body == b"" and
              h.get("content-length") == str(len(gbody)) == gh.get("content-length"),
              "HEAD 404: %d %r, GET %r" % (status, h, gh))
        # Methods the path does not have: 405 with Allow, nothing stored or served
        for method in ("POST", "DELETE", "PATCH"):
            status, h, _ = request(d, "/buildid/%s/debuginfo" % stripped, method)
            check(status == 405 and h.get("allow") == "GET, HEAD, PUT",
                  "%s /buildid/: %d %r" % (method, status, h.get("allow")))
        status, h, _ = request(d, "/metrics", "POST")
        check(status == 405 and h.get("allow") == "GET, HEAD", "POST /metrics: %d" % status)
        status, _, _ = request(d, "/buildid/%s/debuginfo" % stripped,
                               headers={"X-DEBUGINFOD-MAXSIZE": "100"})
        check(status == 406, "MAXSIZE 100: %d" % status)
        status, _, body = request(d, "/buildid/%s/debuginfo" % stripped,
                                  headers={"X-DEBUGINFOD-MAXSIZE": str(size)})
        check(status == 200 and len(body) == size, "MAXSIZE = size: %d" % status)
        hostile(d, stripped)
        gdb(d, work)
        text = request(d, "/metrics")[2]
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
        check(r.returncode == 0, "promtool: %s" % (r.stdout + r.stderr).decode())
        check(b'symbolizer_debuginfod_requests_total{kind="debuginfo",code="200"}' in text,
              "no debuginfod counter")
        check(b"symbolizer_debuginfod_bytes_total " in text, "no bytes counter")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def hostile(d, bid):
    paths = [
        "/buildid/../debuginfo", "/buildid/%2e%2e/debuginfo",
        "/buildid/%2e%2e%2f%2e%2e%2fetc%2fpasswd/debuginfo",
        "/buildid/" + "ab" * 65 + "/debuginfo", "/buildid/" + "a" * 4000 + "/debuginfo",
        "/buildid/ab%00cd/debuginfo", "/buildid/abc/debuginfo", "/buildid/ABCD/debuginfo",
        "/buildid/%s/section/a%%2fb" % bid, "/buildid/%s/section/.debug_info%%00" % bid,
        "/buildid/%s/section/" % bid, "/buildid/%s/section/%s" % (bid, "x" * 200),
        "/buildid/%s/source/etc/passwd" % bid, "/buildid/%s/%%2e%%2e" % bid,
        "/buildid/%s/debuginfo/../executable" % bid, "/buildid/zz/debuginfo",
        "/buildid/" + "00" * 20 + "/debuginfo",
    ]
    for p in paths:
        status, _, _ = request(d, p)
        check(status in (400, 404), "%s: %d" % (p[:80], status))
    status, _, _ = request(d, "/buildid/%s/debuginfo" % bid)
    check(status == 200, "after hostile paths: %d" % status)


def gdb(d, work):
    exe_dir = os.path.join(work, "alone")
    os.makedirs(exe_dir, exist_ok=True)
    exe = os.path.join(exe_dir, "c_stripped")
    shutil.copy(fx("c_stripped"), exe)
    env = dict(os.environ, DEBUGINFOD_URLS=d.url, DEBUGINFOD_CACHE_PATH=os.path.join(work, "gc"),
               HOME=work)
    r = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled on",
                        "-ex", "info line main", exe],
                       capture_output=True, text=True, env=env, timeout=120)
    out = r.stdout + r.stderr
    if "debuginfod" in out and "Undefined set command" in out:
        print("skip gdb: this gdb has no debuginfod support", flush=True)
        return
    check('of "main.c"' in out, "gdb found no line through the daemon:\n" + out)


def case_upstream():
    work = tempdir("dbgd-up-")
    up = Debuginfod(work, "elfutils", [fx("c_O2_dw4")])
    d = daemon(work, "d", upstreams=[up.url])
    try:
        bid = build_id(fx("c_O2_dw4"))
        check(sha(find(d, work, "debuginfo", bid)) == sha(open(fx("c_O2_dw4"), "rb").read()),
              "upstream file bytes differ")
        status, _, _ = request(d, "/buildid/%s/debuginfo" % ("11" * 20))
        check(status == 404, "unknown through upstream: %d" % status)
    finally:
        d.stop()
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_upstream_down():
    """An upstream that refuses connections: 503 with a short Retry-After."""
    work = tempdir("dbgd-down-")
    d = daemon(work, "d", upstreams=["http://127.0.0.1:%d" % free_port()],
               extra=["--upstream-retries", "1", "--upstream-retry-backoff", "10ms"])
    try:
        status, h, _ = request(d, "/buildid/%s/debuginfo" % ("44" * 20))
        check(status == 503, "upstream down: %d" % status)
        check(h.get("retry-after", "").isdigit() and int(h["retry-after"]) <= 60,
              "Retry-After: %r" % h.get("retry-after"))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_concurrent():
    """Eight clients at once fetching one file get all its bytes."""
    import concurrent.futures
    work = tempdir("dbgd-conc-")
    dbg = os.path.join(work, "dbg")
    bid = put(dbg, fx("c_O2_dw5"))
    want = sha(open(fx("c_O2_dw5"), "rb").read())
    d = daemon(work, "d", debug_dirs=[dbg])
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            got = list(ex.map(lambda _: request(d, "/buildid/%s/debuginfo" % bid), range(32)))
        for status, _, body in got:
            check(status == 200 and sha(body) == want, "concurrent: %d" % status)
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_federation():
    work = tempdir("dbgd-fed-")
    dbg = os.path.join(work, "dbg-b")
    known = put(dbg, fx("c_O0_dw5"))
    pa, pb = free_port(), free_port()
    ua, ub = "http://127.0.0.1:%d" % pa, "http://127.0.0.1:%d" % pb
    a = daemon(work, "a", upstreams=[ub], extra=["--listen", "127.0.0.1:%d" % pa])
    b = daemon(work, "b", upstreams=[ua], debug_dirs=[dbg],
               extra=["--listen", "127.0.0.1:%d" % pb])
    try:
        t0 = time.monotonic()
        for d in (a, b):
            status, _, _ = request(d, "/buildid/%s/debuginfo" % ("22" * 20))
            check(status == 404, "unknown build ID: %d" % status)
        check(time.monotonic() - t0 < 10, "loop took %.1f s" % (time.monotonic() - t0))
        got = find(a, work, "debuginfo", known)
        check(sha(got) == sha(open(fx("c_O0_dw5"), "rb").read()), "federated bytes differ")
        status, _, _ = request(a, "/buildid/%s/debuginfo" % ("33" * 20),
                               headers={"X-Symbolizer-Hops": "5"})
        check(status == 404, "past the hop limit: %d" % status)
    finally:
        a.stop()
        b.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_dwz_route():
    """Issue 25, item 1: a dwz debug file (Debian's ld.gold, binutils-x86-64-
    linux-gnu-dbg) that enters through the debuginfod route first: its dwz
    file is found all the same (a Symbolize afterwards is OK, not "dwz
    supplementary file ...: not_found"), and /buildid/ALTID/debuginfo serves
    the .dwz file itself, as debuginfod clients ask for it."""
    work = tempdir("dbgd-dwz-")
    gold = "/usr/bin/x86_64-linux-gnu-ld.gold"
    bid = build_id(gold)
    debug = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    check(os.path.exists(debug), "%s missing (scripts/install-deps.sh)" % debug)
    link = dump_section(debug, ".gnu_debugaltlink", work)
    alt_path = link[:link.index(b"\0")].decode()
    alt_bid = link[link.index(b"\0") + 1:].hex()
    d = daemon(work, "d", debug_dirs=["/usr/lib/debug"])
    try:
        status, _, body = request(d, "/buildid/%s/debuginfo" % bid)
        check(status == 200 and sha(body) == sha(open(debug, "rb").read()),
              "main file: HTTP %d" % status)
        status, _, body = request(d, "/buildid/%s/debuginfo" % alt_bid)
        check(status == 200, "dwz file by its build ID: HTTP %d %r" % (status, body[:200]))
        check(sha(body) == sha(open(alt_path, "rb").read()), "dwz file: bytes differ")
        nm = subprocess.run(["nm", "--defined-only", debug], capture_output=True, text=True,
                            check=True).stdout
        addr = next(int(w[0], 16) for w in (l.split() for l in nm.splitlines())
                    if len(w) == 3 and w[1] in "tT" and int(w[0], 16)) + 1
        resp = d.symbolize([pb.mapping(bid)], [pb.location(0, addr)], max_wait_ms=120000)
        m = resp["mappings"][0]
        check(pb.STATUS[m["status"]] == "OK", "Symbolize after the route: %r" % m)
        check(pb.frames(resp, 0), "no frames at 0x%x" % addr)
    finally:
        d.stop()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("serve", case_serve), ("upstream", case_upstream),
                      ("upstream_down", case_upstream_down), ("concurrent", case_concurrent),
                      ("federation", case_federation),
                      ("dwz_route", case_dwz_route)], ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
