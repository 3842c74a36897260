#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""go_traceback.py: a Go program's own SIGQUIT traceback as the oracle.

Go 1.19 is the only toolchain installed for the tests, so go_test.py covers
the 1.18 table format; Go programs built by newer toolchains (the 1.20+
format: magic 0xfffffff1, the new _func and inlinedCall layouts, the module
data's gofunc moved by covctrs) are checked here, on binaries already on the
machine. The program runs with GOTRACEBACK=system and stdin a pipe left open
(so it blocks reading it); after a pause it gets SIGQUIT and prints every
goroutine's stack: for each physical frame its inlined frames first (no
pc=), then the frame with pc= (a return address, except the PC the signal
interrupted, which the header prints as PC=). Each group's address (pc - 1,
or that PC) goes to `symbolctl addr2line`, whose chain must equal the group
(function, file, line) for every group, both for the program as built (its
DWARF when it has some) and for a copy without DWARF or symbols (strip
--strip-all: the pclntab alone). A failed attempt is printed and tried
once more (a goroutine preempted where the dump's PC rule does not hold, or a
program that exits early under load); the addresses being the binary's own,
a wrong answer from the index fails both. Python 3 stdlib only.

Exit status 77 (skipped) when PROGRAM is not a Go program.

Usage: go_traceback.py --symbolctl BIN [--min-inline N] PROGRAM [ARG...]
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def parse(text):
    """[(address, [(function, file, line)])] from a GOTRACEBACK=system dump."""
    lines = text.splitlines()
    m = re.search(r"^PC=0x([0-9a-f]+)", text, re.M)
    sig_pc = int(m.group(1), 16) if m else None
    groups, cur, i = [], [], 0
    while i + 1 < len(lines):
        head, loc = lines[i], lines[i + 1]
        if head.startswith("goroutine "):
            cur = []
            i += 1
            continue
        if not loc.startswith("\t") or head.startswith("\t") or not head:
            i += 1
            continue
        if head.startswith("created by"):
            cur = []
            i += 2
            continue
        name = head[:head.rindex("(")] if head.endswith(")") else head
        file, _, line = loc.strip().split()[0].rpartition(":")
        cur.append((name, file, int(line) if line.isdigit() else 0))
        pc = re.search(r"pc=0x([0-9a-f]+)", loc)
        if pc:
            addr = int(pc.group(1), 16)
            groups.append((addr if addr == sig_pc else addr - 1, cur))
            cur = []
        i += 2
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--min-inline", type=int, default=1)
    ap.add_argument("--wait", type=float, default=3.0)
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    with open(args.program[0], "rb") as f:
        if b"\xff Go buildinf:" not in f.read():
            print("go_traceback: %s is not a Go program: skipped" % args.program[0])
            return 77
    for attempt in (1, 2):
        rc = attempt_once(args)
        if rc == 0:
            return 0
        print("go_traceback: attempt %d failed%s" % (attempt,
                                                     ", once more" if attempt == 1 else ""))
    return 1


def attempt_once(args):
    """One run, signal and comparison; 0 when every frame agrees."""
    # In a scratch dir that is also its HOME: whatever it writes (terraform's state
    # lock, docker's config) goes there.
    work = tempfile.mkdtemp(prefix="go_traceback-")
    try:
        return run_in(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def offline_prefix():
    """The program runs with no network at all (a network namespace of its own,
    without even loopback up): these are other projects' programs, and some
    call home at start (terraform's checkpoint). unshare execs the program in
    the same process, so the signal reaches it. Empty when that is not possible
    (not root): then the checks that tell these programs to stay offline."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return []
    ok = subprocess.run(["unshare", "--net", "--", "true"], capture_output=True).returncode == 0
    return ["unshare", "--net", "--"] if ok else []


def run_in(args, work):
    env = dict(os.environ, GOTRACEBACK="system", HOME=work, CHECKPOINT_DISABLE="1",
               DOCKER_CLI_HINTS="false")
    proc = subprocess.Popen(offline_prefix() + args.program, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=work)
    time.sleep(args.wait)
    if proc.poll() is not None:
        print("go_traceback: FAIL: %s exited %d before the signal" % (args.program[0],
                                                                    proc.returncode))
        return 1
    proc.send_signal(signal.SIGQUIT)
    _, err = proc.communicate(timeout=60)
    groups = parse(err.decode("utf-8", "replace"))
    if len(groups) < 5:
        print("go_traceback: FAIL: only %d frames in the dump: %r" % (len(groups), err[:500]))
        return 1
    # The program as it is (its DWARF, if any), and a copy strip --strip-all
    # left only the pclntab (allocated sections untouched: the same addresses).
    stripped = os.path.join(work, "stripped")
    subprocess.run(["strip", "--strip-all", "-o", stripped, args.program[0]], check=True,
                   timeout=300)
    for binary, what in ((args.program[0], "as built"), (stripped, "stripped")):
        rc = compare(args, binary, what, groups)
        if rc:
            return rc
    return 0


def compare(args, binary, what, groups):
    r = subprocess.run([args.symbolctl, "addr2line", "-e", binary,
                        "--no-debug-lookup"], input="".join("0x%x\n" % a for a, _ in groups),
                       capture_output=True, text=True, timeout=600)
    answers = r.stdout.split("\n\n")
    bad = inline = 0
    for (addr, want), ans in zip(groups, answers):
        rows = [x for x in ans.split("\n") if x]
        chain = []
        for k in range(0, len(rows) - 1, 2):
            f, line, _ = rows[k + 1].rsplit(":", 2)
            chain.append((rows[k], f, int(line)))
        if chain != want:
            bad += 1
            print("go_traceback: FAIL: %#x: runtime %r, symbolctl %r" % (addr, want, chain))
        elif len(want) > 1:
            inline += 1
    print("go_traceback: %s (%s): %d of %d frames agree, %d with inlined frames" % (
        os.path.basename(args.program[0]), what, len(groups) - bad, len(groups), inline))
    if bad or inline < args.min_inline:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
