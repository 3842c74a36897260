#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""integrity_test: the reliability sweep's integrity run, bounded (issue 25).

One daemon is killed with SIGKILL ten times, at random moments, while it
scans package archives, takes uploads and answers Symbolize calls; a
reference daemon with the same packages and uploads is never killed. Then:

  - every upload the killed daemon acknowledged (201/200) is served byte for
    byte;
  - the uploads it never acknowledged are made again (200 or 201);
  - for every build ID (packages and uploads), /buildid/ID/debuginfo and the
    Symbolize answers for a fixed set of addresses equal the reference's at
    once: no answer waits for a negative TTL (a NOT_FOUND remembered during a
    scan, an index of a replaced file, a half-stored file would show here).

Usage: integrity_test.py --symbolizerd BIN --fixtures DIR [--rounds N] [--seed S]
"""
import argparse
import hashlib
import http.client
import os
import random
import signal
import subprocess
import sys
import threading
import time

import package_lib as pk
import pb
from daemon_lib import Daemon
from upstream_lib import build_id, check, tempdir

ARGS = None
TOKEN = "integrity-token-0123456789abcdef"
PACKAGED = ("c_O2_dw5", "cxx_O2", "c_O2_dw4")
UPLOADED = ("c_O0_dw5", "cxx_O2_dw4", "layout_c_dw5", "c_stripped.debug")


def fx(name):
    return os.path.join(ARGS.fixtures, name)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def func_addrs(path, n=8):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    addrs = sorted({int(w[0], 16) for w in (l.split() for l in out.splitlines())
                    if len(w) == 3 and w[1] in "tT" and int(w[0], 16)})
    step = max(1, len(addrs) // n)
    return [a + 1 for a in addrs[::step][:n]]


def put(port, bid, body, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("PUT", "/buildid/%s/debuginfo" % bid, body, {"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def get(d, path):
    c = d.conn()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def daemon(work, name, pool, token_file):
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"),
                  extra=["--package-dir", pool, "--upload-token-file", token_file])


def answers(d, bid, addrs):
    """(mapping status, frames per address) once the answer is final."""
    deadline = time.monotonic() + 60
    while True:
        resp = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs],
                           max_wait_ms=20000)
        st = pb.STATUS[resp["mappings"][0]["status"]]
        if st != "PENDING":
            return st, [pb.frames(resp, i) for i in range(len(addrs))]
        check(time.monotonic() < deadline, "%s: PENDING for a minute" % bid)
        time.sleep(0.2)


def load(d, ids, uploads, acked, stop, rnd):
    """Uploads and Symbolize calls until stop is set (the daemon may die)."""
    while not stop.is_set():
        try:
            if uploads and rnd.random() < 0.4:
                bid, path = rnd.choice(uploads)
                if put(d.port, bid, read(path)) in (200, 201):
                    acked.add(bid)
            else:
                bid = rnd.choice(ids)
                d.symbolize([pb.mapping(bid)], [pb.location(0, 0x1000)], max_wait_ms=50)
        except (OSError, http.client.HTTPException, Exception):  # killed under us
            if d.proc.poll() is not None:
                return


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=25)
    ARGS = ap.parse_args()
    rnd = random.Random(ARGS.seed)
    work = tempdir("integrity-")
    pool = os.path.join(work, "pool")
    os.makedirs(pool)
    token_file = os.path.join(work, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    packaged = {build_id(fx(n)): fx(n) for n in PACKAGED}
    for i, (bid, path) in enumerate(packaged.items()):
        rel = "usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
        # big padding: the scan takes a while, so kills land inside it too
        pad = os.path.join(work, "pad%d" % i)
        with open(pad, "wb") as f:
            f.write(os.urandom(6 << 20))
        pk.dpkg_deb(work, "pkg%d" % i, {"usr/share/doc/pad.bin": pad, rel: path},
                    comp="xz", out_dir=pool)
    uploads = [(build_id(fx(n)), fx(n)) for n in UPLOADED]
    ids = list(packaged) + [b for b, _ in uploads]
    addrs = {bid: func_addrs(path) for bid, path in list(packaged.items()) + uploads}

    ref = daemon(work, "ref", pool, token_file)
    try:
        for bid, path in uploads:
            check(put(ref.port, bid, read(path)) == 201, "reference upload of %s" % path)
        want = {}
        for bid in ids:
            st, body = get(ref, "/buildid/%s/debuginfo" % bid)
            deadline = time.monotonic() + 60
            while st != 200 and time.monotonic() < deadline:  # its first scan
                time.sleep(0.2)
                st, body = get(ref, "/buildid/%s/debuginfo" % bid)
            check(st == 200, "reference: %s HTTP %d" % (bid, st))
            want[bid] = (hashlib.sha256(body).hexdigest(), answers(ref, bid, addrs[bid]))
    finally:
        ref.stop()

    acked = set()
    for k in range(ARGS.rounds):
        d = daemon(work, "d", pool, token_file)
        stop = threading.Event()
        t = threading.Thread(target=load, args=(d, ids, uploads, acked, stop,
                                                random.Random(rnd.random())))
        t.start()
        time.sleep(rnd.uniform(0.05, 1.5))
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        stop.set()
        t.join()
        d.log.close()
        print("  kill %d: %d uploads acknowledged so far" % (k + 1, len(acked)), flush=True)

    d = daemon(work, "d", pool, token_file)
    try:
        for bid in sorted(acked):
            st, body = get(d, "/buildid/%s/debuginfo" % bid)
            check(st == 200 and hashlib.sha256(body).hexdigest() == want[bid][0],
                  "acknowledged upload %s lost or changed: HTTP %d" % (bid, st))
        for bid, path in uploads:
            if bid not in acked:
                st = put(d.port, bid, read(path))
                check(st in (200, 201), "upload of %s again: HTTP %d" % (path, st))
        same = 0
        for bid in ids:
            got = answers(d, bid, addrs[bid])
            check(got == want[bid][1], "%s: %r, the reference %r" % (bid, got, want[bid][1]))
            st, body = get(d, "/buildid/%s/debuginfo" % bid)
            check(st == 200 and hashlib.sha256(body).hexdigest() == want[bid][0],
                  "%s: debuginfo HTTP %d differs" % (bid, st))
            same += 1
        print("  after %d kills: %d/%d build IDs answer as the reference (%d uploads "
              "acknowledged before)" % (ARGS.rounds, same, len(ids), len(acked)))
    finally:
        d.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
