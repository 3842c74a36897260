#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""s3_test: the shared S3 tier (issue 30) against a real S3 server, Ceph's
RADOS Gateway from Debian (s3_server_start.sh: one mon, one memstore OSD,
radosgw, all on 127.0.0.1), and against a lying one (a small fault server).

  cluster      three replicas behind the shipped nginx front, one bucket: an
               upload through the front is in S3 before its 201; the owner is
               killed (SIGKILL) and its data dir wiped, the upload is still
               served (/buildid/ID/debuginfo and Symbolize) by the replica that
               takes its keys; a build ID fetched and indexed by one replica is
               served by another with no upstream request and no index build
               (their metrics say so)
  multipart    a 70 MiB upload written in parts, read back whole elsewhere
  outage       radosgw stopped: uploads 503 with Retry-After, Symbolize of
               stored IDs unaffected, write-behind queued and retried; radosgw
               back: the queue drains
  credentials  wrong credentials: the daemon refuses to start with the
               server's error code; no secret in any log or /metrics
  lying        truncated objects, wrong checksums, 500s, a slow server: never
               served, counted, fallen through to the upstream

Usage: s3_test.py --symbolizerd BIN --fixtures DIR --nginx-conf FILE
                  --s3-scripts DIR [CASE...]
Exit 77 (skipped) when radosgw is not installed (scripts/install-deps.sh).
"""
import argparse
import json
import hashlib
import http.client
import http.server
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
import scaleout_test  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import (TestFailure, build_id, check, free_port, run_cases,  # noqa: E402
                          set_build_id, tempdir)

ARGS = None
TOKEN = "t0ken-for-s3-tests-0123456789"
BUCKET = "symbolizer-test"
S3 = {}   # the running radosgw: endpoint, keys, pids, state dir


def wait_for(what, fn, timeout=60):
    """Polls fn until it is true (a guard against hanging, not a measure)."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        check(time.monotonic() < deadline, "timed out waiting for " + what)
        time.sleep(0.1)


# ---- radosgw -----------------------------------------------------------------

def s3_start(state):
    env = dict(os.environ, S3_STATE_DIR=state, S3_BUCKET=BUCKET, S3_START_TIMEOUT="90")
    r = subprocess.run([os.path.join(ARGS.s3_scripts, "s3_server_start.sh")], env=env,
                       capture_output=True, text=True, timeout=200)
    check(r.returncode == 0, "s3_server_start.sh failed:\n" + r.stderr[-3000:])
    kv = dict(re.findall(r'(S3_\w+)=("[^"]*"|\S+)', r.stdout))
    S3.update({k: v.strip('"') for k, v in kv.items()})
    S3["state"] = state


def s3_stop_all():
    if "state" in S3:
        subprocess.run([os.path.join(ARGS.s3_scripts, "s3_server_stop.sh")],
                       env=dict(os.environ, S3_STATE_DIR=S3["state"]), timeout=120)


def rgw_pid():
    return int(S3["S3_PIDS"].split()[2])


# ---- a debuginfod upstream that counts what it serves -------------------------

class Upstream:
    def __init__(self, files):
        self.files = dict(files)     # build ID -> bytes
        self.served = {}
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                m = re.match(r"^/buildid/([0-9a-f]+)/debuginfo$", self.path)
                body = outer.files.get(m.group(1)) if m else None
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                outer.served[m.group(1)] = outer.served.get(m.group(1), 0) + 1
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


# ---- a lying S3 ---------------------------------------------------------------

