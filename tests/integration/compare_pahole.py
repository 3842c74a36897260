#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare_pahole: `symbolctl layout` against pahole (Debian's dwarves) on one ELF file.

For every struct and union `pahole --sizes FILE` lists, our layouts of that name
must include one of the same size; and for every struct pahole prints (one run of
`pahole FILE`, all types, no --expand_types), the members at the top level (names,
byte offsets and sizes; bitfields by their storage unit, anonymous members by
their offset and size) must equal one of our layouts'. Disagreements are listed with the
reason; the test fails when any is not an explained one (see EXPLAINED).

Usage: compare_pahole.py --symbolctl PATH [--debug-for LIB] FILE [--alt FILE] [--max-bad N]
"""
import argparse
import json
import re
import subprocess
import sys

HEAD = re.compile(r"^(struct|union|class) (\S+)(?: : .*)? \{$")
TYPEDEF_HEAD = re.compile(r"^typedef (struct|union) \{$")
ATTR = re.compile(r"\s*__attribute__\(\(__\w+__(\(\d+\))?\)\)")
MEMBER = re.compile(r"^(\t+)(.*?)\s*/\*\s+(\d+)(?::\s*\d+)?\s+(\d+)\s+\*/$")


def build_id_debug(lib):
    out = subprocess.run(["readelf", "-n", lib], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not m:
        sys.exit(f"compare_pahole: {lib}: no build ID")
    h = m.group(1)
    return f"/usr/lib/debug/.build-id/{h[:2]}/{h[2:]}.debug"


def member_name(text):
    """The member's name from pahole's text before the comment ('' if anonymous)."""
    if text.startswith("/*"):
        return None  # a base class line: /* struct A <ancestor>; */
    if text in ("};",):
        return ""
    m = re.match(r"^\} (\S+);$", text)
    if m:
        return re.sub(r"(\[.*|:\d+)$", "", m.group(1))
    t = text.rstrip(";")
    fp = re.search(r"\(\*(\w+)\)\(", t)
    if fp:
        return fp.group(1)
    t = re.sub(r"(\[[^\]]*\])+$", "", t)
    t = re.sub(r":\d+$", "", t)
    m = re.search(r"([A-Za-z_][\w.]*)$", t)
    return m.group(1) if m else t


def parse_pahole(text):
    """name -> list of (member name, offset, size) at the top level, per printed struct."""
    types = {}
    cur = None
    depth = 0
    members = []
    for line in text.splitlines():
        if cur is None:
            m = HEAD.match(line)
            if m:
                cur, depth, members = m.group(2), 1, []
            elif TYPEDEF_HEAD.match(line):
                cur, depth, members = "", 1, []
            continue
        if line.startswith("}"):
            name = cur
            if name == "":
                m = re.match(r"^\} (\S+?)(?: __attribute__.*)?;$", line)
                name = m.group(1) if m else None
            if name and name not in types:
                types[name] = members
            cur = None
            continue
        stripped = line.strip()
        if stripped.endswith("{") and stripped.split()[0] in ("struct", "union", "enum"):
            depth += 1
            continue
        m = MEMBER.match(line)
        if not m:
            continue
        level = len(m.group(1))
        body = ATTR.sub("", m.group(2).strip())
        if body.startswith("}"):
            depth -= 1
            level = depth
        if level != 1:
            continue
        name = member_name(body)
        if name is not None:
            members.append((name, int(m.group(3)), int(m.group(4))))
    return types


def ours_members(layout):
    return [(m["name"], m["offset"], m["size"]) for m in layout["members"] if not m.get("base")]


# Disagreements that are pahole's (checked against the struct's own size and gdb):
# pahole 1.24 gives a member whose type is C11 _Atomic (DW_TAG_atomic_type, e.g.
# atomic_int) the size 0; we give the type's size.
EXPLAINED = "pahole sizes an _Atomic member 0"


def relaxed_equal(pahole, ours):
    """Equal but for members pahole sizes 0 and we do not (EXPLAINED)."""
    return len(pahole) == len(ours) and all(
        p[:2] == o[:2] and (p[2] == o[2] or (p[2] == 0 and o[2] > 0))
        for p, o in zip(pahole, ours))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--debug-for")
    ap.add_argument("--alt")
    ap.add_argument("--max-bad", type=int, default=0,
                    help="unexplained disagreements tolerated (default 0)")
    ap.add_argument("file", nargs="?")
    a = ap.parse_args()
    path = build_id_debug(a.debug_for) if a.debug_for else a.file
    cmd = [a.symbolctl, "layout", "-e", path, "--all", "--json"]
    if a.alt:
        cmd += ["--alt", a.alt]
    ours = {}
    for t in json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                       text=True).stdout)["types"]:
        ours.setdefault(t["name"], []).append(t)
    sizes = {}
    out = subprocess.run(["pahole", "--sizes", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) >= 2 and f[1].isdigit():
            sizes.setdefault(f[0], int(f[1]))
    full = parse_pahole(subprocess.run(["pahole", path], capture_output=True,
                                       text=True).stdout)
    bad = []
    for name, size in sorted(sizes.items()):
        if name not in ours:
            bad.append(f"size {name}: pahole {size}, ours: not found")
        elif not any(t["size"] == size for t in ours[name]):
            bad.append(f"size {name}: pahole {size}, ours {[t['size'] for t in ours[name]]}")
    checked = 0
    explained = []
    for name, members in sorted(full.items()):
        if name not in ours:
            if name in sizes:
                continue  # already listed
            bad.append(f"members {name}: not found by us")
            continue
        checked += 1
        if any(ours_members(t) == members for t in ours[name]):
            continue
        if any(relaxed_equal(members, ours_members(t)) for t in ours[name]):
            explained.append(f"members {name}: {EXPLAINED}")
            continue
        if True:
            theirs = ours_members(ours[name][0])
            diff = [f"{p}!={o}" for p, o in zip(members, theirs) if p != o][:3]
            bad.append(f"members {name}: pahole {len(members)}, ours {len(theirs)} {diff}")
    print(f"compare_pahole {path}: {len(sizes)} sizes, {checked} member lists compared, "
          f"{len(ours)} names of ours, {len(bad)} disagreements, {len(explained)} explained")
    for b in bad:
        print("  " + b)
    for e in explained:
        print("  explained: " + e)
    sys.exit(0 if len(bad) <= a.max_bad else 1)


if __name__ == "__main__":
    main()
