#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kmod_test: a real kernel module (ET_REL), symbolized by section offset and
by runtime address, against eu-addr2line --section (issue 12, item 3).

Builds tests/fixtures/kmod_kmt.c out of tree against an installed Debian
linux-headers-*-amd64 (`make -C HEADERS M=DIR modules`: Kbuild gives the
kernel's own CONFIG_DEBUG_INFO flags), then for every byte offset of .text,
.init.text and .exit.text:
  - `symbolctl addr2line -e kmt.ko --section S` equals
    `eu-addr2line -e kmt.ko --section=S -i -f`: every inline chain, every line;
  - `symbolctl addr2line -e kmt.ko` at the plain addresses eu-addr2line lays
    the sections out at (from 0, like ours) equals eu-addr2line's answer;
  - llvm-symbolizer (which reads .text offsets of an object file): wherever it
    names the same innermost function, the whole chain is equal;
  - symbolizerd's Symbolize, ADDRESS_KIND_SECTION (default .text, and named
    sections) and ADDRESS_KIND_RUNTIME (memory_start = where the section is
    loaded, as /sys/module/NAME/sections/.text says), gives the same frames;
    an unknown section is an INVALID mapping with a clear error; addresses
    outside the mapping or past the section's end give no frame;
  - `symbolctl symbolize --section .text` and `--runtime --memory-start`
    through the daemon print what addr2line prints;
  - struct kmt_item's layout (names from relocated .debug_str offsets) through
    GetTypeLayouts and symbolctl layout -e equals pahole's.
With no kernel headers installed the test is skipped (exit 77) with the reason.

With --kaslr FILE (no headers needed; ctest `kernel_kaslr`): the kernel-like
fixture (.text at 0xffffffff81000000, _stext) through symbolizerd with
ADDRESS_KIND_RUNTIME under random KASLR slides (fixed seed), perf's kernel
mapping (memory_start = the slid _stext), equals eu-addr2line at the ELF
addresses.

Usage: kmod_test.py --symbolizerd BIN --symbolctl BIN (--source FILE | --kaslr FILE)
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import pb
from daemon_lib import Daemon
from upstream_lib import TestFailure, check

SKIP = 77
CODE_SECTIONS = (".text", ".init.text", ".exit.text")
MODULE_AREA = 0xffffffffc0a04000  # where a module's .text may sit at run time


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return p.returncode, p.stdout, p.stderr


def find_headers():
    """An installed Debian kernel headers tree: the running kernel's first."""
    running = "/usr/src/linux-headers-%s" % os.uname().release
    trees = sorted(glob.glob("/usr/src/linux-headers-*-amd64"))
    trees.sort(key=lambda t: t != running)
    for t in trees:
        if os.path.isfile(os.path.join(t, "Makefile")):
            return t
    return None


def build_module(headers, source, work):
    d = os.path.join(work, "kmt")
    os.makedirs(d)
    shutil.copy(source, os.path.join(d, "kmt.c"))
    with open(os.path.join(d, "Kbuild"), "w") as f:
        f.write("obj-m := kmt.o\n")
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    rc, out, err = run(["make", "-C", headers, "M=" + d, "modules"], env=env)
    ko = os.path.join(d, "kmt.ko")
    check(rc == 0 and os.path.exists(ko), "module build failed:\n%s\n%s" % (out, err))
    return ko


def sections(path):
    """name -> (size, index) of the file's sections (readelf -SW)."""
    _, out, _ = run(["readelf", "-SW", path])
    secs = {}
    for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)",
                         out, re.M):
        secs.setdefault(m.group(2), (int(m.group(3), 16), int(m.group(1))))
    return secs


def build_id(path):
    _, out, _ = run(["readelf", "-n", path])
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def frame(name, loc):
    """(name, file, line, column) with ?? as empty and no column as 0."""
    name = "" if name == "??" else name
    m = re.match(r"^(.*?):(\d+)(?::(\d+))?$", loc)
    if not m:
        return (name, "", 0, 0)
    f = "" if m.group(1) == "??" else m.group(1)
    return (name, f, int(m.group(2)), int(m.group(3) or 0))


def eu_answers(ko, addrs, section=None):
    """eu-addr2line -i -f -a: one list of frames per address, innermost first."""
    cmd = ["eu-addr2line", "-e", ko, "-i", "-f", "-a"]
    if section:
        cmd.append("--section=" + section)
    rc, out, err = run(cmd + ["0x%x" % a for a in addrs])
    # 1: some address is in no module (or in no section), answered ?? all the same.
    check(rc in (0, 1) and out, "eu-addr2line failed: rc %d %s" % (rc, err))
    answers, lines, i = [], out.splitlines(), 0
    while i < len(lines):
        check(re.match(r"^0x[0-9a-f]+$", lines[i]) is not None,
              "eu-addr2line: unexpected line %r" % lines[i])
        i += 1
        fr = []
        while i + 1 < len(lines) and not re.match(r"^0x[0-9a-f]+$", lines[i]):
            fr.append(frame(lines[i].split(" inlined at ")[0], lines[i + 1]))
            i += 2
        answers.append([f for f in fr if f != ("", "", 0, 0)])
    check(len(answers) == len(addrs), "eu-addr2line: %d answers for %d addresses"
          % (len(answers), len(addrs)))
    return answers


