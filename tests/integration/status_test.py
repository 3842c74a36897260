#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""status_test: "why is this build ID not symbolized?" (issue 15 item 3) and
the bounds of issue 11 items 4 and 6, against a real symbolizerd on loopback
with local debug dirs and the fault server as upstream.

One build ID per outcome, each explained by GET /buildid/ID/status (JSON, read
with Python's json), by `symbolctl status` (text and --json, exit status) and
by the same reason in Symbolize's MappingResult.error:
  found            a debug file in a local dir: state ok, store kind debuginfo,
                   index loaded, the dir's row "found"
  not_found        every source 404: negative entries in memory and store
  upstream_failing HTTP 500: the upstream's row "error: HTTP 500", the breaker's
                   recent failures say HTTP 500
  breaker_open     a breaker opened by HTTP 500s: the next build ID's upstream
                   row "skipped", the breaker "open" since when, opened by what;
                   the upstream got no request for it
  executable_only  only the executable in the dir: index from_executable, the
                   store's negative record "no_debuginfo"
  index_failed     a build over the inflate cap (sized from --build-memory-bytes):
                   index "failed" with the reason; after the negative entry
                   expires, the next call is answered from the remembered
                   failure: symbolizer_index_builds_total{result="failed"}
                   stays 1 (issue 11 item 4)
Bounds:
  budget           four concurrent builds of a big debug file under a budget of
                   1.5 builds: all OK, some queued, and the high-water mark of
                   symbolizer_index_build_memory_bytes never over the budget
  negative_bound   5,000 random unknown build IDs with --negative-cache-entries
                   1000: memory and store stay at the bound (and after a
                   restart), and each ID costs one upstream request (debuginfo),
                   not two (issue 11 item 6)
  new_lookups      --max-new-lookups-per-call 100 and a call with 300 unknown
                   IDs: 100 looked up (100 upstream requests), 200 PENDING

Usage: status_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

import pb
from daemon_lib import Daemon
from upstream_lib import FaultServer, build_id, check, run_cases, set_build_id, tempdir

ARGS = None


def fx(name):
    return os.path.join(ARGS.fixtures, name)


def put(debug_dir, path, exe=False):
    bid = build_id(path)
    d = os.path.join(debug_dir, ".build-id", bid[:2])
    os.makedirs(d, exist_ok=True)
    shutil.copy(path, os.path.join(d, bid[2:] + ("" if exe else ".debug")))
    return bid


def status(d, bid):
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    c.request("GET", "/buildid/%s/status" % bid)
    r = c.getresponse()
    body = r.read()
    ctype = r.getheader("Content-Type")
    c.close()
    check(r.status == 200, "status %s: HTTP %d %r" % (bid, r.status, body[:200]))
    check(ctype == "application/json", "status content type %r" % ctype)
    return json.loads(body)


def ctl_status(d, bid, *extra):
    r = subprocess.run([ARGS.symbolctl, "status", "--server", d.url] + list(extra) + [bid],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def one(d, bid, wait_ms=30000):
    """The MappingResult of one mapping with no location (resolved all the same)."""
    resp = d.symbolize([pb.mapping(bid)], [], max_wait_ms=wait_ms)
    m = resp["mappings"][0]
    return pb.STATUS[m["status"]], m


def row(doc, type_, want):
    for r in doc["sources"]:
        if r["type"] == type_ and r["want"] == want:
            return r
    raise AssertionError("no %s/%s row in %s" % (type_, want, json.dumps(doc["sources"])))


def metric(d, name):
    v = d.metric(name)
    return 0 if v is None else v


def rand_id():
    return "%040x" % random.getrandbits(160)


def daemon(work, name, **kw):
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), **kw)


