#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""layout_gdb: the struct offsets the OpenTelemetry eBPF profiler's Python unwinder
reads, from `symbolctl layout` (or the daemon's GetTypeLayouts, with --json-from),
against what gdb prints with `ptype/o` for the same types in libpython3.11d.so.

Each field is TYPE.member[.member...]: gdb's offsets of embedded members are
added along the path (gdb does not expand typedef'd structs, so each step past
one is another ptype/o). Sizes of whole types are compared with gdb's
"total size". Exit 1 on any difference.

Usage: layout_gdb.py --symbolctl PATH FILE
       layout_gdb.py --json-from OUT.json FILE   (output of `symbolctl layout --json`)
"""
import argparse
import json
import re
import subprocess
import sys

# interpreter/python in open-telemetry/opentelemetry-ebpf-profiler (Python 3.11 names).
FIELDS = [
    "PyObject.ob_type", "PyVarObject.ob_size", "PyTypeObject.tp_name",
    "PyTypeObject.tp_basicsize", "PyTypeObject.tp_flags", "PyTypeObject.tp_members",
    "PyCodeObject.co_argcount", "PyCodeObject.co_kwonlyargcount", "PyCodeObject.co_flags",
    "PyCodeObject.co_firstlineno", "PyCodeObject.co_filename", "PyCodeObject.co_name",
    "PyCodeObject.co_linetable", "PyCodeObject.co_localsplusnames",
    "PyCodeObject.co_qualname", "PyCodeObject.co_code_adaptive",
    "PyThreadState.interp", "PyThreadState.cframe", "PyThreadState.next",
    "PyThreadState.native_thread_id", "PyThreadState.thread_id",
    "_PyCFrame.current_frame", "_PyInterpreterFrame.f_code",
    "_PyInterpreterFrame.previous", "_PyInterpreterFrame.prev_instr",
    "_PyInterpreterFrame.is_entry", "_PyInterpreterFrame.owner",
    "_PyInterpreterFrame.localsplus",
    "PyTupleObject.ob_item", "PyBytesObject.ob_sval", "PyASCIIObject.length",
    "PyASCIIObject.state", "PyInterpreterState.next", "PyInterpreterState.threads.head",
    "_PyRuntimeState.interpreters.main", "_PyRuntimeState.gilstate.autoTSSkey",
    "PyThreadState.root_cframe.current_frame", "PyHeapTypeObject.ht_type",
    "PyDictObject.ma_keys",
]
SIZES = ["PyASCIIObject", "PyCompactUnicodeObject", "PyObject", "PyThreadState",
         "_PyInterpreterFrame", "PyCodeObject", "_PyCFrame"]

LINE = re.compile(r"^/\*\s+(\d+)(?::\s*(\d+))?\s+\|\s+(\d+)\s+\*/\s+(.*)$")
TOTAL = re.compile(r"total size \(bytes\):\s+(\d+)")


def gdb_ptype(lib, type_name, cache={}):
    if type_name not in cache:
        out = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set max-value-size unlimited",
                              "-ex", f"ptype/o {type_name}", lib],
                             capture_output=True, text=True).stdout
        cache[type_name] = parse(out)
    return cache[type_name]


def split_decl(text):
    """'PyTraceInfo trace_info;' -> ('PyTraceInfo', 'trace_info')."""
    t = re.sub(r"\s*:\s*\d+;$|;$", "", text.strip())
    fp = re.match(r"^(.*)\(\*(\w+)\)\(.*\)$", t)
    if fp:
        return fp.group(1).strip() + " *", fp.group(2)
    t = re.sub(r"(\[\d*\])+$", "", t)
    m = re.match(r"^(.*?)[\s*]*(\w+)$", t)
    if not m:
        return t, t
    typ = t[:m.start(2)].strip()
    return typ, m.group(2)


def parse(out):
    """{'fields': {path: (offset, size, type)}, 'size': total}."""
    stack = [{}]
    opens = []
    total = None
    for line in out.splitlines()[1:]:
        m = LINE.match(line.strip())
        if m:
            off, size, decl = int(m.group(1)), int(m.group(3)), m.group(4)
            if decl.endswith("{"):
                stack.append({})
                opens.append((off, size))
                continue
            typ, name = split_decl(decl)
            stack[-1][name] = (off, size, typ)
            continue
        t = TOTAL.search(line)
        s = line.strip()
        c = re.match(r"^\}\s*(\w*)(?:\s*__attribute__.*)?;$", s)
        if c and len(stack) > 1:
            inner = stack.pop()
            off, size = opens.pop()
            name = c.group(1)
            for k, v in inner.items():
                stack[-1][f"{name}.{k}" if name else k] = v
            if name:
                stack[-1][name] = (off, size, "")
        elif t and len(stack) == 1:
            total = int(t.group(1))
    return {"fields": stack[0], "size": total}


def gdb_field(lib, path):
    parts = path.split(".")
    typ, rest, base = parts[0], parts[1:], 0
    while rest:
        fields = gdb_ptype(lib, typ)["fields"]
        for n in range(len(rest), 0, -1):
            key = ".".join(rest[:n])
            if key in fields:
                off, size, t = fields[key]
                base += off
                rest = rest[n:]
                if not rest:
                    return base, size
                typ = t
                break
        else:
            return None
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl")
    ap.add_argument("--json-from")
    ap.add_argument("file")
    a = ap.parse_args()
    if a.json_from:
        ours = json.load(open(a.json_from))
    else:
        cmd = [a.symbolctl, "layout", "-e", a.file, "--json"] + SIZES
        for f in FIELDS:
            cmd += ["--field", f]
        ours = json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout)
    bad = 0
    got = {f["path"]: f for f in ours["fields"]}
    for path in FIELDS:
        want = gdb_field(a.file, path)
        f = got.get(path)
        mine = (f["offset"], f["size"]) if f and f.get("found") else None
        ok = want is not None and mine == want
        bad += not ok
        print(f"{'ok  ' if ok else 'BAD '} {path}: gdb {want}, ours {mine}")
    sizes = {t["query"]: t for t in ours["types"]}
    for name in SIZES:
        want = gdb_ptype(a.file, name)["size"]
        t = sizes.get(name)
        mine = t["layouts"][0]["size"] if t and t["layouts"] else None
        ok = want is not None and mine == want
        bad += not ok
        print(f"{'ok  ' if ok else 'BAD '} sizeof {name}: gdb {want}, ours {mine}")
    print(f"layout_gdb: {len(FIELDS) + len(SIZES) - bad} agree, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
