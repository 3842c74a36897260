#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""layout_daemon_test: GetTypeLayouts through the real symbolizerd equals
`symbolctl layout -e FILE --json` on the same files (every type each fixture
has, and field paths), for the layout fixtures and the dwz pair (the dwz file
read back from the store), and on libpython3.11d.so the eBPF profiler's Python
offsets through the daemon equal gdb's ptype/o (layout_gdb.py --json-from).
Bad and unknown build IDs answer INVALID and NOT_FOUND; a restart loads the
stored blob; sixteen concurrent calls for a new build ID cause one build.

Usage: layout_daemon_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from daemon_lib import Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
LIBPYTHON = "/usr/lib/x86_64-linux-gnu/libpython3.11d.so.1.0"
FIELDS = {
    "layout_c_dw4": ["nest.q", "holder_t.bits.d", "holder.grid", "nest.named.u.s", "nest.none"],
    "layout_c_dw5": ["nest.q", "holder_t.bits.d", "holder_t.al.i"],
    "layout_cxx": ["Multi.b", "ns::Outer.inner.v", "VBase.v1"],
    "layout_odr": ["odr_s.b", "same_s.b"],
    "dwz_a": ["shared::Record.values"],
}


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def put(debug_dir, path):
    h = build_id(path)
    d = os.path.join(debug_dir, ".build-id", h[:2])
    os.makedirs(d, exist_ok=True)
    shutil.copy(path, os.path.join(d, h[2:] + ".debug"))
    return h


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="layout_daemon.")
    dbg = os.path.join(work, "debug")
    fx = a.fixtures
    ids = {f: put(dbg, os.path.join(fx, f)) for f in FIELDS}
    put(dbg, os.path.join(fx, "dwz_common.debug"))
    has_py = os.path.exists(LIBPYTHON)
    if has_py:
        ids["libpython"] = put(dbg, LIBPYTHON)
    d = Daemon(a.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               debug_dirs=[dbg])
    bad = 0
    try:
        for f, fields in FIELDS.items():
            path = os.path.join(fx, f)
            alt = ["--alt", os.path.join(fx, "dwz_common.debug")] if f == "dwz_a" else []
            _, sizes, _ = run([a.symbolctl, "layout", "-e", path, "--sizes"] + alt)
            names = sorted({line.split("\t")[0] for line in sizes.splitlines()
                            if line.split("\t")[0]})
            q = names + sum([["--field", p] for p in fields], [])
            _, local, _ = run([a.symbolctl, "layout", "-e", path, "--json"] + alt + q)
            rc, remote, err = run([a.symbolctl, "layout", "--server", d.url,
                                   "--build-id", ids[f]] + q)
            same = rc == 0 and json.loads(local) == json.loads(remote)
            bad += not same
            print(f"{'ok  ' if same else 'BAD '} {f}: {len(names)} types, {len(fields)} fields"
                  + ("" if same else f" (rc {rc} {err.strip()})"))
        for bid, want in (("abc", "STATUS_INVALID"), ("00" * 20, "STATUS_NOT_FOUND")):
            rc, _, err = run([a.symbolctl, "layout", "--server", d.url, "--build-id", bid, "x"])
            ok = rc == 1 and want in err
            bad += not ok
            print(f"{'ok  ' if ok else 'BAD '} build ID {bid}: {err.strip()}")
        # A restart loads the stored layout blob instead of building it.
        d.stop()
        d = Daemon(a.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d2.log"),
                   debug_dirs=[dbg])
        rc, again, _ = run([a.symbolctl, "layout", "--server", d.url, "--build-id",
                            ids["layout_cxx"], "Multi"])
        loaded = rc == 0 and 'msg="layout index loaded"' in d.log_text() and \
            'msg="layout index built"' not in d.log_text()
        bad += not loaded
        print(f"{'ok  ' if loaded else 'BAD '} after a restart: loaded from the store"
              + ("" if loaded else "\n" + d.log_text()))
        if has_py:
            # Sixteen calls at once for a build ID never asked for: one build.
            procs = [subprocess.Popen([a.symbolctl, "layout", "--server", d.url, "--build-id",
                                       ids["libpython"], "--field", "PyObject.ob_type"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for _ in range(16)]
            outs = [p.communicate()[0] for p in procs]
            builds = d.log_text().count('msg="layout index built" build_id=' + ids["libpython"])
            ok = all(p.returncode == 0 for p in procs) and len(set(outs)) == 1 and builds == 1
            bad += not ok
            print(f"{'ok  ' if ok else 'BAD '} 16 concurrent calls: {builds} build(s)")
            sys.path.insert(0, HERE)
            import layout_gdb
            q = layout_gdb.SIZES + sum([["--field", p] for p in layout_gdb.FIELDS], [])
            rc, remote, err = run([a.symbolctl, "layout", "--server", d.url,
                                   "--build-id", ids["libpython"]] + q)
            out = os.path.join(work, "py.json")
            with open(out, "w") as fh:
                fh.write(remote)
            g = subprocess.run([sys.executable, os.path.join(HERE, "layout_gdb.py"),
                                "--json-from", out, LIBPYTHON], capture_output=True, text=True)
            print(g.stdout.strip().splitlines()[-1] if g.stdout else g.stderr)
            bad += rc != 0 or g.returncode != 0
        else:
            print("libpython3.11d.so not installed (python3.11-dbg): skipped")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)
    print(f"layout_daemon_test: {'FAIL' if bad else 'ok'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
