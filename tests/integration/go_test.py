#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""go_test.py: Go binaries symbolized as the Go runtime itself reports them.

Builds the Go fixtures of tests/fixtures/go with this machine's Go (Debian's
1.19) at test time, into --workdir (GOCACHE, GOPATH there, GOFLAGS=-mod=mod:
nothing from the network): gofixture default (DWARF), -ldflags='-s -w'
(pclntab only), -buildmode=pie with and without -s -w, and the cgo program
linked with -linkmode=external, with and without -s -w. Each program is the
oracle: it prints, for PCs runtime.Callers captured (inlined code, generics,
closures, methods), the frame runtime.CallersFrames reports (function,
file, line). Each frame's PC, made an ELF virtual address through the
program's own /proc/self/maps, goes to `symbolctl addr2line`; the answer's
chain (innermost first) must equal the frames that follow, names and
file:line, 100%: a runtime.Callers list holds one PC per inlined frame
(parentPc), so the chain of frame i is frames i, i+1, ... Frames of one
physical function (a chain of one) are also checked with `go tool addr2line`.
Python 3 stdlib only.
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True

# name, program dir, go build flags, options:
#   goa2l: also check with `go tool addr2line` (Go 1.19's answers "?" for every
#          PIE address and misplaces a stripped externally linked binary's text)
#   cgo_dwarf: DWARF of cgo-processed files, where Go 1.19 writes an inlined
#          call's DW_AT_call_line before the //line mapping and files as
#          ./_cgo_gotypes.go: those differences from the runtime are counted
#          and printed, not failed (the index reads what the DWARF says)
VARIANTS = [
    ("default", "prog", [], {"goa2l"}),
    ("stripped", "prog", ["-ldflags=-s -w"], {"goa2l"}),
    ("pie", "prog", ["-buildmode=pie"], set()),
    ("pie_stripped", "prog", ["-buildmode=pie", "-ldflags=-s -w"], set()),
    ("cgo_external", "cgoprog", ["-ldflags=-linkmode=external"], {"goa2l", "cgo_dwarf"}),
    ("cgo_external_stripped", "cgoprog", ["-ldflags=-linkmode=external -s -w"], set()),
    # no section headers at all: the table found by scanning the loaded segments
    ("noshdr", "prog", ["-ldflags=-s -w"], {"noshdr"}),
    # .symtab but no DWARF, the section renamed: found by runtime.pclntab
    ("renamed", "prog", ["-ldflags=-w"], {"rename"}),
]
# Which source each variant's index must come from (the header's flags).
FROM_DWARF, FROM_PCLNTAB = 1 << 4, 1 << 5
SOURCE = {"default": FROM_DWARF, "pie": FROM_DWARF, "cgo_external": FROM_DWARF}

failures = []


def fail(msg):
    failures.append(msg)
    print("go_test: FAIL: " + msg)


def go_env(work):
    env = dict(os.environ)
    env.update({"GOCACHE": os.path.join(work, "gocache"), "GOPATH": os.path.join(work, "gopath"),
                "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
                "GO111MODULE": "on", "CGO_ENABLED": "1"})
    return env


def post_process(path, opts):
    """noshdr: e_shoff, e_shnum, e_shstrndx zeroed; rename: .gopclntab renamed by objcopy."""
    if "noshdr" in opts:
        with open(path, "r+b") as f:
            f.seek(0x28)
            f.write(struct.pack("<Q", 0))
            f.seek(0x3a)
            f.write(struct.pack("<HHH", 0, 0, 0))
    if "rename" in opts:
        subprocess.run(["objcopy", "--rename-section", ".gopclntab=.rodata.pcln", path],
                       check=True, timeout=120)


