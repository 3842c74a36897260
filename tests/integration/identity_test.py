#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""identity_test: file identities other than the GNU build ID (issue 27, item 1).

- a stripped pure-Go binary (Go's internal linker: a .note.go.buildid, no GNU
  build ID) uploaded once by its OTel file hash (?kind=htlhash) is found by its
  Go build ID and by its file hash (Symbolize's build_id_kind), the answers
  equal `symbolctl addr2line` on the file; ShouldUpload says PRESENT for both,
  /buildid/ID/status?kind=... knows it;
- a file with no notes at all in a local --debug-dir is found by its file
  hash (computed when the directory is read), lines equal llvm-symbolizer's;
- package members: a .deb (dpkg-deb) holding the stripped Go binary (no GNU
  build ID) and a stripped C binary with its debug file, read by --package-dir:
  the Go binary found by its Go build ID and its file hash, the C binary by its
  file hash (as by its GNU build ID), through Symbolize and
  /buildid/ID/executable?kind=... (the member's bytes);
- an unknown file hash is never asked of a debuginfod upstream (the protocol
  names GNU build IDs only); a file uploaded under a hash it does not have is
  refused.

Usage: identity_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR --go GO
       --src DIR --workdir DIR [CASE...]
"""
import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys

import pb
from daemon_lib import Daemon, llvm_lines
from upstream_lib import FaultServer, check, run_cases, tempdir

ARGS = None
TOKEN = "t0ken-for-identity-tests-0123"
SHOULD = "/symbolizer.v1.SymbolizerService/ShouldUpload"
A_PRESENT = 2


def htlhash(path):
    """The OTel file hash as the eBPF profiler computes it (libpf/fileid.go)."""
    with open(path, "rb") as f:
        b = f.read()
    n = len(b)
    p = min(n, 4096)
    return hashlib.sha256(b[:p] + b[n - p:] + n.to_bytes(8, "big")).hexdigest()[:32]


def go_build_id(path):
    r = subprocess.run([ARGS.go, "tool", "buildid", path], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "go tool buildid: %s" % r.stderr)
    return r.stdout.strip()


def has_gnu_note(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return "Build ID:" in out


def entry(path):
    out = subprocess.run(["readelf", "-h", path], capture_output=True, text=True).stdout
    return int(re.search(r"Entry point address:\s+0x([0-9a-f]+)", out).group(1), 16)


def nm_addr(path, name):
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) [Tt] %s$" % re.escape(name), out, re.M)
    check(m, "nm %s: no %s" % (path, name))
    return int(m.group(1), 16)


def text_addrs(path, n):
    """n addresses spread over .text (other functions than the entry's)."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    m = re.search(r"\s\.text\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", out)
    check(m, "%s: no .text" % path)
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    return [start + size * (k + 1) // (n + 1) for k in range(n)]


def token_file(work):
    p = os.path.join(work, "token")
    with open(p, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(p, 0o600)
    return p


def daemon(work, name, debug_dirs=(), upstreams=()):
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), upstreams=upstreams,
                  debug_dirs=debug_dirs, extra=["--upload-token-file", token_file(work)])


def put(d, path, body):
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    c.request("PUT", path, body, {"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    c.close()
    return r.status, text


def should(d, cands):
    body = b"".join(pb.field_bytes(1, pb.field_bytes(1, b) + pb.field_varint(2, 2) +
                                   pb.field_bytes(3, k)) for b, k in cands)
    body += pb.field_bytes(2, pb.field_varint(3, 20000))
    status, _, data = d.post(body, path=SHOULD)
    check(status == 200, "ShouldUpload: HTTP %d %r" % (status, data[:200]))
    out = []
    for num, _, v in pb.parse(data):
        if num == 1:
            dec = {2: 0, 3: b""}
            for k, _, kv in pb.parse(v):
                dec[k] = kv
            out.append((dec[2], dec[3].decode()))
    return out


def symbolize_one(d, bid, kind, addrs):
    resp = d.symbolize([pb.mapping(bid, id_kind=kind)], [pb.location(0, a) for a in addrs],
                       max_wait_ms=20000)
    st = pb.STATUS[resp["mappings"][0]["status"]]
    check(st == "OK", "%s %s: status %s %s" % (kind, bid, st, resp["mappings"][0]["error"]))
    return [llvm_lines(pb.frames(resp, i)) for i in range(len(addrs))]


def symbolctl_lines(path, addrs):
    r = subprocess.run([ARGS.symbolctl, "addr2line", "-e", path, "--no-debug-lookup"] +
                       ["0x%x" % a for a in addrs],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "symbolctl addr2line: %s" % r.stderr[:500])
    return r.stdout


def build_go(work):
    import go_test
    out = go_test.build(ARGS.go, ARGS.src, os.path.join(ARGS.workdir), "ident_stripped", "prog",
                        ["-ldflags=-s -w"])
    dst = os.path.join(work, "goprog")
    shutil.copy(out, dst)
    return dst


def case_go_by_any_identity():
    work = tempdir("ident-go-")
    binary = build_go(work)
    check(not has_gnu_note(binary), "the Go binary has a GNU build ID: the case needs one without")
    gid, hh = go_build_id(binary), htlhash(binary)
    check("/" in gid, "go tool buildid: %r" % gid)
    d = daemon(work, "go")
    try:
        with open(binary, "rb") as f:
            body = f.read()
        # The Go build ID is not an upload path; a wrong hash is refused.
        st, text = put(d, "/buildid/%s/executable?kind=htlhash" % ("0" * 32), body)
        check(st == 400 and "mismatch" in text, "wrong hash: %d %s" % (st, text))
        st, text = put(d, "/buildid/%s/executable?kind=go" % hh, body)
        check(st == 400, "?kind=go upload: %d %s" % (st, text))
        st, text = put(d, "/buildid/%s/executable?kind=htlhash" % hh, body)
        check(st == 201, "upload by file hash: %d %s" % (st, text))
        e = entry(binary)
        addrs = [e, e + 4] + text_addrs(binary, 6)
        want = symbolctl_lines(binary, addrs).replace("\n\n", "\n")
        by_go = symbolize_one(d, gid, "go", addrs)
        by_hash = symbolize_one(d, hh, "htlhash", addrs)
        check("".join(by_go) == want, "by Go build ID:\n%s\nsymbolctl:\n%s" % ("".join(by_go), want))
        check(by_hash == by_go, "by file hash %r != by Go build ID %r" % (by_hash, by_go))
        check(by_go[0].split("\n")[0] != "??", "entry point unsymbolized: %r" % by_go[0])
        # symbolctl takes the kinds too.
        r = subprocess.run([ARGS.symbolctl, "symbolize", "--server", d.url, "--build-id", gid,
                            "--kind", "go"] + ["0x%x" % a for a in addrs],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and r.stdout.replace("\n\n", "\n") == want,
              "symbolctl symbolize --kind go: %d %r %r" % (r.returncode, r.stdout, r.stderr))
        r = subprocess.run([ARGS.symbolctl, "status", "--server", d.url, "--kind", "go", gid],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and hh in r.stdout,
              "symbolctl status --kind go: %d %r %r" % (r.returncode, r.stdout, r.stderr))
        ans = should(d, [(gid, "go"), (hh, "htlhash")])
        check([a for a, _ in ans] == [A_PRESENT, A_PRESENT], "ShouldUpload: %r" % ans)
        go_digest = hashlib.sha256(gid.encode()).hexdigest()
        for path in ("/buildid/%s/status?kind=htlhash" % hh,
                     "/buildid/%s/status?kind=go" % go_digest):
            st, _, data = d.request(path)
            doc = json.loads(data) if st == 200 else {}
            check(st == 200 and doc.get("build_id") == hh and doc.get("build_id_kind") == "htlhash"
                  and (doc.get("store") or {}).get("state") == "present",
                  "%s: %d %r" % (path, st, data[:300]))
        st, _, _ = d.request("/buildid/%s/status?kind=nope" % hh)
        check(st == 400, "unknown kind: HTTP %d" % st)
        # A malformed Go build ID or hash is a per-mapping INVALID, not a failed call.
        resp = d.symbolize([pb.mapping("a b", id_kind="go"), pb.mapping("abcd", id_kind="htlhash"),
                            pb.mapping(hh, id_kind="sha1")],
                           [pb.location(0, e), pb.location(1, e), pb.location(2, e)])
        check([pb.STATUS[m["status"]] for m in resp["mappings"]] == ["INVALID"] * 3,
              "malformed identities: %r" % resp["mappings"])
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_no_notes_in_debug_dir():
    work = tempdir("ident-dir-")
    dbg = os.path.join(work, "debug", "sub")
    os.makedirs(dbg)
    f = os.path.join(dbg, "c_no_notes")
    shutil.copy(os.path.join(ARGS.fixtures, "c_no_notes"), f)
    check(not has_gnu_note(f), "c_no_notes has a build ID")
    d = daemon(work, "dir", debug_dirs=[os.path.join(work, "debug")])
    try:
        addrs = [nm_addr(f, "main"), nm_addr(f, "main") + 8]
        got = symbolize_one(d, htlhash(f), "htlhash", addrs)
        r = subprocess.run(["llvm-symbolizer", "--obj=" + f, "--inlining"] +
                           ["0x%x" % a for a in addrs],
                           capture_output=True, text=True, check=True)
        want = [blk + "\n" for blk in r.stdout.strip().split("\n\n")]
        for g, w in zip(got, want):
            g_fn = g.split("\n")[0::2]
            w_fn = w.split("\n")[0::2]
            check(g_fn == w_fn, "function names %r, llvm-symbolizer %r" % (g, w))
            gl = [x.rsplit(":", 2)[1] for x in g.strip().split("\n")[1::2]]
            wl = [x.rsplit(":", 2)[1] for x in w.strip().split("\n")[1::2]]
            check(gl == wl, "lines %r, llvm-symbolizer %r" % (g, w))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def gnu_build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, "%s: no GNU build ID" % path)
    return m.group(1)


def case_package_member_by_any_identity():
    import time
    work = tempdir("ident-pkg-")
    gobin = build_go(work)
    check(not has_gnu_note(gobin), "the Go binary has a GNU build ID: the case needs one without")
    cbin = os.path.join(ARGS.fixtures, "c_stripped")
    cbid = gnu_build_id(cbin)
    root = os.path.join(work, "pkgroot")
    os.makedirs(os.path.join(root, "DEBIAN"))
    os.makedirs(os.path.join(root, "usr", "bin"))
    dbg = os.path.join(root, "usr", "lib", "debug", ".build-id", cbid[:2])
    os.makedirs(dbg)
    with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
        f.write("Package: identity-test\nVersion: 1.0\nArchitecture: amd64\n"
                "Maintainer: test <t@example.org>\nDescription: identity test\n")
    shutil.copy(gobin, os.path.join(root, "usr", "bin", "goprog"))
    shutil.copy(cbin, os.path.join(root, "usr", "bin", "cprog"))
    shutil.copy(cbin + ".debug", os.path.join(dbg, cbid[2:] + ".debug"))
    pkgs = os.path.join(work, "pkgs")
    os.makedirs(pkgs)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", root,
                    os.path.join(pkgs, "identity-test_1.0_amd64.deb")],
                   check=True, capture_output=True, timeout=300)
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "pkg-data"), os.path.join(work, "pkg.log"),
               extra=["--package-dir=" + pkgs, "--log-level=info"])
    try:
        deadline = time.monotonic() + 120
        while d.metric('symbolizer_packages{state="ok"}') != 1:
            check(time.monotonic() < deadline, "the package was not scanned:\n" +
                  d.log_text()[-3000:])
            time.sleep(0.1)
        gid, ghh = go_build_id(gobin), htlhash(gobin)
        e = entry(gobin)
        addrs = [e, e + 4] + text_addrs(gobin, 6)
        want = symbolctl_lines(gobin, addrs).replace("\n\n", "\n")
        by_go = symbolize_one(d, gid, "go", addrs)
        by_hash = symbolize_one(d, ghh, "htlhash", addrs)
        check("".join(by_go) == want, "package Go member by Go build ID:\n%s\nsymbolctl:\n%s" %
              ("".join(by_go), want))
        check(by_hash == by_go, "package Go member: by file hash %r != by Go build ID %r" %
              (by_hash, by_go))
        caddrs = text_addrs(cbin, 6)
        c_by_gnu = symbolize_one(d, cbid, "gnu", caddrs)
        c_by_hash = symbolize_one(d, htlhash(cbin), "htlhash", caddrs)
        check(c_by_hash == c_by_gnu, "package C member: by file hash %r != by GNU %r" %
              (c_by_hash, c_by_gnu))
        check(all(x.split("\n")[0] != "??" for x in c_by_gnu), "C member: %r" % c_by_gnu)
        go_digest = hashlib.sha256(gid.encode()).hexdigest()
        for path, src in (("/buildid/%s/executable?kind=go" % go_digest, gobin),
                          ("/buildid/%s/executable?kind=htlhash" % ghh, gobin),
                          ("/buildid/%s/executable?kind=htlhash" % htlhash(cbin), cbin)):
            st, _, data = d.request(path)
            with open(src, "rb") as f:
                check(st == 200 and data == f.read(), "%s: HTTP %d, %d bytes" %
                      (path, st, len(data)))
        print("identity_test: package members: Go by go/htlhash, C by htlhash: %d + %d "
              "addresses, /buildid/ID/executable x3" % (len(addrs), len(caddrs)))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_upstream_asked_for_gnu_only():
    work = tempdir("ident-up-")
    up = FaultServer(work, "fault", {})
    d = daemon(work, "up", upstreams=[up.url])
    try:
        resp = d.symbolize([pb.mapping("ab" * 16, id_kind="htlhash"),
                            pb.mapping("cd" * 20)],
                           [pb.location(0, 0x1000), pb.location(1, 0x1000)], max_wait_ms=20000)
        sts = [pb.STATUS[m["status"]] for m in resp["mappings"]]
        check(sts == ["NOT_FOUND", "NOT_FOUND"], "statuses %r" % sts)
        paths = [k for k in up.stats() if k != "_server"]
        check(any("cd" * 20 in p for p in paths), "the GNU build ID was not asked: %r" % paths)
        check(not any("ab" * 16 in p for p in paths), "a file hash was asked upstream: %r" % paths)
    finally:
        d.stop()
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for a in ("--symbolizerd", "--symbolctl", "--fixtures", "--go", "--src", "--workdir"):
        ap.add_argument(a, required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    sys.exit(run_cases([("go_by_any_identity", case_go_by_any_identity),
                        ("no_notes_in_debug_dir", case_no_notes_in_debug_dir),
                        ("package_member_by_any_identity", case_package_member_by_any_identity),
                        ("upstream_asked_for_gnu_only", case_upstream_asked_for_gnu_only)],
                       ARGS.cases))


if __name__ == "__main__":
    main()
