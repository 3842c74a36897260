#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layout: the rooms' dependency rules of DESIGN.md, checked on every
#include "..." of the tree, so a wrong-way include fails the tests rather than
waiting for a reviewer (include directories are global, so the compiler and
the static libraries' links alone do not stop one).

cmd -> service -> {source, storage, symbolizer} -> base; inside service/, the
rooms use each other one way (service/CMakeLists.txt draws it). proto/ is the
generated API, for service/symbolize, service/layout, service/http (the service
descriptor it hands the RPC room, for Connect JSON), cmd/, tests and benchmarks."""
import os
import re
import sys

# room -> the rooms it may include (itself always allowed)
ALLOWED = {
    "base": set(),
    "symbolizer": {"base"},
    "storage": {"base"},
    "source": {"symbolizer", "base"},
    "service/core": {"storage", "symbolizer", "base"},
    "service/fetch": {"service/core", "source", "storage", "symbolizer", "base"},
    "service/resolve": {"service/fetch", "service/core", "source", "storage", "symbolizer",
                        "base"},
    "service/rpc": {"service/core", "symbolizer", "base"},
    "service/symbolize": {"service/rpc", "service/resolve", "service/core", "proto",
                          "symbolizer", "base"},
    "service/layout": {"service/rpc", "service/resolve", "service/core", "proto", "storage",
                       "symbolizer", "base"},
    "service/debuginfod": {"service/resolve", "service/fetch", "service/core", "source",
                           "storage", "symbolizer", "base"},
    "service/upload": {"service/rpc", "service/fetch", "service/core", "proto",
                       "source", "storage", "symbolizer", "base"},
    "service/http": {"service/symbolize", "service/debuginfod", "service/layout", "service/upload", "service/rpc", "service/resolve", "service/fetch", "source",
                     "service/core", "storage", "symbolizer", "base", "proto"},
}
ROOMS = sorted(ALLOWED, key=len, reverse=True)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(path):
    for r in ROOMS:
        if path == r or path.startswith(r + "/"):
            return r
    if path.startswith("proto/"):
        return "proto"
    return None


# symbolizer/'s internal headers (symbolizer/README.md): only the room and its own
# tests (tests/unit/symbolizer/, the fuzz targets) may include them.
SYM_INTERNAL = re.compile(r'^symbolizer/[^/]*_impl\.h$')
SYM_INTERNAL_USERS = ("symbolizer/", "tests/unit/symbolizer/", "tests/fuzz/")
SCANNED = ("base", "symbolizer", "storage", "source", "service", "cmd", "bench", "tests")


def check_symbolizer_internal(top):
    """Lines that include a symbolizer/*_impl.h from outside the room and its tests."""
    bad = []
    for d in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(top, d)):
            for name in files:
                if not name.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, top)
                if rel.startswith(SYM_INTERNAL_USERS):
                    continue
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and SYM_INTERNAL.match(m.group(1)):
                            bad.append(f"{rel}:{n}: {m.group(1)} is internal to symbolizer/")
    return bad


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = 0
    checked = 0
    for room in ALLOWED:
        for dirpath, _, files in os.walk(os.path.join(top, room)):
            for name in files:
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, top)
                own = room_of(rel)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        checked += 1
                        target = room_of(m.group(1))
                        if target is None or target == own or target in ALLOWED[own]:
                            continue
                        print(f"{rel}:{n}: {own} may not include {m.group(1)} ({target})")
                        bad += 1
    internal = check_symbolizer_internal(top)
    for line in internal:
        print(line)
    bad += len(internal)
    print(f"{checked} includes checked, {bad} against the layout")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
