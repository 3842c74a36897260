#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""otlp_recorded_test: an OTLP profile recorded from real processes (issue 27).

otlp_test and otlp_forward_test build their request from chosen addresses;
this one records it: `perf record -g -e cpu-clock` (a software event, no PMU
needed) of a C program built here (frame pointers, a function inlined into
its caller, calls into libc) and of a stripped Go program without a GNU build
ID, both spinning long enough for a few hundred samples. Every callchain of
`perf script` (of the C program, those of its spin: spin_stacks says why)
becomes a stack of an ExportProfilesServiceRequest built with the
official .proto, as the OpenTelemetry eBPF profiler sends one: a mapping per
file named by its GNU build ID (the C program, libc, the kernel) or its Go
build ID (the Go program), addresses in the file's virtual-address space (perf
prints a user frame's offset in its file: through the PT_LOADs to its address), a frame type per location, one
sample per distinct stack with its count, and an interpreted frame (lines
already) on top of one stack.

Symbolized by SymbolizeOTLP (Connect binary and JSON) and through the OTLP
receiver (OTLP/HTTP protobuf, JSON, gzip; OTLP/gRPC) forwarded to an OTLP/HTTP
receiver on loopback: lines equal llvm-symbolizer's (libc: on its debug file;
Go: symbolctl's, which go_test checks against the Go runtime), inline frames in
OTLP's order; the kernel's frames (no debug info for the running kernel here)
keep their address and mapping, no lines; every other field equal to the
input; what arrives downstream equals SymbolizeOTLP's answer, once per send.

Usage: otlp_recorded_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR --go GO
       --src DIR --workdir DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import otlp_forward_test
import otlp_pb
import otlp_test
import perf_test
from daemon_lib import Daemon
from go_test import go_env, load_segments
from upstream_lib import TestFailure, build_id, check, run_cases, tempdir

ARGS = None
PB = None
KERNEL = "[kernel.kallsyms]"
LIBC_DEBUG_DIR = "/usr/lib/debug"

GO_PROG = r'''package main

import (
	"fmt"
	"time"
)

func mix(x uint64) uint64 {
	for i := 0; i < 100; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func work(n uint64) uint64 {
	s := uint64(0)
	for i := uint64(0); i < n; i++ {
		s += mix(i)
	}
	return s
}

func main() {
	s, t0 := uint64(0), time.Now()
	for time.Since(t0) < 400*time.Millisecond {
		s += work(100000)
	}
	fmt.Println(s)
}
'''


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def record(work, name, argv):
    """[[(addr, dso)] innermost first] of every sample, and {dso: GNU build ID}."""
    data = os.path.join(work, name + ".data")
    r = run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", data] + argv, cwd=work)
    check(r.returncode == 0, "perf record %s: %s" % (name, r.stderr))
    text = run(["perf", "script", "-i", data, "-F", "ip,dso"]).stdout
    stacks = []
    for block in text.split("\n\n"):
        frames = [(int(m.group(1), 16), m.group(2))
                  for m in re.finditer(r"^\s*([0-9a-f]+) \((\S+)\)$", block, re.M)]
        if frames:
            stacks.append(frames)
    ids = {}
    for line in run(["perf", "buildid-list", "-i", data]).stdout.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            ids[parts[1]] = parts[0]
    # perf lists the files of sampled instructions; a file seen only in
    # callchains (libc under main) has its build ID read here.
    for dso in {dso for frames in stacks for _, dso in frames}:
        if dso not in ids and os.path.isfile(dso):
            try:
                ids[dso] = build_id(dso)
            except TestFailure:
                pass  # no GNU build ID (the Go program)
    check(len(stacks) >= 20, "%s: only %d samples recorded" % (name, len(stacks)))
    return stacks, ids


def vaddr_of(path, segs, off):
    """perf prints a user frame as its offset in the file: the ELF address of it."""
    for p_offset, p_vaddr, p_filesz in segs:
        if p_offset <= off < p_offset + p_filesz:
            return off - p_offset + p_vaddr
    raise SystemExit("otlp_recorded: offset 0x%x is in no PT_LOAD of %s" % (off, path))


def to_vaddrs(stacks, paths):
    segs = {p: load_segments(p) for p in paths}
    return [[(vaddr_of(dso, segs[dso], a) if dso in segs else a, dso) for a, dso in frames]
            for frames in stacks]


