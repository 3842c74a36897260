# SPDX-License-Identifier: Apache-2.0
"""Helpers of the daemon_* integration tests and of bench/: runs a real
symbolizerd on a free loopback port and talks the Connect protocol to it.

Nothing here talks to anything but 127.0.0.1.
"""
import gzip
import http.client
import json
import os
import re
import signal
import subprocess
import time

import pb
from upstream_lib import TestFailure, check

RPC = "/symbolizer.v1.SymbolizerService/Symbolize"
STARTUP_GUARD_S = 60


class Daemon:
    """symbolizerd with its own data dir; stderr goes to a log file."""

    def __init__(self, binary, data_dir, log_path, upstreams=(), debug_dirs=(), extra=()):
        self.log_path = log_path
        cmd = [binary, "--listen", "127.0.0.1:0", "--data-dir", data_dir,
               "--debuginfod-upstream-servers=" + ",".join(upstreams)]
        cmd += ["--debug-dir=" + d for d in debug_dirs] or ["--debug-dir="]
        cmd += list(extra)
        env = dict(os.environ)
        env.pop("DEBUGINFOD_URLS", None)
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + STARTUP_GUARD_S
        self.port = None
        while self.port is None:
            check(self.proc.poll() is None, "symbolizerd exited:\n" + self.log_text())
            check(time.monotonic() < deadline, "symbolizerd did not start")
            m = re.search(r'msg="listening" addr=127\.0\.0\.1:(\d+)', self.log_text())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.02)
        self.url = "http://127.0.0.1:%d" % self.port

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, timeout=30):
        """SIGTERM; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise TestFailure("symbolizerd did not stop within %d s" % timeout)
        self.log.close()
        text = self.log_text()
        for marker in ("Sanitizer", "runtime error:"):
            check(marker not in text, "sanitizer report:\n" + text)
        return self.proc.returncode

    def conn(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def post(self, body, headers=None, path=RPC, conn=None, method="POST"):
        """(status, headers dict with lowercase names, body bytes)."""
        h = {"Content-Type": "application/proto"}
        h.update(headers or {})
        c = conn or self.conn()
        c.request(method, path, body, h)
        r = c.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        if conn is None:
            c.close()
        return r.status, hdrs, data

    def request(self, path, method="GET", headers=None):
        """A plain request (debuginfod routes): (status, lowercase headers, body)."""
        c = self.conn()
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, hdrs, body

    def symbolize(self, mappings, locations, conn=None, headers=None, **opts):
        """The decoded SymbolizeResponse of a call that must succeed."""
        status, hdrs, data = self.post(pb.request(mappings, locations, **opts), headers, conn=conn)
        check(status == 200, "Symbolize: HTTP %d %r" % (status, data[:300]))
        check(hdrs.get("content-type") == "application/proto",
              "Symbolize: content type %r" % hdrs.get("content-type"))
        if hdrs.get("content-encoding") == "gzip":
            data = gzip.decompress(data)
        return pb.decode_response(data)

    def connect_error(self, body, headers=None, path=RPC, method="POST"):
        """(HTTP status, Connect code, message) of a call that must fail."""
        status, hdrs, data = self.post(body, headers, path=path, method=method)
        check(status != 200, "expected an error, got 200")
        check(hdrs.get("content-type", "").startswith("application/json"),
              "error without a JSON body: %d %r %r" % (status, hdrs, data[:200]))
        err = json.loads(data)
        return status, err.get("code"), err.get("message", "")

    def metrics(self):
        c = self.conn()
        c.request("GET", "/metrics")
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        check(r.status == 200, "/metrics: HTTP %d" % r.status)
        return text

    def metric(self, name_and_labels):
        m = re.search(r"^%s (\S+)$" % re.escape(name_and_labels), self.metrics(), re.M)
        return float(m.group(1)) if m else None


def llvm_lines(frames):
    """pb.frames() output as the text symbolctl and llvm-symbolizer print."""
    if not frames:
        return "??\n??:0:0\n"
    return "".join("%s\n%s:%d:%d\n" % (f[0] or "??", f[1] or "??", f[2], f[3]) for f in frames)
