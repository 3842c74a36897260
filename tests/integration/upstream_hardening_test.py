#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile or broken upstreams and debug dirs (issue 11, items 3, 8, 9, 11-13).

    upstream_hardening_test.py --symbolizerd PATH --symbolctl PATH --fixtures DIR [CASE...]

Each case runs the real symbolizerd (or `symbolctl fetch`, the same fetcher)
against upstream_fault_server.py or a local debug dir on 127.0.0.1:
  - fifo_in_debug_dir: a FIFO at a .build-id path answers NOT_FOUND, the daemon
    keeps serving (it used to block a fetch worker forever);
  - credentials_redacted / netrc_auth: user:password@ never reaches responses,
    /metrics or the log; --upstream-netrc authenticates;
  - redirects: another host (port) is refused by default with a generic error,
    followed with --upstream-redirects=any, never when `none`;
  - stream_and_bomb_memory: two 300 MB streams without a length and an endless
    one are spooled to DATA/tmp: the daemon's peak RSS grows by under 200 MB;
  - fetch_deadline / busy_server_deferred: all attempts on a server share one
    deadline; a build ID moves on while twelve trickling downloads hold a server;
  - dwz_by_altlink_path / dwz_debian_binutils: a dwz file found by the path its
    users' .gnu_debugaltlink names, with no .build-id entry.
Assertions are on answers, counters and memory, never on wall-clock time.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import (FaultBench, check, fetch, run_cases, tempdir,  # noqa: E402
                          free_port, build_id)

FAST = ["--upstream-retry-backoff=10ms", "--negative-cache-ttl=1h", "--error-cache-ttl=5m"]


def status(resp, i=0):
    return pb.STATUS[resp["mappings"][i]["status"]]