def spin_stacks(stacks, prog):
    """The stacks of prog's spin: those through `work`. Its libc frames are then
    the startup callers of main. A sample in libc's own startup or exit code
    (ifunc resolvers, __libc_early_init, write at exit) may name a function
    by another .symtab name in llvm-symbolizer than DWARF's, which we print
    (compare_llvm's llvm-symtab-override and symtab-alias classes; not what
    this test is about), and how many such samples a run gets is chance."""
    out = run(["nm", "-S", prog]).stdout
    m = re.search(r"^([0-9a-f]+) ([0-9a-f]+) T work$", out, re.M)
    check(m, "nm -S %s: no work" % prog)
    lo, hi = int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)
    kept = [s for s in stacks if any(dso == prog and lo <= a < hi for a, dso in s)]
    check(len(kept) >= 20, "only %d of %d samples in the spin" % (len(kept), len(stacks)))
    return kept


def libc_debug(bid):
    p = os.path.join(LIBC_DEBUG_DIR, ".build-id", bid[:2], bid[2:] + ".debug")
    return p if os.path.exists(p) else None


def kernel_debug_held(bid):
    return os.path.exists(os.path.join(LIBC_DEBUG_DIR, ".build-id", bid[:2], bid[2:] + ".debug"))


def build_request(stacks, files):
    """files: {dso: (attrs, kind, oracle or None)}; frames of other files are left out."""
    profiles_pb2, service_pb2, common_pb2, _ = PB
    req = service_pb2.ExportProfilesServiceRequest()
    d = req.dictionary
    strings, maps, locs, stack_ix = {}, {}, {}, {}

    def s(x):
        if x not in strings:
            strings[x] = len(d.string_table)
            d.string_table.append(x)
        return strings[x]

    def attr(k, v):
        a = d.attribute_table.add()
        a.key_strindex = s(k)
        a.value.string_value = v
        return len(d.attribute_table) - 1

    s("")
    for t in (d.mapping_table, d.location_table, d.function_table, d.stack_table,
              d.attribute_table, d.link_table):
        t.add()
    b = otlp_test.Built()
    counts = {}
    for frames in stacks:
        key = []
        for addr, dso in frames:
            if dso not in files:
                continue
            attrs, kind, oracle = files[dso]
            if dso not in maps:
                m = d.mapping_table.add()
                m.memory_start, m.memory_limit = (0xffffffff80000000, 0xffffffffffffffff) \
                    if dso == KERNEL else (0, 0x7fffffffffff)
                m.filename_strindex = s(dso)
                m.attribute_indices.extend(attr(k, v) for k, v in attrs.items())
                maps[dso] = len(d.mapping_table) - 1
            if (dso, addr) not in locs:
                loc = d.location_table.add()
                loc.mapping_index = maps[dso]
                loc.address = addr
                loc.attribute_indices.append(attr("profile.frame.type", kind))
                li = len(d.location_table) - 1
                locs[(dso, addr)] = li
                b.want[li] = oracle(addr) if oracle else None
            key.append(locs[(dso, addr)])
        if key:
            counts[tuple(key)] = counts.get(tuple(key), 0) + 1
    # An interpreted frame (lines already, no mapping) on top of the first stack.
    fn = d.function_table.add()
    fn.name_strindex = s("handler")
    fn.filename_strindex = s("app.py")
    loc = d.location_table.add()
    ln = loc.lines.add()
    ln.function_index = len(d.function_table) - 1
    ln.line = 42
    first = True
    rp = req.resource_profiles.add()
    rp.resource.attributes.add(key="service.name").value.string_value = "otlp-recorded"
    sp = rp.scope_profiles.add()
    sp.scope.name = "ebpf-profiler"
    p = sp.profiles.add()
    p.sample_type.type_strindex = s("samples")
    p.sample_type.unit_strindex = s("count")
    p.profile_id = bytes(range(16))  # otlp_forward_test's hex rewrite looks for it
    p.time_unix_nano = 1700000000000000000
    p.period = 1000000
    for key, n in sorted(counts.items()):
        st = d.stack_table.add()
        if first:
            st.location_indices.append(len(d.location_table) - 1)
            first = False
        st.location_indices.extend(key)
        smp = p.samples.add()
        smp.stack_index = len(d.stack_table) - 1
        smp.values.append(n)
    b.req = req
    return b


def daemon_said(d):
    """What the daemon logged of its index builds and its warnings: a failure's why
    (a recorded profile's addresses change run to run, and CI keeps no work dir)."""
    said = [re.sub(r"^ts=\S+ ", "", x) for x in d.log_text().splitlines()
            if '"index built"' in x or "level=warn" in x or "level=error" in x]
    return "; ".join(said[-6:]) or "nothing"


