#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gRPC-Web over HTTP/2, grpc-status-details-bin, and --max-connections across
HTTP/1.1 and HTTP/2, on the daemon's port.

    grpc_web_h2_test.py --symbolizerd BIN --fixtures DIR [CASE...]

Cases: gRPC-Web (application/grpc-web, +proto, -text) on an h2c stream from a
raw HTTP/2 client (python3-h2): the answer equals grpcio's gRPC answer, its
trailers are the last length-prefixed frame of the DATA (flag 0x80) and no
HTTP/2 trailers follow, -text's request in padded base64 chunks and its answer
in base64; errors trailers-only with gRPC-Web's content type; a gzipped
request. grpc-status-details-bin: grpcio's trailing metadata of every error
holds a google.rpc.Status (code and message equal to grpc-status and
grpc-message, an ErrorInfo detail naming our error, domain "symbolizer"),
decoded here from the wire; the same over gRPC-Web on HTTP/2 and HTTP/1.1
(base64 without padding). Connect's error JSON: its "details" hold the same
ErrorInfo (type google.rpc.ErrorInfo, the message in unpadded base64, its JSON
form in "debug") for the same failing calls. The connection cap (a daemon of its own,
--max-connections 4): HTTP/2 connections count until they close; with every
one busy (a Watch stream each) a new connection, HTTP/1.1 or HTTP/2, is not
served until one closes; with none busy, an idle HTTP/2 connection is evicted
for a new one, as an idle HTTP/1.1 one is.
"""
import argparse
import base64
import gzip
import http.client
import json
import os
import socket
import shutil
import struct
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb as wire  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from daemon_test import function_addresses  # noqa: E402
from grpc_lib import H2, PATH, debian_modules, frame, stubs  # noqa: E402
from upstream_lib import build_id, check, run_cases, tempdir  # noqa: E402

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def fields(data):
    out = {}
    for num, _, v in wire.parse(data):
        out.setdefault(num, []).append(v)
    return out


def decode_status(raw):
    """(code, message, [(reason, domain)]) of a google.rpc.Status."""
    f = fields(raw)
    infos = []
    for any_bytes in f.get(3, []):
        a = fields(any_bytes)
        check(a[1][0].decode() == ERROR_INFO, "detail type %r" % a[1][0])
        info = fields(a[2][0])
        infos.append((info[1][0].decode(), info[2][0].decode()))
    return f.get(1, [0])[0], f.get(2, [b""])[0].decode(), infos


def b64_nopad(text):
    check("=" not in text, "grpc-status-details-bin padded: %r" % text)
    return base64.b64decode(text + "=" * (-len(text) % 4))


def web_frames(data):
    """(message, trailers dict) of a gRPC-Web body."""
    msg, trailers = None, {}
    while data:
        flag, n = struct.unpack(">BI", data[:5])
        payload, data = data[5:5 + n], data[5 + n:]
        check(len(payload) == n, "truncated gRPC-Web frame")
        if flag & 0x80:
            check(not data, "bytes after the trailer frame")
            for line in payload.decode().split("\r\n"):
                if line:
                    k, v = line.split(":", 1)
                    trailers[k.strip()] = v.strip()
        else:
            check(msg is None, "two messages in a unary answer")
            msg = gzip.decompress(payload) if flag & 1 else payload
    return msg, trailers


def peer_closed(sock):
    """Whether the peer closed sock (read what is there without waiting)."""
    sock.setblocking(False)
    try:
        while True:
            if sock.recv(65536) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def web_h2_call(h, path, body, ctype, extra=()):
    """A gRPC-Web call on an h2c stream: (headers, DATA bytes, HTTP/2 trailers)."""
    sid = h.conn.get_next_available_stream_id()
    hdrs = [(":method", "POST"), (":scheme", "http"), (":authority", "127.0.0.1"),
            (":path", path), ("content-type", ctype), ("x-grpc-web", "1")] + list(extra)
    h.conn.send_headers(sid, hdrs, end_stream=not body)
    h.flush()
    h.send_body(sid, body)
    check(h.pump(lambda s: s.ended(sid)), "stream %d did not end" % sid)
    hs = h.of("ResponseReceived", sid)
    ts = h.of("TrailersReceived", sid)
    data = b"".join(e.data for e in h.of("DataReceived", sid))
    return dict(hs[0].headers) if hs else {}, data, dict(ts[0].headers) if ts else {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    grpc = debian_modules()
    fx = lambda name: os.path.join(args.fixtures, name)  # noqa: E731
    work = tempdir("grpc-web-h2-test-")
    spb, _ = stubs(work)
    debug = os.path.join(work, "debug")
    bid = build_id(fx("c_O2_dw5"))
    os.makedirs(os.path.join(debug, ".build-id", bid[:2]), exist_ok=True)
    shutil.copy(fx("c_O2_dw5"), os.path.join(debug, ".build-id", bid[:2], bid[2:] + ".debug"))
    d = Daemon(args.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               debug_dirs=[debug], extra=["--max-request-bytes", "64K"])
    channel = grpc.insecure_channel("127.0.0.1:%d" % d.port)
    addrs = function_addresses(fx("c_O2_dw5"), 100, 7)
    body = spb.SymbolizeRequest(
        mappings=[spb.Mapping(build_id=bid)],
        locations=[spb.Location(mapping_index=0, address=a) for a in addrs],
        options=spb.Options(max_wait_ms=30000)).SerializeToString()

    def raw_call(method, payload):
        fn = channel.unary_unary(PATH + method, request_serializer=None,
                                 response_deserializer=None)
        return fn(payload, timeout=60)

    want = raw_call("Symbolize", body)

    def case_web_over_h2():
        h = H2(d.port)
        for ctype in ("application/grpc-web", "application/grpc-web+proto"):
            hdrs, data, trailers = web_h2_call(h, PATH + "Symbolize", frame(body), ctype)
            check(hdrs.get(":status") == "200" and
                  hdrs.get("content-type") == "application/grpc-web+proto",
                  "%s: %r" % (ctype, hdrs))
            check(not trailers, "%s: HTTP/2 trailers on gRPC-Web: %r" % (ctype, trailers))
            msg, wt = web_frames(data)
            check(msg == want and wt.get("grpc-status") == "0",
                  "%s: %d bytes, trailer frame %r" % (ctype, len(msg or b""), wt))
        f = frame(body)
        text = base64.b64encode(f[:7]) + base64.b64encode(f[7:])  # padded chunks
        hdrs, data, trailers = web_h2_call(h, PATH + "Symbolize", text,
                                           "application/grpc-web-text")
        check(hdrs.get("content-type") == "application/grpc-web-text+proto" and not trailers,
              "text: %r %r" % (hdrs, trailers))
        msg, wt = web_frames(base64.b64decode(data))
        check(msg == want and wt.get("grpc-status") == "0", "text: %r" % wt)
        hdrs, data, _ = web_h2_call(h, PATH + "Symbolize", frame(gzip.compress(body), True),
                                    "application/grpc-web",
                                    [("grpc-encoding", "gzip"), ("grpc-accept-encoding", "gzip")])
        msg, wt = web_frames(data)
        check(msg == want and wt.get("grpc-status") == "0", "gzip: %r %r" % (hdrs, wt))
        for label, payload, ctype, code in (
                ("malformed", frame(b"\xff\xff"), "application/grpc-web", "3"),
                ("not base64", b"@@@@", "application/grpc-web-text", "3"),
                ("over the cap", frame(b"\0" * 70000), "application/grpc-web", "8")):
            hdrs, data, trailers = web_h2_call(h, PATH + "Symbolize", payload, ctype)
            check(hdrs.get("grpc-status") == code and not data and not trailers and
                  hdrs.get("content-type", "").startswith(ctype),
                  "%s: %r %r %r" % (label, hdrs, data[:100], trailers))
        hdrs, data, _ = web_h2_call(h, "/grpc.health.v1.Health/Check", frame(b""),
                                    "application/grpc-web")
        check(web_frames(data)[0] == b"\x08\x01", "health over gRPC-Web on HTTP/2: %r" % data)
        # gRPC (not -Web) on the same connection still gets HTTP/2 trailers.
        hdrs, data, trailers = h.call(PATH + "Symbolize", frame(body))
        check(trailers.get("grpc-status") == "0" and data[5:] == want, "gRPC beside: %r" % trailers)
        h.close()
        print("  binary, +proto, -text (chunked base64), gzip, errors, health; gRPC beside")

    def case_details_grpcio():
        SC = grpc.StatusCode
        for label, method, payload, code, reason in (
                ("malformed", "Symbolize", b"\xff\xff\xff", SC.INVALID_ARGUMENT, "INVALID"),
                ("unknown method", "Nope", b"", SC.UNIMPLEMENTED, "UNIMPLEMENTED"),
                ("over the cap", "Symbolize", b"\0" * 70000, SC.RESOURCE_EXHAUSTED, "TOO_LARGE")):
            try:
                raw_call(method, payload)
                check(False, "%s: no error" % label)
            except grpc.RpcError as e:
                md = dict(e.trailing_metadata() or ())
                check(e.code() == code and "grpc-status-details-bin" in md,
                      "%s: %s %r" % (label, e.code(), md))
                c, m, infos = decode_status(md["grpc-status-details-bin"])
                check(c == code.value[0] and m == e.details() and
                      infos == [(reason, "symbolizer")],
                      "%s: Status %r %r %r (grpc-message %r)" % (label, c, m, infos, e.details()))
                print("  %s: Status{%d, %r, ErrorInfo %s}" % (label, c, m[:40], reason))

    def case_details_grpc_web():
        h = H2(d.port)
        hdrs, _, _ = web_h2_call(h, PATH + "Nope", frame(b""), "application/grpc-web")
        c, m, infos = decode_status(b64_nopad(hdrs["grpc-status-details-bin"]))
        check(str(c) == hdrs["grpc-status"] == "12" and
              m == urllib.parse.unquote(hdrs.get("grpc-message", "")) and
              infos == [("UNIMPLEMENTED", "symbolizer")], "HTTP/2: %r %r %r" % (c, m, infos))
        h.close()
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        conn.request("POST", PATH + "Symbolize", frame(b"\xff\xff"),
                     {"Content-Type": "application/grpc-web"})
        r = conn.getresponse()
        r.read()
        raw = r.getheader("grpc-status-details-bin")
        check(raw is not None, "HTTP/1.1: no grpc-status-details-bin: %r" % r.getheaders())
        c, m, infos = decode_status(b64_nopad(raw))
        check(c == 3 and m == urllib.parse.unquote(r.getheader("grpc-message")) and
              infos == [("INVALID", "symbolizer")], "HTTP/1.1: %r %r %r" % (c, m, infos))
        conn.close()
        print("  gRPC-Web on HTTP/2 and HTTP/1.1: the same Status, unpadded base64")

    def case_details_connect():
        for label, method, ctype, payload, code, reason in (
                ("malformed", "Symbolize", "application/proto", b"\xff\xff\xff",
                 "invalid_argument", "INVALID"),
                ("unknown method", "Nope", "application/proto", b"", "unimplemented",
                 "UNIMPLEMENTED"),
                ("over the cap", "Symbolize", "application/json", b" " * 70000,
                 "resource_exhausted", "TOO_LARGE")):
            conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
            conn.request("POST", PATH + method, payload, {"Content-Type": ctype})
            r = conn.getresponse()
            err = json.loads(r.read())
            conn.close()
            check(r.status != 200 and r.getheader("Content-Type") == "application/json" and
                  err.get("code") == code, "%s: %d %r" % (label, r.status, err))
            details = err.get("details")
            check(isinstance(details, list) and len(details) == 1 and
                  details[0].get("type") == "google.rpc.ErrorInfo",
                  "%s: details %r" % (label, details))
            info = fields(b64_nopad(details[0]["value"]))
            got = (info[1][0].decode(), info[2][0].decode())
            check(got == (reason, "symbolizer") and
                  details[0].get("debug") == {"reason": reason, "domain": "symbolizer"},
                  "%s: ErrorInfo %r, debug %r" % (label, got, details[0].get("debug")))
            print("  Connect %s: %s, details [ErrorInfo %s]" % (label, code, reason))

    def case_connection_cap():
        cap = 4
        d2 = Daemon(args.symbolizerd, os.path.join(work, "cap"), os.path.join(work, "cap.log"),
                    extra=["--max-connections", str(cap)])
        watch = "/grpc.health.v1.Health/Watch"
        busy, pending = [], []
        try:
            for _ in range(cap - 1):  # HTTP/2 connections, each with a stream open
                h = H2(d2.port)
                sid = h.request(watch, frame(b""))
                check(h.pump(lambda s, sid=sid: s.of("DataReceived", sid)), "Watch: no status")
                busy.append(h)
            m = d2.metrics()  # the cap's last slot
            check("symbolizer_http_connections %d" % cap in m and
                  "symbolizer_h2_connections %d" % (cap - 1) in m,
                  "HTTP/2 connections not counted against the cap:\n" + "\n".join(
                      ln for ln in m.splitlines() if "_connections " in ln))
            h = H2(d2.port)  # evicts the idle HTTP/1.1 one (the /metrics call's)
            sid = h.request(watch, frame(b""))
            check(h.pump(lambda s: s.of("DataReceived", sid)), "4th Watch: no status")
            busy.append(h)
            # Every connection busy: the one accepted then is served and the
            # listener pauses (svc_conns, as with HTTP/1.1 alone); the next
            # ones wait, HTTP/1.1 and HTTP/2 alike.
            s0 = socket.create_connection(("127.0.0.1", d2.port), timeout=30)
            pending.append(s0)
            s0.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            check(s0.recv(100).startswith(b"HTTP/1.1 200"), "the pausing connection")
            s1 = socket.create_connection(("127.0.0.1", d2.port), timeout=30)
            s1.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            pending.append(s1)
            s1.settimeout(2)
            try:
                got = s1.recv(100)
            except socket.timeout:
                got = None
            check(got is None, "a connection past the cap was served: %r" % got)
            h5 = H2(d2.port)
            pending.append(h5.sock)
            sid5 = h5.request(PATH + "Symbolize", frame(b""))
            h5.sock.settimeout(2)
            check(not h5.pump(lambda s: s.ended(sid5), limit=1) or h5.closed,
                  "an HTTP/2 connection past the cap was served")
            # Two busy ones close: both waiting connections are served.
            for h in busy[:2]:
                h.close()
            s1.settimeout(30)
            check(s1.recv(100).startswith(b"HTTP/1.1 200"), "HTTP/1.1 never served")
            h5.sock.settimeout(30)
            h5.closed = False
            check(h5.pump(lambda s: s.ended(sid5)) and
                  (h5.of("TrailersReceived", sid5) or h5.of("ResponseReceived", sid5)),
                  "HTTP/2 never served: %r" % h5.events)
            for h in busy[2:] + [h5]:
                h.close()
            s1.close()
            s0.close()
            busy, pending = [], []
            # Idle HTTP/2 connections (their call done) make room as idle HTTP/1.1 do.
            idle = []
            for _ in range(cap):
                h = H2(d2.port)
                _, _, t = h.call("/grpc.health.v1.Health/Check", frame(b""))
                check(t.get("grpc-status") == "0", "Check: %r" % t)
                idle.append(h)
            m = d2.metrics()
            check('symbolizer_h2_refused_total{reason="evicted"} 1' in m,
                  "no idle HTTP/2 connection evicted at the cap")
            gone = 0
            for h in idle:  # the evicted one's close arrived before /metrics answered
                gone += peer_closed(h.sock)
                h.close()
            check(gone == 1, "%d HTTP/2 connections closed for one new" % gone)
            print("  counted till closed; past the cap a new one waits; an idle one evicted")
        finally:
            for s in pending:
                s.close()
            for h in busy:
                h.close()
            check(d2.stop() == 0, "cap daemon exit status")

    cases = [("web_over_h2", case_web_over_h2), ("details_grpcio", case_details_grpcio),
             ("details_grpc_web", case_details_grpc_web),
             ("details_connect", case_details_connect), ("connection_cap", case_connection_cap)]
    try:
        rc = run_cases(cases, args.cases)
    finally:
        channel.close()
        check(d.stop() == 0, "daemon exit status")
    if rc == 0:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
