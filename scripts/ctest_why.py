#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Why the last ctest run of a build tree failed, in a few lines per test.

scripts/test.sh prints this after a failing ctest, so the closing lines of the
output (all a CI log viewer may show) say which check failed, not only which
test. Reads TREE/Testing/Temporary/LastTest.log; for each failed test prints
its last few telling lines (a FAIL of a case, an error), or for a sanitizer's
or a fuzzer's report the lines before it, its summary and the input (libFuzzer
prints a short one as Base64), else its last lines.

Usage: ctest_why.py TREE [LINES]
"""
import os
import re
import sys

TELLING = re.compile(r"FAIL|Error|ERROR|error:|SUMMARY|Assertion|assert|deadly|"
                     r"differ|mismatch|Timeout|timed out|Traceback|Killed")


def sections(log):
    """(name, output lines, passed) of every test in a LastTest.log."""
    name, out, inside = None, [], False
    for line in log.splitlines():
        m = re.match(r"^\d+/\d+ Testing: (\S+)", line)
        if m:
            name, out, inside = m.group(1), [], False
        elif line.startswith("Output:") and name:
            inside = True
        elif line == "<end of output>":
            inside = False
        elif inside and not line.startswith("-" * 20):
            out.append(line)
        elif name and line.startswith("Test ") and line.endswith("."):
            yield name, out, line == "Test Passed."
            name = None


def pick(lines, keep):
    """The lines that say what failed."""
    for i, x in enumerate(lines):
        if re.match(r"==\d+== ?ERROR", x):
            rest = [y for y in lines[i + 1:] if y.startswith(("SUMMARY", "Base64:"))]
            return lines[max(0, i - 3):i + 1] + rest[:2]
    telling = [x for x in lines if TELLING.search(x)] or lines
    return telling[-keep:]


def main():
    tree = sys.argv[1]
    keep = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    path = os.path.join(tree, "Testing", "Temporary", "LastTest.log")
    try:
        with open(path, errors="replace") as f:
            log = f.read()
    except OSError as e:
        print("ctest_why: %s" % e)
        return
    for name, out, passed in sections(log):
        if passed:
            continue
        lines = [x.strip() for x in out if x.strip()]
        print("== why %s failed:" % name)
        for x in pick(lines, keep):
            print("   " + (x if len(x) <= 300 else x[:297] + "..."))


if __name__ == "__main__":
    main()
