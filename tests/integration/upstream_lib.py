# SPDX-License-Identifier: Apache-2.0
"""Helpers of the upstream_* and store_* integration tests and of bench_fetch:
real elfutils debuginfod servers and the fault server on 127.0.0.1, build IDs,
and `symbolctl fetch` runs parsed into dicts.

Nothing here talks to anything but 127.0.0.1.
"""
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
STARTUP_GUARD_S = 120  # only so that a broken setup cannot hang the suite


class TestFailure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise TestFailure(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not m:
        raise TestFailure("%s: no build ID" % path)
    return m.group(1)


def set_build_id(src, dst, new_hex):
    """Copies an ELF file, replacing its build-ID bytes (a file of another ID)."""
    old = bytes.fromhex(build_id(src))
    new = bytes.fromhex(new_hex)
    assert len(old) == len(new)
    data = open(src, "rb").read()
    check(data.count(old) >= 1, "build ID bytes not found in %s" % src)
    open(dst, "wb").write(data.replace(old, new))


def http_get(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


class Debuginfod:
    """elfutils debuginfod over a directory, on a free loopback port."""

    def __init__(self, workdir, name, files):
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        for f in files:
            shutil.copy(f, self.dir)
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.log = open(os.path.join(workdir, name + ".log"), "w")
        self.proc = subprocess.Popen(
            ["debuginfod", "-F", "-p", str(self.port), "-d",
             os.path.join(workdir, name + ".sqlite"), "-t", "0", "-g", "0", self.dir],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.wait_ready(len(files))

    def wait_ready(self, n_files):
        deadline = time.monotonic() + STARTUP_GUARD_S
        while time.monotonic() < deadline:
            check(self.proc.poll() is None, "debuginfod on %s exited" % self.url)
            try:
                _, body = http_get(self.url + "/metrics", timeout=2)
                text = body.decode()
                m = re.search(r'scanned_files_total\{source="file"\} (\d+)', text)
                busy = re.search(r'thread_busy\{role="scan"\} (\d+)', text)
                if m and int(m.group(1)) >= n_files and busy and busy.group(1) == "0":
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.1)
        raise TestFailure("debuginfod on %s did not finish scanning" % self.url)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class FaultBench:
    """Fault servers and fresh build IDs for a test's cases, under work: fresh()
    gives a new build ID (prefix + a counter), the fixture rewritten to carry
    it, and a data dir; server(config) starts a FaultServer; stop() ends them."""

    def __init__(self, work, fixture, prefix):
        self.work, self.fixture, self.prefix = work, fixture, prefix
        self.servers = []
        self.count = 0

    def fresh(self):
        self.count += 1
        bid = "%s%0*x" % (self.prefix, 40 - len(self.prefix), self.count)
        path = os.path.join(self.work, bid)
        set_build_id(self.fixture, path, bid)
        return bid, path, os.path.join(self.work, "data-" + bid)

    def server(self, config):
        s = FaultServer(self.work, "fault%d" % len(self.servers), config)
        self.servers.append(s)
        return s

    def stop(self):
        for s in self.servers:
            s.stop()


class FaultServer:
    """upstream_fault_server.py with a {"<id>/<kind>": behaviour} map."""

    def __init__(self, workdir, name, config):
        cfg = os.path.join(workdir, name + ".json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        port_file = os.path.join(workdir, name + ".port")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "upstream_fault_server.py"),
             "--port-file", port_file, "--config", cfg])
        deadline = time.monotonic() + STARTUP_GUARD_S
        while not os.path.exists(port_file):
            check(self.proc.poll() is None, "fault server exited")
            check(time.monotonic() < deadline, "fault server did not start")
            time.sleep(0.05)
        self.port = int(open(port_file).read())
        self.url = "http://127.0.0.1:%d" % self.port

    def stats(self):
        _, body = http_get(self.url + "/stats")
        return json.loads(body)

    def requests(self, key):
        return self.stats().get(key, {}).get("requests", 0)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def no_sanitizer_report(proc):
    """In sanitizer builds a report (leak, UB) fails the test whatever the case checks."""
    for marker in ("Sanitizer", "runtime error:"):
        check(marker not in (proc.stderr or ""), "sanitizer report:\n%s" % proc.stderr)


class FetchRun:
    def __init__(self, proc):
        no_sanitizer_report(proc)
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.results = {}   # build ID -> list of result dicts, in order of completion
        self.order = []     # build IDs in order of completion
        self.upstreams = {}  # url -> counters
        self.fetcher = {}
        self.store = {}
        for line in proc.stdout.splitlines():
            words = shlex.split(line)
            if not words:
                continue
            kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            if words[0] == "upstream":
                kv = dict(w.split("=", 1) for w in words[2:])
                self.upstreams[words[1]] = kv
            elif words[0] == "fetcher":
                self.fetcher = kv
            elif words[0] == "store":
                self.store = kv
            elif re.fullmatch(r"[0-9a-f]+", words[0]):
                kv["status"] = words[1] if len(words) > 1 and "=" not in words[1] else kv.get("state")
                self.results.setdefault(words[0], []).append(kv)
                self.order.append(words[0])

    def one(self, bid):
        check(bid in self.results, "no result for %s in:\n%s\n%s" % (bid, self.stdout, self.stderr))
        return self.results[bid][-1]

    def __str__(self):
        return "rc=%s\n--- stdout\n%s--- stderr\n%s" % (self.rc, self.stdout, self.stderr)


def fetch(symbolctl, data_dir, ids, upstreams=None, debug_dirs=(), extra=(), env=None,
          stdin=None):
    """Runs symbolctl fetch. upstreams: list of URLs (None: leave the flag out)."""
    cmd = [symbolctl, "fetch", "--data-dir", data_dir, "--stats"]
    if debug_dirs:
        cmd += ["--debug-dir=" + d for d in debug_dirs]
    else:
        cmd += ["--debug-dir="]
    if upstreams is not None:
        cmd += ["--debuginfod-upstream-servers=" + ",".join(upstreams)]
    cmd += list(extra) + list(ids)
    full_env = dict(os.environ)
    full_env.pop("DEBUGINFOD_URLS", None)
    if env:
        full_env.update(env)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, input=stdin,
                          timeout=600)
    return FetchRun(proc)


