#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_serve: serving stored files over the debuginfod protocol (issue 13).

    python3 bench/bench_serve.py --symbolizerd build/cmd/symbolizerd/symbolizerd \
        [-n 60] [--clients 8] [--rounds 3] [--round-bytes 27M]

Picks N debug files of mixed sizes from this machine's /usr/lib/debug/.build-id
(libc6-dbg, libstdc++6-12-dbg, binutils' and python3.11's debug files: what
scripts/install-deps.sh installs), about --round-bytes in all, and serves them
  1. with symbolizerd from its store (a debug dir holding the files; one
     untimed round puts them in the store first), and
  2. with elfutils' debuginfod (-F over the same files: plain files, sendfile),
each to --clients concurrent keep-alive clients (one curl process each, all
the URLs in one invocation so its connection is reused), each fetching every
file --rounds times. Every answer must be 200 with the file's size. Prints wall
time, requests/s, bytes/s and the server's RSS (VmHWM) for both, same run.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import Debuginfod, build_id, tempdir  # noqa: E402


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def pick_files(n, budget):
    """n ELF debug files of mixed sizes, about budget bytes in all."""
    root = "/usr/lib/debug/.build-id"
    cands = []
    for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        sub = os.path.join(root, d)
        if not os.path.isdir(sub):
            continue
        for f in sorted(os.listdir(sub)):
            p = os.path.realpath(os.path.join(sub, f))
            if f.endswith(".debug") and os.path.isfile(p):
                cands.append((os.path.getsize(p), p))
    cands = sorted(set(cands))
    if len(cands) < n:
        sys.exit("bench_serve: only %d debug files under %s (scripts/install-deps.sh)"
                 % (len(cands), root))

    def spread(k):
        """n files evenly spread over the sizes of the k largest candidates
        (the largest always in)."""
        step = k / n
        return [cands[len(cands) - 1 - int(i * step)] for i in range(n)]
    # The narrowest spread (the most large files) that stays within budget.
    lo, hi = n, len(cands)
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(s for s, _ in spread(mid)) <= budget:
            hi = mid
        else:
            lo = mid + 1
    picked = spread(lo)
    return [p for _, p in picked]


def curl_config(path, base, files, rounds):
    with open(path, "w") as f:
        for _ in range(rounds):
            for bid, _ in files:
                f.write('url = "%s/buildid/%s/debuginfo"\noutput = "/dev/null"\n' % (base, bid))


def run_clients(work, name, base, files, clients, rounds):
    """Wall seconds for every client to fetch every file rounds times."""
    cfg = os.path.join(work, name + ".curl")
    curl_config(cfg, base, files, rounds)
    want = sorted(["200 %d" % size for _, size in files] * rounds)
    t0 = time.monotonic()
    procs = [subprocess.Popen(["curl", "-s", "-K", cfg, "-w", "%{http_code} %{size_download}\\n"],
                              stdout=subprocess.PIPE, text=True) for _ in range(clients)]
    outs = [p.communicate()[0] for p in procs]
    wall = time.monotonic() - t0
    for o in outs:
        got = sorted(o.split("\n")[:-1])
        if got != want:
            bad = [g for g in got if g not in want][:5]
            sys.exit("bench_serve: %s: wrong answers, e.g. %s" % (name, bad))
    return wall


def vm(pid, key):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"^%s:\s+(\d+) kB" % key, f.read(), re.M)
    return int(m.group(1)) * 1024 if m else 0


def row(name, wall, n_req, n_bytes, rss):
    print("%-26s %8.3f s %10.0f req/s %8.1f MB/s   RSS %6.1f MB"
          % (name, wall, n_req / wall, n_bytes / wall / 1e6, rss / 1e6))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--round-bytes", default="27M")
    a = ap.parse_args()
    paths = pick_files(a.n, parse_size(a.round_bytes))
    work = tempdir("bench_serve_")
    d = up = None
    try:
        dbg = os.path.join(work, "dbg")
        flat = os.path.join(work, "flat")
        os.makedirs(flat)
        files = []
        for p in paths:
            bid = build_id(p)
            sub = os.path.join(dbg, ".build-id", bid[:2])
            os.makedirs(sub, exist_ok=True)
            shutil.copy(p, os.path.join(sub, bid[2:] + ".debug"))
            shutil.copy(p, os.path.join(flat, bid + ".debug"))
            files.append((bid, os.path.getsize(p)))
        round_bytes = sum(s for _, s in files)
        n_req = a.clients * a.rounds * len(files)
        n_bytes = a.clients * a.rounds * round_bytes
        print("%d files, %.1f MB a round, %d clients x %d rounds: %d requests, %.0f MB"
              % (len(files), round_bytes / 1e6, a.clients, a.rounds, n_req, n_bytes / 1e6))

        d = Daemon(a.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
                   debug_dirs=[dbg])
        run_clients(work, "warm", d.url, files, 1, 1)  # into the store, untimed
        shutil.rmtree(dbg)  # from now on, only the store can answer
        rss0 = vm(d.proc.pid, "VmRSS")
        wall = run_clients(work, "symbolizerd", d.url, files, a.clients, a.rounds)
        ours = (wall, vm(d.proc.pid, "VmHWM"))

        up = Debuginfod(work, "elfutils", [os.path.join(flat, f) for f in os.listdir(flat)])
        wall = run_clients(work, "debuginfod", up.url, files, a.clients, a.rounds)
        theirs = (wall, vm(up.proc.pid, "VmHWM"))

        print("symbolizerd RSS before the timed rounds: %.1f MB" % (rss0 / 1e6))
        row("symbolizerd (RocksDB)", ours[0], n_req, n_bytes, ours[1])
        row("debuginfod 0.188 (files)", theirs[0], n_req, n_bytes, theirs[1])
        print("ratio (debuginfod wall / ours): %.2fx" % (theirs[0] / ours[0]))
    finally:
        if d:
            d.stop()
        if up:
            up.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
