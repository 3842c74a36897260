#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_packages.py: the package source on Debian's kernel debug package
(issue 12), next to elfutils debuginfod serving the same .deb, in one run.
bench_packages.sh is the entry point; see there."""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import free_port  # noqa: E402

SEED = 12
N = 30


def vm_hwm_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return 0


def ours(symbolizerd, pool, work):
    os.makedirs(work, exist_ok=True)
    d = Daemon(symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               extra=["--package-dir", pool, "--log-level=debug", "--package-rescan=0"])
    try:
        while "package scanned" not in d.log_text() and "package scan failed" not in d.log_text():
            time.sleep(0.2)
        log = d.log_text()
        scan_s = float(re.search(r'msg="package scanned".* seconds=([\d.]+)', log).group(1))
        scan_mb = vm_hwm_mb(d.proc.pid)
        mods = sorted(set(re.findall(r'msg="package member" .*build_id=(\w+) kind=\w+ '
                                     r'member=\S+\.ko\n', log)))
        rnd = random.Random(SEED)
        pick = rnd.sample(mods, N)
        other = rnd.sample(sorted(set(mods) - set(pick)), N)
        # one Symbolize call with the 30 mappings (as an agent sends them): each
        # member extracted, checked, stored and indexed, then one address looked up
        t0 = time.monotonic()
        resp = d.symbolize([pb.mapping(bid) for bid in pick],
                           [pb.location(i, 0x10) for i in range(N)], max_wait_ms=300000)
        sym_s = time.monotonic() - t0
        ok = sum(pb.STATUS[m["status"]] == "OK" for m in resp["mappings"])

        def files(ids):
            t0 = time.monotonic()
            n = 0
            for bid in ids:
                with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (d.url, bid),
                                            timeout=300) as r:
                    n += len(r.read())
            return time.monotonic() - t0, n
        files_s, nbytes = files(pick)        # the same 30, now in the store
        cold_s, cold_bytes = files(other)    # 30 others, cold, one at a time
        return dict(scan_s=scan_s, scan_mb=scan_mb, members=len(mods), sym_s=sym_s, ok=ok,
                    files_s=files_s, bytes=nbytes, cold_s=cold_s, cold_bytes=cold_bytes,
                    peak_mb=vm_hwm_mb(d.proc.pid), pick=pick, other=other)
    finally:
        d.stop()


def metric(url, name):
    try:
        text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    except OSError:
        return None
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def theirs(pool, work, pick, other):
    os.makedirs(work, exist_ok=True)
    port = free_port()
    url = "http://127.0.0.1:%d" % port
    log = open(os.path.join(work, "debuginfod.log"), "w")
    t0 = time.monotonic()
    p = subprocess.Popen(["debuginfod", "-U", "-p", str(port), "-d",
                          os.path.join(work, "debuginfod.sqlite"), "-t", "0", "-g", "0", pool],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        while True:
            found = metric(url, 'found_debuginfo_total{source=".deb archive"}')
            busy = metric(url, 'thread_busy{role="scan"}')
            if found and busy == 0:
                break
            if p.poll() is not None:
                raise SystemExit("debuginfod exited; see %s" % log.name)
            time.sleep(0.5)
        scan_s = time.monotonic() - t0
        scan_mb = vm_hwm_mb(p.pid)
        cache = os.path.join(work, "client-cache")
        env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=cache,
                   DEBUGINFOD_TIMEOUT="600")

        def find(ids):
            t0 = time.monotonic()
            ok = 0
            for bid in ids:
                r = subprocess.run(["debuginfod-find", "debuginfo", bid], env=env,
                                   capture_output=True)
                ok += r.returncode == 0
            return time.monotonic() - t0, ok
        files_s, ok = find(pick)
        cold_s, cold_ok = find(other)
        return dict(scan_s=scan_s, scan_mb=scan_mb, files_s=files_s, ok=ok, cold_s=cold_s,
                    cold_ok=cold_ok, peak_mb=vm_hwm_mb(p.pid))
    finally:
        p.terminate()
        p.wait()
        log.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--deb", required=True)
    ap.add_argument("--no-debuginfod", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-packages-")
    pool = os.path.join(work, "pool")
    os.makedirs(pool)
    dst = os.path.join(pool, os.path.basename(a.deb))
    try:
        os.link(a.deb, dst)
    except OSError:
        shutil.copy(a.deb, dst)
    print("package: %s (%d MB)" % (a.deb, os.path.getsize(a.deb) >> 20), flush=True)
    o = ours(a.symbolizerd, pool, os.path.join(work, "ours"))
    print("symbolizerd: scan %.1f s, peak RSS %d MB after the scan, %d modules catalogued"
          % (o["scan_s"], o["scan_mb"], o["members"]), flush=True)
    print("symbolizerd: %d modules (seed %d) in one Symbolize call, cold (extract, check, store, "
          "index, one address each): %.2f s (%d OK); the same as files: %.2f s (%d MB); "
          "%d other modules as files, cold, one at a time: %.2f s (%d MB); peak RSS %d MB"
          % (N, SEED, o["sym_s"], o["ok"], o["files_s"], o["bytes"] >> 20, N, o["cold_s"],
             o["cold_bytes"] >> 20, o["peak_mb"]), flush=True)
    if a.no_debuginfod:
        shutil.rmtree(work, ignore_errors=True)
        return 0
    t = theirs(pool, os.path.join(work, "theirs"), o["pick"], o["other"])
    print("debuginfod:  scan %.1f s, peak RSS %d MB after the scan" % (t["scan_s"], t["scan_mb"]))
    print("debuginfod:  debuginfod-find for the same %d modules: %.1f s (%d OK); the %d others: "
          "%.1f s (%d OK); peak RSS %d MB" % (N, t["files_s"], t["ok"], N, t["cold_s"],
                                             t["cold_ok"], t["peak_mb"]))
    print("\n| | scan | peak RSS (scan) | %d modules cold | %d others cold, as files |" % (N, N))
    print("|---|---|---|---|---|")
    print("| symbolizerd | %.1f s | %d MB | %.2f s (symbolized) | %.2f s |"
          % (o["scan_s"], o["scan_mb"], o["sym_s"], o["cold_s"]))
    print("| debuginfod 0.188 | %.1f s | %d MB | %.1f s (debuginfod-find) | %.1f s |"
          % (t["scan_s"], t["scan_mb"], t["files_s"], t["cold_s"]))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
