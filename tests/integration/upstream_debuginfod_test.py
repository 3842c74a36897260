#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""symbolctl fetch against real elfutils debuginfod servers on 127.0.0.1.

    upstream_debuginfod_test.py --symbolctl PATH --fixtures DIR [CASE...]

Three servers over fixture files (tests/fixtures, built at test time):
  s1: c_O2_dw4 (full binary), dwz_a (+ dwz_common.debug), c_stripped (no DWARF)
  s2: c_O2_dw4 (same file), c_O2_dw5
  s3: c_stripped.debug  (the debug info s1 lacks, "appearing later")
Cases: upstream order and 404 fall-through, the stored bytes, the dwz
supplementary file, the executable fallback and its replacement by debug info,
the negative cache, single flight, local debug dirs first, DEBUGINFOD_URLS.
"""
import argparse
import filecmp
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from upstream_lib import (Debuginfod, check, fetch, info, verify, run_cases,  # noqa: E402
                          tempdir, build_id, free_port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    fx = lambda name: os.path.join(a.fixtures, name)  # noqa: E731
    S = a.symbolctl
    work = tempdir("upstream_debuginfod_")
    servers = []
    try:
        s1 = Debuginfod(work, "s1", [fx("c_O2_dw4"), fx("dwz_a"), fx("dwz_common.debug"),
                                     fx("c_stripped")])
        servers.append(s1)
        s2 = Debuginfod(work, "s2", [fx("c_O2_dw4"), fx("c_O2_dw5")])
        servers.append(s2)
        s3 = Debuginfod(work, "s3", [fx("c_stripped.debug")])
        servers.append(s3)
        dw4, dw5 = build_id(fx("c_O2_dw4")), build_id(fx("c_O2_dw5"))
        dwz_a, common = build_id(fx("dwz_a")), build_id(fx("dwz_common.debug"))
        stripped = build_id(fx("c_stripped"))
        check(build_id(fx("c_stripped.debug")) == stripped, "fixture pair disagrees")
        dead = "http://127.0.0.1:%d" % free_port()  # nothing listens there
        n = [0]

        def data_dir():
            n[0] += 1
            return os.path.join(work, "data%d" % n[0])

        def order_and_bytes():
            d, out = data_dir(), os.path.join(work, "out")
            r = fetch(S, d, [dw5, dw4], [s1.url, s2.url], extra=["--out", out])
            check(r.rc == 0, str(r))
            # dw5 only on s2: s1 answered 404 first; dw4 on both: s1 wins.
            check(r.one(dw5)["status"] == "ok" and r.one(dw5)["source"] == s2.url, str(r))
            check(r.one(dw4)["source"] == s1.url, str(r))
            check(r.one(dw4)["kind"] == "debuginfo" and r.one(dw4)["cached"] == "0", str(r))
            check(int(r.upstreams[s1.url]["not_found"]) == 1, str(r))
            check(int(r.upstreams[s1.url]["ok"]) == 1, str(r))
            for bid, f in ((dw5, "c_O2_dw5"), (dw4, "c_O2_dw4")):
                check(filecmp.cmp(os.path.join(out, bid), fx(f), shallow=False),
                      "stored bytes of %s differ from the served file" % f)
            # Again: from the store, no upstream asked (they are not even given).
            r2 = fetch(S, d, [dw5, dw4], [dead])
            check(r2.rc == 0 and r2.one(dw5)["cached"] == "1", str(r2))
            check(r2.upstreams[dead]["requests"] == "0", str(r2))
            verify(S, d)

        def dwz_supplementary():
            d = data_dir()
            r = fetch(S, d, [dwz_a], [s2.url, s1.url])
            check(r.rc == 0, str(r))
            check(r.one(dwz_a)["alt"] == common + ":ok", str(r))
            i = info(S, d, [dwz_a, common])
            check(i.one(dwz_a)["alt"] == common, str(i))
            check(i.one(common)["status"] == "present", str(i))
            check(i.one(common)["kind"] == "debuginfo", str(i))
            # Cached: the alt is found in the store as well.
            r = fetch(S, d, [dwz_a], [dead])
            check(r.rc == 0 and r.one(dwz_a)["cached"] == "1", str(r))
            check(r.one(dwz_a)["alt"] == common + ":ok", str(r))
            verify(S, d)

        def executable_fallback_then_upgrade():
            # No server has c_stripped's debug info: its executable is stored.
            d = data_dir()
            r = fetch(S, d, [stripped], [s1.url, s2.url], extra=["--negative-cache-ttl=10m"])
            check(r.rc == 0, str(r))
            res = r.one(stripped)
            check(res["kind"] == "executable" and res["source"] == s1.url, str(r))
            check("no debuginfo" in res.get("error", ""), str(r))
            i = info(S, d, [stripped]).one(stripped)
            check(i["kind"] == "executable" and int(i["neg_expiry_in"].rstrip("s")) > 60, str(i))
            # s3 now has it, but the negative cache holds for 10 minutes.
            r = fetch(S, d, [stripped], [s3.url, s1.url])
            check(r.one(stripped)["kind"] == "executable", str(r))
            check(r.one(stripped)["cached"] == "1", str(r))
            check(r.upstreams[s3.url]["requests"] == "0", str(r))
            # With a zero TTL the next fetch looks again, and debug info wins.
            d2 = data_dir()
            r = fetch(S, d2, [stripped], [s1.url], extra=["--negative-cache-ttl=0"])
            check(r.one(stripped)["kind"] == "executable", str(r))
            r = fetch(S, d2, [stripped], [s1.url, s3.url])
            check(r.rc == 0, str(r))
            check(r.one(stripped)["kind"] == "debuginfo", str(r))
            check(r.one(stripped)["source"] == s3.url, str(r))
            i = info(S, d2, [stripped]).one(stripped)
            check(i["kind"] == "debuginfo" and "error" not in i, str(i))
            check(int(i["size"]) == os.path.getsize(fx("c_stripped.debug")), str(i))
            verify(S, d2)

        def not_found_is_cached():
            d = data_dir()
            missing = "00112233445566778899aabbccddeeff00112233"
            r = fetch(S, d, [missing], [s1.url, s2.url])
            check(r.rc == 1 and r.one(missing)["status"] == "not_found", str(r))
            check(r.upstreams[s1.url]["not_found"] == "2", str(r))  # debuginfo + executable
            check(r.upstreams[s2.url]["not_found"] == "2", str(r))
            # Cached: a dead upstream is not even tried.
            r = fetch(S, d, [missing], [dead])
            check(r.one(missing)["status"] == "not_found", str(r))
            check(r.one(missing)["cached"] == "1", str(r))
            check(r.upstreams[dead]["requests"] == "0", str(r))
            i = info(S, d, [missing]).one(missing)
            check(i["status"] == "not_found" and int(i["neg_expiry_in"].rstrip("s")) > 500, str(i))

        def single_flight():
            d = data_dir()
            r = fetch(S, d, [dw5] * 8, [s2.url])
            check(r.rc == 0 and len(r.results[dw5]) == 8, str(r))
            check(r.fetcher["joined"] == "7", str(r))
            check(r.upstreams[s2.url]["requests"] == "1", str(r))

        def local_dir_first():
            d, dbg = data_dir(), os.path.join(work, "debugdir")
            os.makedirs(os.path.join(dbg, ".build-id", dw5[:2]), exist_ok=True)
            shutil.copy(fx("c_O2_dw5"), os.path.join(dbg, ".build-id", dw5[:2], dw5[2:] + ".debug"))
            r = fetch(S, d, [dw5], [s2.url], debug_dirs=[os.path.join(work, "nothing"), dbg])
            check(r.rc == 0 and r.one(dw5)["source"] == dbg, str(r))
            check(r.upstreams[s2.url]["requests"] == "0", str(r))
            check(r.fetcher["local_hits"] == "1", str(r))

        def debuginfod_urls_fallback():
            d = data_dir()
            r = fetch(S, d, [dw5], None, env={"DEBUGINFOD_URLS": "%s %s" % (dead, s2.url)})
            check(r.rc == 0 and r.one(dw5)["source"] == s2.url, str(r))
            check(set(r.upstreams) == {dead, s2.url}, str(r))
            # The flag wins over the variable.
            d = data_dir()
            r = fetch(S, d, [dw5], [s2.url], env={"DEBUGINFOD_URLS": dead})
            check(set(r.upstreams) == {s2.url}, str(r))

        def store_bound_evicts():
            d = data_dir()
            size = os.path.getsize(fx("c_O2_dw5")) + os.path.getsize(fx("c_O2_dw4")) // 2
            r = fetch(S, d, [dw5, dw4], [s2.url], extra=["--serial", "--max-store-bytes=%d" % size])
            check(r.rc == 0, str(r))
            check(r.store["evictions"] == "1" and r.store["files"] == "1", str(r))
            check(int(r.store["bytes"]) <= size, str(r))
            verify(S, d)

        rc = run_cases([
            ("order_and_bytes", order_and_bytes),
            ("dwz_supplementary", dwz_supplementary),
            ("executable_fallback_then_upgrade", executable_fallback_then_upgrade),
            ("not_found_is_cached", not_found_is_cached),
            ("single_flight", single_flight),
            ("local_dir_first", local_dir_first),
            ("debuginfod_urls_fallback", debuginfod_urls_fallback),
            ("store_bound_evicts", store_bound_evicts),
        ], a.cases)
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
