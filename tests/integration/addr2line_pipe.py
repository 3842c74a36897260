#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""addr2line_pipe.py: `symbolctl addr2line` answers a pipe line by line.

Starts `symbolctl addr2line -e FILE` with its stdin and stdout on pipes,
writes one address, and reads its whole answer (up to the empty line) before
it writes the next one, under a timeout, so a tool that waits for EOF or
buffers its output fails instead of hanging. Each answer must equal the one
the same tool gives for that address on its command line, and the forms
`0x1f`, `1f`, `0X1F`, zero-padded and an unknown address must all work.
Closing stdin must end the process with status 0. Python 3 stdlib only.
"""

import argparse
import os
import select
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_llvm  # noqa: E402  (Symbols, the address sampler)

FIRST_TIMEOUT = 300.0   # the first answer includes the index build (ASan is slow)
NEXT_TIMEOUT = 60.0


def fail(msg):
    print("addr2line_pipe: FAIL: " + msg)
    sys.exit(1)


def read_answer(proc, buf, timeout):
    """Reads from proc.stdout until an answer (lines up to an empty one) is complete."""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while True:
        # An answer is complete at "\n\n" (or at a leading "\n" for an empty answer).
        end = buf.find(b"\n\n")
        if end >= 0:
            return buf[:end + 1].decode("utf-8", "replace"), buf[end + 2:]
        left = deadline - time.monotonic()
        if left <= 0:
            fail("no complete answer within %.0fs (got so far: %r); does it wait for EOF "
                 "or buffer its output when stdout is a pipe?" % (timeout, buf[:300]))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                fail("stdout closed before the answer was complete (got %r); exit status %s"
                     % (buf[:300], proc.poll()))
            buf += chunk


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("elf")
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("-n", "--count", type=int, default=25)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    syms = compare_llvm.Symbols(args.elf, demangle=False)
    import random
    addrs = syms.draw(args.count, random.Random(args.seed))
    # Spellings to send, and the canonical form to ask on the command line.
    sends = []
    for i, a in enumerate(addrs):
        form = ["0x%x", "%x", "0X%X", "%016x"][i % 4] % a
        sends.append((form, "0x%x" % a))
    sends.insert(3, ("0x0", "0x0"))   # nothing there: ?? frames, not an error

    # Reference: the same tool, addresses as arguments.
    batch = subprocess.run([args.symbolctl, "addr2line", "-e", args.elf] +
                           [c for _, c in sends], capture_output=True, text=True, timeout=600)
    if batch.returncode != 0:
        fail("batch run exited %d: %s" % (batch.returncode, batch.stderr[:2000]))
    expected = batch.stdout.split("\n\n")
    if len(expected) < len(sends):
        fail("batch run gave %d answers for %d addresses" % (len(expected), len(sends)))

    proc = subprocess.Popen([args.symbolctl, "addr2line", "-e", args.elf],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    buf = b""
    try:
        for i, (form, _) in enumerate(sends):
            t0 = time.monotonic()
            proc.stdin.write((form + "\n").encode())
            proc.stdin.flush()
            ans, buf = read_answer(proc, buf, FIRST_TIMEOUT if i == 0 else NEXT_TIMEOUT)
            if buf:
                fail("output beyond the answer to %r before the next address was sent: %r"
                     % (form, buf[:200]))
            want = expected[i].lstrip("\n") + "\n"
            if ans != want:
                fail("answer to %r on the pipe differs from the command-line answer:\n"
                     "pipe:\n%s\ncommand line:\n%s" % (form, ans, want))
            lines = ans.rstrip("\n").split("\n")
            if len(lines) % 2 or not lines[0]:
                fail("answer to %r is not (function, file:line:column) pairs: %r" % (form, ans))
            if i == 0:
                print("addr2line_pipe: first answer (index build included) in %.2fs"
                      % (time.monotonic() - t0))
        proc.stdin.close()
        try:
            rc = proc.wait(timeout=NEXT_TIMEOUT)
        except subprocess.TimeoutExpired:
            fail("still running %.0fs after its stdin was closed" % NEXT_TIMEOUT)
        if rc != 0:
            fail("exit status %d after EOF" % rc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print("addr2line_pipe: PASS: %d addresses answered one at a time over a pipe" % len(sends))
    return 0


if __name__ == "__main__":
    sys.exit(main())