def case_outcomes():
    """found, not_found, upstream_failing, executable_only on one daemon."""
    work = tempdir("status-outcomes-")
    dbg = os.path.join(work, "dbg")
    found = put(dbg, fx("c_stripped.debug"))
    exe_only = put(dbg, fx("symtab_only"), exe=True)
    failing, missing = rand_id(), rand_id()
    up = FaultServer(work, "up", {failing + "/debuginfo": "500",
                                  failing + "/executable": "500"})
    d = daemon(work, "d", debug_dirs=[dbg], upstreams=[up.url],
               extra=["--upstream-retries", "0", "--upstream-breaker-failures", "100"])
    try:
        # found: the local dir had the debug file.
        st, m = one(d, found)
        check(st == "OK" and m["has_line_numbers"], "found: %s %r" % (st, m))
        doc = status(d, found)
        check(doc["state"] == "ok" and "debug info" in doc["summary"], "found: %r" % doc)
        check(doc["store"]["state"] == "present" and doc["store"]["kind"] == "debuginfo" and
              doc["store"]["source"] == dbg and doc["store"]["size"] > 0, "found store: %r" %
              doc["store"])
        check(doc["index"]["state"] == "loaded" and doc["index"]["in_memory"], "found index")
        check(row(doc, "local", "debuginfo")["outcome"] == "found", "found: dir row")
        check(doc["negative_cache"]["memory"] is None, "found: no negative entry")
        rc, out, _ = ctl_status(d, found)
        check(rc == 0 and "symbolized from debug info" in out and dbg in out,
              "symbolctl status found: %d %s" % (rc, out))

        # not found: the dir and the upstream (404) have nothing.
        st, m = one(d, missing)
        check(st == "NOT_FOUND", "missing: %s %r" % (st, m))
        doc = status(d, missing)
        check(doc["state"] == "not_found", "missing state: %r" % doc["state"])
        check(doc["negative_cache"]["memory"]["status"] == "not_found" and
              doc["negative_cache"]["memory"]["expires_at_ms"] > doc["now_ms"],
              "missing: memory negative entry %r" % doc["negative_cache"])
        check(doc["negative_cache"]["store"]["state"] == "not_found" and
              not doc["negative_cache"]["store"]["expired"], "missing: store negative entry")
        check(row(doc, "local", "debuginfo")["outcome"] == "not_found", "missing: dir row")
        r = row(doc, "upstream", "debuginfo")
        check(r["outcome"] == "not_found" and r["error"] == "HTTP 404" and r["source"] == up.url,
              "missing: upstream row %r" % r)
        rc, out, _ = ctl_status(d, missing)
        check(rc == 1 and "not_found" in out and "HTTP 404" in out,
              "symbolctl status missing: %d %s" % (rc, out))

        # upstream failing: HTTP 500, in MappingResult.error, the row and the breaker.
        st, m = one(d, failing)
        check(st == "ERROR" and "HTTP 500" in m["error"] and up.url in m["error"],
              "failing: %s %r" % (st, m))
        doc = status(d, failing)
        check(doc["state"] == "error" and "HTTP 500" in doc["summary"], "failing: %r" % doc)
        r = row(doc, "upstream", "debuginfo")
        check(r["outcome"] == "error" and r["error"] == "HTTP 500", "failing row %r" % r)
        b = doc["upstreams"][0]["breaker"]
        check(b["state"] == "closed" and b["consecutive_failures"] >= 1 and
              b["recent_failures"][-1]["reason"] == "HTTP 500", "failing breaker %r" % b)
        rc, out, _ = ctl_status(d, failing, "--json")
        check(rc == 1 and json.loads(out)["build_id"] == failing, "symbolctl status --json")

        # executable only: symbols answer; the search for debug info is remembered.
        st, m = one(d, exe_only)
        check(st == "OK" and m["has_functions"] and not m["has_line_numbers"],
              "exe only: %s %r" % (st, m))
        doc = status(d, exe_only)
        check(doc["state"] == "ok" and "executable" in doc["summary"], "exe only: %r" % doc)
        check(doc["store"]["kind"] == "executable" and doc["index"]["from_executable"],
              "exe only: store/index %r %r" % (doc["store"], doc["index"]))
        neg = doc["negative_cache"]["store"]
        check(neg["state"] == "no_debuginfo" and neg["expires_at_ms"] > doc["now_ms"],
              "exe only: the search for debug info %r" % neg)
        check(row(doc, "local", "debuginfo")["outcome"] == "not_found" and
              row(doc, "local", "executable")["outcome"] == "found", "exe only: dir rows")
        rc, out, _ = ctl_status(d, exe_only)
        check(rc == 0 and "executable" in out, "symbolctl status exe only: %d %s" % (rc, out))

        # never asked, a bad ID, and no fetch from a status request.
        fresh = rand_id()
        before = up.requests(fresh + "/debuginfo")
        doc = status(d, fresh)
        check(doc["state"] == "unknown" and doc["summary"] == "never asked for",
              "fresh: %r" % doc)
        check(up.requests(fresh + "/debuginfo") == before == 0, "status fetched something")
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
        c.request("GET", "/buildid/XYZ/status")
        check(c.getresponse().status == 400, "bad build ID: not 400")
        c.close()
        rc, _, err = ctl_status(d, "XYZ")
        check(rc == 2 and "lowercase hex" in err, "symbolctl status bad ID: %d %s" % (rc, err))
    finally:
        d.stop()
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_breaker_open():
    work = tempdir("status-breaker-")
    first, second = rand_id(), rand_id()
    up = FaultServer(work, "up", {first + "/debuginfo": "500", first + "/executable": "500"})
    d = daemon(work, "d", upstreams=[up.url],
               extra=["--upstream-retries", "0", "--upstream-breaker-failures", "1",
                      "--upstream-breaker-cooldown", "10m"])
    try:
        st, m = one(d, first)
        check(st == "ERROR" and "HTTP 500" in m["error"], "first: %s %r" % (st, m))
        st, m = one(d, second)
        check(st == "ERROR" and "circuit breaker open" in m["error"] and
              "HTTP 500" in m["error"], "second: %s %r" % (st, m))
        check(up.requests(second + "/debuginfo") == 0, "a request went through an open breaker")
        doc = status(d, second)
        r = row(doc, "upstream", "debuginfo")
        check(r["outcome"] == "skipped" and "circuit breaker open" in r["error"],
              "second: upstream row %r" % r)
        b = doc["upstreams"][0]["breaker"]
        check(b["state"] == "open" and b["opened_at_ms"] and b["open_until_ms"] > doc["now_ms"],
              "breaker %r" % b)
        check([n["reason"] for n in b["opened_by"]] == ["HTTP 500"], "opened by %r" % b)
        rc, out, _ = ctl_status(d, second)
        check(rc == 1 and "breaker open since" in out and "HTTP 500" in out,
              "symbolctl status breaker: %d %s" % (rc, out))
    finally:
        d.stop()
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_index_failed():
    work = tempdir("status-failed-")
    dbg = os.path.join(work, "dbg")
    bid = put(dbg, fx("c_O2_zlib"))
    # A 2 KiB budget makes a 2 KiB inflate cap: c_O2_zlib's sections inflate past it.
    d = daemon(work, "d", debug_dirs=[dbg],
               extra=["--build-memory-bytes", "2K", "--negative-cache-ttl", "1s",
                      "--error-cache-ttl", "1s"])
    try:
        st, m = one(d, bid)
        check(st == "TOO_LARGE" and "past the cap" in m["error"], "first: %s %r" % (st, m))
        check(metric(d, 'symbolizer_index_builds_total{result="failed"}') == 1, "one build")
        doc = status(d, bid)
        ix = doc["index"]
        check(ix["state"] == "failed" and ix["failed"]["failures"] == 1 and
              "past the cap" in ix["failed"]["error"] and
              ix["failed"]["retry_at_ms"] > doc["now_ms"], "index %r" % ix)
        check(doc["store"]["kind"] == "debuginfo", "the file stays stored")
        rc, out, _ = ctl_status(d, bid)
        check(rc == 1 and "build failed 1 time(s)" in out, "symbolctl: %d %s" % (rc, out))
        # The negative entry expires (1 s); calls after it are answered from the
        # remembered failure, not by building again.
        for i in range(3):
            time.sleep(1.2)
            st, m = one(d, bid)
            check(st == "TOO_LARGE" and "index build failed 1 time(s)" in m["error"] and
                  "past the cap" in m["error"], "again %d: %s %r" % (i, st, m))
        check(metric(d, 'symbolizer_index_builds_total{result="failed"}') == 1,
              "the failing build ran again")
        check(metric(d, 'symbolizer_index_builds_total{result="skipped_failed_before"}') >= 3,
              "skipped builds not counted")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


