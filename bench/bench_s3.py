#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_s3: the figures of the shared S3 tier (issue 30), against a real S3
on loopback (Ceph RADOS Gateway with a memstore OSD, started from
tests/integration/s3_server_start.sh) and a debuginfod upstream on loopback.

  upload       a 100 MB debug file PUT to a daemon with the S3 tier (written,
               in multipart, and verified in S3 before the 201) and to one
               without: time to the answer, interleaved runs, median
  cold         50 build IDs (copies of libc6-dbg's libc debug file under other
               IDs) symbolized by replica A, which fetches them from the
               upstream, builds their indexes and writes both behind to S3;
               then a cold replica (empty disk) with the S3 tier symbolizes
               them (the indexes read from S3, not the files; no build), next to a cold
               replica without it (fetch from the upstream and build): time of
               the one Symbolize call, bytes from S3 and from the upstream,
               index builds

Prints figures; checks only that every answer is OK. The upstream is on
loopback: a real one across the Internet makes the "without S3" side slower.

Usage: bench_s3.py [--build build] [--runs 3] [--only upload|cold]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import pb  # noqa: E402
import s3_test  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import build_id, check, set_build_id, tempdir  # noqa: E402

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
N_IDS = 50


def libc_debug():
    bid = build_id(LIBC)
    p = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    check(os.path.exists(p), "no libc debug file (libc6-dbg): %s" % p)
    return p


def other_id(bid, n):
    return "%08x" % (0x51000000 + n) + bid[8:]


def daemon(work, name, extra, upstreams=()):
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), upstreams=upstreams,
                  extra=["--upload-token-file", s3_test.token_file(work)] + extra)


def bench_upload(work, flags):
    src = os.path.join(ARGS.fixtures, "c_O2_dw4")
    pad = os.path.join(work, "pad")
    with open(pad, "wb") as f:
        f.write(os.urandom(100 << 20))
    big = os.path.join(work, "big")
    subprocess.run(["objcopy", "--add-section", ".pad=" + pad, "--set-section-flags",
                    ".pad=noload,readonly", src, big], check=True)
    os.unlink(pad)
    size = os.path.getsize(big)
    bid = build_id(big)
    with_s3 = daemon(work, "up-s3", flags + ["--max-upload-bytes", "200M"])
    plain = daemon(work, "up-plain", ["--max-upload-bytes", "200M"])
    times = {"s3": [], "plain": []}
    try:
        n = 0
        for _ in range(ARGS.runs):
            for name, d in (("plain", plain), ("s3", with_s3)):
                n += 1
                copy = os.path.join(work, "copy")
                new = other_id(bid, 1000 + n)
                set_build_id(big, copy, new)
                body = open(copy, "rb").read()
                t0 = time.monotonic()
                st, _, text = s3_test.put(d.port, new, body)
                times[name].append(time.monotonic() - t0)
                check(st == 201, "upload %s: %d %r" % (name, st, text))
        parts = with_s3.metric('symbolizer_s3_bytes_total{direction="put"}')
    finally:
        with_s3.stop()
        plain.stop()
    print("\nupload of %.1f MB (PUT to the 201, median of %d, runs interleaved):"
          % (size / 1e6, ARGS.runs))
    print("  without S3: %6.2f s   (%s)" % (statistics.median(times["plain"]),
                                          " ".join("%.2f" % t for t in times["plain"])))
    print("  with S3:    %6.2f s   (%s; multipart, verified by a HEAD; %.0f MB written)"
          % (statistics.median(times["s3"]), " ".join("%.2f" % t for t in times["s3"]),
             parts / 1e6))


def symbolize_all(d, ids, addrs):
    maps = [pb.mapping(b) for b in ids]
    locs = [pb.location(i, a) for i in range(len(ids)) for a in addrs]
    t0 = time.monotonic()
    # The daemon caps a call's wait: on a loaded machine the same call is
    # made again while mappings are PENDING (the time is to the last answer).
    for _ in range(100):
        resp = d.symbolize(maps, locs, max_wait_ms=600000, conn=d.conn(timeout=900))
        if not any(pb.STATUS[m["status"]] == "PENDING" for m in resp["mappings"]):
            break
    dt = time.monotonic() - t0
    bad = [m for m in resp["mappings"] if pb.STATUS[m["status"]] != "OK"]
    check(not bad, "not OK: %r" % bad[:3])
    return dt


