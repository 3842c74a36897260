#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""addr2line_index.py: `--index-out` then `--index` gives identical output.

For one ELF file (and its dwz --alt file, if any), draws addresses inside
functions, then runs:
  1. symbolctl addr2line -e FILE ADDRS                 (index built in memory)
  2. symbolctl addr2line -e FILE --index-out BLOB ADDRS (index built and saved)
  3. symbolctl addr2line --index BLOB ADDRS             (answers from the blob alone)
and requires 2 and 3 to print exactly what 1 prints. Step 3 gets a copy of
the ELF file that is deleted before it runs, so it cannot read DWARF.
Python 3 stdlib only.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_llvm  # noqa: E402

TIMEOUT = 900


def fail(msg):
    print("addr2line_index: FAIL: " + msg)
    sys.exit(1)


def run(cmd, stdin_text):
    p = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr[:2000]))
    return p.stdout


def first_diff(a, b):
    al, bl = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return "line %d: %r vs %r" % (i + 1, x, y)
    return "lengths %d vs %d lines" % (len(al), len(bl))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("elf", nargs="?")
    ap.add_argument("--debug-for", metavar="FILE")
    ap.add_argument("--alt")
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("-n", "--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    if args.debug_for:
        args.elf = compare_llvm.debug_file_of(args.debug_for)
    if not args.elf:
        fail("an ELF file (or --debug-for FILE) is required")

    syms = compare_llvm.Symbols(args.elf, demangle=False)
    addrs = syms.draw(args.count, random.Random(args.seed))
    addrs.append(0)  # an address nothing covers
    text = "".join("0x%x\n" % a for a in addrs)
    alt = ["--alt", args.alt] if args.alt else []

    with tempfile.TemporaryDirectory(prefix="addr2line_index.") as tmp:
        blob = os.path.join(tmp, "index.blob")
        copy = os.path.join(tmp, os.path.basename(args.elf))
        shutil.copyfile(args.elf, copy)
        plain = run([args.symbolctl, "addr2line", "-e", copy] + alt, text)
        saved = run([args.symbolctl, "addr2line", "-e", copy] + alt + ["--index-out", blob], text)
        if not os.path.exists(blob) or os.path.getsize(blob) == 0:
            fail("--index-out %s wrote no blob" % blob)
        os.unlink(copy)
        loaded = run([args.symbolctl, "addr2line", "--index", blob], text)
        size = os.path.getsize(blob)

    if saved != plain:
        fail("output with --index-out differs from the plain run: " + first_diff(saved, plain))
    if loaded != plain:
        fail("output with --index differs from the plain run: " + first_diff(loaded, plain))
    if plain.count("\n\n") != len(addrs):
        fail("%d answers for %d addresses" % (plain.count("\n\n"), len(addrs)))
    print("addr2line_index: PASS: %s: %d addresses, identical output from the saved "
          "index (%d bytes)" % (args.elf, len(addrs), size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
