#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""package_kernel_test: Debian's kernel debug package (linux-image-*-cloud-amd64-dbg,
fetched once by scripts/fetch-kernel-dbg.sh) as a source (issue 12). The
package is read independently here (dpkg-deb --fsys-tarfile, Python's tarfile,
each ELF member's GNU build-ID note); symbolizerd with --package-dir alone must
catalogue every one of them (vmlinux and every module), serve a random sample
of modules and vmlinux byte for byte on /buildid/ID/debuginfo, and symbolize
vmlinux addresses as eu-addr2line does on the same file.

Each sampled module is also symbolized by section offset (ADDRESS_KIND_SECTION,
offsets inside its .text functions) and compared, inline chain by inline
chain, with eu-addr2line --section=.text on the served file (check_module).

Usage: package_kernel_test.py --symbolizerd BIN --fetch scripts/fetch-kernel-dbg.sh
"""
import argparse
import hashlib
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import time

import pb
from daemon_lib import Daemon
from upstream_lib import check, run_cases, tempdir

ARGS = None
SEED = 7


def elf_build_id(data):
    """The GNU build ID (hex) from a little-endian ELF file's SHT_NOTE sections."""
    if data[:4] != b"\x7fELF" or data[5] != 1 or data[4] not in (1, 2):
        return None
    is64 = data[4] == 2
    if is64:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    else:
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x2e)
    for i in range(shnum):
        base = shoff + i * shentsize
        if base + shentsize > len(data):
            return None
        sh_type, = struct.unpack_from("<I", data, base + 4)
        if is64:
            off, size = struct.unpack_from("<QQ", data, base + 0x18)
        else:
            off, size = struct.unpack_from("<II", data, base + 0x10)
        if sh_type != 7:
            continue
        pos, end = off, off + size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name_end = pos + 12 + (namesz + 3) // 4 * 4
            if ntype == 3 and data[pos + 12:pos + 12 + namesz] == b"GNU\0":
                return data[name_end:name_end + descsz].hex()
            pos = name_end + (descsz + 3) // 4 * 4
    return None


def read_package(deb):
    """{path: (build ID, sha256)} of every ELF member with a build ID."""
    out = {}
    p = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    with tarfile.open(fileobj=p.stdout, mode="r|") as t:
        for m in t:
            if not m.isreg() or m.size < 64:
                continue
            f = t.extractfile(m)
            head = f.read(4)
            if head != b"\x7fELF":
                continue
            data = head + f.read()
            bid = elf_build_id(data)
            if bid:
                out[m.name.lstrip("./")] = (bid, hashlib.sha256(data).hexdigest())
    p.wait()
    return out


def get(d, path, timeout=300):
    c = d.conn(timeout=timeout)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def text_functions(ko):
    """(offset, size) of the FUNC symbols in a module's .text (readelf -sW)."""
    secs = subprocess.run(["readelf", "-SW", ko], capture_output=True, text=True,
                          check=True).stdout
    m = re.search(r"^\s*\[\s*(\d+)\]\s+\.text\s", secs, re.M)
    if not m:
        return []
    ndx = m.group(1)
    syms = subprocess.run(["readelf", "-sW", ko], capture_output=True, text=True,
                          check=True).stdout
    out = []
    for line in syms.splitlines():
        w = line.split()
        if len(w) >= 8 and w[3] == "FUNC" and w[6] == ndx and int(w[2], 0) > 4:
            out.append((int(w[1], 16), int(w[2], 0)))
    return out


def section_chain(ko, off):
    lines = subprocess.run(["eu-addr2line", "-f", "-i", "--section=.text", "-e", ko, "0x%x" % off],
                           capture_output=True, text=True).stdout.splitlines()
    chain = []
    for i in range(0, len(lines) - 1, 2):
        fn = lines[i].split(" inlined at ")[0].strip()
        m = re.match(r"^(.*?):(\d+)(?::\d+)?", lines[i + 1])
        chain.append((fn, os.path.basename(m.group(1)), int(m.group(2))) if m else (fn, "??", 0))
    return [c for c in chain if c != ("??", "??", 0)]


def check_module(d, path, bid, body, work, totals):
    """A module served from the package: its build ID, then addresses inside its
    .text functions symbolized by section offset (ADDRESS_KIND_SECTION) through
    the daemon, each inline chain against eu-addr2line --section=.text."""
    check(elf_build_id(body) == bid, "%s: served build ID differs" % path)
    ko = os.path.join(work, "module.ko")
    with open(ko, "wb") as f:
        f.write(body)
    funcs = text_functions(ko)
    if not funcs:
        return
    rnd = random.Random(SEED + len(funcs))
    offs = [o + rnd.randrange(0, n) for o, n in (rnd.choice(funcs) for _ in range(20))]
    resp = d.symbolize([pb.mapping(bid, kind=pb.SECTION, section=".text")],
                       [pb.location(0, o) for o in offs], max_wait_ms=60000)
    check(pb.STATUS[resp["mappings"][0]["status"]] == "OK", "%s: mapping %r"
          % (path, resp["mappings"][0]))
    for i, o in enumerate(offs):
        ours = [(f[0], os.path.basename(f[1]), f[2]) for f in pb.frames(resp, i)]
        ref = section_chain(ko, o)
        totals[0] += 1
        if ours == ref:
            totals[1] += 1
        elif totals[0] - totals[1] <= 3:
            print("  %s .text+0x%x: ours %r, eu-addr2line %r" % (os.path.basename(path), o,
                                                                ours, ref))


