#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""upload_test: uploads to symbolizerd (issue 13, item 3). PUT
/buildid/ID/{debuginfo,executable} with a good, a wrong and no token, with no
token configured, a wrong build ID, a file that is not ELF, a truncated body,
over-size bodies (ours and evhttp's cap), concurrent uploads of one build ID
(one stored, every caller answered alike), upload then Symbolize (lines), a
better file replacing an executable-only entry and its index, a weaker one
refused without ?force=1, a dwz file whose supplementary file is missing,
refusal of a non-loopback peer, ShouldUpload (with a fault-injecting
upstream: PRESENT, PENDING, UPLOAD), `symbolctl upload` end to end
(only the missing files sent) and `debuginfod-find` fetching an uploaded file.

Usage: upload_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]
"""
import argparse
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import pb
from daemon_lib import Daemon
from upstream_lib import FaultServer, build_id, check, free_port, run_cases, tempdir

ARGS = None
TOKEN = "t0ken-for-tests-0123456789"
SHOULD = "/symbolizer.v1.SymbolizerService/ShouldUpload"
A_UPLOAD, A_PRESENT, A_PENDING, A_INVALID = 1, 2, 3, 4


def fx(name):
    return os.path.join(ARGS.fixtures, name)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def token_file(work, token=TOKEN):
    p = os.path.join(work, "token")
    with open(p, "w") as f:
        f.write(token + "\n")
    os.chmod(p, 0o600)  # the daemon refuses a token file others may read
    return p


def daemon(work, name, debug_dirs=(), extra=(), token=True):
    args = list(extra)
    if token:
        args += ["--upload-token-file", token_file(work)]
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), debug_dirs=debug_dirs, extra=args)


def put(port, bid, kind, body, token=TOKEN, query="", host="127.0.0.1", source=None):
    """(status, headers, text) of one PUT."""
    c = http.client.HTTPConnection(host, port, timeout=60,
                                   source_address=(source, 0) if source else None)
    h = {"Authorization": "Bearer " + token} if token is not None else {}
    c.request("PUT", "/buildid/%s/%s%s" % (bid, kind, query), body, h)
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, hdrs, text


def get(d, path):
    c = d.conn()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def func_addr(path, name):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) [Tt] %s$" % re.escape(name), out, re.M)
    check(m, "%s: no symbol %s" % (path, name))
    return int(m.group(1), 16)


def symbolize(d, bid, addr):
    """(mapping result, frames) of one address."""
    resp = d.symbolize([pb.mapping(bid)], [pb.location(0, addr)], max_wait_ms=30000)
    return resp["mappings"][0], pb.frames(resp, 0)


def should(d, cands, max_wait_ms=20000):
    """ShouldUpload: [(build_id, kind)] -> [(answer, reason)]."""
    body = b"".join(pb.field_bytes(1, pb.field_bytes(1, b) + pb.field_varint(2, k))
                    for b, k in cands)
    body += pb.field_bytes(2, pb.field_varint(3, max_wait_ms))
    status, _, data = d.post(body, path=SHOULD)
    check(status == 200, "ShouldUpload: HTTP %d %r" % (status, data[:200]))
    out = []
    for num, _, v in pb.parse(data):
        if num == 1:
            dec = {1: b"", 2: 0, 3: b""}
            for k, _, kv in pb.parse(v):
                dec[k] = kv
            out.append((dec[2], dec[3].decode()))
    return out


def case_tokens():
    """Good, wrong and missing token; bad path; wrong build ID; not ELF;
    /debuginfo without DWARF; then debuginfod-find gets the uploaded bytes."""
    work = tempdir("upload-tokens-")
    d = daemon(work, "d")
    dbg = fx("c_stripped.debug")
    bid = build_id(dbg)
    try:
        st, h, text = put(d.port, bid, "debuginfo", read(dbg), token=None)
        check(st == 401 and "bearer" in h.get("www-authenticate", "").lower(),
              "no token: %d %r" % (st, h))
        st, _, _ = put(d.port, bid, "debuginfo", read(dbg), token="t0ken-for-test")
        check(st == 401, "wrong token (a prefix): %d" % st)
        st, _, _ = put(d.port, bid, "debuginfo", read(dbg), token=TOKEN + "x")
        check(st == 401, "wrong token (longer): %d" % st)
        check(get(d, "/buildid/%s/debuginfo" % bid)[0] == 404, "stored without a token")
        # Not hex (uppercase hex is a build ID since issue 31: lowercased at the edge).
        st, _, text = put(d.port, "XYZW", "debuginfo", read(dbg))
        check(st == 400, "bad build ID in the path: %d" % st)
        st, _, text = put(d.port, bid, "source", read(dbg))
        check(st == 400, "bad kind in the path: %d" % st)
        st, h, text = put(d.port, bid, "debuginfo", read(fx("c_O2_dw5")))
        check(st == 400 and "mismatch" in text and h.get("x-symbolizer-upload") == "wrong_build_id",
              "wrong build ID: %d %r" % (st, text))
        st, _, text = put(d.port, bid, "debuginfo", b"\x7fELF not really an ELF file" * 10)
        check(st == 400, "not ELF: %d %r" % (st, text))
        st, _, text = put(d.port, bid, "debuginfo", read(fx("c_stripped")))
        check(st == 400 and "DWARF" in text, "/debuginfo without DWARF: %d %r" % (st, text))
        check(get(d, "/buildid/%s/debuginfo" % bid)[0] == 404, "a refused upload was stored")
        st, h, text = put(d.port, bid, "debuginfo", read(dbg))
        check(st == 201 and h.get("x-symbolizer-upload") == "stored", "good token: %d %r" % (st, text))
        # debuginfod-find through the daemon gets the uploaded file
        env = dict(os.environ, DEBUGINFOD_URLS=d.url,
                   DEBUGINFOD_CACHE_PATH=os.path.join(work, "client-cache"))
        r = subprocess.run(["debuginfod-find", "debuginfo", bid], capture_output=True,
                           text=True, env=env, timeout=60)
        check(r.returncode == 0, "debuginfod-find: %s" % r.stderr)
        check(read(r.stdout.strip()) == read(dbg), "debuginfod-find bytes differ")
        m = d.metrics()
        for label, n in (("unauthorized", 3), ("bad_path", 2), ("wrong_build_id", 1),
                         ("bad_elf", 2), ("stored", 1)):
            check('symbolizer_uploads_total{result="%s"} %d' % (label, n) in m,
                  "metric %s != %d:\n%s" % (label, n,
                                            "\n".join(l for l in m.splitlines() if "upload" in l)))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_token_file_refused():
    """A token file its group or others may read, or a token under 16 bytes:
    symbolizerd does not start (exit 1) and says why (issue 25, item 10)."""
    work = tempdir("upload-tokfile-")
    try:
        for mode, token, want in ((0o644, TOKEN, "chmod 600"), (0o640, TOKEN, "chmod 600"),
                                  (0o600, "ab12", "under 16 bytes")):
            p = token_file(work, token)
            os.chmod(p, mode)
            r = subprocess.run([ARGS.symbolizerd, "--listen", "127.0.0.1:0",
                                "--data-dir", os.path.join(work, "data"),
                                "--debuginfod-upstream-servers=", "--upload-token-file", p],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 1 and want in r.stderr,
                  "mode %o token %r: exit %d %r" % (mode, token, r.returncode, r.stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def case_disabled():
    """No token configured: 403 saying so, nothing stored."""
    work = tempdir("upload-off-")
    d = daemon(work, "d", token=False)
    dbg = fx("c_stripped.debug")
    try:
        st, _, text = put(d.port, build_id(dbg), "debuginfo", read(dbg))
        check(st == 403 and "disabled" in text, "disabled: %d %r" % (st, text))
        check(get(d, "/buildid/%s/debuginfo" % build_id(dbg))[0] == 404, "stored anyway")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def raw_put(port, head, body_part):
    """Sends a request head and part of a body, then closes the write side;
    the answer's status line (or b"" when the daemon just closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(head + body_part)
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data.split(b"\r\n", 1)[0]