def index_flags(symbolctl, binary, work):
    blob = os.path.join(work, os.path.basename(binary) + ".idx")
    r = subprocess.run([symbolctl, "addr2line", "-e", binary, "--no-debug-lookup",
                        "--index-out", blob, "0x0"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit("go_test: --index-out on %s: %s" % (binary, r.stderr[:2000]))
    with open(blob, "rb") as f:
        head = f.read(36)
    return struct.unpack_from("<I", head, 32)[0]


def build(go, src, work, name, prog, flags):
    out = os.path.join(work, name)
    pdir = os.path.join(work, "src", prog)
    if os.path.isdir(pdir):
        shutil.rmtree(pdir)
    shutil.copytree(os.path.join(src, prog), pdir)
    r = subprocess.run([go, "build", "-o", out] + flags + ["."], cwd=pdir, env=go_env(work),
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise SystemExit("go_test: go build %s failed: %s" % (name, r.stderr[-3000:]))
    return out


def load_segments(path):
    """PT_LOAD (offset, vaddr, filesz) of a 64-bit little-endian ELF."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit("go_test: %s is not a 64-bit ELF" % path)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            segs.append((p_offset, p_vaddr, p_filesz))
    return segs


def parse_run(text):
    """(maps, groups): maps [(start, end, offset)], groups [(tag, [frame])]."""
    maps, groups = [], []
    for line in text.splitlines():
        parts = line.split(" ")
        if parts[0] == "M":
            rng, _, off = line[2:].split()[:3]
            lo, hi = rng.split("-")
            maps.append((int(lo, 16), int(hi, 16), int(off, 16)))
        elif parts[0] == "T":
            groups.append((parts[1], []))
        elif parts[0] == "F":
            groups[-1][1].append({"pc": int(parts[1], 16), "func": parts[2], "file": parts[3],
                                  "line": int(parts[4])})
        elif parts[0] == "C":
            groups[-1][1].append({"pc": int(parts[1], 16), "func": None})
    return maps, groups


def to_vaddr(pc, maps, segs):
    for lo, hi, off in maps:
        if lo <= pc < hi:
            foff = pc - lo + off
            for p_offset, p_vaddr, p_filesz in segs:
                if p_offset <= foff < p_offset + p_filesz:
                    return foff - p_offset + p_vaddr
    return None


def symbolize(symbolctl, binary, addrs):
    r = subprocess.run([symbolctl, "addr2line", "-e", binary, "--no-debug-lookup"] +
                       ["0x%x" % a for a in addrs], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit("go_test: symbolctl addr2line on %s: %s" % (binary, r.stderr[:2000]))
    answers = r.stdout.split("\n\n")
    chains = {}
    for a, ans in zip(addrs, answers):
        lines = [l for l in ans.split("\n") if l]
        chain = []
        for k in range(0, len(lines) - 1, 2):
            loc = lines[k + 1].rsplit(":", 2)
            chain.append((lines[k], loc[0], int(loc[1]) if len(loc) > 1 and loc[1].isdigit()
                          else 0))
        chains[a] = chain
    return chains


def go_addr2line(go, work, binary, addrs):
    r = subprocess.run([go, "tool", "addr2line", binary], input="".join(
        "0x%x\n" % a for a in addrs), capture_output=True, text=True, env=go_env(work),
        timeout=600)
    if r.returncode != 0:
        raise SystemExit("go_test: go tool addr2line: %s" % r.stderr[:2000])
    lines = r.stdout.split("\n")
    out = {}
    for i, a in enumerate(addrs):
        name, loc = lines[2 * i], lines[2 * i + 1]
        f, _, l = loc.rpartition(":")
        out[a] = (name, f, int(l) if l.isdigit() else 0)
    return out


def check_variant(args, name, binary, opts):
    run = subprocess.run([binary], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        fail("%s: the program exited %d: %s" % (name, run.returncode, run.stderr[:500]))
        return
    maps, groups = parse_run(run.stdout)
    segs = load_segments(binary)
    addrs = set()
    for _, frames in groups:
        for fr in frames:
            if fr["func"] is None:
                continue
            fr["vaddr"] = to_vaddr(fr["pc"], maps, segs)
            if fr["vaddr"] is None:
                fail("%s: pc %#x is in no mapping of the program" % (name, fr["pc"]))
                return
            addrs.add(fr["vaddr"])
    addrs = sorted(addrs)
    chains = symbolize(args.symbolctl, binary, addrs)
    checked = inlined = single = 0
    singles = []
    for tag, frames in groups:
        for i, fr in enumerate(frames):
            if fr["func"] is None:
                continue
            chain = chains.get(fr["vaddr"], [])
            if not chain:
                fail("%s/%s: no answer for %#x (%s)" % (name, tag, fr["vaddr"], fr["func"]))
                continue
            for j, (fn, file, line) in enumerate(chain):
                want = frames[i + j] if i + j < len(frames) else None
                if want is None or want["func"] is None:
                    fail("%s/%s: %#x: chain %r is longer than the runtime's frames" %
                         (name, tag, fr["vaddr"], chain))
                    break
                if (fn, file, line) != (want["func"], want["file"], want["line"]):
                    if "cgo_dwarf" in opts and fn == want["func"] and (
                            j > 0 or file.endswith("/_cgo_gotypes.go")):
                        print("go_test: %s/%s: %#x frame %d: DWARF says %s:%d, runtime %s:%d "
                              "(cgo-processed file; not failed)" %
                              (name, tag, fr["vaddr"], j, file, line, want["file"],
                               want["line"]))
                        continue
                    fail("%s/%s: %#x frame %d: symbolctl %s %s:%d, runtime %s %s:%d" %
                         (name, tag, fr["vaddr"], j, fn, file, line, want["func"],
                          want["file"], want["line"]))
                    break
            checked += 1
            if len(chain) > 1:
                inlined += 1
            elif i + 1 >= len(frames) or frames[i + 1]["func"] is None or \
                    frames[i + 1]["pc"] != fr["pc"]:
                single += 1
                singles.append(fr)
    # go tool addr2line (no inline expansion): frames of a physical function.
    plain = [fr for fr in singles if len(chains[fr["vaddr"]]) == 1] if "goa2l" in opts else []
    ref = go_addr2line(args.go, args.workdir, binary, [fr["vaddr"] for fr in plain])
    for fr in plain:
        got = ref[fr["vaddr"]]
        if got != (fr["func"], fr["file"], fr["line"]):
            fail("%s: go tool addr2line %#x says %s %s:%d, runtime %s %s:%d" %
                 (name, fr["vaddr"], got[0], got[1], got[2], fr["func"], fr["file"], fr["line"]))
    tags = {t for t, _ in groups}
    print("go_test: %s: %d frames agree (%d with inline chains), %d checked with go tool "
          "addr2line; tags %s" % (name, checked, inlined, len(plain), " ".join(sorted(tags))))
    if name.startswith(("default", "stripped", "pie")) and inlined == 0:
        fail("%s: no inlined frame was checked" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--go", required=True)
    ap.add_argument("--src", required=True, help="tests/fixtures/go")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    have_cc = shutil.which("gcc") is not None
    for name, prog, flags, opts in VARIANTS:
        if prog == "cgoprog" and not have_cc:
            print("go_test: no gcc: %s skipped" % name)
            continue
        binary = build(args.go, args.src, args.workdir, name, prog, flags)
        post_process(binary, opts)
        flags_got = index_flags(args.symbolctl, binary, args.workdir)
        want = SOURCE.get(name, FROM_PCLNTAB)
        if flags_got & (FROM_DWARF | FROM_PCLNTAB) != want:
            fail("%s: index flags %#x, want source %s" % (
                name, flags_got, "DWARF" if want == FROM_DWARF else "pclntab"))
        check_variant(args, name, binary, opts)
    if failures:
        print("go_test: %d failures" % len(failures))
        sys.exit(1)
    print("go_test: OK")


if __name__ == "__main__":
    main()
