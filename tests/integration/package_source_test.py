#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""package_source_test: distribution packages as a debuginfo source (issue 12,
items 1, 2 and 5). Packages are built at test time holding the fixtures' debug
files: .deb by dpkg-deb (xz single block, zstd, gzip) and by hand with a
multi-threaded xz (several blocks), .rpm by rpmbuild (xz and zstd payloads).
symbolizerd, with --package-dir and no other source, serves each file's exact
bytes on /buildid/ID/debuginfo, symbolizes addresses as symbolctl addr2line
does on the file itself (a dwz file's supplementary file from a package too),
follows packages added, replaced and removed while it runs, and reports each
hostile package (truncated, lying sizes, a 1 TB member, an xz index outside the
file, `..` paths, a zip bomb) in the log and in
symbolizer_package_errors_total{reason} while the others keep working.
`symbolctl fetch --package-dir` stores a file from a package.

Usage: package_source_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]
"""
import argparse
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import package_lib as pk
import pb
from daemon_lib import Daemon, llvm_lines
from upstream_lib import build_id, check, run_cases, tempdir

ARGS = None


def fx(name):
    return os.path.join(ARGS.fixtures, name)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def bid_path(bid, debug=True):
    return "usr/lib/debug/.build-id/%s/%s%s" % (bid[:2], bid[2:], ".debug" if debug else "")


def get(d, path):
    c = d.conn()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def wait_metric(d, name, cond, what, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        v = d.metric(name)
        if v is not None and cond(v):
            return v
        check(time.monotonic() < deadline, "%s: %s is %r\n%s" % (what, name, v, d.log_text()[-3000:]))
        time.sleep(0.1)


def func_addrs(path, n=12):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    addrs = sorted({int(w[0], 16) for w in (l.split() for l in out.splitlines())
                    if len(w) == 3 and w[1] in "tT" and int(w[0], 16)})
    step = max(1, len(addrs) // n)
    return [a + 1 for a in addrs[::step][:n]]


def addr2line(path, addrs):
    out = subprocess.run([ARGS.symbolctl, "addr2line", "-e", path] + ["%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout
    return [b + "\n" for b in out.split("\n\n")[:len(addrs)]]


def same_answers(d, path, bid, label):
    addrs = func_addrs(path)
    check(addrs, "%s: no function symbols" % label)
    resp = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs], max_wait_ms=30000)
    st = pb.STATUS[resp["mappings"][0]["status"]]
    check(st == "OK", "%s: mapping %s %r" % (label, st, resp["mappings"][0]))
    ours = [llvm_lines(pb.frames(resp, i)) for i in range(len(addrs))]
    ref = addr2line(path, addrs)
    diff = [i for i in range(len(addrs)) if ours[i] != ref[i]]
    check(not diff, "%s: %d answers differ, first at 0x%x:\n%s---\n%s" % (
        label, len(diff), addrs[diff[0]] if diff else 0, ours[diff[0]] if diff else "",
        ref[diff[0]] if diff else ""))


def daemon(work, name, dirs, extra=()):
    flags = ["--package-dir=" + d for d in dirs] + ["--negative-cache-ttl=1s", "--log-level=info"]
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), extra=flags + list(extra))


def build_set(work, out):
    """The good packages: {build ID: fixture path} they hold, in out."""
    held = {}
    # hand-made .deb, multi-block xz: files named by their path only (probed),
    # a dwz pair, a module-like file under lib/modules
    stripped = build_id(fx("c_stripped.debug"))
    dwz_a, dwz_common = build_id(fx("dwz_a")), build_id(fx("dwz_common.debug"))
    module = build_id(fx("c_O2_dw5"))
    files = {bid_path(stripped): fx("c_stripped.debug"),
             "usr/lib/debug/usr/bin/dwz_a.debug": fx("dwz_a"),
             "usr/lib/debug/.dwz/x86_64-linux-gnu/dwz.debug": fx("dwz_common.debug"),
             "usr/lib/debug/lib/modules/6.1.0-test/kernel/fake.ko": fx("c_O2_dw5")}
    links = {bid_path(dwz_a): "../../usr/bin/dwz_a.debug"}
    entries = pk.tree_entries(files, links)
    entries.insert(1, ("./usr/share/doc/pad.bin", os.urandom(400 << 10), None))
    tar = pk.tar_bytes(entries)
    data = pk.xz_multi(tar)
    check(pk.xz_blocks(data) >= 4, "multi-block xz has %d blocks" % pk.xz_blocks(data))
    pk.ar_deb(os.path.join(out, "multi.deb"), "data.tar.xz", data)
    held.update({stripped: fx("c_stripped.debug"), dwz_a: fx("dwz_a"),
                 dwz_common: fx("dwz_common.debug"), module: fx("c_O2_dw5")})
    # dpkg-deb: single-block xz, zstd, gzip; .build-id links to the files
    for comp, fixture in (("xz", "cxx_O2"), ("zstd", "c_O2_dw4"), ("gzip", "c_O0_dw5")):
        bid = build_id(fx(fixture))
        f = {"usr/lib/debug/usr/bin/%s.debug" % fixture: fx(fixture)}
        deb = pk.dpkg_deb(work, "dbg-" + comp, f,
                          {bid_path(bid): "../../usr/bin/%s.debug" % fixture}, comp=comp,
                          out_dir=out)
        if comp == "zstd":  # Ubuntu's debug packages: .ddeb, zstd
            os.rename(deb, deb[:-4] + ".ddeb")
        held[bid] = fx(fixture)
    # rpmbuild: xz and zstd payloads (Fedora's -debuginfo layout)
    for payload, fixture in (("w6.xzdio", "layout_c_dw5"), ("w19.zstdio", "cxx_O2_dw4")):
        bid = build_id(fx(fixture))
        f = {"usr/lib/debug/usr/bin/%s-1.0.debug" % fixture: fx(fixture)}
        pk.rpm(work, "%s-debuginfo" % fixture.replace("_", "-"), f,
               {bid_path(bid): "../../usr/bin/%s-1.0.debug" % fixture}, payload=payload,
               out_dir=out)
        held[bid] = fx(fixture)
    return held


def case_serve():
    work = tempdir("pkg-serve-")
    out = os.path.join(work, "pool")
    os.makedirs(os.path.join(out, "sub"))
    held = build_set(work, out)
    d = daemon(work, "d", [out])
    try:
        wait_metric(d, "symbolizer_package_members", lambda v: v >= len(held), "catalogue")
        check(d.metric('symbolizer_packages{state="ok"}') == 6, "6 packages ok")
        for bid, path in held.items():
            status, body = get(d, "/buildid/%s/debuginfo" % bid)
            check(status == 200, "%s (%s): HTTP %d" % (bid, path, status))
            check(sha(body) == sha(open(path, "rb").read()), "%s: bytes differ" % path)
        for bid, path in held.items():
            if not path.endswith("dwz_common.debug"):
                same_answers(d, path, bid, os.path.basename(path))
        check(d.metric('symbolizer_package_extractions_total{result="ok"}') >= len(held),
              "extractions counted")
    finally:
        d.stop()


def case_changes():
    """A package added, replaced and removed while the daemon runs."""
    work = tempdir("pkg-changes-")
    pool = os.path.join(work, "pool")
    os.makedirs(pool)
    a, b = build_id(fx("c_O2_dw5")), build_id(fx("cxx_O2"))
    d = daemon(work, "d", [pool], extra=["--package-rescan=1h"])  # inotify only
    try:
        wait_metric(d, "symbolizer_package_scans_total", lambda v: True, "first pass")
        time.sleep(0.3)
        # added: written elsewhere, renamed in
        tmp = pk.dpkg_deb(work, "one", {bid_path(a): fx("c_O2_dw5")}, comp="xz")
        os.rename(tmp, os.path.join(pool, "one.deb"))
        wait_metric(d, "symbolizer_package_members", lambda v: v == 1, "added")
        status, body = get(d, "/buildid/%s/debuginfo" % a)
        check(status == 200 and body == open(fx("c_O2_dw5"), "rb").read(), "added: %d" % status)
        # replaced: same name, other contents
        tmp = pk.dpkg_deb(work, "one", {bid_path(b): fx("cxx_O2")}, comp="zstd")
        os.rename(tmp, os.path.join(pool, "one.deb"))
        wait_metric(d, "symbolizer_package_scans_total", lambda v: v >= 2, "replaced")
        wait_metric(d, "symbolizer_package_members", lambda v: v == 1, "replaced")
        status, _ = get(d, "/buildid/%s/debuginfo" % b)
        check(status == 200, "replaced: new member %d" % status)
        # removed: its entries go
        os.unlink(os.path.join(pool, "one.deb"))
        wait_metric(d, "symbolizer_package_members", lambda v: v == 0, "removed")
        check(d.metric('symbolizer_packages{state="ok"}') == 0, "removed: no package left")
        c = build_id(fx("c_O2_dw4"))
        status, _ = get(d, "/buildid/%s/debuginfo" % c)
        check(status == 404, "never held: %d" % status)
    finally:
        d.stop()


def mapping_status(d, bid, wait_ms=20000):
    resp = d.symbolize([pb.mapping(bid)], [pb.location(0, 0x1000)], max_wait_ms=wait_ms)
    m = resp["mappings"][0]
    return pb.STATUS[m["status"]], m.get("error", "")


def settled_status(d, bid, timeout=60):
    """The first answer that is not PENDING (a scan under way), within timeout."""
    deadline = time.monotonic() + timeout
    while True:
        st, why = mapping_status(d, bid)
        if st != "PENDING":
            return st, why
        check(time.monotonic() < deadline, "PENDING for %d s: %s" % (timeout, why))
        time.sleep(0.2)


def case_negatives():
    """Issue 25, item 2: a build ID asked for before the catalogue holds it is
    not NOT_FOUND for good. A package added later clears the negative answer
    remembered in memory and in the store (with the 10-minute default TTL);
    a package changed since its scan (replaced behind a link, where inotify
    does not see it) answers PENDING, never NOT_FOUND, until its rescan."""
    work = tempdir("pkg-negatives-")
    pool, outside = os.path.join(work, "pool"), os.path.join(work, "outside")
    os.makedirs(pool)
    os.makedirs(outside)
    a, b = build_id(fx("c_O2_dw5")), build_id(fx("cxx_O2"))
    ttl = ["--negative-cache-ttl=10m", "--package-rescan=1h"]
    d = daemon(work, "d", [pool], extra=ttl)
    try:
        st, why = settled_status(d, a)
        check(st == "NOT_FOUND", "before the package: %s %s" % (st, why))
        status, _ = get(d, "/buildid/%s/debuginfo" % a)
        check(status == 404, "before the package: HTTP %d" % status)
        tmp = pk.dpkg_deb(work, "one", {bid_path(a): fx("c_O2_dw5")}, comp="xz")
        os.rename(tmp, os.path.join(pool, "one.deb"))
        wait_metric(d, "symbolizer_package_members", lambda v: v == 1, "added")
        st, why = settled_status(d, a)
        check(st == "OK", "after the package was added: %s %s (negative kept)" % (st, why))
        status, _ = get(d, "/buildid/%s/debuginfo" % a)
        check(status == 200, "after the package was added: HTTP %d" % status)
        # A package that is a link to a file outside the watched dirs: replaced
        # there, the catalogue is stale until a rescan; meanwhile PENDING.
        linked = pk.dpkg_deb(work, "two", {bid_path(b): fx("cxx_O2")}, comp="zstd",
                             out_dir=outside)
        os.symlink(linked, os.path.join(pool, "two.deb"))
        wait_metric(d, "symbolizer_package_members", lambda v: v == 2, "linked added")
        pk.dpkg_deb(work, "two", {bid_path(b): fx("cxx_O2"), "usr/share/doc/x": fx("c_O2_dw5")},
                    comp="xz", out_dir=outside)
        for _ in range(3):
            st, why = mapping_status(d, b, wait_ms=2000)
            check(st == "PENDING" and "scan" in why,
                  "changed since its scan: %s %r (want PENDING)" % (st, why))
            time.sleep(1.1)  # past the PENDING answer's memory
        check(d.metric('symbolizer_fetches_total{outcome="pending"}') >= 1, "pending counted")
        scans = d.metric("symbolizer_package_scans_total")
        open(os.path.join(pool, "nudge"), "w").close()  # inotify: a pass now
        wait_metric(d, "symbolizer_package_scans_total", lambda v: v > scans, "rescan")
        st, why = settled_status(d, b)
        check(st == "OK", "after its rescan: %s %s" % (st, why))
    finally:
        d.stop()
    # Nothing negative survives in the store: a restart still finds both.
    d = daemon(work, "d", [pool], extra=ttl)
    try:
        for bid in (a, b):
            st, why = settled_status(d, bid)
            check(st == "OK", "after a restart: %s %s" % (st, why))
    finally:
        d.stop()


def case_hostile():
    work = tempdir("pkg-hostile-")
    good, bad = os.path.join(work, "good"), os.path.join(work, "bad")
    os.makedirs(good)
    os.makedirs(bad)
    ok = build_id(fx("c_O2_dw5"))
    deb = pk.dpkg_deb(work, "ok", {bid_path(ok): fx("c_O2_dw5")}, comp="xz", out_dir=good)
    entries = pk.tree_entries({bid_path(ok): fx("c_O2_dw5")})
    entries.insert(0, ("./usr/share/doc/pad.bin", os.urandom(300 << 10), None))
    multi = pk.ar_deb(os.path.join(work, "multi.deb"), "data.tar.xz",
                      pk.xz_multi(pk.tar_bytes(entries)))
    pk.truncated(deb, os.path.join(bad, "truncated.deb"))
    pk.truncated(multi, os.path.join(bad, "truncated-multi.deb"))
    pk.lying_ar_size(deb, os.path.join(bad, "lying.deb"))
    pk.cut_payload(os.path.join(bad, "cut-payload.deb"), fx("c_O0_dw5"))
    pk.huge_member(os.path.join(bad, "terabyte.deb"))
    pk.bad_xz_index(multi, os.path.join(bad, "xzindex.deb"))
    pk.dotdot(os.path.join(bad, "dotdot.deb"), fx("c_O0_dw5"))
    pk.zip_bomb(os.path.join(bad, "bomb.deb"))
    open(os.path.join(bad, "garbage.rpm"), "wb").write(b"\xed\xab\xee\xdb" + os.urandom(4000))
    d = daemon(work, "d", [bad, good])
    try:
        wait_metric(d, 'symbolizer_packages{state="failed"}', lambda v: v == 9, "9 failed")
        check(d.metric('symbolizer_packages{state="ok"}') == 1, "the good one is ok")
        status, body = get(d, "/buildid/%s/debuginfo" % ok)
        check(status == 200 and body == open(fx("c_O2_dw5"), "rb").read(), "good package: %d" % status)
        reasons = {r: d.metric('symbolizer_package_errors_total{reason="%s"}' % r)
                   for r in ("truncated", "bad_container", "bad_xz_index", "too_large", "bad_path")}
        check(reasons["bad_path"] == 1, "bad_path: %r" % reasons)
        check(reasons["bad_xz_index"] >= 1, "bad_xz_index: %r" % reasons)
        check(reasons["too_large"] >= 2, "too_large (1 TB member, zip bomb): %r" % reasons)
        check(reasons["truncated"] >= 4, "truncated (cut, lying size): %r" % reasons)
        log = d.log_text()
        for name in ("truncated.deb", "cut-payload.deb", "lying.deb", "terabyte.deb", "xzindex.deb", "dotdot.deb",
                     "bomb.deb", "garbage.rpm"):
            check(re.search(r'msg="package scan failed" package=\S*%s reason=\w+' % re.escape(name),
                            log), "no log line for %s" % name)
    finally:
        d.stop()


def case_symbolctl_fetch():
    work = tempdir("pkg-fetch-")
    pool = os.path.join(work, "pool")
    os.makedirs(pool)
    bid = build_id(fx("cxx_O2"))
    pk.rpm(work, "cxx-debuginfo", {bid_path(bid): fx("cxx_O2")}, payload="w19.zstdio", out_dir=pool)
    data = os.path.join(work, "data")
    r = subprocess.run([ARGS.symbolctl, "fetch", "--data-dir", data, "--debug-dir=",
                        "--debuginfod-upstream-servers=", "--package-dir", pool, bid],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "symbolctl fetch: %s %s" % (r.stdout, r.stderr))
    check(pool in r.stdout + r.stderr, "source not named: %s" % r.stdout)


def xz_block_list(data):
    """(compressed offset, uncompressed offset, compressed size, uncompressed
    size) of each block of an xz stream."""
    path = os.path.join(tempfile.mkdtemp(prefix="xzl-"), "d.xz")
    with open(path, "wb") as f:
        f.write(data)
    out = subprocess.run(["xz", "--robot", "-lvv", path], capture_output=True, text=True,
                         check=True).stdout
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    return [tuple(int(w[i]) for i in (4, 5, 6, 7))
            for w in (l.split("\t") for l in out.splitlines()) if w[0] == "block"]


def case_corrupt_block():
    """Issue 25, item 11: one corrupt xz block of a .deb loses only the
    members that overlap it. dpkg-deb makes the package's tar; its xz is
    remade with 64K blocks (dpkg-deb cannot choose xz's block size, so the
    .deb is assembled with ar as the other multi-block fixtures are), and
    one byte in a block lying inside one member's bytes is flipped. That
    member is NOT_FOUND (not a wrong file), every other member is found by
    build ID and served byte-identical, and the daemon's log says why."""
    work = tempdir("pkg-corrupt-")
    out = os.path.join(work, "pool")
    os.makedirs(out)
    fixtures = ["cxx_O2", "c_O2_dw5", "cxx_O0", "c_O2_dw4", "cxx_icf", "c_stripped.debug"]
    by_bid = {build_id(fx(f)): fx(f) for f in fixtures}
    check(len(by_bid) == len(fixtures), "fixtures share build IDs")
    files = {bid_path(b): p for b, p in by_bid.items()}
    deb = pk.dpkg_deb(work, "src", files, comp="none")
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True,
                         check=True).stdout
    data = pk.xz_multi(tar, block_size=64 << 10)
    path = pk.ar_deb(os.path.join(out, "damaged.deb"), "data.tar.xz", data)
    target = build_id(fx("cxx_O2"))
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        m = [i for i in t.getmembers() if i.name.endswith(bid_path(target))][0]
        lo, hi = m.offset_data, m.offset_data + m.size
    blocks = xz_block_list(data)
    inside = [b for b in blocks if b[1] >= lo and b[1] + b[3] <= hi]
    check(len(blocks) >= 8 and inside, "%d blocks, %d inside the target" % (len(blocks), len(inside)))
    raw = bytearray(open(path, "rb").read())
    at = raw.find(data) + inside[0][0] + inside[0][2] // 2
    raw[at] ^= 0x55
    open(path, "wb").write(bytes(raw))
    d = daemon(work, "d", [out])
    try:
        wait_metric(d, "symbolizer_package_members", lambda v: v >= len(by_bid) - 1, "catalogue")
        for bid, p in by_bid.items():
            status, body = get(d, "/buildid/%s/debuginfo" % bid)
            if bid == target:
                check(status == 404, "the member in the bad block: HTTP %d" % status)
                continue
            check(status == 200, "%s: HTTP %d" % (os.path.basename(p), status))
            check(sha(body) == sha(open(p, "rb").read()), "%s: bytes differ" % p)
        log = d.log_text()
        print("\n".join(l for l in log.splitlines() if "damaged" in l or "member lost" in l))
        check(re.search(r'msg="package damaged".*xz block %d ' % (blocks.index(inside[0])), log),
              "no 'package damaged' line naming the block:\n" + log[-3000:])
        check(bid_path(target) in log, "the lost member is not named:\n" + log[-3000:])
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    cases = [("serve", case_serve), ("changes", case_changes), ("hostile", case_hostile),
             ("negatives", case_negatives), ("corrupt_block", case_corrupt_block),
             ("symbolctl_fetch", case_symbolctl_fetch)]
    return run_cases(cases, ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
