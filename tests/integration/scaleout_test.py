#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scaleout_test: three symbolizerd replicas behind nginx (issue 13, item 4),
with deploy/nginx/symbolizer.conf as it ships (only the replicas' addresses and
the front's port replaced).

A real elfutils debuginfod is the one upstream; it holds 20 build IDs (ten
fixtures, each also under a second build ID). Each replica lists the nginx
front as its peer tier (--peer-servers) before that upstream. Checked:
  - Symbolize calls for the 20 build IDs sent to the front, then to every
    replica directly, all answer with the lines llvm-symbolizer gives;
  - the upstream served each build ID's debuginfo exactly once for the whole
    cluster (its own /metrics count), so the owners downloaded and the others
    got the bytes from them through the front;
  - a /buildid/ID/debuginfo request through the front reaches the owner;
  - a replica killed (SIGKILL) mid-run costs no failed or wrong answer once
    nginx has moved its keys, and no new upstream download.

Usage: scaleout_test.py --symbolizerd BIN --fixtures DIR --nginx-conf FILE
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
from daemon_lib import Daemon, llvm_lines  # noqa: E402
from upstream_lib import (Debuginfod, TestFailure, build_id, check, free_port,  # noqa: E402
                          http_get, run_cases, set_build_id, tempdir)

ARGS = None
FIXTURES = ["c_O0_dw4", "c_O0_dw5", "c_O2_dw4", "c_O2_dw5", "c_O2_zlib", "c_label",
            "cxx_O0", "cxx_O2", "cxx_O2_dw4", "cxx_names_O2"]
REPLICAS = 3
WAIT_MS = 20000
STATUS_OK = 1


def functions(path, n=3):
    """Addresses of up to n defined functions of an ELF file (nm)."""
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    addrs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt" and not parts[2].startswith("_"):
            addrs.append(int(parts[0], 16) + 1)
    check(addrs, "%s: no functions" % path)
    return sorted(addrs)[:n]


def answers(target, bid, addrs):
    """The frames of each address (llvm_lines text) from one Symbolize call."""
    resp = target.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs],
                            max_wait_ms=WAIT_MS)
    st = resp["mappings"][0]
    check(st["status"] == STATUS_OK, "%s: status %s %r" % (bid, st["status"], st.get("error")))
    return [llvm_lines(pb.frames(resp, i)) for i in range(len(addrs))]


def make_files(work):
    """The 20 files of the upstream: (build ID, path, addresses, expected
    answers). The expected answers are those of one daemon reading the files
    from a local debug dir, no cluster involved."""
    files = []
    src = os.path.join(work, "files")
    dbg = os.path.join(work, "reference-dbg")
    os.makedirs(src)
    for i, name in enumerate(FIXTURES):
        orig = os.path.join(ARGS.fixtures, name)
        bid = build_id(orig)
        copy = os.path.join(src, name + ".second")
        other = "%02x" % (int(bid[:2], 16) ^ 0x80) + bid[2:]  # another ID, same length
        set_build_id(orig, copy, other)
        addrs = functions(orig)
        for b, p in ((bid, orig), (other, copy)):
            d = os.path.join(dbg, ".build-id", b[:2])
            os.makedirs(d, exist_ok=True)
            shutil.copy(p, os.path.join(d, b[2:] + ".debug"))
            files.append([b, p, addrs, None])
    check(len({f[0] for f in files}) == 2 * len(FIXTURES), "build IDs are not distinct")
    ref = Daemon(ARGS.symbolizerd, os.path.join(work, "reference-data"),
                 os.path.join(work, "reference.log"), debug_dirs=[dbg])
    try:
        for f in files:
            f[3] = answers(ref, f[0], f[2])
            check(any(a != "??\n??:0:0\n" for a in f[3]), "%s: reference knows nothing" % f[0])
    finally:
        ref.stop()
    return files


def nginx_conf(work, front_port, replica_ports):
    """deploy/nginx/symbolizer.conf with the test's ports, in a whole nginx.conf."""
    text = open(ARGS.nginx_conf).read()
    servers = re.findall(r"^\s*server 127\.0\.0\.1:\d+ .*$", text, re.M)
    # Three upstream blocks (any, owner, and gRPC's since issue 26), each every replica.
    check(len(servers) == 3 * REPLICAS, "the shipped config lists %d replicas" % len(servers))
    n = [0]

    def repl(m):
        port = replica_ports[n[0] % REPLICAS]
        n[0] += 1
        return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:%d" % port, m.group(0))

    text = re.sub(r"^\s*server 127\.0\.0\.1:\d+ .*$", repl, text, flags=re.M)
    text = re.sub(r"listen 8080;", "listen 127.0.0.1:%d;" % front_port, text)
    # The gRPC listener (issue 26): loopback, a free port.
    text = re.sub(r"listen 8081 http2;", "listen 127.0.0.1:%d http2;" % free_port(), text)
    site = os.path.join(work, "symbolizer.conf")
    open(site, "w").write(text)
    main = os.path.join(work, "nginx.conf")
    tmp = os.path.join(work, "nginx-tmp")
    os.makedirs(tmp, exist_ok=True)
    with open(main, "w") as f:
        f.write("daemon off;\nworker_processes 1;\npid %s/nginx.pid;\n"
                "error_log %s/nginx-error.log info;\nevents { worker_connections 1024; }\n"
                "http {\n  access_log %s/nginx-access.log;\n"
                "  client_body_temp_path %s/body;\n  proxy_temp_path %s/proxy;\n"
                "  fastcgi_temp_path %s/fcgi;\n  uwsgi_temp_path %s/uwsgi;\n"
                "  scgi_temp_path %s/scgi;\n  include %s;\n}\n"
                % (work, work, work, tmp, tmp, tmp, tmp, tmp, site))
    return main