def case_bodies():
    """Truncated body: nothing stored, no success answer; no length: 411;
    over --max-upload-bytes: 413 (ours), over evhttp's cap: 413 (evhttp's)."""
    work = tempdir("upload-bodies-")
    d = daemon(work, "d", extra=["--max-upload-bytes", "64K", "--max-request-bytes", "16K"])
    dbg = fx("c_stripped.debug")
    bid = build_id(dbg)
    body = read(dbg)
    try:
        head = ("PUT /buildid/%s/debuginfo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Content-Length: %d\r\n\r\n" % (bid, TOKEN, len(body))).encode()
        line = raw_put(d.port, head, body[:len(body) // 2])
        check(not re.match(rb"HTTP/1\.[01] 2", line), "truncated body answered %r" % line)
        check(get(d, "/buildid/%s/debuginfo" % bid)[0] == 404, "truncated body stored")
        chunked = ("PUT /buildid/%s/debuginfo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n" % (bid, TOKEN)).encode()
        line = raw_put(d.port, chunked, b"1000\r\n" + body[:0x800])
        check(not re.match(rb"HTTP/1\.[01] 2", line), "truncated chunked body answered %r" % line)
        check(get(d, "/buildid/%s/debuginfo" % bid)[0] == 404, "truncated chunked body stored")
        # a whole HTTP body holding a cut ELF file
        st, _, text = put(d.port, bid, "debuginfo", body[:len(body) // 2])
        check(st == 400, "cut ELF file: %d %r" % (st, text))
        check(get(d, "/buildid/%s/debuginfo" % bid)[0] == 404, "cut ELF file stored")
        head = ("PUT /buildid/%s/debuginfo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Connection: close\r\n\r\n" % (bid, TOKEN)).encode()
        line = raw_put(d.port, head, b"")
        check(b" 411" in line or b" 400" in line, "no Content-Length: %r" % line)
        # The server's body cap (svc_conns): 2 x --max-request-bytes + 128K =
        # 160K, or --max-upload-bytes when larger; ours for uploads: 64K.
        st, _, text = put(d.port, build_id(fx("c_O2_dw5")), "debuginfo",
                          read(fx("c_O2_dw5")) + b"\0" * (40 * 1024))
        check(st == 413, "over --max-upload-bytes: %d %r" % (st, text))
        st, _, _ = put(d.port, build_id(fx("c_O2_dw5")), "debuginfo",
                       read(fx("c_O2_dw5")) + b"\0" * (256 * 1024))
        check(st == 413, "over the server's body cap: %d" % st)
        check(d.metric('symbolizer_uploads_total{result="too_large"}') == 1,
              "too_large counted %r" % d.metric('symbolizer_uploads_total{result="too_large"}'))
        st, _, text = put(d.port, bid, "debuginfo", body)
        check(st == 201, "a good upload after the bad ones: %d %r" % (st, text))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def head_only(port, head):
    """Sends only a request's head (its body never comes); the status line of
    the answer, which must come before any body byte is sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(head)
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.split(b"\r\n", 1)[0]
    finally:
        s.close()


def case_head_first():
    """Issue 25, item 5: the body's cap is decided from the request's head
    (route, peer, token) before the body is read. A PUT with a wrong token, or
    none, declaring 1 GiB, and an RPC declaring 1 GiB, are answered 413 at
    once (no body sent); an authorized upload over the small cap is taken."""
    work = tempdir("upload-head-")
    d = daemon(work, "d", extra=["--max-upload-bytes", "64M", "--max-request-bytes", "16K"])
    lib = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
    bid = build_id(lib)
    gib = 1 << 30
    try:
        for auth in ("Authorization: Bearer wrong-token-0123456789\r\n", ""):
            head = ("PUT /buildid/%s/debuginfo HTTP/1.1\r\nHost: x\r\n%s"
                    "Content-Length: %d\r\n\r\n" % (bid, auth, gib)).encode()
            line = head_only(d.port, head)
            check(b" 413" in line, "unauthorized 1 GiB upload (%r): %r" % (auth[:20], line))
        head = ("POST /symbolizer.v1.SymbolizerService/Symbolize HTTP/1.1\r\nHost: x\r\n"
                "Content-Type: application/proto\r\nAuthorization: Bearer %s\r\n"
                "Content-Length: %d\r\n\r\n" % (TOKEN, gib)).encode()
        line = head_only(d.port, head)
        check(b" 413" in line, "1 GiB RPC with the upload token: %r" % line)
        st, _, text = put(d.port, bid, "debuginfo", read(lib))
        check(st == 201, "authorized 11 MB upload over the small cap: %d %s" % (st, text))
        head = ("PUT /buildid/%s/debuginfo?force=1 HTTP/1.1\r\nHost: x\r\nAuthorization: "
                "Bearer %sx\r\nContent-Length: %d\r\n\r\n" % (bid, TOKEN[:-1], len(read(lib))))
        line = head_only(d.port, head.encode())
        check(b" 413" in line, "the same 11 MB with a wrong token: %r (its body read)" % line)
    finally:
        d.stop()


def case_concurrent():
    """8 uploads of one file at once: one 201, seven 200 unchanged, one file."""
    work = tempdir("upload-conc-")
    d = daemon(work, "d")
    f = fx("cxx_O2")
    bid, body = build_id(f), read(f)
    results = []
    lock = threading.Lock()

    def one():
        r = put(d.port, bid, "debuginfo", body)
        with lock:
            results.append(r)

    try:
        ts = [threading.Thread(target=one) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        codes = sorted(r[0] for r in results)
        check(codes == [200] * 7 + [201], "codes %r" % codes)
        check(sorted(r[1].get("x-symbolizer-upload") for r in results) ==
              ["stored"] + ["unchanged"] * 7, "answers %r" % [r[2] for r in results])
        check(d.metric('symbolizer_uploads_total{result="stored"}') == 1, "stored twice")
        check(d.metric("symbolizer_upload_bytes_total") == len(body), "bytes stored")
        st, got = get(d, "/buildid/%s/debuginfo" % bid)
        check(st == 200 and got == body, "stored bytes differ")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_replace():
    """Symbolize answers from the executable alone; the debug file's upload
    replaces it and its index (lines now); the executable again is refused
    (409) unless forced; a debug file without .debug_line is replaced by one
    with it, never the other way without force."""
    work = tempdir("upload-replace-")
    exe, dbg = fx("c_stripped"), fx("c_stripped.debug")
    bid = build_id(exe)
    addr = func_addr(dbg, "compute")
    d = daemon(work, "d", extra=["--negative-cache-ttl", "1h"])
    try:
        st, _, text = put(d.port, bid, "executable", read(exe))
        check(st == 201, "executable: %d %r" % (st, text))
        m, frames = symbolize(d, bid, addr)
        check(pb.STATUS[m["status"]] == "OK" and not m["has_line_numbers"],
              "from the executable: %r" % m)
        check(frames and frames[0][0] == "compute", "symbol of the executable: %r" % frames)
        st, h, text = put(d.port, bid, "debuginfo", read(dbg))
        check(st == 200 and h.get("x-symbolizer-upload") == "replaced", "better: %d %r" % (st, text))
        m, frames = symbolize(d, bid, addr)
        check(m["has_line_numbers"] and frames[0][2] > 0, "no lines after the upload: %r %r"
              % (m, frames))
        st, _, text = put(d.port, bid, "executable", read(exe))
        check(st == 409 and "force=1" in text, "weaker without force: %d %r" % (st, text))
        m, _ = symbolize(d, bid, addr)
        check(m["has_line_numbers"], "a refused upload changed the answer")
        st, h, text = put(d.port, bid, "executable", read(exe), query="?force=1")
        check(st == 200 and h.get("x-symbolizer-upload") == "replaced", "forced: %d %r" % (st, text))
        m, _ = symbolize(d, bid, addr)
        check(not m["has_line_numbers"], "forced executable: the old index answers: %r" % m)
        # a debug file without line info, then one with it
        full = fx("c_O0_dw5")
        bid2 = build_id(full)
        nolines = os.path.join(work, "nolines.debug")
        subprocess.run(["objcopy", "--only-keep-debug", "--remove-section=.debug_line",
                        full, nolines], check=True)
        st, _, text = put(d.port, bid2, "debuginfo", read(nolines))
        check(st == 201 and "without line" in text, "no lines: %d %r" % (st, text))
        st, _, text = put(d.port, bid2, "debuginfo", read(full))
        check(st == 200 and "with line" in text, "lines over no lines: %d %r" % (st, text))
        st, _, text = put(d.port, bid2, "debuginfo", read(nolines))
        check(st == 409, "no lines over lines: %d %r" % (st, text))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_symbolize():
    """An unknown build ID (NOT_FOUND, remembered) uploaded: Symbolize gives lines."""
    work = tempdir("upload-sym-")
    f = fx("c_O2_dw5")
    bid = build_id(f)
    addr = func_addr(f, "main")
    d = daemon(work, "d")
    try:
        m, _ = symbolize(d, bid, addr)
        check(pb.STATUS[m["status"]] == "NOT_FOUND", "before: %r" % m)
        st, _, text = put(d.port, bid, "executable", read(f))  # unstripped: debug info
        check(st == 201, "upload: %d %r" % (st, text))
        m, frames = symbolize(d, bid, addr)
        check(pb.STATUS[m["status"]] == "OK" and m["has_line_numbers"], "after: %r" % m)
        check(frames[-1][0] == "main" and frames[-1][2] > 0, "frames %r" % frames)
        # dwz: the supplementary file is missing until it is uploaded too
        a, common = fx("dwz_a"), fx("dwz_common.debug")
        st, h, text = put(d.port, build_id(a), "debuginfo", read(a))
        check(st == 201 and h.get("x-symbolizer-alt") == "missing" and build_id(common) in text,
              "dwz without its file: %d %r %r" % (st, h, text))
        st, h, _ = put(d.port, build_id(common), "debuginfo", read(common))
        check(st == 201, "dwz supplementary file: %d" % st)
        m, frames = symbolize(d, build_id(a), func_addr(a, "main"))
        check(m["has_line_numbers"] and frames, "dwz file after its supplementary file: %r" % m)
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def other_address():
    """A non-loopback address of this machine, or None."""
    r = subprocess.run(["hostname", "-I"], capture_output=True, text=True)
    for a in r.stdout.split():
        if ":" not in a and not a.startswith("127."):
            return a
    return None


class AnyDaemon(Daemon):
    """symbolizerd on 0.0.0.0:PORT (Daemon binds 127.0.0.1:0)."""

    def __init__(self, work, name, port, extra):
        log = os.path.join(work, name + ".log")
        self.log_path = log
        cmd = [ARGS.symbolizerd, "--listen", "0.0.0.0:%d" % port,
               "--data-dir", os.path.join(work, name + "-data"), "--debug-dir=",
               "--debuginfod-upstream-servers=", "--upload-token-file", token_file(work)]
        self.log = open(log, "w")
        env = dict(os.environ)
        env.pop("DEBUGINFOD_URLS", None)
        self.proc = subprocess.Popen(cmd + list(extra), stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env)
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        for _ in range(3000):
            check(self.proc.poll() is None, "symbolizerd exited:\n" + self.log_text())
            if 'msg="listening"' in self.log_text():
                return
            time.sleep(0.02)
        check(False, "symbolizerd did not start")


def case_remote():
    """A peer on another address than loopback is refused (403) unless
    --upload-allow-remote 1; 127.0.0.2 is loopback."""
    other = other_address()
    dbg = fx("c_stripped.debug")
    bid, body = build_id(dbg), read(dbg)
    work = tempdir("upload-remote-")
    d = AnyDaemon(work, "d", free_port(), [])
    try:
        if other:
            st, h, text = put(d.port, bid, "debuginfo", body, host=other)
            check(st == 403 and "loopback" in text, "from %s: %d %r" % (other, st, text))
        else:
            print("note: no non-loopback address here; the check is covered by the unit test")
        st, _, text = put(d.port, bid, "debuginfo", body, source="127.0.0.2")
        check(st == 201, "from 127.0.0.2: %d %r" % (st, text))
    finally:
        d.stop()
    if other:
        e = AnyDaemon(work, "e", free_port(), ["--upload-allow-remote", "1"])
        try:
            st, _, text = put(e.port, bid, "debuginfo", body, host=other)
            check(st == 201, "allowed remote from %s: %d %r" % (other, st, text))
        finally:
            e.stop()
    shutil.rmtree(work, ignore_errors=True)


def symbolctl_upload(d, work, files, *extra):
    r = subprocess.run([ARGS.symbolctl, "upload", "--server", d.url, "--token-file",
                        token_file(work)] + list(extra) + files,
                       capture_output=True, text=True, timeout=120)
    lines = {l.split()[0]: l.split()[2] for l in r.stdout.splitlines() if l.strip()}
    return r.returncode, lines, r


def case_symbolctl():
    """ShouldUpload answers; symbolctl upload sends only what the daemon cannot
    find (a file in its debug dir is present), then nothing on a second run."""
    work = tempdir("upload-ctl-")
    dbgdir = os.path.join(work, "dbg")
    local = fx("c_O2_dw5")
    lb = build_id(local)
    os.makedirs(os.path.join(dbgdir, ".build-id", lb[:2]))
    shutil.copy(local, os.path.join(dbgdir, ".build-id", lb[:2], lb[2:] + ".debug"))
    d = daemon(work, "d", debug_dirs=[dbgdir])
    files = [local, fx("c_stripped"), fx("c_stripped.debug"), fx("cxx_O2")]
    try:
        ans = should(d, [(lb, 1), (build_id(fx("cxx_O2")), 1), ("XYZ", 1)])
        check([a for a, _ in ans] == [A_PRESENT, A_UPLOAD, A_INVALID], "ShouldUpload %r" % ans)
        rc, lines, r = symbolctl_upload(d, work, files, "--no-progress")
        check(rc == 0, "symbolctl upload: %d\n%s%s" % (rc, r.stdout, r.stderr))
        want = {local: "present", fx("c_stripped"): "duplicate",
                fx("c_stripped.debug"): "stored", fx("cxx_O2"): "stored"}
        check(lines == want, "first run:\n%s" % r.stdout)
        check(d.metric('symbolizer_uploads_total{result="stored"}') == 2, "two uploads")
        rc, lines, r = symbolctl_upload(d, work, files)
        check(rc == 0 and sorted(lines.values()) == ["duplicate", "present", "present", "present"],
              "second run: %d\n%s" % (rc, r.stdout))
        check(d.metric('symbolizer_uploads_total{result="stored"}') == 2, "uploaded again")
        bad = os.path.join(work, "token-bad")
        with open(bad, "w") as f:
            f.write("nope\n")
        r = subprocess.run([ARGS.symbolctl, "upload", "--server", d.url, "--token-file", bad,
                            fx("symtab_only")], capture_output=True, text=True, timeout=60)
        check(r.returncode == 3 and "401" in r.stdout, "bad token: %d %r" % (r.returncode, r.stdout))
        r = subprocess.run([ARGS.symbolctl, "upload", "--server", d.url, "--token-file",
                            token_file(work), "/etc/hostname"], capture_output=True, text=True)
        check(r.returncode == 4, "not ELF: %d" % r.returncode)
        check(d.metric('symbolizer_should_upload_total{answer="upload"}') >= 3, "should metrics")
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_should():
    """ShouldUpload against an upstream: a file it serves (slowly) is PRESENT
    and fetched into the store; a hanging one answers PENDING with a retry
    hint past max_wait_ms; a failing one UPLOAD; an executable-only entry is
    UPLOAD to an agent offering debug info, PRESENT to one offering the
    executable."""
    work = tempdir("upload-should-")
    slow, hang, bad = fx("c_O2_dw5"), "ab" * 20, "cd" * 20
    exe = fx("symtab_only")
    fs = FaultServer(work, "up", {build_id(slow) + "/debuginfo": "slow:" + slow,
                                  hang + "/debuginfo": "hang", bad + "/debuginfo": "500"})
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "d-data"), os.path.join(work, "d.log"),
               upstreams=[fs.url], extra=["--upload-token-file", token_file(work),
                                          "--upstream-retries", "0"])
    try:
        ans = should(d, [(hang, 1)], max_wait_ms=200)
        check(ans[0][0] == A_PENDING, "hanging upstream: %r" % ans)
        ans = should(d, [(build_id(slow), 1), (bad, 1)], max_wait_ms=20000)
        check(ans[0][0] == A_PRESENT and fs.url in ans[0][1], "served upstream: %r" % ans)
        check(ans[1][0] == A_UPLOAD, "failing upstream: %r" % ans)
        st, _ = get(d, "/buildid/%s/debuginfo" % build_id(slow))
        check(st == 200, "ShouldUpload did not fetch into the store: %d" % st)
        st, _, _ = put(d.port, build_id(exe), "executable", read(exe))
        check(st == 201, "executable upload: %d" % st)
        ans = should(d, [(build_id(exe), 1), (build_id(exe), 2)])
        check([a for a, _ in ans] == [A_UPLOAD, A_PRESENT], "executable held: %r" % ans)
    finally:
        d.stop()
        fs.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_upload_during_fetch():
    """Issue 25, item 3: an upload (201) made while a fetch of the same build
    ID is in flight stays when the fetch finishes: the upstream (slowly)
    serves a worse file (no line table), and every write of a file goes
    through the one ranked decision, whatever its route."""
    work = tempdir("upload-race-")
    good = fx("c_O2_dw5")
    bid = build_id(good)
    worse = os.path.join(work, "no-lines")
    subprocess.run(["objcopy", "--remove-section=.debug_line", "--remove-section=.debug_line_str",
                    good, worse], check=True)
    fs = FaultServer(work, "up", {bid + "/debuginfo": "slow:" + worse})
    d = Daemon(ARGS.symbolizerd, os.path.join(work, "d-data"), os.path.join(work, "d.log"),
               upstreams=[fs.url], extra=["--upload-token-file", token_file(work)])
    try:
        addr = func_addr(good, "main") + 4
        early = d.symbolize([pb.mapping(bid)], [pb.location(0, addr)], max_wait_ms=1)
        check(pb.STATUS[early["mappings"][0]["status"]] == "PENDING",
              "fetch under way: %r" % early["mappings"][0])
        st, _, text = put(d.port, bid, "debuginfo", read(good))
        check(st in (200, 201), "upload during the fetch: %d %s" % (st, text))
        deadline = time.monotonic() + 60
        while fs.requests(bid + "/debuginfo") == 0 or d.metric(
                "symbolizer_fetches_in_flight") != 0:
            check(time.monotonic() < deadline, "the fetch did not end")
            time.sleep(0.05)
        st, body = get(d, "/buildid/%s/debuginfo" % bid)
        check(st == 200 and body == read(good), "the upload was replaced by the fetched file")
        m, frames = symbolize(d, bid, addr)
        check(pb.STATUS[m["status"]] == "OK" and frames and frames[-1][2] > 0,
              "answered without lines: %r %r" % (m, frames))
    finally:
        d.stop()
        fs.stop()


def case_dwz_from_store():
    """Issue 25, item 1: a dwz debug file held in the store without its dwz
    file (here uploaded: Debian's ld.gold, whose dwz file has no .build-id
    entry, only the absolute path in .gnu_debugaltlink): the path is read from
    the stored file, and the dwz file found there in the debug dir, instead of
    "dwz supplementary file ...: not_found" for good."""
    work = tempdir("upload-dwz-")
    bid = build_id("/usr/bin/x86_64-linux-gnu-ld.gold")
    debug = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    check(os.path.exists(debug), "%s missing (scripts/install-deps.sh)" % debug)
    d = daemon(work, "d", debug_dirs=["/usr/lib/debug"])
    try:
        st, _, text = put(d.port, bid, "debuginfo", read(debug))
        check(st == 201, "upload of ld.gold's debug file: %d %s" % (st, text))
        addr = func_addr(debug, "main") + 4
        resp = d.symbolize([pb.mapping(bid)], [pb.location(0, addr)], max_wait_ms=120000)
        m = resp["mappings"][0]
        check(pb.STATUS[m["status"]] == "OK", "Symbolize of the uploaded dwz file: %r" % m)
        check(pb.frames(resp, 0), "no frames for main")
    finally:
        d.stop()


def case_replace_during_build():
    """Issue 25, item 4: a better file uploaded while the index of the held
    one is being built. The index of the old file (here: libstdc++'s debug
    build without its line table) must not be stored beside the new file, nor
    served, now or after a restart: every answer after the upload has lines."""
    work = tempdir("upload-rebuild-")
    lib = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
    check(os.path.exists(lib), "%s missing (scripts/install-deps.sh: libstdc++6-12-dbg)" % lib)
    bid = build_id(lib)
    no_lines = os.path.join(work, "no-lines.so")
    subprocess.run(["objcopy", "--remove-section=.debug_line", "--remove-section=.debug_line_str",
                    lib, no_lines], check=True)
    addr = func_addr(lib, "_ZNSt6locale7classicEv") + 4
    d = daemon(work, "d")
    try:
        st, _, text = put(d.port, bid, "debuginfo", read(no_lines))
        check(st == 201, "the file without lines: %d %s" % (st, text))
        early = d.symbolize([pb.mapping(bid)], [pb.location(0, addr)], max_wait_ms=1)
        check(pb.STATUS[early["mappings"][0]["status"]] in ("PENDING", "OK"),
              "build started: %r" % early["mappings"][0])
        st, _, text = put(d.port, bid, "debuginfo", read(lib))
        check(st == 200, "the better file: %d %s" % (st, text))
        deadline = time.monotonic() + 120
        while True:
            m, frames = symbolize(d, bid, addr)
            if pb.STATUS[m["status"]] == "OK":
                break
            check(pb.STATUS[m["status"]] == "PENDING" and time.monotonic() < deadline,
                  "after the replacement: %r" % m)
        check(frames and frames[-1][2] > 0, "answered from the old file's index: %r" % frames)
    finally:
        d.stop()
    d = daemon(work, "d")
    try:
        m, frames = symbolize(d, bid, addr)
        check(pb.STATUS[m["status"]] == "OK" and frames and frames[-1][2] > 0,
              "after a restart: %r %r" % (m, frames))
    finally:
        d.stop()


def put_forwarded(port, bid, body, forwarded):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("PUT", "/buildid/%s/executable" % bid, body,
              {"Authorization": "Bearer " + TOKEN, "X-Forwarded-For": forwarded})
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    c.close()
    return r.status, text


def case_trusted_proxies():
    """--trusted-proxies (issue 30): behind the front (a trusted peer), the
    client named by X-Forwarded-For decides; from any other peer the header is
    ignored; a malformed one is refused."""
    work = tempdir("upload-proxies-")
    f = fx("c_O2_dw5")
    bid, body = build_id(f), read(f)
    d = daemon(work, "d", extra=["--trusted-proxies", "127.0.0.0/8,::1"])
    plain = daemon(work, "plain")
    try:
        st, text = put_forwarded(d.port, bid, body, "203.0.113.9, 127.0.0.1")
        check(st == 403 and "loopback" in text, "remote client behind the proxy: %d %r"
              % (st, text))
        st, text = put_forwarded(d.port, bid, body, "203.0.113.9, not-an-address")
        check(st == 403, "malformed X-Forwarded-For: %d %r" % (st, text))
        st, text = put_forwarded(d.port, bid, body, "127.0.0.1")
        check(st == 201, "loopback client behind the proxy: %d %r" % (st, text))
        st, text = put_forwarded(plain.port, bid, body, "203.0.113.9")
        check(st == 201, "no trusted proxy: the header is not read: %d %r" % (st, text))
    finally:
        d.stop()
        plain.stop()
    p = subprocess.run([ARGS.symbolizerd, "--listen", "127.0.0.1:0", "--data-dir",
                        os.path.join(work, "bad"), "--trusted-proxies", "10.0.0.0/40",
                        "--upload-token-file", token_file(work)],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "10.0.0.0/40" in p.stdout + p.stderr,
          "a bad --trusted-proxies: %d %r" % (p.returncode, p.stdout + p.stderr))
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("tokens", case_tokens), ("token_file", case_token_file_refused),
                      ("disabled", case_disabled),
                      ("bodies", case_bodies), ("head_first", case_head_first),
                      ("concurrent", case_concurrent),
                      ("replace", case_replace), ("symbolize", case_symbolize),
                      ("replace_during_build", case_replace_during_build),
                      ("upload_during_fetch", case_upload_during_fetch),
                      ("dwz_from_store", case_dwz_from_store),
                      ("remote", case_remote), ("should", case_should),
                      ("symbolctl", case_symbolctl),
                      ("trusted_proxies", case_trusted_proxies)], ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
