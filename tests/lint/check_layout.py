#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layout: the rooms' dependency rule, checked on every #include "..." of
the tree, so a wrong-way include fails the tests rather than waiting for a
reviewer (include directories are global, so the compiler and the static
libraries' links alone do not stop one).

The rule is cmake/rooms.txt (`room: rooms it may use`), the file CMake checks
the rooms' links against too (cmake/rooms.cmake); this script only reads it.
Besides it, one rule of DESIGN.md: a room's *_impl.h is for that room alone
(the others use its public headers). An include of a directory of the tree that
is no room (tests/, scripts/) is refused to every room."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_rooms(path):
    """room -> set of rooms it may use, from cmake/rooms.txt ("service/*" expanded)."""
    may, order, room = {}, [], None
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            m = re.match(r"^([^\s:]+):(.*)$", line)
            if m:
                room = m.group(1)
                order.append(room)
                may[room] = m.group(2).split()
            elif line[0] in " \t" and room:
                may[room] += line.split()  # a continuation of the room above
            else:
                sys.exit(f"{path}:{n}: cannot read {raw.strip()!r}")
    allowed = {}
    for r in order:
        out = set()
        for m in may[r]:
            if m.endswith("/*"):
                out |= {x for x in order if x.startswith(m[:-1])}
            elif m in may:
                out.add(m)
            else:
                sys.exit(f"{path}: {r} may use {m}, which is no room of the file")
        allowed[r] = out
    return allowed


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
    allowed = read_rooms(os.path.join(top, "cmake", "rooms.txt"))
    rooms = sorted(allowed, key=len, reverse=True)
    tree_dirs = {d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d))}

    def room_of(path):
        for r in rooms:
            if path == r or path.startswith(r + "/"):
                return r
        return None

    bad = checked = 0
    for room in allowed:
        for dirpath, _, files in os.walk(os.path.join(top, room)):
            for name in sorted(files):
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
                        inc = m.group(1)
                        target = room_of(inc)
                        why = None
                        if target is None:
                            if "/" in inc and inc.split("/", 1)[0] in tree_dirs:
                                why = "no room"
                        elif target != own and target not in allowed[own]:
                            why = target
                        elif target != own and inc.endswith("_impl.h"):
                            why = f"{target}'s internal header"
                        if why:
                            print(f"{rel}:{n}: {own} may not include {inc} ({why})")
                            bad += 1
    internal = check_symbolizer_internal(top)
    for line in internal:
        print(line)
    bad += len(internal)
    print(f"{checked} includes checked in {len(allowed)} rooms, {bad} against "
          f"cmake/rooms.txt")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