class Nginx:
    def __init__(self, work, conf, port):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        check(os.path.exists(nginx), "nginx is not installed (scripts/install-deps.sh installs it)")
        r = subprocess.run([nginx, "-t", "-p", work, "-c", conf], capture_output=True, text=True)
        check(r.returncode == 0, "nginx -t:\n" + r.stderr)
        self.proc = subprocess.Popen([nginx, "-p", work, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = "http://127.0.0.1:%d" % port
        deadline = time.monotonic() + 30
        while True:
            check(self.proc.poll() is None, "nginx exited")
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=2).read()
                return
            except OSError:
                check(time.monotonic() < deadline, "nginx did not start")
                time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Front:
    """Connect calls through nginx (daemon_lib's client, another port)."""

    def __init__(self, port):
        self.port = port

    post = Daemon.post
    symbolize = Daemon.symbolize
    conn = Daemon.conn


def upstream_downloads(up):
    _, body = http_get(up.url + "/metrics")
    m = re.search(r'^http_responses_transfer_bytes_count\{code="200",type="debuginfo"\} (\d+)',
                  body.decode(), re.M)
    return int(m.group(1)) if m else 0


def symbolize_all(target, files, what):
    """One call per build ID; every answer OK and llvm-symbolizer's."""
    def one(f):
        bid, _, addrs, want = f
        got = answers(target, bid, addrs)
        for i, w in enumerate(want):
            check(got[i] == w, "%s: %s 0x%x:\n got %r\nwant %r" % (what, bid, addrs[i], got[i], w))
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(one, files))


def case_cluster():
    work = tempdir("scaleout-")
    files = make_files(work)
    up = Debuginfod(work, "upstream", [f[1] for f in files])
    front_port = free_port()
    front_url = "http://127.0.0.1:%d" % front_port
    ports = [free_port() for _ in range(REPLICAS)]
    replicas, nginx = [], None
    try:
        for i, p in enumerate(ports):
            replicas.append(Daemon(
                ARGS.symbolizerd, os.path.join(work, "data%d" % i),
                os.path.join(work, "replica%d.log" % i), upstreams=[up.url],
                extra=["--listen", "127.0.0.1:%d" % p, "--peer-servers", front_url,
                       "--upstream-retries", "1", "--upstream-retry-backoff", "50ms"]))
        nginx = Nginx(work, nginx_conf(work, front_port, ports), front_port)
        front = Front(front_port)

        symbolize_all(front, files, "front")
        for i, r in enumerate(replicas):
            symbolize_all(r, files, "replica %d" % i)
        n = upstream_downloads(up)
        check(n == len(files), "upstream downloads: %d for %d build IDs" % (n, len(files)))
        # Each replica that does not own a build ID got it from its peer tier
        # (an owner asked first downloads for itself, through the front too,
        # or already holds it when asked).
        peer_ok = [r.metric('symbolizer_upstream_requests_total{server="%s",outcome="ok"}'
                            % front_url) or 0 for r in replicas]
        print("files from the peer tier, per replica: %s" % peer_ok, flush=True)
        # The replicas' own count of upstream downloads (an owner's for its
        # peers included) equals the upstream's.
        up_ok = [r.metric('symbolizer_upstream_requests_total{server="%s",outcome="ok"}'
                          % up.url) or 0 for r in replicas]
        check(sum(up_ok) == len(files), "upstream downloads per replica's /metrics: %s" % up_ok)
        check(sum(peer_ok) >= len(files) * (REPLICAS - 1),
              "files from the peer tier: %s, want at least %d in all"
              % (peer_ok, len(files) * (REPLICAS - 1)))

        # The debuginfod face: the owner answers through the front.
        bid, path = files[0][0], files[0][1]
        status, body = http_get(front_url + "/buildid/%s/debuginfo" % bid, timeout=30)
        check(status == 200 and body == open(path, "rb").read(),
              "debuginfod through the front: %d" % status)

        # A replica dies: its keys move; every answer stays right.
        replicas[1].proc.send_signal(signal.SIGKILL)
        replicas[1].proc.wait()
        for rnd in range(3):
            symbolize_all(front, files, "after the kill, round %d" % rnd)
            for f in files[:4]:
                status, body = http_get(front_url + "/buildid/%s/debuginfo" % f[0], timeout=30)
                check(status == 200 and body == open(f[1], "rb").read(),
                      "debuginfod through the front after the kill: %s: %d" % (f[0], status))
        n = upstream_downloads(up)
        check(n == len(files), "upstream downloads after the kill: %d" % n)
    finally:
        if nginx:
            nginx.stop()
        for i, r in enumerate(replicas):
            if i == 1:
                r.log.close()
                continue
            r.stop()
        up.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--nginx-conf", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    return run_cases([("cluster", case_cluster)], ARGS.cases)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TestFailure as e:
        print("FAIL:", e)
        sys.exit(1)