def llvm_blocks(text):
    """llvm-symbolizer's format: per address, name/location pairs then a blank line
    (an address nothing covers still prints ?? and ??:0)."""
    blocks, cur = [], []
    for line in text.split("\n"):
        if line:
            cur.append(line)
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    out = []
    for b in blocks:
        fr = [frame(b[k], b[k + 1]) for k in range(0, len(b) - 1, 2)]
        out.append([f for f in fr if f != ("", "", 0, 0)])
    return out


def ours_addr2line(symbolctl, ko, addrs, section=None):
    cmd = [symbolctl, "addr2line", "-e", ko, "--no-debug-lookup"]
    if section:
        cmd += ["--section", section]
    rc, out, err = run(cmd + ["0x%x" % a for a in addrs])
    check(rc == 0, "symbolctl addr2line: rc %d: %s" % (rc, err))
    answers = llvm_blocks(out)
    check(len(answers) == len(addrs), "symbolctl addr2line: %d answers for %d addresses"
          % (len(answers), len(addrs)))
    return answers


def diff(what, addrs, ours, ref):
    bad = [(a, o, r) for a, o, r in zip(addrs, ours, ref) if o != r]
    for a, o, r in bad[:5]:
        print("  %s 0x%x:\n    ours %r\n    ref  %r" % (what, a, o, r))
    check(not bad, "%s: %d of %d addresses differ" % (what, len(bad), len(addrs)))


def check_local(a, ko, secs):
    """symbolctl addr2line against eu-addr2line and llvm-symbolizer; returns eu's answers."""
    ref = {}
    for s in CODE_SECTIONS:
        offs = list(range(secs[s][0]))
        ref[s] = eu_answers(ko, offs, s)
        diff("addr2line --section " + s, offs, ours_addr2line(a.symbolctl, ko, offs, s), ref[s])
    chains = sum(1 for r in ref[".text"] if len(r) >= 3)
    check(chains > 0, "no address of .text has a two-deep inline chain: the fixture changed?")
    nonempty = sum(1 for s in CODE_SECTIONS for r in ref[s] if r)
    print("addr2line --section: %d addresses agree with eu-addr2line (%d with 3-frame chains)"
          % (sum(len(v) for v in ref.values()), chains))
    check(nonempty > 0.9 * sum(len(v) for v in ref.values()), "eu-addr2line answered too few")
    # Plain addresses: both lay the sections out from 0 in section order (eu's
    # -a prints where offset 0 of a section is).
    for s in CODE_SECTIONS:
        _, out, _ = run(["eu-addr2line", "-e", ko, "-a", "--section=" + s, "0"])
        base = int(out.split()[0], 16)
        plain = [base + o for o in range(secs[s][0])]
        diff("addr2line (plain) in " + s, plain, ours_addr2line(a.symbolctl, ko, plain), ref[s])
    # llvm-symbolizer reads an object's addresses as offsets in any of its
    # sections at once (all start at 0): it names the outermost frame after
    # whatever symbol sits at that offset (a data symbol, a note) and may add
    # a frame from .init.text. Where it gives our chain's length and names our
    # outermost function, every frame must be equal.
    offs = list(range(secs[".text"][0]))
    rc, out, _ = run(["llvm-symbolizer", "--obj=" + ko] + ["0x%x" % o for o in offs])
    check(rc == 0, "llvm-symbolizer failed")
    llvm = llvm_blocks(out)
    check(len(llvm) == len(offs), "llvm-symbolizer: %d answers" % len(llvm))
    mine = ref[".text"]
    same = [i for i in range(len(offs)) if llvm[i] and len(llvm[i]) == len(mine[i]) and
            llvm[i][-1][0] == mine[i][-1][0]]
    diff("llvm-symbolizer", [offs[i] for i in same], [mine[i] for i in same],
         [llvm[i] for i in same])
    check(len(same) > len(offs) // 2, "llvm-symbolizer comparable at only %d of %d"
          % (len(same), len(offs)))
    print("llvm-symbolizer: all frames agree at the %d of %d .text offsets where it names "
          "the function" % (len(same), len(offs)))
    return ref