def info(symbolctl, data_dir, ids):
    proc = subprocess.run([symbolctl, "fetch", "--data-dir", data_dir, "--info"] + list(ids),
                          capture_output=True, text=True, timeout=120)
    return FetchRun(proc)


def verify(symbolctl, data_dir):
    proc = subprocess.run([symbolctl, "fetch", "--data-dir", data_dir, "--verify"],
                          capture_output=True, text=True, timeout=300)
    no_sanitizer_report(proc)
    check(proc.returncode == 0, "store verify failed: %s %s" % (proc.stdout, proc.stderr))


def run_cases(cases, argv_cases):
    """Runs the named cases (all when none is named); prints ok/FAIL; exit status."""
    failed = 0
    for name, fn in cases:
        if argv_cases and name not in argv_cases:
            continue
        t0 = time.monotonic()
        try:
            fn()
            print("ok   %s (%.1f s)" % (name, time.monotonic() - t0), flush=True)
        except TestFailure as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
    print("%d failed" % failed)
    return 1 if failed else 0


def tempdir(prefix, sweep=False):
    """A new directory PREFIX<pid>-XXXX under the temporary directory. sweep: first
    remove those a killed earlier run left (its pid gone): a test's own cleanup
    runs in `finally`, which SIGKILL (ctest's timeout) skips, and a large one's
    leftovers (the kernel package test's: 1.2 GB) fill the disk run after run."""
    if sweep:
        base = tempfile.gettempdir()
        for name in os.listdir(base):
            m = re.match(re.escape(prefix) + r"(\d+)-", name)
            if not m or int(m.group(1)) == os.getpid():
                continue
            try:
                os.kill(int(m.group(1)), 0)
            except ProcessLookupError:
                shutil.rmtree(os.path.join(base, name), ignore_errors=True)
            except OSError:
                pass  # alive, another user's
    return tempfile.mkdtemp(prefix="%s%d-" % (prefix, os.getpid()))
