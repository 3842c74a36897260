#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""otlp_forward_test: symbolizerd as a step of an OTLP profiles pipeline (issue 27).

The request of otlp_test (C, C++, stripped Go, kernel-like, interpreted and
unknown frames, the files uploaded first) is sent to the daemon's receiver
over OTLP/HTTP (protobuf, JSON with hex IDs, gzip) and OTLP/gRPC (a grpcio
client); --otlp-forward passes it on to a downstream receiver on loopback, a
Python HTTP server and a grpcio server, both decoding with the official .proto
(proto/otlp). Each request arrives downstream exactly once, equal to the
daemon's own SymbolizeOTLP answer for it (whose lines otlp_test checks against
llvm-symbolizer). A 503 with Retry-After and a gRPC UNAVAILABLE are retried;
with the downstream gone, the queue stays under --otlp-queue-bytes and what
does not fit is refused 503 + Retry-After and counted; hostile bodies (bad
JSON, another version's fields, a gzip bomb, a wrong type) get 400/413/415 and
nothing is forwarded.

Usage: otlp_forward_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR --go GO
       --src DIR --workdir DIR [CASE...]
"""
import argparse
import gzip
import http.client
import http.server
import os
import re
import shutil
import socket
import sys
import threading
import time

import otlp_pb
import otlp_test
from upstream_lib import check, run_cases, tempdir

ARGS = None
PB = None
EXPORT = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
WAIT = ["--otlp-max-wait", "120s", "--max-wait", "120s"] + otlp_test.LONG_WAIT


def wait_for(what, cond, timeout=120):
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, "timed out waiting for " + what)
        time.sleep(0.05)


class HttpDownstream:
    """An OTLP/HTTP receiver: decodes each POST with the official .proto; the
    first len(fail) requests get those statuses (with Retry-After: 1)."""

    def __init__(self, fail=()):
        _, service_pb2, _, _ = PB
        self.got, self.attempts, self.fail = [], 0, list(fail)
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.attempts += 1
                outer.paths = self.path
                if outer.fail:
                    self.send_response(outer.fail.pop(0))
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                check(self.headers["Content-Type"] == "application/x-protobuf", "content type")
                r = service_pb2.ExportProfilesServiceRequest()
                r.ParseFromString(body)
                outer.got.append(r)
                out = service_pb2.ExportProfilesServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.srv.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class GrpcDownstream:
    """An OTLP/gRPC receiver (grpcio, a generic handler of the official
    messages); the first `unavailable` calls fail UNAVAILABLE."""

    def __init__(self, unavailable=0):
        import grpc_lib
        grpc = grpc_lib.debian_modules()
        from concurrent import futures
        _, service_pb2, _, _ = PB
        self.got, self.attempts, self.unavailable = [], 0, unavailable

        def export(req, ctx):
            self.attempts += 1
            if self.unavailable:
                self.unavailable -= 1
                ctx.abort(grpc.StatusCode.UNAVAILABLE, "try later")
            self.got.append(req)
            return service_pb2.ExportProfilesServiceResponse()

        h = grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.profiles.v1development.ProfilesService",
            {"Export": grpc.unary_unary_rpc_method_handler(
                export, request_deserializer=service_pb2.ExportProfilesServiceRequest.FromString,
                response_serializer=service_pb2.ExportProfilesServiceResponse.SerializeToString)})
        self.srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        self.srv.add_generic_rpc_handlers((h,))
        self.port = self.srv.add_insecure_port("127.0.0.1:0")
        self.srv.start()
        self.url = "grpc://127.0.0.1:%d" % self.port

    def close(self):
        self.srv.stop(None)


def post_otlp(d, body, ctype="application/x-protobuf", headers=None):
    h = {"Content-Type": ctype}
    h.update(headers or {})
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=300)
    c.request("POST", "/v1development/profiles", body, h)
    r = c.getresponse()
    data = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, hdrs, data


def grpc_export(d, req):
    import grpc_lib
    grpc = grpc_lib.debian_modules()
    _, service_pb2, _, _ = PB
    with grpc.insecure_channel("127.0.0.1:%d" % d.port) as ch:
        call = ch.unary_unary(EXPORT, request_serializer=lambda m: m.SerializeToString(),
                              response_deserializer=service_pb2.ExportProfilesServiceResponse.FromString)
        return call(req, timeout=300)


def send_all_ways(d, b):
    """OTLP/HTTP protobuf, JSON and gzip'd JSON, then OTLP/gRPC: each accepted."""
    _, service_pb2, _, json_format = PB
    st, h, data = post_otlp(d, b.req.SerializeToString())
    check(st == 200 and h.get("content-type") == "application/x-protobuf",
          "OTLP/HTTP protobuf: %d %r %r" % (st, h, data[:300]))
    service_pb2.ExportProfilesServiceResponse().ParseFromString(data)
    js = json_format.MessageToJson(b.req)
    # OTLP/JSON: hex IDs (protobuf's own mapping would say base64).
    hexjs = js.replace('"AAECAwQFBgcICQoLDA0ODw=="', '"000102030405060708090A0B0C0D0E0F"')
    check(hexjs != js, "the profile ID is in the JSON")
    st, h, data = post_otlp(d, hexjs.encode(), "application/json")
    check(st == 200 and h.get("content-type") == "application/json" and data.strip() == b"{}",
          "OTLP/HTTP JSON: %d %r %r" % (st, h, data[:300]))
    st, h, data = post_otlp(d, gzip.compress(hexjs.encode()), "application/json",
                            {"Content-Encoding": "gzip"})
    check(st == 200, "OTLP/HTTP JSON gzip: %d %r" % (st, data[:300]))
    grpc_export(d, b.req)


def check_downstream(d, b, got, n):
    wait_for("%d requests downstream" % n, lambda: len(got) >= n)
    time.sleep(0.5)  # nothing more comes
    check(len(got) == n, "downstream got %d requests, %d sent" % (len(got), n))
    want = otlp_test.symbolize(d, b.req)  # the daemon's SymbolizeOTLP answer
    otlp_test.check_enriched(b, want)
    for i, r in enumerate(got):
        check(r == want, "request %d downstream differs from SymbolizeOTLP's answer" % i)
    check(d.metric("symbolizer_otlp_forwarded_total") == n, "forwarded_total")


def case_forward_http():
    work = tempdir("otlpfw-")
    ds = HttpDownstream(fail=[503])
    d, b = otlp_test.setup(work, ["--otlp-forward", ds.url] + WAIT)
    try:
        send_all_ways(d, b)
        check_downstream(d, b, ds.got, 4)
        check(ds.paths == "/v1development/profiles", "path %r" % ds.paths)
        check(ds.attempts == 5, "attempts %d (one 503 retried)" % ds.attempts)
        check(d.metric("symbolizer_otlp_forward_retries_total") == 1, "retries_total")
        check(d.metric("symbolizer_otlp_received_total") == 4, "received_total")
        check(d.metric("symbolizer_otlp_enriched_total") == 4, "enriched_total")
        check(re.search(r"otlp forward retry.*HTTP 503", d.log_text()), "retry not logged")
    finally:
        d.stop()
        ds.close()
    shutil.rmtree(work, ignore_errors=True)


def case_forward_grpc():
    work = tempdir("otlpfg-")
    ds = GrpcDownstream(unavailable=1)
    d, b = otlp_test.setup(work, ["--otlp-forward", ds.url] + WAIT)
    try:
        send_all_ways(d, b)
        check_downstream(d, b, ds.got, 4)
        check(ds.attempts == 5, "attempts %d (one UNAVAILABLE retried)" % ds.attempts)
        check(d.metric("symbolizer_otlp_forward_retries_total") == 1, "retries_total")
    finally:
        d.stop()
        ds.close()
    shutil.rmtree(work, ignore_errors=True)


def dead_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def case_downstream_gone():
    """Bounded memory: the queue never passes its cap; the rest is refused."""
    work = tempdir("otlpgone-")
    _, service_pb2, _, _ = PB
    cap = 40000
    d, b = otlp_test.setup(work, ["--otlp-forward", "http://127.0.0.1:%d" % dead_port(),
                                  "--otlp-queue-bytes", str(cap)] + WAIT)
    try:
        body = b.req.SerializeToString()
        accepted = refused = 0
        for _ in range(30):
            st, h, data = post_otlp(d, body)
            if st == 200:
                accepted += 1
            else:
                check(st == 503 and h.get("retry-after") == "1", "full: %d %r" % (st, h))
                st2 = service_pb2.ExportProfilesServiceResponse()  # noqa: F841
                check(b"queue is full" in data, "full: %r" % data[:200])
                refused += 1
            q = d.metric("symbolizer_otlp_queue_bytes")
            check(q is not None and q <= cap, "queue bytes %r over %d" % (q, cap))
        check(accepted >= 1 and refused >= 1, "accepted %d refused %d" % (accepted, refused))
        check(d.metric('symbolizer_otlp_dropped_total{reason="queue_full"}') == refused,
              "queue_full drops")
        check(d.metric("symbolizer_otlp_queue_max_bytes") == cap, "queue max")
        wait_for("a retry", lambda: d.metric("symbolizer_otlp_forward_retries_total") >= 1)
    finally:
        d.stop()
    shutil.rmtree(work, ignore_errors=True)


def case_hostile_receiver():
    work = tempdir("otlpbad-")
    ds = HttpDownstream()
    d, b = otlp_test.setup(work, ["--otlp-forward", ds.url])
    try:
        def expect(status, body, ctype="application/x-protobuf", headers=None, what=""):
            st, h, data = post_otlp(d, body, ctype, headers)
            check(st == status, "%s: %d (want %d) %r" % (what, st, status, data[:300]))
            check(h.get("content-type") == ctype or status == 415, "%s: type %r" % (what, h))
            if ctype == "application/json" and status != 415:
                check(b'"code":' in data and b'"message":' in data, "%s: %r" % (what, data))
            return data
        msg = expect(400, b'{"resourceProfiles": [', "application/json", what="bad JSON")
        check(b"JSON" in msg or b"json" in msg, "bad JSON message %r" % msg)
        expect(400, b'{"resourceProfiles": [{"scopeProfiles": [{"profiles": [{"profileId": "zz"}]}]}]}',
               "application/json", what="bad hex ID")
        prof = b"\xa8\x06\x01"  # a Profile's field 101: another version's layout
        sp = b"\x12" + otlp_test.varint(len(prof)) + prof
        rp = b"\x12" + otlp_test.varint(len(sp)) + sp
        raw = b.req.SerializeToString() + b"\x0a" + otlp_test.varint(len(rp)) + rp
        msg = expect(400, raw, what="another version")
        check(b"v1.11.0" in msg, "version message %r" % msg)
        bomb = gzip.compress(b"\0" * (1 << 28), 9)
        st, h, data = post_otlp(d, bomb, headers={"Content-Encoding": "gzip"})
        check(st in (400, 413), "gzip bomb: %d %r" % (st, data[:200]))
        expect(415, b"x", "text/plain", what="text/plain")
        expect(415, b"x", "application/x-protobuf", {"Content-Encoding": "br"}, what="br")
        st, h, _ = d.request("/v1development/profiles")
        check(st == 405, "GET: %d" % st)
        time.sleep(0.5)
        check(ds.attempts == 0, "something was forwarded: %d" % ds.attempts)
        check(d.metric("symbolizer_otlp_forwarded_total") == 0, "forwarded_total")
        # And a good one still goes through.
        st, _, _ = post_otlp(d, b.req.SerializeToString())
        check(st == 200, "good request after the bad: %d" % st)
        wait_for("the good request downstream", lambda: len(ds.got) == 1)
    finally:
        d.stop()
        ds.close()
    shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS, PB
    ap = argparse.ArgumentParser()
    for a in ("--symbolizerd", "--symbolctl", "--fixtures", "--go", "--src", "--workdir"):
        ap.add_argument(a, required=True)
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    PB = otlp_pb.load(ARGS.workdir)
    otlp_test.ARGS, otlp_test.PB = ARGS, PB
    sys.exit(run_cases([("forward_http", case_forward_http),
                        ("forward_grpc", case_forward_grpc),
                        ("downstream_gone", case_downstream_gone),
                        ("hostile_receiver", case_hostile_receiver)], ARGS.cases))


if __name__ == "__main__":
    main()