def chain_of(vmlinux, a):
    lines = subprocess.run(["eu-addr2line", "-f", "-i", "-e", vmlinux, "0x%x" % a],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    chain = []
    for i in range(0, len(lines) - 1, 2):
        fn = lines[i].split(" inlined at ")[0].strip()
        m = re.match(r"^(.*?):(\d+)(?::\d+)?", lines[i + 1])
        chain.append((fn, os.path.basename(m.group(1)), int(m.group(2))) if m else
                     (fn, "??", 0))
    return chain


def vmlinux_addrs(vmlinux, n):
    out = subprocess.run(["nm", "-S", "--defined-only", vmlinux], capture_output=True, text=True,
                         check=True).stdout
    funcs = [(int(w[0], 16), int(w[1], 16)) for w in (l.split() for l in out.splitlines())
             if len(w) == 4 and w[2] in "tT" and int(w[1], 16) > 0x20]
    rnd = random.Random(SEED)
    return [a + rnd.randrange(0, s) for a, s in rnd.sample(funcs, n)]


def case_kernel():
    deb = subprocess.run(["bash", ARGS.fetch], capture_output=True, text=True,
                         check=True).stdout.strip()
    print("  package: %s" % deb, flush=True)
    work = tempdir("pkg-kernel-", sweep=True)
    pool = os.path.join(work, "pool")
    os.makedirs(pool)
    os.symlink(deb, os.path.join(pool, os.path.basename(deb)))
    t0 = time.monotonic()
    members = read_package(deb)
    modules = sorted(p for p in members if p.endswith(".ko"))
    vmlinux = [p for p in members if "/boot/vmlinux-" in p]
    print("  %d ELF members with a build ID (%d modules), read in %.0f s" %
          (len(members), len(modules), time.monotonic() - t0), flush=True)
    check(len(modules) > 500 and len(vmlinux) == 1, "package: %d modules, vmlinux %r" %
          (len(modules), vmlinux))
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               extra=["--package-dir", pool])
    try:
        # Asked while the first scan runs (about 12 s): PENDING, never a
        # NOT_FOUND remembered for 10 minutes (issue 25, item 2).
        early = d.symbolize([pb.mapping(members[vmlinux[0]][0])], [pb.location(0, 0x1000)],
                            max_wait_ms=3000)["mappings"][0]
        check(pb.STATUS[early["status"]] != "NOT_FOUND", "asked during the scan: %r" % early)
        if (d.metric("symbolizer_package_members") or 0) == 0:  # the scan still runs
            check(pb.STATUS[early["status"]] == "PENDING" and "scan" in early.get("error", ""),
                  "asked during the scan: %r" % early)
        print("  asked during the scan: %s (%s)" % (pb.STATUS[early["status"]],
                                                    early.get("error")), flush=True)
        deadline = time.monotonic() + 600
        while (d.metric("symbolizer_package_members") or 0) < len(set(members.values())):
            check(d.metric('symbolizer_packages{state="failed"}') in (None, 0),
                  "scan failed:\n" + d.log_text()[-2000:])
            check(time.monotonic() < deadline, "catalogue incomplete:\n" + d.log_text()[-2000:])
            time.sleep(0.5)
        check(d.metric("symbolizer_package_members") == len({v[0] for v in members.values()}),
              "catalogue holds %r members, the package %d build IDs" %
              (d.metric("symbolizer_package_members"), len({v[0] for v in members.values()})))
        rnd = random.Random(SEED)
        totals = [0, 0]  # module addresses compared, equal
        for path in rnd.sample(modules, 12):
            bid, digest = members[path]
            status, body = get(d, "/buildid/%s/debuginfo" % bid)
            check(status == 200, "%s: HTTP %d" % (path, status))
            check(hashlib.sha256(body).hexdigest() == digest, "%s: bytes differ" % path)
            check_module(d, path, bid, body, work, totals)
        print("  modules: %d/%d inline chains at .text offsets equal eu-addr2line --section's"
              % (totals[1], totals[0]), flush=True)
        check(totals[0] > 100 and totals[1] >= 0.95 * totals[0],
              "modules: only %d/%d equal" % (totals[1], totals[0]))
        bid, digest = members[vmlinux[0]]
        status, body = get(d, "/buildid/%s/debuginfo" % bid, timeout=600)
        check(status == 200 and hashlib.sha256(body).hexdigest() == digest, "vmlinux: %d" % status)
        vm = os.path.join(work, "vmlinux")
        with open(vm, "wb") as f:
            f.write(body)
        del body
        addrs = vmlinux_addrs(vm, 60)
        resp = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs],
                           max_wait_ms=120000)
        check(pb.STATUS[resp["mappings"][0]["status"]] == "OK", "vmlinux mapping %r" %
              resp["mappings"][0])
        same = 0
        for i, a in enumerate(addrs):
            ours = [(f[0], os.path.basename(f[1]), f[2]) for f in pb.frames(resp, i)]
            ref = chain_of(vm, a)
            if ours == ref:
                same += 1
            elif i < 3:
                print("  0x%x: ours %r, eu-addr2line %r" % (a, ours, ref))
        print("  vmlinux: %d/%d inline chains equal eu-addr2line's" % (same, len(addrs)))
        check(same >= 0.9 * len(addrs), "vmlinux: only %d/%d equal" % (same, len(addrs)))
    finally:
        d.stop()
        shutil.rmtree(work, ignore_errors=True)  # the store and a copy of vmlinux: 1.2 GB


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fetch", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("kernel", case_kernel)], ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
