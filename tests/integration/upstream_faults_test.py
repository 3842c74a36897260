#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""symbolctl fetch against a misbehaving upstream (upstream_fault_server.py).

    upstream_faults_test.py --symbolctl PATH --fixtures DIR [CASE...]

Each case starts its own fault server(s) on 127.0.0.1 and its own store, and
checks the status, the retries and the negative-cache entry, that nothing
partial or foreign was stored (`fetch --verify`, `--info`), and that a bad
server does not hold up the other fetches of the same run.
"""
import argparse
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from upstream_lib import (FaultBench, check, fetch, info, verify, run_cases,  # noqa: E402
                          tempdir, build_id, free_port)

FAST = ["--upstream-retry-backoff=10ms", "--negative-cache-ttl=1h", "--error-cache-ttl=5m"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    S = a.symbolctl
    work = tempdir("upstream_faults_")
    bench = FaultBench(work, os.path.join(a.fixtures, "c_O2_dw5"), "fa")
    fresh, server = bench.fresh, bench.server

    def no_file(d, bid):
        i = info(S, d, [bid]).one(bid)
        check(i["status"] != "present", "a file was stored: %s" % i)
        verify(S, d)
        return i

    def neg_ttl_s(i):
        return int(i["neg_expiry_in"].rstrip("s"))

    def http_500_retried_then_cached():
        bid, _, d = fresh()
        s = server({bid + "/debuginfo": "500", bid + "/executable": "500"})
        # (A breaker that does not open: 6 failures in a row here.)
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--upstream-retries=2",
                                                      "--upstream-breaker-failures=100"])
        res = r.one(bid)
        check(r.rc == 3 and res["status"] == "error", str(r))  # 3: upstreams failed
        check("HTTP 500" in res["error"] and s.url in res["error"], str(r))
        check(s.requests(bid + "/debuginfo") == 3, "retries: %s" % s.stats())
        check(s.requests(bid + "/executable") == 3, "retries: %s" % s.stats())
        i = no_file(d, bid)
        # The error TTL (5m), not the not-found one (1h).
        check(i["status"] == "error" and 0 < neg_ttl_s(i) <= 300, str(i))
        r = fetch(S, d, [bid], [s.url], extra=FAST)
        check(r.one(bid)["cached"] == "1" and r.one(bid)["status"] == "error", str(r))
        check(s.requests(bid + "/debuginfo") == 3, "asked again: %s" % s.stats())

    def flaky_server_recovers():
        bid, path, d = fresh()
        s = server({bid + "/debuginfo": "flaky:2:" + path})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--upstream-retries=2"])
        check(r.rc == 0 and r.one(bid)["kind"] == "debuginfo", str(r))
        check(s.requests(bid + "/debuginfo") == 3, str(s.stats()))
        verify(S, d)

    def hang_times_out_without_blocking_others():
        bid, path, d = fresh()
        good, gpath, _ = fresh()
        slow = server({bid + "/debuginfo": "hang", bid + "/executable": "hang",
                       good + "/debuginfo": "file:" + gpath})
        backup = server({bid + "/debuginfo": "file:" + path})
        r = fetch(S, d, [bid, good], [slow.url, backup.url],
                  extra=FAST + ["--upstream-timeout=1s", "--upstream-retries=0"])
        check(r.rc == 0, str(r))
        # The good one finished first: the hanging download held nothing up.
        check(r.order == [good, bid], str(r))
        check(r.one(bid)["source"] == backup.url, str(r))
        check(r.upstreams[slow.url]["failures"] == "1", str(r))
        # Alone, the hang is a timeout error naming the server.
        d2 = d + "-alone"
        r = fetch(S, d2, [bid], [slow.url], extra=FAST + ["--upstream-timeout=1s",
                                                          "--upstream-retries=0"])
        check(r.one(bid)["status"] == "error" and "timeout" in r.one(bid)["error"], str(r))
        check(slow.url in r.one(bid)["error"], str(r))
        no_file(d2, bid)

    def trickle_is_a_timeout():
        bid, path, d = fresh()
        s = server({bid + "/debuginfo": "trickle:" + path})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--upstream-timeout=1s",
                                                      "--upstream-retries=0"])
        check(r.one(bid)["status"] == "error" and "timeout" in r.one(bid)["error"], str(r))
        no_file(d, bid)

    def close_mid_body():
        bid, path, d = fresh()
        s = server({bid + "/debuginfo": "close:" + path})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--upstream-retries=1"])
        check(r.one(bid)["status"] == "error", str(r))
        check(s.requests(bid + "/debuginfo") == 2, str(s.stats()))
        no_file(d, bid)

    def reset_connection():
        bid, _, d = fresh()
        s = server({bid + "/debuginfo": "reset", bid + "/executable": "reset"})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--upstream-retries=0"])
        check(r.one(bid)["status"] == "error", str(r))
        no_file(d, bid)

    def wrong_build_id_rejected():
        bid, _, d = fresh()
        other = os.path.join(a.fixtures, "c_O2_dw4")
        s = server({bid + "/debuginfo": "file:" + other, bid + "/executable": "404"})
        r = fetch(S, d, [bid], [s.url], extra=FAST)
        res = r.one(bid)
        check(res["status"] == "error" and "build ID mismatch" in res["error"], str(r))
        check(s.url in res["error"] and build_id(other) in res["error"], str(r))
        check(r.upstreams[s.url]["rejected"] == "1", str(r))
        check(s.url in r.stderr and "rejected" in r.stderr, str(r))
        no_file(d, bid)

    def over_size_cap_declared():
        bid, _, d = fresh()
        s = server({bid + "/debuginfo": "big:200000000", bid + "/executable": "404"})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--max-debuginfo-size=1M"])
        check(r.one(bid)["status"] == "too_large", str(r))
        st = s.stats()[bid + "/debuginfo"]
        check(st["maxsize"] == str(1 << 20), "X-DEBUGINFOD-MAXSIZE: %s" % st)
        check(st["user_agent"].startswith("symbolizer/"), "User-Agent: %s" % st)
        # Aborted at the headers: the server could write little of its 200 MB.
        check(st["sent"] < 64 << 20, "server sent %d bytes" % st["sent"])
        i = no_file(d, bid)
        check(i["status"] == "too_large" and neg_ttl_s(i) > 300, str(i))

    def over_size_cap_streamed():
        bid, _, d = fresh()
        s = server({bid + "/debuginfo": "stream:200000000", bid + "/executable": "404"})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--max-debuginfo-size=1M"])
        check(r.one(bid)["status"] == "too_large", str(r))
        st = s.stats()[bid + "/debuginfo"]
        check(st["sent"] < 64 << 20, "server sent %d bytes" % st["sent"])
        no_file(d, bid)

    def http_406_too_large():
        bid, _, d = fresh()
        s = server({bid + "/debuginfo": "406", bid + "/executable": "404"})
        other = server({bid + "/debuginfo": "404", bid + "/executable": "404"})
        r = fetch(S, d, [bid], [s.url, other.url], extra=FAST)
        check(r.one(bid)["status"] == "too_large" and "406" in r.one(bid)["error"], str(r))
        # Same cap everywhere: the next server is not asked for the debuginfo.
        check(other.requests(bid + "/debuginfo") == 0, str(other.stats()))
        no_file(d, bid)

    def refused_then_next_server():
        bid, path, d = fresh()
        dead = "http://127.0.0.1:%d" % free_port()
        s = server({bid + "/debuginfo": "file:" + path})
        r = fetch(S, d, [bid], [dead, s.url], extra=FAST + ["--upstream-retries=1"])
        check(r.rc == 0 and r.one(bid)["source"] == s.url, str(r))
        check(r.upstreams[dead]["failures"] == "2", str(r))
        verify(S, d)

    def circuit_breaker_opens():
        ids = [fresh()[0] for _ in range(6)]
        d = os.path.join(work, "data-breaker")
        cfg = {}
        for b in ids:
            cfg[b + "/debuginfo"] = "500"
            cfg[b + "/executable"] = "500"
        s = server(cfg)
        r = fetch(S, d, ids, [s.url], extra=FAST + [
            "--serial", "--upstream-retries=0", "--upstream-breaker-failures=3",
            "--upstream-breaker-cooldown=10m"])
        check(all(r.one(b)["status"] == "error" for b in ids), str(r))
        total = sum(v["requests"] for k, v in s.stats().items() if k != "_server")
        check(total == 3, "the server got %d requests: %s" % (total, s.stats()))
        u = r.upstreams[s.url]
        check(u["breaker"] == "open" and u["opens"] == "1", str(r))
        check(u["skipped"] == "9", str(r))
        check("circuit open" in r.stderr, str(r))
        check("circuit breaker open" in r.one(ids[-1])["error"], str(r))

    def breaker_half_open_probe_closes_it():
        ids = [fresh() for _ in range(4)]
        d = os.path.join(work, "data-halfopen")
        cfg = {}
        for k, (b, path, _) in enumerate(ids):
            cfg[b + "/debuginfo"] = "500" if k < 2 else "file:" + path
            cfg[b + "/executable"] = "500"
        s = server(cfg)
        # Cooldown 0: an open breaker half-opens at once; each probe that fails
        # opens it again, the first one that succeeds closes it.
        r = fetch(S, d, [b for b, _, _ in ids], [s.url], extra=FAST + [
            "--serial", "--upstream-retries=0", "--upstream-breaker-failures=2",
            "--upstream-breaker-cooldown=0"])
        check([r.one(b)["status"] for b, _, _ in ids] == ["error", "error", "ok", "ok"], str(r))
        u = r.upstreams[s.url]
        check(u["opens"] == "3" and u["breaker"] == "closed", str(r))
        check("circuit closed" in r.stderr, str(r))

    def concurrency_limits():
        ids = [fresh() for _ in range(8)]
        for per, total, want in ((2, 16, 2), (8, 3, 3)):
            s = server({b + "/debuginfo": "slow:" + p for b, p, _ in ids})
            d = os.path.join(work, "data-limits-%d-%d" % (per, total))
            r = fetch(S, d, [b for b, _, _ in ids], [s.url], extra=FAST + [
                "--max-fetches-per-upstream=%d" % per, "--max-concurrent-fetches=%d" % total])
            check(r.rc == 0, str(r))
            got = s.stats()["_server"]["max_active"]
            check(got == want, "per-upstream %d, global %d: %d at once" % (per, total, got))

    def error_then_executable():
        bid = build_id(os.path.join(a.fixtures, "c_stripped"))
        d = os.path.join(work, "data-exec")
        s = server({bid + "/debuginfo": "500",
                    bid + "/executable": "file:" + os.path.join(a.fixtures, "c_stripped")})
        r = fetch(S, d, [bid], [s.url], extra=FAST + ["--upstream-retries=0"])
        check(r.rc == 0 and r.one(bid)["kind"] == "executable", str(r))
        check("HTTP 500" in r.one(bid)["error"], str(r))
        i = info(S, d, [bid]).one(bid)
        # Debug info failed with an error: look again after the short TTL.
        check(i["kind"] == "executable" and 0 < neg_ttl_s(i) <= 300, str(i))
        verify(S, d)

    try:
        rc = run_cases([
            ("http_500_retried_then_cached", http_500_retried_then_cached),
            ("flaky_server_recovers", flaky_server_recovers),
            ("hang_times_out_without_blocking_others", hang_times_out_without_blocking_others),
            ("trickle_is_a_timeout", trickle_is_a_timeout),
            ("close_mid_body", close_mid_body),
            ("reset_connection", reset_connection),
            ("wrong_build_id_rejected", wrong_build_id_rejected),
            ("over_size_cap_declared", over_size_cap_declared),
            ("over_size_cap_streamed", over_size_cap_streamed),
            ("http_406_too_large", http_406_too_large),
            ("refused_then_next_server", refused_then_next_server),
            ("circuit_breaker_opens", circuit_breaker_opens),
            ("breaker_half_open_probe_closes_it", breaker_half_open_probe_closes_it),
            ("concurrency_limits", concurrency_limits),
            ("error_then_executable", error_then_executable),
        ], a.cases)
    finally:
        bench.stop()
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