class LyingS3:
    """Answers HEAD bucket 200; GET of an object as the build ID's mode says."""

    def __init__(self, modes):
        self.modes = modes           # build ID -> (mode, body)
        self.put_mode = "error"      # PUT: "error" (500) or "slow" (past --s3-timeout)
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def reply(self, code, headers=(), body=b"", length=None):
                self.send_response(code)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass   # the daemon gave up on a slow answer

            def do_HEAD(self):
                self.reply(200)

            def do_PUT(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if outer.put_mode == "slow":
                    time.sleep(4)
                self.reply(500, body=b"<Error><Code>InternalError</Code></Error>")

            def do_GET(self):
                if "max-keys" in self.path:
                    return self.reply(200, body=b"<ListBucketResult></ListBucketResult>")
                m = re.search(r"/([0-9a-f]{2})/([0-9a-f]+)/(debuginfo|executable|index-v\d+)$",
                              self.path)
                mode, body = outer.modes.get(m.group(1) + m.group(2), ("missing", b"")) \
                    if m else ("missing", b"")
                sha = hashlib.sha256(body).hexdigest()
                if mode == "missing":
                    return self.reply(404, body=b"<Error><Code>NoSuchKey</Code></Error>")
                if mode == "error":
                    return self.reply(500, body=b"<Error><Code>InternalError</Code></Error>")
                if mode == "badsum":
                    return self.reply(200, [("x-amz-meta-sha256", "0" * 64)], body)
                if mode == "nosum":
                    return self.reply(200, [], body)
                if mode == "truncated":
                    self.reply(200, [("x-amz-meta-sha256", sha)], body[:len(body) // 2],
                               length=len(body))
                    self.close_connection = True
                    return
                if mode == "slow":
                    time.sleep(4)
                    return self.reply(200, [("x-amz-meta-sha256", sha)], body)
                self.reply(200, [("x-amz-meta-sha256", sha)], body)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


# ---- helpers -------------------------------------------------------------------

def fx(name):
    return os.path.join(ARGS.fixtures, name)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def creds_file(work, key=None, secret=None):
    p = os.path.join(work, "s3-credentials")
    with open(p, "w") as f:
        f.write("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                % (key or S3["S3_ACCESS_KEY"], secret or S3["S3_SECRET_KEY"]))
    os.chmod(p, 0o600)
    return p


def token_file(work):
    p = os.path.join(work, "token")
    with open(p, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(p, 0o600)
    return p


def s3_flags(work, endpoint=None, prefix="cluster"):
    return ["--s3-endpoint", endpoint or S3["S3_ENDPOINT"], "--s3-bucket", BUCKET,
            "--s3-prefix", prefix, "--s3-credentials-file", creds_file(work)]


def replica(work, name, upstreams=(), extra=(), port=None):
    args = ["--upload-token-file", token_file(work)] + list(extra)
    if port:
        args += ["--listen", "127.0.0.1:%d" % port]
    return Daemon(ARGS.symbolizerd, os.path.join(work, name + "-data"),
                  os.path.join(work, name + ".log"), upstreams=upstreams, extra=args)


def put(port, bid, body, kind="debuginfo"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("PUT", "/buildid/%s/%s" % (bid, kind), body, {"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, hdrs, text


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def func_addr(path, name="main"):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) [Tt] %s$" % re.escape(name), out, re.M)
    check(m, "%s: no symbol %s" % (path, name))
    return int(m.group(1), 16)


def symbolize_ok(target, bid, addr, what):
    resp = target.symbolize([pb.mapping(bid)], [pb.location(0, addr)], max_wait_ms=30000)
    m = resp["mappings"][0]
    check(pb.STATUS[m["status"]] == "OK" and m["has_line_numbers"],
          "%s: Symbolize %s: %r" % (what, bid, m))
    frames = pb.frames(resp, 0)
    check(frames and frames[-1][0] == "main", "%s: frames %r" % (what, frames))


def metric(d, name):
    v = d.metric(name)
    return 0 if v is None else v


def no_secret(texts):
    for t in texts:
        check(S3["S3_SECRET_KEY"] not in t, "the S3 secret appears in a log or /metrics")


def file_copy(work, name, n):
    """A copy of fixture name under another build ID (n-th variant): (ID, path)."""
    src = fx(name)
    bid = build_id(src)
    other = "%02x" % ((int(bid[:2], 16) + 0x40 + n) & 0xff) + bid[2:]
    dst = os.path.join(work, "%s.%d" % (name, n))
    set_build_id(src, dst, other)
    return other, dst


# ---- cases -----------------------------------------------------------------------

def drained(reps, at_least):
    """Every replica's write-behind queue empty, and at least n written in all."""
    def ok():
        if any(metric(r, "symbolizer_s3_write_behind_queued") for r in reps):
            return False
        return sum(metric(r, 'symbolizer_s3_write_behind_total{event="written"}')
                   for r in reps) >= at_least
    return ok


def check_front_cap():
    """The front's client_max_body_size for /buildid/ equals the daemon's
    --max-upload-bytes default (issue 30, item 3)."""
    conf = open(ARGS.nginx_conf).read()
    loc = re.search(r"location /buildid/ \{(.*?)\n\t\}", conf, re.S)
    cap = loc and re.search(r"client_max_body_size (\d+)([kmg]?);", loc.group(1))
    check(cap, "no client_max_body_size in the front's /buildid/ location")
    help_text = subprocess.run([ARGS.symbolizerd, "--help"], capture_output=True,
                               text=True).stdout
    dflt = re.search(r"--max-upload-bytes SIZE\s+.*?\((\d+)([KMG])\)", help_text, re.S)
    check(dflt, "no --max-upload-bytes default in --help")
    check((cap.group(1), cap.group(2).upper()) == dflt.groups(),
          "nginx client_max_body_size %s%s, --max-upload-bytes %s%s"
          % (cap.group(1), cap.group(2), *dflt.groups()))


def case_cluster():
    check_front_cap()
    work = tempdir("s3-cluster-")
    scaleout_test.ARGS = argparse.Namespace(nginx_conf=ARGS.nginx_conf)
    front_port = free_port()
    front_url = "http://127.0.0.1:%d" % front_port
    ports = [free_port() for _ in range(scaleout_test.REPLICAS)]
    up_bid, up_path = file_copy(work, "c_O2_dw5", 1)   # known to the upstream only
    upl_bid, upl_path = file_copy(work, "c_O2_dw4", 2)  # uploaded only
    upstream = Upstream({up_bid: read(up_path)})
    reps, nginx = [], None
    killed = set()
    try:
        for i, p in enumerate(ports):
            reps.append(replica(work, "r%d" % i, [upstream.url], port=p,
                                extra=s3_flags(work) + ["--peer-servers", front_url,
                                                        "--trusted-proxies", "127.0.0.1"]))
        nginx = scaleout_test.Nginx(work, scaleout_test.nginx_conf(work, front_port, ports),
                                    front_port)
        front = scaleout_test.Front(front_port)

        # 1. An upload through the front: in S3 (verified) before the 201.
        st, _, text = put(front_port, upl_bid, read(upl_path))
        check(st == 201, "upload through the front: %d %r" % (st, text))
        puts = [metric(r, 'symbolizer_s3_puts_total{result="ok"}') for r in reps]
        check(sorted(puts) == [0, 0, 1], "S3 writes of the upload per replica: %r" % puts)
        owner = puts.index(1)

        # 2. Fetched and indexed by one replica, served by another from S3.
        x = (owner + 1) % len(reps)
        symbolize_ok(reps[x], up_bid, func_addr(up_path), "replica %d (fetches)" % x)
        check(upstream.served.get(up_bid) == 1, "upstream requests: %r" % upstream.served)
        wait_for("write-behind of the file and the index", drained(reps, 2))
        # A replica that holds nothing of it (not the one nginx routed x's
        # peer request to: that one fetched the file from the upstream).
        y = [i for i in range(len(reps)) if i != x and
             metric(reps[i], 'symbolizer_s3_write_behind_total{event="queued"}') == 0][0]
        builds = metric(reps[y], 'symbolizer_index_builds_total{result="ok"}')
        symbolize_ok(reps[y], up_bid, func_addr(up_path), "replica %d (reads S3)" % y)
        check(upstream.served.get(up_bid) == 1,
              "replica %d asked the upstream: %r" % (y, upstream.served))
        check(metric(reps[y], 'symbolizer_index_builds_total{result="ok"}') == builds,
              "replica %d built the index S3 holds" % y)
        check(metric(reps[y], "symbolizer_s3_index_hits_total") == 1,
              "replica %d: no index from S3" % y)
        # ... the index only: the debug file is read when something needs it
        # (issue 30: a cold replica reads the index before the file).
        gets = metric(reps[y], 'symbolizer_s3_gets_total{result="ok"}')
        got = metric(reps[y], 'symbolizer_s3_bytes_total{direction="get"}')
        check(gets == 1 and 0 < got < len(read(up_path)),
              "replica %d read %d objects, %d bytes from S3 (want the index only)" % (y, gets, got))
        # Type layouts need the file: fetched from S3 then, and built.
        req = json.dumps({"buildId": up_bid, "types": ["nope"],
                          "options": {"maxWaitMs": 60000}}).encode()
        st, _, body = reps[y].post(req, {"Content-Type": "application/json"},
                                   path="/symbolizer.v1.SymbolizerService/GetTypeLayouts")
        check(st == 200 and json.loads(body)["result"]["status"] == "STATUS_OK",
              "replica %d: layouts after an index-only read: %d %r" % (y, st, body[:300]))
        st, body = get(reps[y].port, "/buildid/%s/debuginfo" % up_bid)
        check(st == 200 and body == read(up_path), "replica %d: the file after the index" % y)
        check(metric(reps[y], 'symbolizer_s3_gets_total{result="ok"}') == 2,
              "replica %d: the debug file not read from S3 when asked: %s" % (
                  y, [l for l in reps[y].metrics().splitlines()
                      if "s3_" in l or "upstream_requests" in l]))
        peer_asks = metric(reps[y], 'symbolizer_upstream_requests_total{server="%s",outcome="ok"}'
                           % front_url)
        print("replica %d: index from S3, peer-tier files %d, S3 bytes read %d" % (
            y, peer_asks, metric(reps[y], 'symbolizer_s3_bytes_total{direction="get"}')),
            flush=True)

        # 3. The owner of the upload dies with its disk.
        reps[owner].proc.send_signal(signal.SIGKILL)
        reps[owner].proc.wait()
        killed.add(owner)
        shutil.rmtree(os.path.join(work, "r%d-data" % owner))
        for rnd in range(2):
            st, body = get(front_port, "/buildid/%s/debuginfo" % upl_bid)
            check(st == 200 and body == read(upl_path),
                  "the upload through the front after the kill (round %d): %d" % (rnd, st))
            symbolize_ok(front, upl_bid, func_addr(upl_path), "front after the kill")
        # ... and comes back with an empty disk: it serves what it never saw.
        reps[owner].log.close()
        reps[owner] = replica(work, "r%d" % owner, [upstream.url], port=ports[owner],
                              extra=s3_flags(work) + ["--peer-servers", front_url])
        killed.discard(owner)
        st, body = get(reps[owner].port, "/buildid/%s/debuginfo" % upl_bid)
        check(st == 200 and body == read(upl_path), "the wiped replica: %d" % st)
        symbolize_ok(reps[owner], upl_bid, func_addr(upl_path), "the wiped replica")
        check(upstream.served.get(upl_bid) is None, "the upload came from the upstream")
        no_secret([r.log_text() for r in reps] + [r.metrics() for r in reps])
    finally:
        if nginx:
            nginx.stop()
        for i, r in enumerate(reps):
            if i in killed:
                r.log.close()
            else:
                r.stop()
        upstream.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_outage():
    work = tempdir("s3-outage-")
    f_bid, f_path = file_copy(work, "c_O2_dw5", 3)
    g_bid, g_path = file_copy(work, "c_O2_dw5", 4)
    u_bid, u_path = file_copy(work, "c_O2_dw4", 5)
    v_bid, v_path = file_copy(work, "c_O2_dw4", 6)
    upstream = Upstream({f_bid: read(f_path), g_bid: read(g_path)})
    d = replica(work, "d", [upstream.url],
                extra=s3_flags(work, prefix="outage") + ["--s3-timeout", "5s"])
    restarted = False
    try:
        st, _, text = put(d.port, u_bid, read(u_path))
        check(st == 201, "upload with S3 up: %d %r" % (st, text))
        symbolize_ok(d, u_bid, func_addr(u_path), "upload, S3 up")
        symbolize_ok(d, f_bid, func_addr(f_path), "fetched, S3 up")
        wait_for("write-behind with S3 up", drained([d], 2))
        written = metric(d, 'symbolizer_s3_write_behind_total{event="written"}')

        os.kill(rgw_pid(), signal.SIGTERM)
        wait_for("radosgw to stop", lambda: not os.path.exists("/proc/%d" % rgw_pid()))
        st, hdrs, text = put(d.port, v_bid, read(v_path))
        check(st == 503 and hdrs.get("retry-after"), "upload with S3 down: %d %r" % (st, text))
        check("S3" in text, "the 503 says why: %r" % text)
        st, body = get(d.port, "/buildid/%s/debuginfo" % v_bid)
        check(st != 200, "a refused upload was stored: %d" % st)
        symbolize_ok(d, u_bid, func_addr(u_path), "stored upload, S3 down")
        symbolize_ok(d, f_bid, func_addr(f_path), "stored fetch, S3 down")
        symbolize_ok(d, g_bid, func_addr(g_path), "new fetch, S3 down")   # falls through
        wait_for("a write-behind retry",
                 lambda: metric(d, 'symbolizer_s3_write_behind_total{event="retry"}') >= 1)
        check(metric(d, "symbolizer_s3_write_behind_queued") >= 1, "nothing queued while down")

        s3_start(S3["state"])   # radosgw only; the data is kept
        restarted = True
        wait_for("the queue to drain", drained([d], written + 2), timeout=90)
        st, _, text = put(d.port, v_bid, read(v_path))
        check(st == 201, "upload with S3 back: %d %r" % (st, text))
        no_secret([d.log_text(), d.metrics()])
    finally:
        d.stop()
        upstream.stop()
        if not restarted:
            s3_start(S3["state"])
    shutil.rmtree(work, ignore_errors=True)


def case_multipart():
    """An upload over SVC_S3_MULTIPART_MIN (64 MiB): written in parts, read
    back whole and verified by a replica with an empty disk."""
    work = tempdir("s3-multipart-")
    src = fx("c_O2_dw4")
    pad = os.path.join(work, "pad")
    with open(pad, "wb") as f:
        f.write(os.urandom(70 << 20))
    big = os.path.join(work, "big")
    subprocess.run(["objcopy", "--add-section", ".pad=" + pad, "--set-section-flags",
                    ".pad=noload,readonly", src, big], check=True)
    os.unlink(pad)
    bid = build_id(big)
    a = replica(work, "a", extra=s3_flags(work, prefix="multipart"))
    b = None
    try:
        st, _, text = put(a.port, bid, read(big))
        check(st == 201, "a 70 MiB upload: %d %r" % (st, text))
        b = replica(work, "b", extra=s3_flags(work, prefix="multipart"))
        st, body = get(b.port, "/buildid/%s/debuginfo" % bid)
        check(st == 200 and body == read(big), "read back from S3: %d, %d bytes" % (st, len(body)))
        check(metric(b, 'symbolizer_s3_bytes_total{direction="get"}') == len(body),
              "bytes read from S3")
    finally:
        a.stop()
        if b:
            b.stop()
    shutil.rmtree(work, ignore_errors=True)


def start_fails(work, name, flags, env=None):
    """(exit status, output) of a daemon that must not start."""
    cmd = [ARGS.symbolizerd, "--listen", "127.0.0.1:0", "--data-dir",
           os.path.join(work, name), "--debug-dir=", "--debuginfod-upstream-servers="] + flags
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(env or {})
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=e)
    return r.returncode, r.stdout + r.stderr


def case_credentials():
    work = tempdir("s3-creds-")
    ep = ["--s3-endpoint", S3["S3_ENDPOINT"], "--s3-bucket", BUCKET]
    bad_secret = "x" * 40
    cf = creds_file(work, secret=bad_secret)
    rc, out = start_fails(work, "a", ep + ["--s3-credentials-file", cf])
    check(rc != 0 and "HTTP 403" in out and "SignatureDoesNotMatch" in out,
          "wrong secret: %d %r" % (rc, out))
    check(bad_secret not in out, "the secret in the error")
    rc, out = start_fails(work, "b", ep, {"AWS_ACCESS_KEY_ID": "NOSUCHKEY0123456789",
                                          "AWS_SECRET_ACCESS_KEY": bad_secret})
    check(rc != 0 and "InvalidAccessKeyId" in out, "unknown key: %d %r" % (rc, out))
    rc, out = start_fails(work, "c", ep)
    check(rc != 0 and "no credentials" in out, "no credentials: %d %r" % (rc, out))
    rc, out = start_fails(work, "d", ["--s3-endpoint", S3["S3_ENDPOINT"], "--s3-bucket", "NO",
                                      "--s3-credentials-file", creds_file(work)])
    check(rc != 0 and "--s3-bucket" in out, "bad bucket name: %d %r" % (rc, out))
    rc, out = start_fails(work, "e", ep + ["--s3-bucket", "no-such-bucket-here",
                                           "--s3-credentials-file", creds_file(work)])
    check(rc != 0 and "404" in out, "missing bucket: %d %r" % (rc, out))
    shutil.rmtree(work, ignore_errors=True)


def rgw_admin(*args):
    conf = os.path.join(S3["state"], "ceph.conf")
    r = subprocess.run(["radosgw-admin", "-c", conf, "-n", "client.admin"] + list(args),
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "radosgw-admin %s: %s" % (" ".join(args), r.stderr[-500:]))


def global_status(d):
    st, body = get(d.port, "/status")
    check(st == 200, "/status: %d" % st)
    return json.loads(body)


def case_revoked():
    """Credentials that stop working after start (the user suspended, as a key
    revoked or rotated): /status, /metrics, one log line per change, the S3
    tier's breaker; uploads 503, reads fall through; back when they work."""
    work = tempdir("s3-revoked-")
    f_bid, f_path = file_copy(work, "c_O2_dw5", 40)
    u_bid, u_path = file_copy(work, "c_O2_dw4", 41)
    upstream = Upstream({f_bid: read(f_path)})
    d = replica(work, "d", [upstream.url], extra=s3_flags(work) + ["--s3-timeout", "5s"])
    suspended = False
    try:
        doc = global_status(d)
        check(doc["s3"]["credentials"]["state"] == "ok", "/status at start: %r" % doc)
        check(metric(d, "symbolizer_s3_credentials_ok") == 1, "credentials_ok at start")
        rgw_admin("user", "suspend", "--uid=s3test")
        suspended = True

        def refused():
            st, hdrs, text = put(d.port, u_bid, read(u_path))
            check(st in (503, 201), "upload while suspended: %d %r" % (st, text))
            return st == 503 and hdrs.get("retry-after")
        wait_for("an upload refused while the key is suspended", refused, timeout=60)
        put(d.port, u_bid, read(u_path))   # a second refusal: still one log line
        doc = global_status(d)
        cred = doc["s3"]["credentials"]
        check(cred["state"] == "failing" and cred["last_refused_status"] == 403 and
              cred["refusals"] >= 2 and "S3" in doc["summary"], "/status: %r" % doc)
        check(metric(d, "symbolizer_s3_credentials_ok") == 0, "credentials_ok while refused")
        check(metric(d, "symbolizer_s3_auth_failures_total") >= 2, "auth failures not counted")
        check(d.log_text().count("the credentials are refused") == 1,
              "log lines of the change: %r" % d.log_text()[-2000:])
        # Reads fall through to the upstream; the tier's breaker says why.
        symbolize_ok(d, f_bid, func_addr(f_path), "with the key suspended")
        check(upstream.served.get(f_bid) == 1, "the upstream was not asked")
        s3_row = [u for u in global_status(d)["upstreams"] if u["url"].startswith("s3://")]
        check(s3_row and any("credentials are refused" in n["reason"]
                             for n in s3_row[0]["breaker"]["recent_failures"]),
              "the S3 tier's breaker: %r" % s3_row)
        st, _ = get(d.port, "/buildid/%s/debuginfo" % u_bid)
        check(st != 200, "a refused upload is served")
        rgw_admin("user", "enable", "--uid=s3test")
        suspended = False

        def stored():
            st, _, text = put(d.port, u_bid, read(u_path))
            check(st in (503, 201), "upload after enable: %d %r" % (st, text))
            return st == 201
        wait_for("an upload once the key works again", stored, timeout=60)
        check(global_status(d)["s3"]["credentials"]["state"] == "ok", "/status after")
        check(metric(d, "symbolizer_s3_credentials_ok") == 1, "credentials_ok after")
        check(d.log_text().count("the credentials work again") == 1, "the log line of the return")
        no_secret([d.log_text(), d.metrics(), json.dumps(global_status(d))])
    finally:
        if suspended:
            rgw_admin("user", "enable", "--uid=s3test")
        d.stop()
        upstream.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_lying():
    work = tempdir("s3-lying-")
    modes = ["good", "truncated", "badsum", "nosum", "error", "slow"]
    files = {m: file_copy(work, "c_O2_dw5", 10 + i) for i, m in enumerate(modes)}
    lying = LyingS3({bid: (m, read(p)) for m, (bid, p) in files.items()})
    upstream = Upstream({bid: read(p) for m, (bid, p) in files.items() if m != "good"})
    cf = creds_file(work, key="AKIDLYING", secret="lying-secret-0123456789")
    d = replica(work, "d", [upstream.url],
                extra=["--s3-endpoint", lying.url, "--s3-bucket", BUCKET,
                       "--s3-credentials-file", cf, "--s3-timeout", "1s",
                       "--upstream-retries", "0", "--upstream-breaker-failures", "100"])
    try:
        for m in modes:
            bid, path = files[m]
            symbolize_ok(d, bid, func_addr(path), "lying S3, %s" % m)
            st, body = get(d.port, "/buildid/%s/debuginfo" % bid)
            check(st == 200 and body == read(path), "%s: served bytes differ (%d)" % (m, st))
            st, body = get(d.port, "/buildid/%s/status" % bid)
            src = re.search(r'"store":\{[^}]*"source":"([^"]*)"', body.decode())
            want = "s3://" + BUCKET if m == "good" else upstream.url
            check(src and src.group(1) == want, "%s: stored from %r, want %s"
                  % (m, src and src.group(1), want))
        bad = metric(d, 'symbolizer_s3_gets_total{result="bad"}')
        failed = metric(d, 'symbolizer_s3_gets_total{result="failed"}')
        check(bad >= 2 and failed >= 3, "counted: bad %d failed %d" % (bad, failed))
        check(upstream.served.get(files["good"][0]) is None, "the good one from the upstream")
        # Uploads to an S3 that fails or is slow: 503 with Retry-After, nothing stored.
        up_bid, up_path = file_copy(work, "c_O2_dw4", 30)
        for mode in ("error", "slow"):
            lying.put_mode = mode
            before = metric(d, 'symbolizer_s3_puts_total{result="failed"}')
            st, hdrs, text = put(d.port, up_bid, read(up_path))
            check(st == 503 and hdrs.get("retry-after") and "S3" in text,
                  "upload, S3 %s: %d %r" % (mode, st, text))
            check(metric(d, 'symbolizer_s3_puts_total{result="failed"}') > before,
                  "upload, S3 %s: the failed PUT is not counted" % mode)
            st, _ = get(d.port, "/buildid/%s/debuginfo" % up_bid)
            check(st != 200, "a refused upload is served (S3 %s)" % mode)
        check("lying-secret" not in d.log_text() + d.metrics(), "the secret in a log")
    finally:
        d.stop()
        lying.stop()
        upstream.stop()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--nginx-conf", required=True)
    ap.add_argument("--s3-scripts", required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    if not shutil.which("radosgw") and not os.path.exists("/usr/bin/radosgw"):
        print("skipped: radosgw is not installed (scripts/install-deps.sh installs it)")
        return 77
    cases = [("lying", case_lying), ("credentials", case_credentials),
             ("cluster", case_cluster), ("multipart", case_multipart), ("outage", case_outage),
             ("revoked", case_revoked)]
    need_rgw = not ARGS.cases or set(ARGS.cases) - {"lying"}
    work = tempdir("s3-rgw-")
    try:
        if need_rgw:
            s3_start(os.path.join(work, "ceph"))
        return run_cases(cases, ARGS.cases)
    finally:
        s3_stop_all()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TestFailure as e:
        print("FAIL:", e)
        sys.exit(1)