def check_daemon(a, ko, secs, ref, work):
    dbg = os.path.join(work, "debug")
    bid = build_id(ko)
    os.makedirs(os.path.join(dbg, ".build-id", bid[:2]))
    shutil.copy(ko, os.path.join(dbg, ".build-id", bid[:2], bid[2:] + ".debug"))
    d = Daemon(a.symbolizerd, os.path.join(work, "data"), os.path.join(work, "daemon.log"),
               debug_dirs=[dbg])
    try:
        text = secs[".text"][0]
        maps = [pb.mapping(bid, kind=pb.SECTION),
                pb.mapping(bid, kind=pb.SECTION, section=".init.text"),
                pb.mapping(bid, kind=pb.RUNTIME, memory_start=MODULE_AREA,
                           memory_limit=MODULE_AREA + text),
                pb.mapping(bid, kind=pb.SECTION, section=".exit.text"),
                pb.mapping(bid, kind=pb.SECTION, section=".no_such"),
                pb.mapping(bid, kind=pb.RUNTIME, memory_start=0xffffffffc1000000,
                           section=".init.text")]
        locs, want = [], []
        for off in range(text):
            locs.append(pb.location(0, off))
            want.append(ref[".text"][off])
            locs.append(pb.location(2, MODULE_AREA + off))
            want.append(ref[".text"][off])
        for off in range(secs[".init.text"][0]):
            locs.append(pb.location(1, off))
            want.append(ref[".init.text"][off])
            locs.append(pb.location(5, 0xffffffffc1000000 + off))
            want.append(ref[".init.text"][off])
        for off in range(secs[".exit.text"][0]):
            locs.append(pb.location(3, off))
            want.append(ref[".exit.text"][off])
        # Outside: past the section's end, below memory_start, an unknown section.
        for m, addr in ((0, text), (2, MODULE_AREA - 1), (2, MODULE_AREA + text), (4, 0x10)):
            locs.append(pb.location(m, addr))
            want.append([])
        resp = d.symbolize(maps, locs, max_wait_ms=30000)
        st = [pb.STATUS[m["status"]] for m in resp["mappings"]]
        check(st == ["OK", "OK", "OK", "OK", "INVALID", "OK"], "mapping statuses %r" % st)
        err = resp["mappings"][4]["error"]
        check(".no_such" in err and "section" in err, "unknown section error: %r" % err)
        got = [pb.frames(resp, i) for i in range(len(locs))]
        got = [[(n, f, l, c) for n, f, l, c in g] for g in got]
        diff("Symbolize", list(range(len(locs))), got, want)
        check(resp["mappings"][0]["has_inline_frames"], "has_inline_frames not set")
        print("Symbolize: %d locations (SECTION, RUNTIME) agree with eu-addr2line" % len(locs))
        check_symbolctl_remote(a, d.url, bid, ko, text)
        check_layouts(a, d.url, bid, ko)
    except Exception:
        print(d.log_text()[-4000:])
        raise
    finally:
        d.stop()


def check_symbolctl_remote(a, url, bid, ko, text):
    offs = ["0x%x" % o for o in range(0, text, 3)]
    _, local, _ = run([a.symbolctl, "addr2line", "-e", ko, "--section", ".text"] + offs)
    rc, remote, err = run([a.symbolctl, "symbolize", "--server", url, "--build-id", bid,
                           "--section", ".text"] + offs)
    check(rc == 0 and remote == local, "symbolize --section: rc %d %s\n%s\nvs\n%s"
          % (rc, err, remote[:400], local[:400]))
    runtime = ["0x%x" % (MODULE_AREA + o) for o in range(0, text, 3)]
    rc, remote, err = run([a.symbolctl, "symbolize", "--server", url, "--build-id", bid,
                           "--runtime", "--memory-start", "0x%x" % MODULE_AREA] + runtime)
    check(rc == 0 and remote == local, "symbolize --runtime: rc %d %s" % (rc, err))
    rc, _, err = run([a.symbolctl, "addr2line", "-e", ko, "--section", ".nope", "0"])
    check(rc == 1 and ".nope" in err, "addr2line --section .nope: rc %d %r" % (rc, err))
    rc, out, err = run([a.symbolctl, "symbolize", "--server", url, "--build-id", bid,
                        "--section", ".nope", "0"])
    check(rc == 1 and ".nope" in out + err, "symbolize --section .nope: rc %d %r" % (rc, err))


def pahole_members(ko, name):
    rc, out, err = run(["pahole", "-C", name, ko])
    check(rc == 0 and out, "pahole: " + err)
    return [(m.group(1), int(m.group(2)), int(m.group(3))) for m in
            re.finditer(r"^\t.*?[\s*](\w+)(?:\[\d+\])?;\s+/\*\s+(\d+)\s+(\d+)\s+\*/", out, re.M)]


