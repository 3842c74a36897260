#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_fetch: fetch N distinct build IDs from a local elfutils debuginfod.

    python3 bench/bench_fetch.py --symbolctl build/cmd/symbolctl/symbolctl \
        [--file ELF] [-n 200] [--per-upstream 16]

Makes N copies of one ELF file (default: build/fixtures/cxx_O2, else this
machine's /bin/true) each with its own build ID, serves them with debuginfod on
127.0.0.1, then times, each starting from an empty cache/store:
  1. symbolctl fetch, all build IDs at once (the daemon's fetcher: curl multi on
     libevent, --max-fetches-per-upstream concurrent downloads, RocksDB store);
  2. symbolctl fetch --serial, one at a time;
  3. debuginfod-find debuginfo ID, in a shell loop (elfutils' client, its file cache).
Every fetch must succeed. Prints the three wall times side by side.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from upstream_lib import Debuginfod, build_id, set_build_id, tempdir  # noqa: E402


def timed(fn):
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--file")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--per-upstream", type=int, default=16)
    a = ap.parse_args()
    src = a.file
    if not src:
        guess = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.symbolctl))),
                             "..", "fixtures", "cxx_O2")
        src = guess if os.path.exists(guess) else "/bin/true"
    src = os.path.abspath(src)
    build_id(src)
    work = tempdir("bench_fetch_")
    server = None
    try:
        files_dir = os.path.join(work, "files")
        os.makedirs(files_dir)
        ids = []
        for i in range(a.n):
            bid = "be%038x" % (i + 1)
            set_build_id(src, os.path.join(files_dir, bid), bid)
            ids.append(bid)
        server = Debuginfod(work, "srv", [os.path.join(files_dir, b) for b in ids])
        id_list = "\n".join(ids) + "\n"
        common = ["--debug-dir=", "--debuginfod-upstream-servers=" + server.url,
                  "--max-concurrent-fetches=%d" % a.per_upstream,
                  "--max-fetches-per-upstream=%d" % a.per_upstream]

        def ours(serial):
            def run():
                d = os.path.join(work, "data-serial" if serial else "data-concurrent")
                cmd = [a.symbolctl, "fetch", "--data-dir", d] + common
                if serial:
                    cmd.append("--serial")
                p = subprocess.run(cmd, input=id_list, capture_output=True, text=True)
                ok = sum(1 for line in p.stdout.splitlines() if " ok kind=" in line)
                if p.returncode != 0 or ok != a.n:
                    sys.exit("symbolctl fetch failed (%d/%d ok):\n%s" % (ok, a.n, p.stderr[-2000:]))
            return run

        def theirs():
            env = dict(os.environ, DEBUGINFOD_URLS=server.url,
                       DEBUGINFOD_CACHE_PATH=os.path.join(work, "dfind-cache"))
            script = 'while read id; do debuginfod-find debuginfo "$id" >/dev/null || exit 1; done'
            p = subprocess.run(["sh", "-c", script], input=id_list, text=True, env=env,
                               capture_output=True)
            if p.returncode != 0:
                sys.exit("debuginfod-find failed:\n" + p.stderr[-2000:])

        size = os.path.getsize(src)
        t_conc = timed(ours(False))
        t_serial = timed(ours(True))
        t_find = timed(theirs)
        print("bench_fetch: %d build IDs of %d bytes each from debuginfod on 127.0.0.1"
              % (a.n, size))
        print("%-52s %8s %10s" % ("client", "wall s", "fetches/s"))
        for name, t in (("symbolctl fetch (concurrent, %d in flight)" % a.per_upstream, t_conc),
                        ("symbolctl fetch --serial", t_serial),
                        ("debuginfod-find, one process per build ID", t_find)):
            print("%-52s %8.2f %10.1f" % (name, t, a.n / t))
    finally:
        if server:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
