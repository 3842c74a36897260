#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""upload_stream_test: upload bodies are written to DATA/tmp as they arrive,
not held in memory, and the bytes of uploads in flight are bounded (issue 25,
item 5). Memory is read from /proc/PID/status (VmHWM: the peak resident set,
mapped spool pages included) against the RSS before the upload: a bound on
memory, not on time.

  rss        a 150 MB body sent all but its last byte: the daemon's peak RSS
             grew by less than a quarter of it, the bytes are in an unlinked
             file of DATA/tmp; the client leaves: the file is gone (no
             descriptor into DATA/tmp, DATA/tmp empty, the budget back at 0);
             the whole 150 MB body with another build ID: 400, peak still low;
             a 150 MB debug file stored (201) and read back byte-identical.
  budget     --upload-memory-bytes 200M: while one 150 MB upload is in
             flight, three more get 503 with Retry-After from their head
             alone (no byte of their body sent); memory stays bounded; once
             the first is answered, the next upload goes.
  kill9      kill -9 in the middle of a body: nothing stored, and at the next
             start DATA/tmp is empty (a stale dl-* spool file is removed);
             the upload made then is stored and served byte-identical.

Usage: upload_stream_test.py --symbolizerd BIN --fixtures DIR [CASE...]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import sys
import time

from daemon_lib import Daemon
from upstream_lib import build_id, check, run_cases, tempdir

ARGS = None
TOKEN = "t0ken-for-tests-0123456789"
BIG = 150 * 1024 * 1024
POLL_CAP_S = 120  # a guard against hanging, never a threshold


def fx(name):
    return os.path.join(ARGS.fixtures, name)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def daemon(work, name, extra=()):
    tok = os.path.join(work, "token")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(tok, 0o600)
    args = ["--upload-token-file", tok, "--max-upload-bytes", "512M"] + list(extra)
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), extra=args)


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"^%s:\s+(\d+) kB" % field, f.read(), re.M)
    return int(m.group(1)) * 1024


def spool_fds(pid, tmp):
    """(fd, size) of the daemon's descriptors open on files of DATA/tmp."""
    out = []
    base = "/proc/%d/fd" % pid
    for fd in os.listdir(base):
        try:
            target = os.readlink(os.path.join(base, fd))
            if target.startswith(tmp + "/"):
                out.append((int(fd), os.stat(os.path.join(base, fd)).st_size))
        except OSError:
            pass
    return out


def wait_for(what, cond):
    deadline = time.monotonic() + POLL_CAP_S
    while not cond():
        check(time.monotonic() < deadline, "never happened: " + what)
        time.sleep(0.05)


def head(bid, kind, length):
    return ("PUT /buildid/%s/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
            "Content-Length: %d\r\n\r\n" % (bid, kind, TOKEN, length)).encode()


def send_body(s, body, upto):
    view = memoryview(body)
    sent = 0
    while sent < upto:
        n = min(1 << 20, upto - sent)
        s.sendall(view[sent:sent + n])
        sent += n