def figures(d, upstream_url):
    m = lambda k: d.metric(k) or 0  # noqa: E731
    return {
        "s3_bytes": m('symbolizer_s3_bytes_total{direction="get"}'),
        "up_bytes": m('symbolizer_upstream_bytes_total{server="%s"}' % upstream_url),
        "builds": m('symbolizer_index_builds_total{result="ok"}'),
        "s3_index": m("symbolizer_s3_index_hits_total"),
    }


def bench_cold(work, flags):
    dbg = libc_debug()
    bid = build_id(dbg)
    files = {}
    for n in range(N_IDS):
        p = os.path.join(work, "libc.%d" % n)
        set_build_id(dbg, p, other_id(bid, n))
        files[other_id(bid, n)] = open(p, "rb").read()
        os.unlink(p)
    ids = sorted(files)
    out = subprocess.run(["nm", "--defined-only", dbg], capture_output=True, text=True).stdout
    addrs = sorted(int(x.split()[0], 16) for x in out.splitlines()
                   if len(x.split()) == 3 and x.split()[1] in "Tt")[100:1100:100]
    up = s3_test.Upstream(files)
    try:
        a = daemon(work, "a", flags, [up.url])
        try:
            t_a = symbolize_all(a, ids, addrs)
            s3_test.wait_for("replica A's write-behind", s3_test.drained([a], 2 * N_IDS),
                             timeout=600)
        finally:
            a.stop()
        print("\n%d build IDs (libc debug file, %.1f MB each), %d addresses each, one"
              " Symbolize call:" % (N_IDS, len(files[ids[0]]) / 1e6, len(addrs)))
        print("  replica A (fetch + build + write-behind): %.2f s" % t_a)
        rows = {"s3": [], "plain": []}
        for r in range(ARGS.runs):
            for name, extra in (("plain", []), ("s3", flags)):
                d = daemon(work, "%s%d" % (name, r), extra, [up.url])
                try:
                    dt = symbolize_all(d, ids, addrs)
                    rows[name].append((dt, figures(d, up.url)))
                finally:
                    d.stop()
                shutil.rmtree(os.path.join(work, "%s%d-data" % (name, r)), ignore_errors=True)
        for name, label in (("plain", "cold, no S3 (upstream + build)"),
                            ("s3", "cold, with S3 (indexes)")):
            ts = [t for t, _ in rows[name]]
            f = rows[name][-1][1]
            print("  %-34s %6.2f s (%s)  S3 %6.1f MB  upstream %6.1f MB  builds %d"
                  "  indexes from S3 %d" % (label, statistics.median(ts),
                                            " ".join("%.2f" % t for t in ts),
                                            f["s3_bytes"] / 1e6, f["up_bytes"] / 1e6,
                                            f["builds"], f["s3_index"]))
    finally:
        up.stop()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=("upload", "cold"), help="one of the two benchmarks")
    ARGS = ap.parse_args()
    ARGS.symbolizerd = os.path.join(ARGS.build, "cmd/symbolizerd/symbolizerd")
    ARGS.fixtures = os.path.join(ARGS.build, "fixtures")
    s3_test.ARGS = argparse.Namespace(s3_scripts=os.path.join(HERE, "..", "tests",
                                                              "integration"))
    work = tempdir("bench-s3-")
    try:
        t0 = time.monotonic()
        s3_test.s3_start(os.path.join(work, "ceph"))
        print("radosgw (memstore) up in %.1f s at %s" % (time.monotonic() - t0,
                                                         s3_test.S3["S3_ENDPOINT"]))
        flags = s3_test.s3_flags(work, prefix="bench")
        if ARGS.only != "cold":
            bench_upload(work, flags)
        if ARGS.only != "upload":
            bench_cold(work, flags)
        load = open("/proc/loadavg").read().split()[:3]
        print("\nload average during the run: %s (2 cores, shared)" % " ".join(load))
    finally:
        s3_test.s3_stop_all()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