def check_layouts(a, url, bid, ko):
    want = pahole_members(ko, "kmt_item")
    check([w[0] for w in want] == ["id", "value", "name", "next", "flags"],
          "pahole's kmt_item: %r" % want)
    rc, local, err = run([a.symbolctl, "layout", "-e", ko, "--json", "kmt_item"])
    check(rc == 0, "symbolctl layout -e: " + err)
    rc, remote, err = run([a.symbolctl, "layout", "--server", url, "--build-id", bid, "kmt_item"])
    check(rc == 0, "symbolctl layout --server: " + err)
    for what, text in (("layout -e", local), ("GetTypeLayouts", remote)):
        lay = json.loads(text)["types"][0]["layouts"][0]
        got = [(m["name"], m["offset"], m["size"]) for m in lay["members"]]
        check(got == want and lay["size"] == 40, "%s kmt_item %r, pahole %r" % (what, got, want))
    print("layouts: kmt_item through GetTypeLayouts and layout -e equals pahole's")


def check_kaslr(a, path, work):
    dbg = os.path.join(work, "debug")
    bid = build_id(path)
    os.makedirs(os.path.join(dbg, ".build-id", bid[:2]))
    shutil.copy(path, os.path.join(dbg, ".build-id", bid[:2], bid[2:] + ".debug"))
    _, out, _ = run(["nm", path])
    stext = int(re.search(r"^([0-9a-f]+) T _stext$", out, re.M).group(1), 16)
    size = sections(path)[".text"][0]
    addrs = list(range(stext, stext + size))
    ref = eu_answers(path, addrs)
    check(sum(1 for r in ref if r) > size // 2, "eu-addr2line knows too little of kernel_like")
    rnd = random.Random(20260412)
    slides = [rnd.randrange(1, 0x3f000) << 12 for _ in range(8)] + [0]
    d = Daemon(a.symbolizerd, os.path.join(work, "data"), os.path.join(work, "daemon.log"),
               debug_dirs=[dbg])
    try:
        maps = [pb.mapping(bid, kind=pb.RUNTIME, memory_start=stext + sl,
                           memory_limit=stext + sl + 0x1000000) for sl in slides]
        locs = [pb.location(m, x + sl) for m, sl in enumerate(slides) for x in addrs]
        resp = d.symbolize(maps, locs, max_wait_ms=30000)
        check(all(m["status"] == 1 for m in resp["mappings"]), "statuses %r" % resp["mappings"])
        got = [pb.frames(resp, i) for i in range(len(locs))]
        diff("KASLR", list(range(len(locs))), got, ref * len(slides))
        # Offsets within .text of the kernel image; a section it lacks is INVALID.
        resp = d.symbolize([pb.mapping(bid, kind=pb.SECTION),
                            pb.mapping(bid, kind=pb.SECTION, section=".nope")],
                           [pb.location(0, x - stext) for x in addrs] + [pb.location(1, 0)])
        st = [pb.STATUS[m["status"]] for m in resp["mappings"]]
        check(st == ["OK", "INVALID"] and ".nope" in resp["mappings"][1]["error"],
              "section mappings: %r" % resp["mappings"])
        got = [pb.frames(resp, i) for i in range(len(addrs) + 1)]
        diff("SECTION on kernel_like", list(range(len(got))), got, ref + [[]])
        print("KASLR: %d slides x %d addresses of kernel_like agree with eu-addr2line"
              % (len(slides), size))
    except Exception:
        print(d.log_text()[-4000:])
        raise
    finally:
        d.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--source")
    ap.add_argument("--kaslr")
    a = ap.parse_args()
    if a.kaslr:
        work = tempfile.mkdtemp(prefix="kaslr_test.")
        try:
            check_kaslr(a, a.kaslr, work)
        except TestFailure as e:
            print("FAIL:", e)
            return 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print("PASS")
        return 0
    if not a.source:
        ap.error("give --source FILE or --kaslr FILE")
    headers = find_headers()
    if not headers:
        print("SKIP: no /usr/src/linux-headers-*-amd64 with a Makefile "
              "(scripts/install-deps.sh installs linux-headers-cloud-amd64)")
        return SKIP
    work = tempfile.mkdtemp(prefix="kmod_test.")
    try:
        ko = build_module(headers, a.source, work)
        secs = sections(ko)
        for s in CODE_SECTIONS + (".debug_info", ".rela.debug_info"):
            check(s in secs, "kmt.ko has no %s section" % s)
        print("module built against %s: .text %d bytes" % (headers, secs[".text"][0]))
        ref = check_local(a, ko, secs)
        check_daemon(a, ko, secs, ref, work)
    except TestFailure as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