def answer(s):
    """The status line and headers of the answer (the socket's remainder)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n\r\n", 1)[0].decode(errors="replace")


def big_debug_file():
    """A debug file padded to BIG bytes (trailing bytes past the sections)."""
    body = read(fx("c_stripped.debug"))
    return build_id(fx("c_stripped.debug")), body + b"\0" * (BIG - len(body))


def get_file(d, bid):
    c = d.conn(timeout=120)
    c.request("GET", "/buildid/%s/debuginfo" % bid)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def case_rss():
    work = tempdir("upload-rss-")
    d = daemon(work, "d")
    tmp = os.path.join(work, "d-data", "tmp")
    bid, body = big_debug_file()
    other = "ab" * 20
    try:
        pid = d.proc.pid
        rss0 = status_kb(pid, "VmRSS")
        s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        s.sendall(head(other, "debuginfo", len(body)))
        send_body(s, body, len(body) - 1)
        wait_for("the body in a spool file",
                 lambda: [sz for _, sz in spool_fds(pid, tmp)] == [len(body) - 1])
        grew = status_kb(pid, "VmHWM") - rss0
        print("peak RSS growth with %d MB in flight: %.1f MB" % (BIG >> 20, grew / 2**20))
        check(grew < BIG // 4, "peak RSS grew %d bytes for a %d-byte body in flight" % (grew, BIG))
        check(os.listdir(tmp) == [], "the spool file is not unlinked: %r" % os.listdir(tmp))
        check(d.metric("symbolizer_upload_inflight_bytes") == len(body), "in flight not counted")
        s.close()  # the client leaves mid-body
        wait_for("the spool file closed", lambda: spool_fds(pid, tmp) == [])
        wait_for("the budget given back",
                 lambda: d.metric("symbolizer_upload_inflight_bytes") == 0)
        check(os.listdir(tmp) == [], "DATA/tmp not empty: %r" % os.listdir(tmp))
        # The whole body, for another build ID: refused after the check.
        s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        s.sendall(head(other, "debuginfo", len(body)))
        send_body(s, body, len(body))
        line = answer(s)
        s.close()
        check(" 400 " in line.split("\r\n")[0], "another build ID: %r" % line)
        grew = status_kb(pid, "VmHWM") - rss0
        check(grew < BIG // 4, "peak RSS grew %d bytes for a refused %d-byte body" % (grew, BIG))
        # The right one is stored and served whole.
        s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        s.sendall(head(bid, "debuginfo", len(body)))
        send_body(s, body, len(body))
        line = answer(s)
        s.close()
        check(" 201 " in line.split("\r\n")[0], "a 150 MB debug file: %r" % line)
        st, data = get_file(d, bid)
        check(st == 200 and data == body, "the stored file: %d, %d bytes" % (st, len(data)))
        wait_for("every spool file closed", lambda: spool_fds(pid, tmp) == [])
        check(os.listdir(tmp) == [], "DATA/tmp not empty at the end: %r" % os.listdir(tmp))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_budget():
    work = tempdir("upload-budget-")
    d = daemon(work, "d", extra=["--upload-memory-bytes", "200M"])
    tmp = os.path.join(work, "d-data", "tmp")
    bid, body = big_debug_file()
    try:
        pid = d.proc.pid
        rss0 = status_kb(pid, "VmRSS")
        first = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        first.sendall(head(bid, "debuginfo", len(body)))
        send_body(first, body, len(body) // 2)
        wait_for("the first upload in flight",
                 lambda: d.metric("symbolizer_upload_inflight_bytes") == len(body))
        for i in range(3):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
            s.sendall(head(bid, "debuginfo", len(body)))  # the head only
            line = answer(s)
            s.close()
            check(" 503 " in line.split("\r\n")[0] and "Retry-After:" in line,
                  "upload %d over the budget: %r" % (i + 2, line))
        check(d.metric('symbolizer_upload_bodies_refused_total{reason="busy"}') == 3,
              "refusals not counted")
        grew = status_kb(pid, "VmHWM") - rss0
        check(grew < BIG // 4, "peak RSS grew %d bytes with 4 x %d bytes offered" % (grew, BIG))
        send_body(first, body[len(body) // 2:], len(body) - len(body) // 2)
        line = answer(first)
        first.close()
        check(" 201 " in line.split("\r\n")[0], "the admitted upload: %r" % line)
        wait_for("the budget given back",
                 lambda: d.metric("symbolizer_upload_inflight_bytes") == 0)
        s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        s.sendall(head(bid, "debuginfo", len(body)))
        send_body(s, body, len(body))
        line = answer(s)
        s.close()
        check(" 200 " in line.split("\r\n")[0], "the next upload once room was back: %r" % line)
        check(os.listdir(tmp) == [], "DATA/tmp not empty: %r" % os.listdir(tmp))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_kill9():
    work = tempdir("upload-kill9-")
    d = daemon(work, "d")
    tmp = os.path.join(work, "d-data", "tmp")
    bid, body = big_debug_file()
    try:
        s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        s.sendall(head(bid, "debuginfo", len(body)))
        send_body(s, body, len(body) // 2)
        wait_for("half the body spooled",
                 lambda: [sz for _, sz in spool_fds(d.proc.pid, tmp)] == [len(body) // 2])
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        s.close()
        with open(os.path.join(tmp, "dl-stale01"), "wb") as f:  # as a crash before unlink leaves
            f.write(b"x" * 4096)
        d = daemon(work, "d")
        check(os.listdir(tmp) == [], "DATA/tmp after the restart: %r" % os.listdir(tmp))
        st, _ = get_file(d, bid)
        check(st == 404, "a half-sent upload is served after kill -9: %d" % st)
        s = socket.create_connection(("127.0.0.1", d.port), timeout=120)
        s.sendall(head(bid, "debuginfo", len(body)))
        send_body(s, body, len(body))
        line = answer(s)
        s.close()
        check(" 201 " in line.split("\r\n")[0], "the upload after the restart: %r" % line)
        st, data = get_file(d, bid)
        check(st == 200 and data == body, "the stored file: %d, %d bytes" % (st, len(data)))
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    # Under ASan a body's bytes pass through evbuffer chunks that, once freed,
    # sit in ASan's quarantine (256 MB by default): memory the sanitizer holds,
    # not the daemon. A small quarantine keeps the bound about the daemon.
    os.environ["ASAN_OPTIONS"] = ":".join(
        x for x in (os.environ.get("ASAN_OPTIONS", ""), "quarantine_size_mb=8") if x)
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("rss", case_rss), ("budget", case_budget), ("kill9", case_kill9)],
                     ARGS.cases)


if __name__ == "__main__":
    sys.exit(main())