def build_programs(work):
    c_src, c_prog = os.path.join(work, "prog.c"), os.path.join(work, "prog")
    with open(c_src, "w") as f:
        f.write(perf_test.PROG)
    r = run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-fno-shrink-wrap",
             "-Wl,--build-id", "-o", c_prog, c_src])
    check(r.returncode == 0, "gcc: " + r.stderr)
    gdir = os.path.join(work, "gosrc")
    os.makedirs(gdir)
    with open(os.path.join(gdir, "main.go"), "w") as f:
        f.write(GO_PROG)
    with open(os.path.join(gdir, "go.mod"), "w") as f:
        f.write("module spin\n\ngo 1.19\n")
    go_prog = os.path.join(work, "spin")
    r = run([ARGS.go, "build", "-o", go_prog, "-ldflags=-s -w", "."], cwd=gdir,
            env=go_env(work), timeout=900)
    check(r.returncode == 0, "go build: " + r.stderr[-2000:])
    check("Build ID" not in run(["readelf", "-n", go_prog]).stdout,
          "the Go program has a GNU build ID")
    return c_prog, go_prog


def case_recorded():
    work = tempdir("otlprec-")
    c_prog, go_prog = build_programs(work)
    c_stacks, c_ids = record(work, "c", [c_prog])
    go_stacks, go_ids = record(work, "go", [go_prog])
    ids = dict(go_ids, **c_ids)
    gid = run([ARGS.go, "tool", "buildid", go_prog]).stdout.strip()
    check(gid, "go tool buildid")
    files = {c_prog: ({"process.executable.build_id.gnu": ids[c_prog]}, "native",
                      lambda a: otlp_test.llvm_frames(c_prog, a)),
             go_prog: ({"process.executable.build_id.go": gid}, "native",
                       lambda a: otlp_test.symbolctl_frames(go_prog, a))}
    libc = next((p for p in ids if re.search(r"/libc\.so\.6$", p)), None)
    if libc and libc_debug(ids[libc]):
        dbg = libc_debug(ids[libc])
        files[libc] = ({"process.executable.build_id.gnu": ids[libc]}, "native",
                       lambda a: otlp_test.llvm_frames(dbg, a))
    if KERNEL in ids and not kernel_debug_held(ids[KERNEL]):
        files[KERNEL] = ({"process.executable.build_id.gnu": ids[KERNEL]}, "kernel", None)
    c_stacks = spin_stacks(to_vaddrs(c_stacks, [c_prog] + ([libc] if libc in files else [])),
                           c_prog)
    stacks = c_stacks + to_vaddrs(go_stacks, [go_prog])
    b = build_request(stacks, files)
    names = {fn for want in b.want.values() if want for fn, _ in want}
    check("work" in names and "mix" in names, "C frames (work, mix inlined): %r" % names)
    check("main.work" in names, "Go frames: %r" % names)
    ds = otlp_forward_test.HttpDownstream()
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               debug_dirs=[LIBC_DEBUG_DIR] if os.path.isdir(LIBC_DEBUG_DIR) else [],
               extra=["--upload-token-file", otlp_test.token_file(work),
                      "--otlp-forward", ds.url] + otlp_forward_test.WAIT)
    try:
        checks(d, b, ds, c_prog, go_prog, ids)
        print("otlp_recorded: %d samples, %d locations (%d with lines), files: %s"
              % (len(c_stacks) + len(go_stacks), len(b.want),
                 sum(1 for w in b.want.values() if w), ", ".join(sorted(files))))
    except TestFailure as e:
        raise TestFailure("%s [the daemon logged: %s]" % (e, daemon_said(d)))
    finally:
        d.stop()
        ds.close()
    shutil.rmtree(work, ignore_errors=True)


def checks(d, b, ds, c_prog, go_prog, ids):
    """Uploads the two programs, then every way of asking: the same lines."""
    with open(c_prog, "rb") as f:
        otlp_test.put(d, "/buildid/%s/debuginfo" % ids[c_prog], f.read())
    with open(go_prog, "rb") as f:
        otlp_test.put(d, "/buildid/%s/executable?kind=htlhash" % otlp_test.htlhash(go_prog),
                      f.read())
    otlp_test.check_enriched(b, otlp_test.symbolize(d, b.req))
    otlp_test.check_enriched(b, otlp_test.symbolize(d, b.req, as_json=True))
    otlp_forward_test.send_all_ways(d, b)
    otlp_forward_test.check_downstream(d, b, ds.got, 4)


def main():
    global ARGS, PB
    ap = argparse.ArgumentParser()
    for a in ("--symbolizerd", "--symbolctl", "--fixtures", "--go", "--src", "--workdir"):
        ap.add_argument(a, required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    for tool in ("perf", "gcc", "llvm-symbolizer"):
        check(shutil.which(tool), "%s is not installed (scripts/install-deps.sh)" % tool)
    os.makedirs(ARGS.workdir, exist_ok=True)
    PB = otlp_pb.load(ARGS.workdir)
    otlp_test.ARGS, otlp_test.PB = ARGS, PB
    otlp_forward_test.ARGS, otlp_forward_test.PB = ARGS, PB
    sys.exit(run_cases([("recorded", case_recorded)], ARGS.cases))


if __name__ == "__main__":
    main()
