# SPDX-License-Identifier: Apache-2.0
"""SymbolizeProfile and `symbolctl pprof` end to end (issue 15, item 2).

    pprof_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]

A running fixture (under gdb, stopped at breakpoints in several functions)
gives its real /proc/PID/maps and sampled stacks (the leaf's PC, then return
addresses). The profile built from them (profile_pb.py, by hand) is
symbolized by the daemon and by `symbolctl pprof`; every location's lines
equal `symbolctl addr2line`'s for the same address (address - 1 for return
addresses), samples and labels come back untouched, and `go tool pprof`
(-symbolize=none, so every name is ours) shows those names and lines with
-top, -traces and -lines. Also: a mapping of a build ID no source has
(reported, its locations untouched), a slow and a hanging upstream (PENDING
reported with its retry hint; symbolctl asks again until OK, or reports it), a profile of 1M locations (the daemon's
peak RSS grows less than the call's memory cap), hostile profiles
(invalid_argument or resource_exhausted, and the daemon keeps serving).
"""
import argparse
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
import profile_pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import (Debuginfod, FaultServer, build_id, check, run_cases,  # noqa: E402
                          tempdir)

PATH = "/symbolizer.v1.SymbolizerService/SymbolizeProfile"
FIXTURE = "c_O2_dw5"
BREAKS = ["hash_words", "op_div", "op_twice", "checked_div", "fx_inner", "fx_middle"]
# The call's memory cap (svc_profile_decode.h): a base and so much per byte.
ARENA_BASE, ARENA_PER_BYTE = 64 << 20, 16

GDB_SCRIPT = r'''
import gdb, json
out = {"stacks": []}
def on_stop(ev):
    pcs, f = [], gdb.newest_frame()
    while f is not None:
        if f.type() != gdb.INLINE_FRAME:
            pcs.append(f.pc())
        f = f.older()
    out["stacks"].append(pcs)
gdb.events.stop.connect(on_stop)
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set breakpoint pending off")
for fn in %r:
    try:
        gdb.execute("break " + fn)
    except gdb.error:
        pass
gdb.execute("run a b c d e f > /dev/null")
out["maps"] = open("/proc/%%d/maps" %% gdb.selected_inferior().pid).read()
for _ in range(200):
    if not gdb.selected_inferior().pid:
        break
    try:
        gdb.execute("continue")
    except gdb.error:
        break
print("JSON" + json.dumps(out))
'''


def sample_fixture(path, work):
    """(maps lines of the fixture's file, stacks) of a run of the fixture."""
    script = os.path.join(work, "sample.py")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT % (BREAKS,))
    out = subprocess.run(["gdb", "-nx", "-batch", "-x", script, path], capture_output=True,
                         text=True, timeout=120).stdout
    m = re.search(r"^JSON(.*)$", out, re.M)
    check(m, "gdb gave no stacks:\n" + out[-2000:])
    data = json.loads(m.group(1))
    maps = []
    for line in data["maps"].splitlines():
        w = line.split()
        if len(w) >= 6 and w[5] == os.path.realpath(path):
            lo, hi = (int(x, 16) for x in w[0].split("-"))
            maps.append((lo, hi, int(w[2], 16), w[1]))
    stacks = [s for s in data["stacks"] if s]
    check(maps and len(stacks) >= 4, "too few mappings or stacks: %r %r" % (maps, stacks))
    return maps, stacks


