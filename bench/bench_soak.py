#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_soak: symbolizerd under a long mixed load with a hostile upstream
(issue 11). Run through bench/bench_soak.sh.

16 clients call Symbolize for DURATION: most calls name good build IDs (debug
files of /usr/lib/debug, a local debug dir), one in ten adds a cold build ID
(random: a miss at the upstream), one in twenty a hostile one (the fault
server trickles its body or sends more bytes than announced). Printed: RSS
over time (sampled from /proc), errors (a call that is not HTTP 200, or a good
build ID that is not OK), p50 and p99 of the loaded calls next to the same
calls made alone before the load (the quiet figure).
"""
import argparse
import glob
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import FaultServer, tempdir  # noqa: E402


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--good", type=int, default=24, help="good build IDs used")
    args = ap.parse_args()
    work = tempdir("bench-soak-")
    good = sorted(p.split("/")[-2] + os.path.basename(p)[:-len(".debug")]
                  for p in glob.glob("/usr/lib/debug/.build-id/*/*.debug"))[:args.good]
    if not good:
        sys.exit("bench_soak: no debug files under /usr/lib/debug/.build-id (libc6-dbg)")
    hostile = ["%040x" % (0xbad00 + i) for i in range(8)]
    cfg = {}
    for i, h in enumerate(hostile):
        cfg[h + "/debuginfo"] = "trickle:/bin/true" if i % 2 else "big:4000000000"
        cfg[h + "/executable"] = "404"
    up = FaultServer(work, "hostile", cfg)
    d = Daemon(args.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               upstreams=[up.url], debug_dirs=["/usr/lib/debug"])
    rnd = random.Random(1)

    def body(r, ids):
        maps = [pb.mapping(b) for b in ids]
        locs = [pb.location(0, r.randrange(0x1000, 0x200000)) for _ in range(200)]
        return pb.request(maps, locs, max_wait_ms=2000)

    def one(r, conn, ids):
        t0 = time.monotonic()
        status, _, data = d.post(body(r, ids), conn=conn)
        dt = time.monotonic() - t0
        ok = status == 200
        if ok:
            m = pb.decode_response(data)["mappings"][0]
            ok = pb.STATUS[m["status"]] in ("OK", "PENDING")
        return dt, ok

    # Warm every good ID, then the quiet figure: one client, good IDs alone.
    c = d.conn()
    usable = []
    for b in good:
        _, _, data = d.post(pb.request([pb.mapping(b)], [], max_wait_ms=60000), conn=c)
        m = pb.decode_response(data)["mappings"][0]
        if pb.STATUS[m["status"]] == "OK":
            usable.append(b)
    print("good build IDs: %d of %d answer OK (the others: %s)" % (
        len(usable), len(good), "dwz files without .build-id links, issue 11 item 13"))
    good = usable
    quiet = [one(rnd, c, [rnd.choice(good)])[0] for _ in range(300)]
    c.close()
    stop = time.monotonic() + args.duration
    lat, errors, calls = [], [0], [0]
    lock = threading.Lock()

    def client(seed):
        r = random.Random(seed)
        conn = d.conn(timeout=120)
        while time.monotonic() < stop:
            ids = [r.choice(good)]
            x = r.random()
            if x < 0.10:
                ids.append("%040x" % r.getrandbits(160))
            elif x < 0.15:
                ids.append(r.choice(hostile))
            try:
                dt, ok = one(r, conn, ids)
            except Exception:  # noqa: BLE001
                dt, ok = 0, False
                conn.close()
                conn = d.conn(timeout=120)
            with lock:
                calls[0] += 1
                if not ok:
                    errors[0] += 1
                if len(ids) == 1:
                    lat.append(dt)
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    samples = []
    step = max(1.0, args.duration / 20)
    while any(t.is_alive() for t in threads):
        samples.append((time.monotonic() - t0, rss_kb(d.proc.pid)))
        time.sleep(step)
    for t in threads:
        t.join()
    rss = [kb for _, kb in samples]
    print("soak: %d clients, %.0f s, %d calls (%.0f/s), %d errors" %
          (args.clients, args.duration, calls[0], calls[0] / args.duration, errors[0]))
    print("RSS MB over time: " + " ".join("%.0fs:%.0f" % (t, kb / 1024) for t, kb in samples))
    print("RSS MB: first %.0f, max %.0f, last %.0f" % (rss[0] / 1024, max(rss) / 1024,
                                                        rss[-1] / 1024))
    print("good-ID calls: quiet p50 %.1f ms p99 %.1f ms; loaded p50 %.1f ms p99 %.1f ms (%.1fx)"
          % (pct(quiet, .5) * 1e3, pct(quiet, .99) * 1e3, pct(lat, .5) * 1e3,
             pct(lat, .99) * 1e3, pct(lat, .99) / pct(quiet, .99)))
    print("hostile upstream requests: %d" % sum(up.requests(h + "/debuginfo") for h in hostile))
    d.stop()
    up.stop()


if __name__ == "__main__":
    main()