NEEDED = {"info", "abbrev", "line", "line_str", "str", "str_offsets", "addr", "ranges",
          "rnglists", "types"}


def estimate(path):
    """The daemon's estimate of a build of an uncompressed file (svc_resolve_build.c)."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    total = os.path.getsize(path)
    for m in re.finditer(r"\]\s+\.debug_(\w+)\s+\w+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", out):
        if m.group(1) in NEEDED:
            total += int(m.group(2), 16)
    return total


def libc_debug():
    bid = build_id(os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6"))
    path = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    check(os.path.exists(path), "libc6-dbg is not installed (%s)" % path)
    return path


def case_budget():
    work = tempdir("status-budget-")
    dbg = os.path.join(work, "dbg")
    plain = os.path.join(work, "libc.debug")
    subprocess.run(["objcopy", "--decompress-debug-sections", libc_debug(), plain], check=True)
    ids = []
    for i in range(4):
        bid = "%02x" % (0x10 + i) + build_id(plain)[2:]
        copy = os.path.join(work, "copy%d" % i)
        set_build_id(plain, copy, bid)
        ids.append(put(dbg, copy))
        os.unlink(copy)
    one_build = estimate(plain)
    budget = one_build * 3 // 2
    d = daemon(work, "d", debug_dirs=[dbg],
               extra=["--workers", "4", "--build-memory-bytes", str(budget)])
    try:
        for bid in ids:  # into the store first, so the four builds start together
            c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
            c.request("GET", "/buildid/%s/debuginfo" % bid)
            r = c.getresponse()
            r.read()
            c.close()
            check(r.status == 200, "warming %s: %d" % (bid, r.status))
        for _ in range(40):  # asked again while builds wait (slow sanitizer trees)
            resp = d.symbolize([pb.mapping(b) for b in ids], [], max_wait_ms=30000)
            sts = [pb.STATUS[m["status"]] for m in resp["mappings"]]
            if "PENDING" not in sts:
                break
        check(sts == ["OK"] * 4, "builds under the budget: %r %r" % (sts, resp["mappings"]))
        peak = metric(d, "symbolizer_index_build_memory_peak_bytes")
        queued = metric(d, "symbolizer_index_builds_queued_total")
        print("budget %d, one build %d, peak %d, queued %d" % (budget, one_build, peak, queued))
        check(metric(d, "symbolizer_index_build_memory_max_bytes") == budget, "max metric")
        check(one_build <= peak <= budget, "peak %d not within [%d, %d]" %
              (peak, one_build, budget))
        check(queued >= 1, "no build waited for the budget")
        check(metric(d, "symbolizer_index_build_memory_bytes") == 0, "memory not given back")
        check(metric(d, 'symbolizer_index_builds_total{result="ok"}') == 4, "four builds")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def upstream_counts(up):
    dbg = exe = 0
    for key, st in up.stats().items():
        if key.endswith("/debuginfo"):
            dbg += st["requests"]
        elif key.endswith("/executable"):
            exe += st["requests"]
    return dbg, exe


def case_negative_bound():
    work = tempdir("status-negative-")
    up = FaultServer(work, "up", {})
    data = os.path.join(work, "d-data")
    extra = ["--negative-cache-entries", "1000", "--max-new-lookups-per-call", "0"]
    try:
        negative_bound(work, up, data, extra)
    finally:
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def negative_bound(work, up, data, extra):
    d = daemon(work, "d", upstreams=[up.url], extra=extra)
    n = 5000
    try:
        for _ in range(n // 1000):
            resp = d.symbolize([pb.mapping(rand_id()) for _ in range(1000)], [],
                               max_wait_ms=120000)
            sts = {pb.STATUS[m["status"]] for m in resp["mappings"]}
            check(sts == {"NOT_FOUND"}, "unknown IDs: %r" % sts)
        mem = metric(d, "symbolizer_negative_cache_entries")
        store = metric(d, "symbolizer_store_negative_entries")
        ev = metric(d, "symbolizer_negative_cache_evictions_total")
        dbg, exe = upstream_counts(up)
        print("negative entries: memory %d, store %d, evicted %d; upstream requests for %d "
              "IDs: debuginfo %d, executable %d" % (mem, store, ev, n, dbg, exe))
        check(mem <= 1000 and store <= 1000, "over the bound: %d %d" % (mem, store))
        check(ev >= n - 1000, "evictions %d" % ev)
        check(dbg == n, "debuginfo requests %d for %d IDs" % (dbg, n))
        # one request per ID: executables are asked while the server may have them
        # (16 misses in a row, plus the 4 in flight then), then one walk in 64
        check(exe <= 16 + 4 + n // 64 + 1, "executable requests %d" % exe)
    finally:
        d.stop()
    d = Daemon(ARGS.symbolizerd, data, os.path.join(work, "d2.log"), upstreams=[up.url],
               extra=extra)
    try:
        store = metric(d, "symbolizer_store_negative_entries")
        check(0 < store <= 1000, "after a restart: %d negative records" % store)
    finally:
        d.stop()


def case_new_lookups():
    work = tempdir("status-lookups-")
    up = FaultServer(work, "up", {})
    d = daemon(work, "d", upstreams=[up.url], extra=["--max-new-lookups-per-call", "100"])
    try:
        ids = [rand_id() for _ in range(300)]
        resp = d.symbolize([pb.mapping(b) for b in ids], [], max_wait_ms=60000)
        sts = [pb.STATUS[m["status"]] for m in resp["mappings"]]
        check(sts.count("NOT_FOUND") == 100 and sts.count("PENDING") == 200,
              "first call: %d not found, %d pending" % (sts.count("NOT_FOUND"),
                                                        sts.count("PENDING")))
        pend = [m for m in resp["mappings"] if pb.STATUS[m["status"]] == "PENDING"]
        check(all("not looked up yet" in m["error"] and m["retry_after_ms"] > 0 for m in pend),
              "pending without the reason: %r" % pend[0])
        dbg, _ = upstream_counts(up)
        check(dbg == 100, "upstream requests %d for 100 new lookups" % dbg)
        resp = d.symbolize([pb.mapping(b) for b in ids], [], max_wait_ms=60000)
        sts = [pb.STATUS[m["status"]] for m in resp["mappings"]]
        check(sts.count("NOT_FOUND") == 200 and sts.count("PENDING") == 100,
              "second call: %r" % {s: sts.count(s) for s in set(sts)})
        dbg, _ = upstream_counts(up)
        check(dbg == 200, "upstream requests %d after two calls" % dbg)
    finally:
        d.stop()
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("outcomes", case_outcomes), ("breaker_open", case_breaker_open),
                      ("index_failed", case_index_failed), ("budget", case_budget),
                      ("negative_bound", case_negative_bound),
                      ("new_lookups", case_new_lookups)], ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
