#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""debuginfod_source_test: /buildid/ID/source/PATH (issue 13, item 1) from
package archives. A small program is compiled at test time with its sources
mapped to /usr/src/debug/hello-1.0 (as distributions build), split into a
stripped executable and its debug file, and packaged as Fedora does (a
-debuginfo rpm and a -debugsource rpm, rpmbuild) and as Arch does (one .deb
with the debug file and the sources, dpkg-deb), from a second build of other
sources with the same paths; a decoy package earlier in path order holds the
same paths with other bytes. symbolizerd, with --package-dir only, serves:

- to debuginfod-find and to libdebuginfod (ctypes: find_debuginfo,
  find_section, find_source), each source with the bytes of the build that names it
  (the package nearest the build ID's debug file), also when asked through
  "src/../include" as DWARF names it;
- HEAD with X-DEBUGINFOD-FILE, -ARCHIVE, -SIZE, Content-Length, Last-Modified
  (and the debug file's member and package for /debuginfo); X-DEBUGINFOD-MAXSIZE
  below the size gets 406;
- 404 for a file a package holds that the debug info does not name, a file
  the debug info names that no package holds, /etc/passwd, an unknown build
  ID; 400 for paths that climb above the root, NUL, overlong paths;
- gdb (set debuginfod enabled on) listing main of the stripped executable
  from the source it downloads through the daemon;
- without packages, the sources relayed from elfutils' debuginfod reading the
  rpms (-R) as upstream; 503 with Retry-After once that upstream is down.

Usage: debuginfod_source_test.py --symbolizerd BIN [CASE...]
"""
import argparse
import contextlib
import http.client
import os
import shutil
import subprocess
import sys
import time

import package_lib as pk
from daemon_lib import Daemon
from upstream_lib import build_id, check, free_port, run_cases, tempdir

ARGS = None
PREFIX = "/usr/src/debug/hello-1.0"

MAIN_C = """/* hello: main.c, %(marker)s */
#include <stdio.h>
#include "../include/util.h"
#include "../extra/unpackaged.h"

int main(int argc, char **argv)
{
	(void)argv;
	printf("%%d\\n", twice(argc) + unpackaged(argc)); /* %(marker)s */
	return 0;
}
"""

UTIL_H = """/* util.h, %(marker)s */
static inline int twice(int x)
{
	return x * 2;
}
"""

UNPACKAGED_H = """/* not in any package */
static inline int unpackaged(int x)
{
	return x + 1;
}
"""


def sources(root, marker):
    for rel, text in (("src/main.c", MAIN_C), ("include/util.h", UTIL_H),
                      ("extra/unpackaged.h", UNPACKAGED_H)):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text % {"marker": marker})


def build(work, name, marker, opt):
    """Compiles hello with its sources at /usr/src/debug/hello-1.0; returns
    (stripped executable, debug file, {path in DWARF: bytes})."""
    top = os.path.join(work, "build-" + name)
    root = os.path.join(top, "hello-1.0")
    sources(root, marker)
    exe = os.path.join(top, "hello")
    subprocess.run(["gcc", "-g", opt, "-fdebug-prefix-map=%s=/usr/src/debug" % top,
                    "-Wl,--build-id", "-o", exe, "src/main.c"],
                   cwd=root, check=True, capture_output=True)
    dbg = exe + ".debug"
    subprocess.run(["objcopy", "--only-keep-debug", exe, dbg], check=True)
    subprocess.run(["strip", "--strip-all", exe], check=True)
    subprocess.run(["objcopy", "--add-gnu-debuglink=" + dbg, exe], check=True)
    held = {rel: open(os.path.join(root, rel), "rb").read()
            for rel in ("src/main.c", "include/util.h")}
    return exe, dbg, held


def bid_link(bid):
    return "usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])


def request(d, path, method="GET", headers=None):
    return d.request(path, method, headers)


def find_source(d, work, bid, path):
    env = dict(os.environ, DEBUGINFOD_URLS=d.url,
               DEBUGINFOD_CACHE_PATH=os.path.join(work, "cache-%d" % time.monotonic_ns()))
    r = subprocess.run(["debuginfod-find", "source", bid, path], capture_output=True, text=True,
                       env=env, timeout=60)
    check(r.returncode == 0, "debuginfod-find source %s %s: %s" % (bid, path, r.stderr))
    return open(r.stdout.strip(), "rb").read()


def libdebuginfod_fetch(d, work, bid, what, arg=None):
    """The file through libdebuginfod itself (ctypes on libdebuginfod.so.1,
    as gdb, perf and drgn link it): debuginfod_find_debuginfo, _section or
    _source. Returns the bytes, or the negative errno."""
    import ctypes
    lib = ctypes.CDLL("libdebuginfod.so.1")
    lib.debuginfod_begin.restype = ctypes.c_void_p
    lib.debuginfod_end.argtypes = [ctypes.c_void_p]
    os.environ["DEBUGINFOD_URLS"] = d.url
    os.environ["DEBUGINFOD_CACHE_PATH"] = os.path.join(work, "lib-%d" % time.monotonic_ns())
    try:
        client = lib.debuginfod_begin()
        check(client, "debuginfod_begin failed")
        path = ctypes.c_char_p()
        fn = getattr(lib, "debuginfod_find_" + what)
        args = [ctypes.c_void_p(client), bid.encode(), 0]
        if arg is not None:
            args.append(arg.encode())
        fd = fn(*args, ctypes.byref(path))
        lib.debuginfod_end(ctypes.c_void_p(client))
    finally:
        del os.environ["DEBUGINFOD_URLS"]
        del os.environ["DEBUGINFOD_CACHE_PATH"]
    if fd < 0:
        return fd
    os.close(fd)
    return open(path.value.decode(), "rb").read()


def packages(work):
    """Builds the two programs and their packages; returns ({build ID:
    (exe, {path: bytes})}, the package dir)."""
    pkgs = os.path.join(work, "pkgs")
    fedora, arch, decoy = (os.path.join(pkgs, d) for d in ("fedora", "arch", "a-decoy"))
    for d in (fedora, arch, decoy):
        os.makedirs(d)
    exe1, dbg1, src1 = build(work, "fedora", "fedora build", "-O1")
    bid1 = build_id(dbg1)
    pk.rpm(work, "hello-debuginfo", {"usr/lib/debug/usr/bin/hello-1.0.debug": dbg1},
           {bid_link(bid1): "../../usr/bin/hello-1.0.debug"}, out_dir=fedora)
    staged = os.path.join(work, "staged-fedora")
    files = {}
    for rel, data in src1.items():
        p = os.path.join(staged, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").write(data)
        files[PREFIX[1:] + "/" + rel] = p
    secret = os.path.join(staged, "secret.txt")
    open(secret, "w").write("held by the package, named by no DWARF\n")
    files[PREFIX[1:] + "/secret.txt"] = secret
    pk.rpm(work, "hello-debugsource", files, payload="w19.zstdio", out_dir=fedora)
    # Arch-like: one .deb with the debug file and the sources of another build
    exe2, dbg2, src2 = build(work, "arch", "arch build", "-O0")
    bid2 = build_id(dbg2)
    check(bid1 != bid2, "the two builds have one build ID")
    files = {"usr/lib/debug/usr/bin/hello.debug": dbg2}
    for rel, data in src2.items():
        p = os.path.join(work, "staged-arch", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").write(data)
        files[PREFIX[1:] + "/" + rel] = p
    pk.dpkg_deb(work, "hello-debug", files, {bid_link(bid2): "../../usr/bin/hello.debug"},
                out_dir=arch)
    # the decoy: same paths, other bytes, first in path order
    files = {}
    for rel in src1:
        p = os.path.join(work, "staged-decoy", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write("decoy\n")
        files[PREFIX[1:] + "/" + rel] = p
    pk.dpkg_deb(work, "decoy-src", files, out_dir=decoy)
    return {bid1: (exe1, src1, dbg1), bid2: (exe2, src2, dbg2)}, pkgs


@contextlib.contextmanager
def daemon(work, pkgs):
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "daemon.log"),
               extra=["--package-dir=" + pkgs, "--log-level=info"])
    try:
        deadline = time.monotonic() + 120
        while (d.metric("symbolizer_package_scans_total") or 0) < 4:
            check(time.monotonic() < deadline, "packages not scanned:\n" + d.log_text()[-3000:])
            time.sleep(0.1)
        yield d
    finally:
        d.stop()


def case_serve():
    work = tempdir("dsrc-")
    builds, pkgs = packages(work)
    with daemon(work, pkgs) as d:
        for bid, (exe, held, _) in builds.items():
            for rel, data in held.items():
                got = find_source(d, work, bid, PREFIX + "/" + rel)
                check(got == data, "%s %s: %d bytes, not the build's own %d:\n%s" % (
                    bid, rel, len(got), len(data), got[:200]))
            # as the DWARF line table names it: relative to src/
            got = find_source(d, work, bid, PREFIX + "/src/../include/util.h")
            check(got == held["include/util.h"], "%s: util.h through src/..: %r" % (
                bid, got[:80]))
        bid1 = next(iter(builds))
        path = "/buildid/%s/source%s/src/main.c" % (bid1, PREFIX)
        status, h, body = request(d, path, "HEAD")
        check(status == 200 and body == b"", "HEAD: %d %r" % (status, body[:40]))
        size = len(builds[bid1][1]["src/main.c"])
        check(h.get("content-length") == str(size) and
              h.get("x-debuginfod-size") == str(size), "HEAD sizes: %r" % h)
        check(h.get("x-debuginfod-file") == PREFIX + "/src/main.c", "FILE: %r" % h)
        check(h.get("x-debuginfod-archive", "").endswith("/fedora/hello-debugsource.rpm"),
              "ARCHIVE: %r" % h)
        check("last-modified" in h, "no Last-Modified: %r" % h)
        # libdebuginfod itself: debuginfo, a section, a source, a refusal
        dbg = libdebuginfod_fetch(d, work, bid1, "debuginfo")
        check(dbg == open(builds[bid1][2], "rb").read(), "libdebuginfod debuginfo differs")
        line = libdebuginfod_fetch(d, work, bid1, "section", ".debug_line")
        check(isinstance(line, bytes) and len(line) > 0 and line in dbg,
              "libdebuginfod .debug_line: %r" % (line if isinstance(line, int) else len(line)))
        src = libdebuginfod_fetch(d, work, bid1, "source", PREFIX + "/src/main.c")
        check(src == builds[bid1][1]["src/main.c"], "libdebuginfod source: %r" % src)
        rc = libdebuginfod_fetch(d, work, bid1, "source", PREFIX + "/secret.txt")
        check(rc == -2, "libdebuginfod secret.txt: %r (want -ENOENT)" % rc)
        # the debug file came from a package too: its member and the package
        status, h, _ = request(d, "/buildid/%s/debuginfo" % bid1, "HEAD")
        check(status == 200 and
              h.get("x-debuginfod-archive", "").endswith("/fedora/hello-debuginfo.rpm") and
              h.get("x-debuginfod-file") == "/usr/lib/debug/usr/bin/hello-1.0.debug",
              "debuginfo from a package: %d %r" % (status, h))
        status, _, _ = request(d, path, headers={"X-DEBUGINFOD-MAXSIZE": "10"})
        check(status == 406, "MAXSIZE 10: %d" % status)
        status, _, body = request(d, path.replace("/src/main.c", "/src/%6dain.c"))
        check(status == 200 and b"fedora build" in body, "percent-encoded: %d" % status)
        m = d.metric('symbolizer_debuginfod_requests_total{kind="source",code="200"}')
        check(m and m >= 5, "source 200 counted %r" % m)


def case_refused():
    work = tempdir("dsrc-")
    builds, pkgs = packages(work)
    bid1 = next(iter(builds))
    with daemon(work, pkgs) as d:
        not_found = [
            "%s/secret.txt" % PREFIX,               # in a package, named by no DWARF
            "%s/extra/unpackaged.h" % PREFIX,       # named by the DWARF, in no package
            "/etc/passwd", PREFIX, "%s/src" % PREFIX, "%s/src/main" % PREFIX,
        ]
        for p in not_found:
            status, _, body = request(d, "/buildid/%s/source%s" % (bid1, p))
            check(status == 404, "%s: %d %r" % (p, status, body[:100]))
        status, _, body = request(d, "/buildid/%s/source%s/src/main.c" % ("00" * 20, PREFIX))
        check(status == 404, "unknown build ID: %d %r" % (status, body[:100]))
        bad = [
            "/source/..%2f..%2fetc%2fpasswd", "/source/%2e%2e/%2e%2e/etc/passwd",
            "/source/usr/../../etc/passwd", "/source/usr/src/a%00b.c", "/source/",
            "/source/usr/src/a%0d%0aX-Injected:%201.c", "/source/usr/src/a%1b.c",
            "/source",
        ]
        for p in bad:
            status, _, _ = request(d, "/buildid/%s%s" % (bid1, p))
            check(status == 400, "%s: %d" % (p[:60], status))
        status, _, _ = request(d, "/buildid/%s/source/%s" % (bid1, "a/" * 2100 + "x.c"))
        check(status in (400, 413, 414), "overlong path: %d" % status)
        status, _, body = request(d, "/buildid/%s/source%s/src/main.c" % (bid1, PREFIX))
        check(status == 200 and b"fedora build" in body, "after the refusals: %d" % status)


def case_gdb():
    work = tempdir("dsrc-")
    builds, pkgs = packages(work)
    bid1 = next(iter(builds))
    exe = builds[bid1][0]
    alone = os.path.join(work, "alone")
    os.makedirs(alone)
    shutil.copy(exe, alone)
    with daemon(work, pkgs) as d:
        env = dict(os.environ, DEBUGINFOD_URLS=d.url, HOME=work,
                   DEBUGINFOD_CACHE_PATH=os.path.join(work, "gdb-cache"))
        r = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled on",
                            "-ex", "list main", os.path.join(alone, "hello")],
                           capture_output=True, text=True, env=env, timeout=120)
        out = r.stdout + r.stderr
        if "debuginfod" in out and "Undefined set command" in out:
            print("skip gdb: this gdb has no debuginfod support", flush=True)
            return
        check("fedora build" in out and "int main(int argc" in out,
              "gdb listed no source through the daemon:\n" + out)


def elfutils_rpm_server(work, rpm_dir, bid, path):
    """elfutils' debuginfod scanning rpm_dir's rpms (-R), once it serves path."""
    port = free_port()
    log = open(os.path.join(work, "elfutils.log"), "w")
    proc = subprocess.Popen(["debuginfod", "-R", "-p", str(port), "-d",
                             os.path.join(work, "elfutils.sqlite"), "-t", "0", "-g", "0",
                             rpm_dir], stdout=log, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d" % port
    deadline = time.monotonic() + 120
    while True:
        check(proc.poll() is None, "elfutils debuginfod exited")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/buildid/%s/source%s" % (bid, path))
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                return proc, url
        except OSError:
            pass
        check(time.monotonic() < deadline, "elfutils debuginfod never served %s" % path)
        time.sleep(0.2)


def case_upstream():
    """No package dir here: the source comes from an elfutils debuginfod that
    reads the rpms (-R), through the daemon (debug file fetched and indexed,
    the file table checked, the source relayed, not stored)."""
    work = tempdir("dsrc-")
    builds, pkgs = packages(work)
    bid1 = next(iter(builds))
    held = builds[bid1][1]
    proc, url = elfutils_rpm_server(work, os.path.join(pkgs, "fedora"), bid1,
                                    PREFIX + "/src/main.c")
    try:
        d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
                   upstreams=[url], extra=["--log-level=info"])
        try:
            for rel in ("src/main.c", "include/util.h"):
                got = find_source(d, work, bid1, PREFIX + "/" + rel)
                check(got == held[rel], "%s through the daemon: %r" % (rel, got[:80]))
            status, h, body = request(d, "/buildid/%s/source%s/src/main.c" % (bid1, PREFIX),
                                      "HEAD")
            check(status == 200 and body == b"" and
                  h.get("content-length") == str(len(held["src/main.c"])), "HEAD %d %r" % (
                      status, h))
            # refused here, never asked upstream: not named by the debug info
            status, _, _ = request(d, "/buildid/%s/source%s/secret.txt" % (bid1, PREFIX))
            check(status == 404, "secret.txt relayed: %d" % status)
            # named, but the upstream has no such file: its 404
            status, _, _ = request(d, "/buildid/%s/source%s/extra/unpackaged.h" % (bid1, PREFIX))
            check(status == 404, "unpackaged.h: %d" % status)
        finally:
            d.stop()
        # the upstream gone: 503 with Retry-After, not a 404 (the index is cached)
        proc.terminate()
        proc.wait(10)
        d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d2.log"),
                   upstreams=[url])
        try:
            status, h, _ = request(d, "/buildid/%s/source%s/src/main.c" % (bid1, PREFIX))
            check(status == 503 and "retry-after" in h, "upstream down: %d %r" % (status, h))
        finally:
            d.stop()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("serve", case_serve), ("refused", case_refused), ("gdb", case_gdb),
                      ("upstream", case_upstream)], ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
