#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""go115_test.py: Go 1.15 binaries (the 1.2-format pclntab, Go 1.12-1.15's inline tree).

Fetches Go 1.15 with scripts/fetch-go115.sh (Debian bullseye's golang-1.15,
SHA256-checked, cached in /var/cache/symbolizer-test/go1.15) and builds the
fixtures of tests/fixtures/go with it in GOPATH mode (GOROOT set,
GO111MODULE=off, GOFLAGS empty: Go 1.15 has no -mod=off; CGO_ENABLED=0 but
for the cgo program): default (compressed DWARF), -ldflags='-s -w' (pclntab
only), -buildmode=pie with and without -s -w, the cgo program linked with
-linkmode=external with and without -s -w and as a PIE, and a stripped build
without section headers. Then go_test.py's checks, unchanged: every frame
runtime.CallersFrames reports (Go 1.15's runtime is the oracle), inline chains
included, equals symbolctl addr2line's answer; frames of one physical function
also equal Go 1.15's `go tool addr2line`; the DWARF and pclntab indexes of one
program agree; corrupted 1.2 tables end in an index or an error; with
--symbolizerd, the daemon answers the stripped cgo binary as symbolctl does and
its status names the pclntab. Python 3 stdlib only.
"""

import argparse
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import go_test as gt  # noqa: E402

VARIANTS = [
    ("default", "prog", [], {"goa2l"}),
    ("stripped", "prog", ["-ldflags=-s -w"], {"goa2l"}),
    ("pie", "prog", ["-buildmode=pie"], set()),
    ("pie_stripped", "prog", ["-buildmode=pie", "-ldflags=-s -w"], set()),
    ("cgo_external", "cgoprog", ["-ldflags=-linkmode=external"], {"goa2l", "cgo_dwarf"}),
    ("cgo_external_stripped", "cgoprog", ["-ldflags=-linkmode=external -s -w"], set()),
    ("cgo_pie_external_stripped", "cgoprog",
     ["-buildmode=pie", "-ldflags=-linkmode=external -s -w"], set()),
    ("noshdr", "prog", ["-ldflags=-s -w"], {"noshdr"}),
]
SOURCE = {"default": gt.FROM_DWARF, "pie": gt.FROM_DWARF, "cgo_external": gt.FROM_DWARF}

GOROOT = None


def go_env(work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GO")}
    env.update({"GOROOT": GOROOT, "GOPATH": os.path.join(work, "gopath"),
                "GOCACHE": os.path.join(work, "gocache"), "GO111MODULE": "off",
                "GOFLAGS": "", "GOPROXY": "off", "CGO_ENABLED": "0",
                "PATH": os.path.join(GOROOT, "bin") + os.pathsep + os.environ.get("PATH", "")})
    return env


def build(go, src, work, name, prog, flags):
    out = os.path.join(work, name)
    pdir = os.path.join(work, "src", prog)
    if os.path.isdir(pdir):
        shutil.rmtree(pdir)
    shutil.copytree(os.path.join(src, prog), pdir)
    env = go_env(work)
    if prog == "cgoprog":
        env["CGO_ENABLED"] = "1"
    r = subprocess.run([go, "build", "-o", out] + flags + ["."], cwd=pdir, env=env,
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise SystemExit("go115_test: go build %s failed: %s" % (name, r.stderr[-3000:]))
    return out


def main():
    global GOROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fetch", required=True, help="scripts/fetch-go115.sh")
    ap.add_argument("--src", required=True, help="tests/fixtures/go")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--symbolizerd", help="also check the daemon on the stripped cgo binary")
    args = ap.parse_args()
    r = subprocess.run(["bash", args.fetch], capture_output=True, text=True, timeout=1200)
    if r.returncode != 0 or not r.stdout.strip():
        raise SystemExit("go115_test: %s failed: %s" % (args.fetch, r.stderr[-2000:]))
    GOROOT = r.stdout.strip().splitlines()[-1]
    args.go = os.path.join(GOROOT, "bin", "go")
    gt.go_env = go_env   # go tool addr2line: Go 1.15's, in GOPATH mode
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    ver = subprocess.run([args.go, "version"], capture_output=True, text=True,
                         env=go_env(args.workdir)).stdout.strip()
    print("go115_test: %s (GOROOT %s)" % (ver, GOROOT))
    if "go1.15" not in ver:
        raise SystemExit("go115_test: not Go 1.15: %r" % ver)
    have_cc = shutil.which("gcc") is not None
    for name, prog, flags, opts in VARIANTS:
        if prog == "cgoprog" and not have_cc:
            print("go115_test: no gcc: %s skipped" % name)
            continue
        binary = build(args.go, args.src, args.workdir, name, prog, flags)
        gt.post_process(binary, opts)
        got = gt.index_flags(args.symbolctl, binary, args.workdir)
        want = SOURCE.get(name, gt.FROM_PCLNTAB)
        if got & (gt.FROM_DWARF | gt.FROM_PCLNTAB) != want:
            gt.fail("%s: index flags %#x, want source %s" % (
                name, got, "DWARF" if want == gt.FROM_DWARF else "pclntab"))
        gt.check_variant(args, name, binary, opts)
    if args.symbolizerd and "cgo_external_stripped" in gt.RESULTS:
        gt.daemon_check(args, os.path.join(args.workdir, "cgo_external_stripped"),
                        "cgo_external_stripped")
    gt.hostile(args, os.path.join(args.workdir, "stripped"))
    gt.cross_check(args, "go1.15 amd64", os.path.join(args.workdir, "default"),
                   os.path.join(args.workdir, "stripped"))
    if gt.failures:
        print("go115_test: %d failures" % len(gt.failures))
        sys.exit(1)
    print("go115_test: OK")


if __name__ == "__main__":
    main()