def vm_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"^%s:\s+(\d+) kB" % field, f.read(), re.M)
    return int(m.group(1)) if m else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    S = a.symbolctl
    work = tempdir("upstream_hardening_")
    bench = FaultBench(work, os.path.join(a.fixtures, "c_O2_dw5"), "b0")
    fresh, server = bench.fresh, bench.server

    def daemon(name, upstreams=(), debug_dirs=(), extra=()):
        return Daemon(a.symbolizerd, os.path.join(work, name + ".data"),
                      os.path.join(work, name + ".log"), upstreams=upstreams,
                      debug_dirs=debug_dirs, extra=list(FAST) + list(extra))

    def sym(d, bid, wait_ms=30000, addr=0x1139):
        return d.symbolize([pb.mapping(bid)], [pb.location(0, addr)],
                           max_wait_ms=wait_ms)

    # ---- item 12 -------------------------------------------------------------

    def fifo_in_debug_dir():
        dbg = os.path.join(work, "fifo-debug")
        fifo_bid, _, _ = fresh()
        good, gpath, _ = fresh()
        for bid, kind in ((fifo_bid, "fifo"), (good, "file")):
            sub = os.path.join(dbg, ".build-id", bid[:2])
            os.makedirs(sub, exist_ok=True)
            p = os.path.join(sub, bid[2:] + ".debug")
            if kind == "fifo":
                os.mkfifo(p)
                os.mkfifo(os.path.join(sub, bid[2:]))  # the executable too
            else:
                os.link(gpath, p)
        d = daemon("fifo", debug_dirs=[dbg], extra=["--fetch-workers=1"])
        try:
            r = sym(d, fifo_bid)
            check(status(r) == "NOT_FOUND", "FIFO: %r" % r["mappings"])
            check("not a regular file" in r["mappings"][0]["error"], "FIFO: %r" % r["mappings"])
            # The one worker is free: the next build ID is answered.
            r = sym(d, good)
            check(status(r) == "OK", "after the FIFO: %r" % r["mappings"])
        finally:
            check(d.stop() == 0, "symbolizerd exit status")

    # ---- item 8 --------------------------------------------------------------

    def credentials_redacted():
        secret = "s3cretPw%d" % os.getpid()
        ok_bid, path, _ = fresh()
        bad_bid, _, _ = fresh()
        s = server({ok_bid + "/debuginfo": "auth:alice:%s:%s" % (secret, path),
                    bad_bid + "/debuginfo": "500", bad_bid + "/executable": "500"})
        url = "http://alice:%s@127.0.0.1:%d" % (secret, s.port)
        d = daemon("creds", upstreams=[url], extra=["--upstream-retries=0"])
        try:
            r = sym(d, ok_bid)  # the URL's credentials authenticate
            check(status(r) == "OK", "userinfo auth: %r" % r["mappings"])
            check(s.stats()[ok_bid + "/debuginfo"]["authorized"] == 1, str(s.stats()))
            r = sym(d, bad_bid)
            err = r["mappings"][0]["error"]
            check(status(r) == "ERROR" and "HTTP 500" in err, "500: %r" % r["mappings"])
            check(secret not in err and "127.0.0.1:%d" % s.port in err, "error text: %r" % err)
            check("***@127.0.0.1" in err, "error text: %r" % err)
            metrics = d.metrics()
            check(secret not in metrics, "password in /metrics")
            check('server="http://***@127.0.0.1:%d"' % s.port in metrics, "no redacted label")
        finally:
            check(d.stop() == 0, "symbolizerd exit status")
        log = d.log_text()
        check(secret not in log, "password in the log:\n" + log)
        check("***@127.0.0.1" in log, "upstream not in the log:\n" + log)
        # symbolctl fetch: its stats lines and the store's source.
        r = fetch(S, os.path.join(work, "creds-ctl"), [ok_bid, bad_bid], [url],
                  extra=FAST + ["--upstream-retries=0"])
        check(r.one(ok_bid)["status"] == "ok", str(r))
        check(secret not in r.stdout + r.stderr, "password in symbolctl output:\n%s" % r)

    def netrc_auth():
        bid, path, _ = fresh()
        s = server({bid + "/debuginfo": "auth:bob:n3tRcPw:" + path})
        netrc = os.path.join(work, "netrc")
        with open(netrc, "w") as f:
            f.write("machine 127.0.0.1 login bob password n3tRcPw\n")
        os.chmod(netrc, 0o600)
        r = fetch(S, os.path.join(work, "netrc-none"), [bid], [s.url],
                  extra=FAST + ["--upstream-retries=0"])
        check(r.one(bid)["status"] == "error" and "HTTP 401" in r.one(bid)["error"], str(r))
        r = fetch(S, os.path.join(work, "netrc-ok"), [bid], [s.url],
                  extra=FAST + ["--upstream-netrc", netrc])
        check(r.rc == 0 and r.one(bid)["kind"] == "debuginfo", str(r))
        check(s.stats()[bid + "/debuginfo"]["authorized"] == 1, str(s.stats()))
        check("n3tRcPw" not in r.stdout + r.stderr, str(r))

    # ---- item 9 --------------------------------------------------------------

    def redirects():
        bid, path, _ = fresh()
        other = server({bid + "/debuginfo": "file:" + path, "alias/" + bid: "file:" + path})
        hostile = server({bid + "/debuginfo": "redirect:%s/buildid/%s/debuginfo" % (other.url, bid),
                          bid + "/executable": "404"})
        # Default (same-host): refused, generic, the other host never asked.
        r = fetch(S, os.path.join(work, "redir-default"), [bid], [hostile.url], extra=FAST)
        res = r.one(bid)
        check(res["status"] == "error" and "another host refused" in res["error"], str(r))
        check(str(other.port) not in res["error"], "the target leaks: %s" % res["error"])
        check("secret page" not in r.stdout + r.stderr, str(r))
        check(other.requests(bid + "/debuginfo") == 0, str(other.stats()))
        # any: followed.
        r = fetch(S, os.path.join(work, "redir-any"), [bid], [hostile.url],
                  extra=FAST + ["--upstream-redirects=any"])
        check(r.rc == 0 and r.one(bid)["kind"] == "debuginfo", str(r))
        check(other.requests(bid + "/debuginfo") == 1, str(other.stats()))
        # any, to a closed port: the error says nothing of what that port did.
        dead = free_port()
        bid2, _, _ = fresh()
        probe = server({bid2 + "/debuginfo": "redirect:http://127.0.0.1:%d/x" % dead,
                        bid2 + "/executable": "404"})
        r = fetch(S, os.path.join(work, "redir-probe"), [bid2], [probe.url],
                  extra=FAST + ["--upstream-redirects=any", "--upstream-retries=0"])
        res = r.one(bid2)
        check(res["status"] == "error" and "redirected to another host" in res["error"], str(r))
        check(str(dead) not in r.stdout + r.stderr and "refused" not in res["error"], str(r))
        # Same host and port, another path (a relative Location): followed by default.
        bid3, path3, _ = fresh()
        own = server({bid3 + "/debuginfo": "redirect:/alias/" + bid3,
                      "alias/" + bid3: "file:" + path3})
        r = fetch(S, os.path.join(work, "redir-same"), [bid3], [own.url], extra=FAST)
        check(r.rc == 0 and r.one(bid3)["kind"] == "debuginfo", str(r))
        check(own.requests("alias/" + bid3) == 1, str(own.stats()))
        # none: not even that.
        r = fetch(S, os.path.join(work, "redir-none-same"), [bid3], [own.url],
                  extra=FAST + ["--upstream-redirects=none"])
        check(r.one(bid3)["status"] == "error" and "redirect refused" in r.one(bid3)["error"],
              str(r))
        r = fetch(S, os.path.join(work, "redir-none"), [bid], [hostile.url],
                  extra=FAST + ["--upstream-redirects=none"])
        check(r.one(bid)["status"] == "error" and "redirect refused" in r.one(bid)["error"],
              str(r))

    # ---- item 3 --------------------------------------------------------------

    def stream_and_bomb_memory():
        ids = [fresh()[0] for _ in range(3)]
        s = server({ids[0] + "/debuginfo": "stream:300000000",
                    ids[1] + "/debuginfo": "stream:300000000",
                    ids[2] + "/debuginfo": "bomb",
                    ids[0] + "/executable": "404", ids[1] + "/executable": "404",
                    ids[2] + "/executable": "404"})
        d = daemon("stream", upstreams=[s.url],
                   extra=["--max-debuginfo-size=400M", "--upstream-retries=0"])
        peak = [0]
        done = threading.Event()
        # Growth over the idle daemon's RSS: sanitizer builds start higher.
        base = vm_kb(d.proc.pid, "VmRSS")

        def sample():
            while not done.is_set():
                try:
                    peak[0] = max(peak[0], vm_kb(d.proc.pid, "VmRSS"))
                except OSError:
                    break
                done.wait(0.05)

        t = threading.Thread(target=sample)
        t.start()
        try:
            results = {}

            def one(bid):
                results[bid] = sym(d, bid, wait_ms=120000)

            ts = [threading.Thread(target=one, args=(b,)) for b in ids]
            for x in ts:
                x.start()
            for x in ts:
                x.join()
            hwm = vm_kb(d.proc.pid, "VmHWM")
            for b in ids[:2]:
                check(status(results[b]) == "ERROR" and "ELF" in results[b]["mappings"][0]["error"],
                      "stream %s: %r" % (b, results[b]["mappings"]))
            check(status(results[ids[2]]) == "TOO_LARGE", "bomb: %r" % results[ids[2]]["mappings"])
            st = s.stats()
            check(st[ids[0] + "/debuginfo"]["sent"] >= 300000000, "stream cut short: %s" % st)
            check(st[ids[2] + "/debuginfo"]["sent"] >= 400 << 20, "bomb cut early: %s" % st)
            print("  RSS idle %d MB, peak %d MB (sampled), VmHWM %d MB"
                  % (base >> 10, peak[0] >> 10, hwm >> 10))
            check(hwm - base < 200 << 10, "VmHWM %d kB (idle %d kB): downloads held in memory"
                  % (hwm, base))
            tmp = os.path.join(work, "stream.data", "tmp")
            check(os.path.isdir(tmp) and not os.listdir(tmp), "spool dir: %s" % os.listdir(tmp))
        finally:
            done.set()
            t.join()
            check(d.stop() == 0, "symbolizerd exit status")

    # ---- item 11 -------------------------------------------------------------

    def fetch_deadline():
        bid, path, d = fresh()
        s = server({bid + "/debuginfo": "trickle:" + path, bid + "/executable": "404"})
        # Trickling just fast enough for the progress rule: only the deadline ends
        # it, and no retry starts after it (3 requests before: one per attempt).
        r = fetch(S, d, [bid], [s.url], extra=FAST + [
            "--upstream-timeout=2s", "--upstream-min-progress=1", "--upstream-retries=2"])
        res = r.one(bid)
        check(res["status"] == "error" and "timeout" in res["error"], str(r))
        check(s.requests(bid + "/debuginfo") == 1, "attempts: %s" % s.stats())

    def busy_server_deferred():
        slow_ids = []
        cfg = {}
        for _ in range(12):
            b, p, _ = fresh()
            slow_ids.append(b)
            cfg[b + "/debuginfo"] = "trickle:" + p
            cfg[b + "/executable"] = "404"
        want, wpath, _ = fresh()
        cfg[want + "/debuginfo"] = "404"
        slow = server(cfg)
        good = server({want + "/debuginfo": "file:" + wpath})
        # Trickles meet the progress rule: only the 60 s deadline would end them.
        d = daemon("busy", upstreams=[slow.url, good.url], extra=[
            "--upstream-timeout=60s", "--upstream-min-progress=1", "--upstream-retries=0",
            "--max-fetches-per-upstream=4", "--upstream-busy-defer=100ms"])
        try:
            r = d.symbolize([pb.mapping(b) for b in slow_ids],
                            [pb.location(i, 0x1139) for i in range(12)], max_wait_ms=1)
            check(all(status(r, i) == "PENDING" for i in range(12)), "tricklers: %r" % r)
            guard = time.monotonic() + 60
            while sum(slow.requests(b + "/debuginfo") for b in slow_ids) < 4:
                check(time.monotonic() < guard, "the trickling downloads did not start")
                time.sleep(0.05)
            # Every slot of the first server is held: the build ID it lacks is
            # answered by the second (before: queued behind twelve 60 s trickles).
            r = sym(d, want, wait_ms=30000)
            check(status(r) == "OK", "starved: %r" % r["mappings"])
            check(slow.requests(want + "/debuginfo") == 0, "the busy server was asked first")
            check(good.requests(want + "/debuginfo") == 1, str(good.stats()))
            check((d.metric("symbolizer_fetch_deferrals_total") or 0) >= 1, "no deferral counted")
            # The trickling ones were not dropped: they still wait for the slow server.
            r = d.symbolize([pb.mapping(slow_ids[0])], [pb.location(0, 0x1139)], max_wait_ms=1)
            check(status(r) == "PENDING", "trickler: %r" % r["mappings"])
        finally:
            check(d.stop() == 0, "symbolizerd exit status")

    # ---- item 13 -------------------------------------------------------------

    def dwz_by_altlink_path():
        dbg = os.path.join(work, "dwz-debug")
        usr = os.path.join(dbg, "usr", "lib", "foo")
        os.makedirs(usr)
        b_dst = os.path.join(usr, "dwz_b.debug")
        subprocess.run(["cp", os.path.join(a.fixtures, "dwz_b"), b_dst], check=True)
        # The dwz file sits where the relative link names it, with no .build-id entry.
        subprocess.run(["cp", os.path.join(a.fixtures, "dwz_common.debug"), usr], check=True)
        bid = build_id(b_dst)
        sub = os.path.join(dbg, ".build-id", bid[:2])
        os.makedirs(sub)
        os.symlink(os.path.relpath(b_dst, sub), os.path.join(sub, bid[2:] + ".debug"))
        r = fetch(S, os.path.join(work, "dwz-data"), [bid], [], debug_dirs=[dbg], extra=FAST)
        res = r.one(bid)
        check(r.rc == 0 and res["status"] == "ok", str(r))
        check(res.get("alt", "").endswith(":ok"), "dwz file: %s" % r)
        # Outside the debug dir, the same link finds nothing.
        dbg2 = os.path.join(work, "dwz-outside")
        sub2 = os.path.join(dbg2, ".build-id", bid[:2])
        os.makedirs(sub2)
        os.symlink(b_dst, os.path.join(sub2, bid[2:] + ".debug"))
        r = fetch(S, os.path.join(work, "dwz-data2"), [bid], [], debug_dirs=[dbg2], extra=FAST)
        check(not r.one(bid).get("alt", "").endswith(":ok"), "read outside the dir: %s" % r)

    def dwz_debian_binutils():
        pick = None
        for f in sorted(glob.glob("/usr/lib/debug/.build-id/*/*.debug")):
            out = subprocess.run(["readelf", "--string-dump=.gnu_debugaltlink", f],
                                 capture_output=True).stdout.decode("latin-1")
            m = re.search(r"\]\s+(/usr/lib/debug/\.dwz/\S+)", out)
            if m and os.path.exists(m.group(1)):
                pick = f
                break
        if not pick:
            print("  skipped: no debug file with a .dwz link under /usr/lib/debug "
                  "(binutils-x86-64-linux-gnu-dbg)")
            return
        bid = os.path.basename(os.path.dirname(pick)) + os.path.basename(pick)[:-len(".debug")]
        nm = subprocess.run(["nm", "--defined-only", pick], capture_output=True, text=True).stdout
        addr = next(int(l.split()[0], 16) for l in nm.splitlines()
                    if len(l.split()) == 3 and l.split()[1] in "tT" and int(l.split()[0], 16))
        d = daemon("binutils", debug_dirs=["/usr/lib/debug"])
        try:
            r = sym(d, bid, wait_ms=60000, addr=addr)
            check(status(r) == "OK", "%s: %r" % (pick, r["mappings"]))
            check(pb.frames(r, 0), "%s at 0x%x: no frames" % (pick, addr))
        finally:
            check(d.stop() == 0, "symbolizerd exit status")

    cases = [
        ("fifo_in_debug_dir", fifo_in_debug_dir),
        ("credentials_redacted", credentials_redacted),
        ("netrc_auth", netrc_auth),
        ("redirects", redirects),
        ("stream_and_bomb_memory", stream_and_bomb_memory),
        ("fetch_deadline", fetch_deadline),
        ("busy_server_deferred", busy_server_deferred),
        ("dwz_by_altlink_path", dwz_by_altlink_path),
        ("dwz_debian_binutils", dwz_debian_binutils),
    ]
    try:
        return run_cases(cases, a.cases)
    finally:
        bench.stop()


if __name__ == "__main__":
    sys.exit(main())