def loads(path):
    """PT_LOAD segments: (offset, vaddr, filesz)."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    return [(int(w[1], 16), int(w[2], 16), int(w[4], 16))
            for w in (line.split() for line in out.splitlines()) if w and w[0] == "LOAD"]


def elf_address(segs, maps, addr):
    for lo, hi, off, _ in maps:
        if lo <= addr < hi:
            foff = addr - lo + off
            for s_off, s_vaddr, s_size in segs:
                if s_off <= foff < s_off + s_size:
                    return foff - s_off + s_vaddr
    raise AssertionError("0x%x outside the fixture" % addr)


def addr2line(symbolctl, path, addrs):
    """[(name, file, line), ...] innermost first, per address."""
    out = subprocess.run([symbolctl, "addr2line", "-e", path] + ["%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout
    res = []
    for block in out.split("\n\n")[:len(addrs)]:
        lines = block.strip("\n").split("\n")
        frames = []
        for name, loc in zip(lines[0::2], lines[1::2]):
            file, line = loc.rsplit(":", 2)[:2]
            frames.append((name, file, int(line)))
        res.append(frames)
    return res


def build_profile(maps, stacks, bid, fname, extra_mapping=None):
    """A profile of the stacks: one mapping per maps line, one location per PC."""
    strings = ["", "samples", "count", "cpu", "nanoseconds", fname, bid, "thread", "main",
               "bytes"]
    mappings = [{"id": i + 1, "memory_start": lo, "memory_limit": hi, "file_offset": off,
                 "filename": 5, "build_id": 6} for i, (lo, hi, off, _) in enumerate(maps)]
    locs, ids = [], {}
    samples = []
    for k, st in enumerate(stacks):
        ids_of = []
        for pc in st:
            if pc not in ids:
                mi = next(i for i, (lo, hi, _, _) in enumerate(maps) if lo <= pc < hi)
                ids[pc] = len(locs) + 1
                locs.append({"id": ids[pc], "mapping_id": mi + 1, "address": pc})
            ids_of.append(ids[pc])
        samples.append({"location_id": ids_of, "value": [k + 1, (k + 1) * 1000],
                        "label": [(7, 8, 0, 0), (9, 0, 4096 + k, 9)]})
    prof = {"sample_type": [(1, 2), (3, 4)], "sample": samples, "mapping": mappings,
            "location": locs, "string_table": strings, "period_type": (3, 4),
            "period": 10000000, "time_nanos": 1700000000000000000,
            # An unknown field (99) that must come back.
            "raw_tail": pb.field_varint(99, 42)}
    if extra_mapping:
        extra_mapping(prof)
    return prof


def sanitized(binary):
    """True for a daemon built with ASan or TSan (their shadow memory and
    quarantine make its RSS no measure of the call's memory)."""
    with open(binary, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def rss_peak_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    work = tempdir("pprof-test-")
    path = os.path.join(args.fixtures, FIXTURE)
    bid = build_id(path)
    up = Debuginfod(work, "debuginfod", [path])
    state = {}

    def daemon():
        if "d" not in state:
            state["d"] = Daemon(args.symbolizerd, os.path.join(work, "data"),
                                os.path.join(work, "daemon.log"), upstreams=[up.url])
        return state["d"]

    def sampled():
        if "s" not in state:
            state["s"] = sample_fixture(path, work)
        return state["s"]

    def symbolize(d, prof_bytes, **opts):
        status, hdrs, data = d.post(profile_pb.request(prof_bytes, max_wait_ms=30000, **opts),
                                    path=PATH)
        check(status == 200, "SymbolizeProfile: HTTP %d %r" % (status, data[:300]))
        if hdrs.get("content-encoding") == "gzip":
            data = gzip.decompress(data)
        return profile_pb.decode_response(data)

    def expected_lines(prof, returns):
        """addr2line's frames per location (address - 1 for return addresses)."""
        maps, _ = sampled()
        segs = loads(path)
        addrs = [elf_address(segs, maps, loc["address"]) - (1 if loc["id"] in returns else 0)
                 for loc in prof["location"]]
        return addr2line(args.symbolctl, path, addrs)

    def lines_of(prof, loc):
        fn = {f["id"]: f for f in prof["function"]}
        st = prof["string_table"]
        return [(st[fn[f]["name"]], st[fn[f]["filename"]], line) for f, line, _ in loc["line"]]

    def check_symbolized(inp, out, label):
        returns = {i for s in inp["sample"] for i in s["location_id"][1:]} - \
            {s["location_id"][0] for s in inp["sample"]}
        check(returns, "%s: no return addresses in the stacks" % label)
        want = expected_lines(inp, returns)
        check(len(out["location"]) == len(inp["location"]), "%s: locations changed" % label)
        inlined = 0
        for i, loc in enumerate(out["location"]):
            src = inp["location"][i]
            check((loc["id"], loc["mapping_id"], loc["address"]) ==
                  (src["id"], src["mapping_id"], src["address"]),
                  "%s: location %d changed" % (label, i))
            got = lines_of(out, loc)
            check(got == want[i], "%s: location 0x%x: %r, addr2line %r"
                  % (label, loc["address"], got, want[i]))
            inlined += len(got) > 1
        check(inlined, "%s: no location with inlined frames" % label)
        check(out["sample"] == inp["sample"], "%s: samples or labels changed" % label)
        for k in ("sample_type", "period_type", "period", "time_nanos"):
            check(out.get(k) == inp.get(k), "%s: %s changed" % (label, k))
        check(out["string_table"][:len(inp["string_table"])] == inp["string_table"],
              "%s: the string table's first entries moved" % label)
        check(len(set(out["string_table"])) == len(out["string_table"]),
              "%s: a string twice in the table" % label)
        keys = [(f["name"], f["system_name"], f["filename"], f["start_line"])
                for f in out["function"]]
        check(len(set(keys)) == len(keys), "%s: a function twice in the table" % label)
        check((99, 0, 42) in out["unknown"], "%s: unknown field lost: %r" % (label, out["unknown"]))
        used = {loc["mapping_id"] for loc in out["location"]}
        for m in out["mapping"]:
            if m["id"] in used:
                check(m["has_functions"] and m["has_filenames"] and m["has_line_numbers"] and
                      m["has_inline_frames"], "%s: mapping flags %r" % (label, m))
        return want

    def go_pprof(prof_path, *flags):
        env = dict(os.environ, GOPATH=os.path.join(work, "gopath"),
                   GOCACHE=os.path.join(work, "gocache"), HOME=work, GOPROXY="off",
                   GOFLAGS="-mod=mod", GOTOOLCHAIN="local", PPROF_TMPDIR=work)
        r = subprocess.run(["go", "tool", "pprof", "-symbolize=none"] + list(flags) + [prof_path],
                           capture_output=True, text=True, env=env, timeout=300)
        check(r.returncode == 0, "go tool pprof %s: %s" % (" ".join(flags), r.stderr[-1500:]))
        return r.stdout

    def case_symbolize_profile():
        d = daemon()
        maps, stacks = sampled()
        inp = build_profile(maps, stacks, bid, path)
        raw = profile_pb.encode(inp)
        prof, mres, sym, unsym = symbolize(d, raw)
        check(len(mres) == len(maps), "mapping results: %r" % mres)
        used = {loc["mapping_id"] for loc in inp["location"]}
        for i, m in enumerate(mres):
            want = "OK" if i + 1 in used else "UNSPECIFIED"
            check(m["status"] == want, "mapping %d: %r" % (i + 1, m))
        check(sym == len(inp["location"]) and unsym == 0, "counts %d %d" % (sym, unsym))
        check(prof[:2] != b"\x1f\x8b", "plain in, gzip out")
        want = check_symbolized(inp, profile_pb.decode(prof), "daemon")
        got = d.metric('symbolizer_profile_locations_total{result="symbolized"}')
        check(got is not None and got >= sym, "metric: %r" % got)
        state["want"] = want
        state["inp"] = inp

    def case_gzip_members():
        """A pprof of several gzip members is one stream, as Go's reader reads
        it (issue 25, item 7): every sample comes back, not the first member's."""
        d = daemon()
        maps, stacks = sampled()
        inp = build_profile(maps, stacks, bid, path)
        raw = profile_pb.encode(inp)
        cut = [0, len(raw) // 3, 2 * len(raw) // 3, len(raw)]
        body = b"".join(gzip.compress(raw[a:b]) for a, b in zip(cut, cut[1:]))
        prof, mres, sym, unsym = symbolize(d, body)
        check(prof[:2] == b"\x1f\x8b", "gzip in, gzip out")
        out = profile_pb.decode(gzip.decompress(prof))
        check(len(out["sample"]) == len(inp["sample"]),
              "samples: %d in, %d out" % (len(inp["sample"]), len(out["sample"])))
        check(sym == len(inp["location"]) and unsym == 0, "counts %d %d" % (sym, unsym))
        check_symbolized(inp, out, "gzip members")
        # Bytes after a member that are not another member: refused, as Go does.
        status, got, msg = d.connect_error(profile_pb.request(gzip.compress(raw) + b"\0\0\0\0"),
                                           path=PATH)
        check(got == "invalid_argument", "bytes after a member: %d %s %r" % (status, got, msg))

    def case_symbolctl_and_go_pprof():
        d = daemon()
        maps, stacks = sampled()
        inp = build_profile(maps, stacks, bid, path)
        in_path, out_path = os.path.join(work, "in.pb.gz"), os.path.join(work, "out.pb.gz")
        with open(in_path, "wb") as f:
            f.write(gzip.compress(profile_pb.encode(inp)))
        r = subprocess.run([args.symbolctl, "pprof", in_path, "-o", out_path, "--server", d.url],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, "symbolctl pprof: %d %s" % (r.returncode, r.stderr))
        with open(out_path, "rb") as f:
            data = f.read()
        check(data[:2] == b"\x1f\x8b", "gzip in, gzip out")
        want = check_symbolized(inp, profile_pb.decode(gzip.decompress(data)), "symbolctl")
        # go tool pprof reads our output: every name and line addr2line gives.
        traces = go_pprof(out_path, "-traces", "-lines")
        top = go_pprof(out_path, "-top", "-lines", "-nodecount=1000", "-nodefraction=0")
        plain = go_pprof(out_path, "-traces")
        for frames in want:
            for name, file, line in frames:
                pos = "%s:%d" % (file, line)
                check(re.search(r"\b%s %s\b" % (re.escape(name), re.escape(pos)), traces),
                      "go tool pprof -traces -lines lacks %s %s:\n%s" % (name, pos, traces))
                check(re.search(r"\b%s\b" % re.escape(name), plain),
                      "go tool pprof -traces lacks %s" % name)
            name, file, line = frames[0]
            check("%s %s:%d" % (name, file, line) in top,
                  "go tool pprof -top -lines lacks %s %s:%d:\n%s" % (name, file, line, top))
        print("  go tool pprof -top -lines:\n" + "\n".join(top.splitlines()[:12]))

    def unknown_profile():
        maps, stacks = sampled()
        unknown = "0123456789abcdef" * 2 + "deadbeef"

        def add(prof):
            prof["string_table"].append(unknown)
            prof["string_table"].append("/usr/lib/libgone.so")
            n = len(prof["string_table"])
            prof["mapping"].append({"id": 50, "memory_start": 0x7f0000000000,
                                    "memory_limit": 0x7f0000100000, "file_offset": 0,
                                    "filename": n - 1, "build_id": n - 2})
            base = len(prof["location"])
            for k in range(5):
                prof["location"].append({"id": base + k + 1, "mapping_id": 50,
                                         "address": 0x7f0000001000 + 0x40 * k})
                prof["sample"].append({"location_id": [base + k + 1, 1], "value": [1, 1],
                                       "label": []})
        return build_profile(maps, stacks, bid, path, add), unknown

    def case_unknown_build_id():
        d = daemon()
        inp, unknown = unknown_profile()
        prof, mres, sym, unsym = symbolize(d, profile_pb.encode(inp))
        out = profile_pb.decode(prof)
        check(mres[-1]["status"] == "NOT_FOUND" and mres[-1]["error"],
              "unknown build ID: %r" % mres[-1])
        check(unsym == 5, "unsymbolized %d" % unsym)
        for loc in out["location"]:
            if loc["mapping_id"] == 50:
                src = next(x for x in inp["location"] if x["id"] == loc["id"])
                check(loc == dict(src, line=[]), "location untouched: %r %r" % (loc, src))
        check(not any(out["mapping"][-1][k] for k in ("has_functions", "has_line_numbers")),
              "flags set on the unknown mapping")
        # symbolctl: reported on stderr, exit 1, the profile still written.
        in_path, out_path = os.path.join(work, "unk.pb"), os.path.join(work, "unk.out.pb")
        with open(in_path, "wb") as f:
            f.write(profile_pb.encode(inp))
        r = subprocess.run([args.symbolctl, "pprof", in_path, "-o", out_path, "--server", d.url,
                            "--wait", "2s"], capture_output=True, text=True, timeout=120)
        check(r.returncode == 1, "symbolctl pprof exit %d" % r.returncode)
        check(unknown in r.stderr and "not_found" in r.stderr and "libgone" in r.stderr,
              "stderr: %r" % r.stderr)
        check(os.path.getsize(out_path) > 0, "no profile written")

    def case_pending():
        """A slow upstream: PENDING with a retry hint, locations untouched; symbolctl
        asks again until OK. A hanging one: symbolctl reports it on stderr."""
        maps, stacks = sampled()
        inp = build_profile(maps, stacks, bid, path)
        raw = profile_pb.encode(inp)
        fs = FaultServer(work, "slow", {bid + "/debuginfo": "slow:" + path})
        hang = FaultServer(work, "hang", {bid + "/debuginfo": "hang"})
        ds = []
        try:
            for name, srv in (("slow", fs), ("hang", hang)):
                ds.append(Daemon(args.symbolizerd, os.path.join(work, name + ".data"),
                                 os.path.join(work, name + ".daemon.log"), upstreams=[srv.url]))
            status, hdrs, data = ds[0].post(profile_pb.request(raw, max_wait_ms=50), path=PATH)
            check(status == 200, "slow: HTTP %d" % status)
            prof, mres, sym, unsym = profile_pb.decode_response(data)
            used = {loc["mapping_id"] for loc in inp["location"]}
            for i in used:
                m = mres[i - 1]
                check(m["status"] == "PENDING" and m["retry_after_ms"] > 0 and m["error"],
                      "slow upstream: %r" % m)
            out = profile_pb.decode(prof)
            check(sym == 0 and all(not loc["line"] for loc in out["location"]),
                  "PENDING mappings' locations got lines")
            check(out["sample"] == inp["sample"], "samples changed")
            # symbolctl asks again (with what came back) until the mapping is OK.
            in_path, out_path = os.path.join(work, "p.pb"), os.path.join(work, "p.out.pb")
            with open(in_path, "wb") as f:
                f.write(raw)
            r = subprocess.run([args.symbolctl, "pprof", in_path, "-o", out_path, "--server",
                                ds[0].url, "--wait", "30s"], capture_output=True, text=True,
                               timeout=120)
            check(r.returncode == 0, "symbolctl pprof after PENDING: %d %s"
                  % (r.returncode, r.stderr))
            with open(out_path, "rb") as f:
                check_symbolized(inp, profile_pb.decode(f.read()), "after PENDING")
            # Still PENDING when --wait runs out: on stderr, exit 1, the profile written.
            r = subprocess.run([args.symbolctl, "pprof", in_path, "-o", out_path, "--server",
                                ds[1].url, "--wait", "300ms"], capture_output=True, text=True,
                               timeout=120)
            check(r.returncode == 1 and "pending" in r.stderr and bid in r.stderr and
                  "retry after" in r.stderr, "hanging upstream: %d %r" % (r.returncode, r.stderr))
            with open(out_path, "rb") as f:
                check(profile_pb.decode(f.read())["sample"] == inp["sample"], "profile not written")
        finally:
            for d in ds:
                d.stop()
            fs.stop()
            hang.stop()

    def case_million_locations():
        d = daemon()
        maps, stacks = sampled()
        exe = next((lo, hi, off) for lo, hi, off, perm in maps if "x" in perm)
        pcs = sorted({pc for st in stacks for pc in st})
        # Under a sanitizer: fewer locations, and no RSS bound (shadow memory).
        san = sanitized(args.symbolizerd)
        n = 200000 if san else 1000000
        rnd = random.Random(3)
        # Encoded directly: 1M locations, 100k samples of 10 locations each.
        v = pb.varint
        out = bytearray(pb.field_bytes(1, pb.field_varint(1, 1) + pb.field_varint(2, 2)))
        for s in range(n // 10):
            ids = b"".join(v(s * 10 + j + 1) for j in range(10))
            body = pb.field_bytes(1, ids) + pb.field_bytes(2, v(1))
            out += b"\x12" + v(len(body)) + body
        out += pb.field_bytes(3, pb.field_varint(1, 1) + pb.field_varint(2, exe[0]) +
                              pb.field_varint(3, exe[1]) + pb.field_varint(4, exe[2]) +
                              pb.field_varint(5, 3) + pb.field_varint(6, 4))
        for i in range(n):
            a = pcs[i % len(pcs)] if i % 2 else rnd.randrange(exe[0], exe[1])
            body = b"\x08" + v(i + 1) + b"\x10\x01\x18" + v(a)
            out += b"\x22" + v(len(body)) + body
        for s in ("", "samples", "count", "fixture", bid):
            out += pb.field_bytes(6, s)
        raw = bytes(out)
        gz = gzip.compress(raw, 6)
        print("  %d locations: %d bytes, %d gzipped%s" % (n, len(raw), len(gz),
                                                          " (sanitizer build)" if san else ""))
        before = rss_peak_kb(d.proc.pid)
        prof, mres, sym, unsym = symbolize(d, gz)
        after = rss_peak_kb(d.proc.pid)
        check(mres[0]["status"] == "OK", "mapping %r" % mres[0])
        check(sym + unsym == n and sym >= n // 2, "symbolized %d, not %d" % (sym, unsym))
        check(prof[:2] == b"\x1f\x8b", "gzip in, gzip out")
        cap_kb = (ARENA_BASE + ARENA_PER_BYTE * len(raw)) // 1024
        print("  peak RSS %d -> %d KB (+%d KB; the call's cap %d KB)"
              % (before, after, after - before, cap_kb))
        check(san or after - before < cap_kb, "peak RSS grew by %d KB, over the cap %d KB"
              % (after - before, cap_kb))
        # Read back: every location there, every sample byte for byte the same.
        back = gzip.decompress(prof)
        n_loc = sum(1 for num, _, _ in pb.parse(back) if num == 4)
        check(n_loc == n, "%d locations came back, not %d" % (n_loc, n))
        check([v for num, _, v in pb.parse(back) if num == 2] ==
              [v for num, _, v in pb.parse(raw) if num == 2], "samples changed")

    def case_hostile():
        d = daemon()
        maps, stacks = sampled()
        good = build_profile(maps, stacks, bid, path)

        def variant(fn):
            p = json.loads(json.dumps({k: v for k, v in good.items() if k != "raw_tail"}))
            fn(p)
            return profile_pb.encode(p)

        def set_(k, v):
            return lambda p: p.__setitem__(k, v)

        def loc_(k, v):
            return lambda p: p["location"][0].__setitem__(k, v)

        bomb = gzip.compress(b"\0" * (40 << 20), 9)
        cases = [
            ("bad gzip", b"\x1f\x8b\x08\x00" + b"\xff" * 64, "invalid_argument"),
            ("truncated gzip", gzip.compress(profile_pb.encode(good))[:-20], "invalid_argument"),
            ("not protobuf", b"\xff\xff\xff\xff", "invalid_argument"),
            ("missing mapping id", variant(loc_("mapping_id", 77)), "invalid_argument"),
            ("missing location id", variant(lambda p: p["sample"][0]["location_id"].append(999)),
             "invalid_argument"),
            ("string index out of range",
             variant(lambda p: p["mapping"][0].__setitem__("build_id", 1000)), "invalid_argument"),
            ("negative string index",
             variant(lambda p: p["sample"][0]["label"].append((-1, 0, 0, 0))), "invalid_argument"),
            ("location id 0", variant(loc_("id", 0)), "invalid_argument"),
            ("duplicate location id", variant(lambda p: p["location"].append(dict(p["location"][0]))),
             "invalid_argument"),
            ("missing function id", variant(loc_("line", [(5, 1, 0)])), "invalid_argument"),
            ("string_table[0] not empty", variant(set_("string_table", ["x"] + good["string_table"][1:])),
             "invalid_argument"),
            ("gzip bomb", bomb, "resource_exhausted"),
            ("field number 0", b"\x80\x00\x1f", "invalid_argument"),
        ]
        for label, body, code in cases:
            status, got, msg = d.connect_error(profile_pb.request(body), path=PATH)
            check(got == code, "%s: %d %s %r (want %s)" % (label, status, got, msg, code))
        status, got, msg = d.connect_error(b"\x0a\xff", path=PATH)
        check(got == "invalid_argument", "bad request: %s %s" % (got, msg))
        # A huge count: a mapping id that wraps, an address far outside: no crash.
        p, mres, _, unsym = symbolize(d, variant(loc_("address", (1 << 64) - 1)))
        check(unsym >= 1, "an address outside its mapping is left as it was")
        # Still serving.
        _, mres, sym, _ = symbolize(d, profile_pb.encode(good))
        check(mres[0]["status"] in ("OK", "UNSPECIFIED") and sym > 0, "daemon stopped serving")

    cases = [("symbolize_profile", case_symbolize_profile),
             ("gzip_members", case_gzip_members),
             ("symbolctl_and_go_pprof", case_symbolctl_and_go_pprof),
             ("unknown_build_id", case_unknown_build_id),
             ("pending", case_pending),
             ("million_locations", case_million_locations),
             ("hostile", case_hostile)]
    try:
        rc = run_cases(cases, args.cases)
    finally:
        if "d" in state:
            code = state["d"].stop()
            if code != 0:
                print("symbolizerd exited %d" % code)
                rc = 1
        up.stop()
    if rc == 0:
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
