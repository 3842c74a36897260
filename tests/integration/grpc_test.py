#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gRPC on the daemon's port (h2c, prior knowledge) from Debian's grpcio and a
raw HTTP/2 client (python3-h2), beside Connect over HTTP/1.1.

    grpc_test.py --symbolizerd BIN --symbolctl BIN --fixtures DIR [CASE...]

Cases: every method of the service descriptor answers over gRPC what it
answers over Connect (real requests, and an empty one, whatever it gets), so a
method added to the table later is covered with no change here; the
generated stub's Symbolize has lines; gzip both ways (grpcio's request
compression; the response's compressed flag and grpc-encoding seen raw);
status codes and grpc-message (percent-encoded, decoded by grpcio);
grpc-timeout is the call's deadline (a hanging upstream answers PENDING
within it); a bad grpc-timeout, a compressed message without grpc-encoding,
an unknown grpc-encoding, a non-gRPC content type and GET are refused; the
message cap; SETTINGS (concurrent streams, header list) and many calls in
parallel on one connection; a slow reader (8 answers of ~1 MB past the
socket's buffers, written as it drains, each whole); grpc.health.v1 Check; HTTP/1.1 keeps working on
the same port; SIGTERM sends GOAWAY and the call in flight is answered.
gRPC-Web over HTTP/1.1: binary and -text (base64 in chunks), the trailer
frame, gzip, errors trailers-only, health; CORS off by default, and with
--cors-allowed-origins a preflight and the allowed origins echoed (Connect
calls too). symbolctl --protocol connect|grpc|grpc-web answers alike.
"""
import argparse
import gzip
import os
import shutil
import signal
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
import profile_pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from daemon_test import function_addresses  # noqa: E402
from grpc_lib import H2, PATH, debian_modules, frame, stubs  # noqa: E402
from upstream_lib import FaultServer, build_id, check, run_cases, tempdir  # noqa: E402

MAX_STREAMS = 8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    grpc = debian_modules()
    fx = lambda name: os.path.join(args.fixtures, name)  # noqa: E731
    work = tempdir("grpc-test-")
    spb, spb_grpc = stubs(work)
    debug = os.path.join(work, "debug")
    for name in ("c_O2_dw5", "layout_c_dw5"):
        bid = build_id(fx(name))
        os.makedirs(os.path.join(debug, ".build-id", bid[:2]), exist_ok=True)
        shutil.copy(fx(name), os.path.join(debug, ".build-id", bid[:2], bid[2:] + ".debug"))
    d = Daemon(args.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               debug_dirs=[debug], extra=["--max-request-bytes", "64K",
                                          "--max-concurrent-streams", str(MAX_STREAMS),
                                          "--gzip-min-bytes", "1024"])
    target = "127.0.0.1:%d" % d.port
    channel = grpc.insecure_channel(target)
    bid = build_id(fx("c_O2_dw5"))
    addrs = function_addresses(fx("c_O2_dw5"), 300, 7)

    def raw_call(method, body, timeout=60, compression=None, ch=None):
        """grpcio's generic unary call with bytes in and out."""
        fn = (ch or channel).unary_unary(PATH + method if not method.startswith("/") else method,
                                         request_serializer=None, response_deserializer=None)
        return fn(body, timeout=timeout, compression=compression)

    def grpc_error(method, body, **kw):
        try:
            raw_call(method, body, **kw)
        except grpc.RpcError as e:
            return e.code(), e.details()
        check(False, "%s: expected an error" % method)

    def symbolize_req(n=len(addrs)):
        return spb.SymbolizeRequest(
            mappings=[spb.Mapping(build_id=bid)],
            locations=[spb.Location(mapping_index=0, address=a) for a in addrs[:n]],
            options=spb.Options(max_wait_ms=30000))

    def profile_req():
        prof = {"sample_type": [(1, 2)], "string_table": [b"", b"samples", b"count"],
                "mapping": [{"id": 1, "memory_start": 0, "memory_limit": 1 << 40,
                             "build_id": 3}],
                "location": [{"id": i + 1, "mapping_id": 1, "address": a}
                             for i, a in enumerate(addrs[:20])],
                "sample": [{"location_id": [i + 1], "value": [1]} for i in range(20)]}
        prof["string_table"].append(bid.encode())
        return spb.SymbolizeProfileRequest(profile=profile_pb.encode(prof),
                                           options=spb.Options(max_wait_ms=30000))

    def otlp_req():
        """SymbolizeOTLP's request (the OTLP classes protoc wrote beside the stubs):
        20 addresses of the fixture's mapping, named by its GNU build ID."""
        from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2
        req = profiles_service_pb2.ExportProfilesServiceRequest()
        dic = req.dictionary
        dic.string_table.extend(["", "process.executable.build_id.gnu"])
        dic.mapping_table.add()
        dic.location_table.add()
        dic.attribute_table.add()
        a = dic.attribute_table.add()
        a.key_strindex = 1
        a.value.string_value = bid
        m = dic.mapping_table.add()
        m.memory_start, m.memory_limit = 0x400000, 0x800000
        m.attribute_indices.append(1)
        for x in addrs[:20]:
            dic.location_table.add(mapping_index=1, address=x)
        return req

    real = {
        "Symbolize": symbolize_req(),
        "GetTypeLayouts": spb.GetTypeLayoutsRequest(build_id=build_id(fx("layout_c_dw5")),
                                                    types=["struct holder", "nope"],
                                                    options=spb.Options(max_wait_ms=30000)),
        "ShouldUpload": spb.ShouldUploadRequest(candidates=[spb.UploadCandidate(build_id=bid)]),
        "SymbolizeProfile": profile_req(),
        "SymbolizeOTLP": otlp_req(),
    }

    def message_class(desc):
        """The class of a message of the stubs' pool (ours or an OTLP one)."""
        try:
            from google.protobuf.message_factory import GetMessageClass
            return GetMessageClass(desc)
        except ImportError:  # python3-protobuf 3.x (Debian 12)
            from google.protobuf import symbol_database
            return symbol_database.Default().GetSymbol(desc.full_name)

    def case_every_method():
        service = spb.DESCRIPTOR.services_by_name["SymbolizerService"]
        check(len(service.methods) >= 4, "methods: %r" % [m.name for m in service.methods])
        for m in service.methods:
            out_cls = message_class(m.output_type)
            for label, req in (("real", real.get(m.name)), ("empty", b"")):
                if req is None:
                    continue
                body = req if isinstance(req, bytes) else req.SerializeToString()
                status, hdrs, data = d.post(body, path=PATH + m.name)
                if status == 200:
                    got = out_cls.FromString(raw_call(m.name, body))
                    want = out_cls.FromString(data)
                    check(got == want, "%s %s: gRPC and Connect answers differ" % (m.name, label))
                    print("  %s (%s): gRPC == Connect, %d bytes" % (m.name, label, len(data)))
                else:
                    import json
                    ccode = json.loads(data)["code"]
                    code, msg = grpc_error(m.name, body)
                    check(code.name.lower() == ccode.replace("canceled", "cancelled"),
                          "%s %s: gRPC %s, Connect %s" % (m.name, label, code, ccode))
                    print("  %s (%s): %s both ways" % (m.name, label, ccode))
        stub = spb_grpc.SymbolizerServiceStub(channel)
        o = stub.SymbolizeOTLP(otlp_req(), timeout=60)
        check(sum(1 for loc in o.dictionary.location_table if loc.lines) >= 18,
              "stub SymbolizeOTLP: lines for %d of 20" %
              sum(1 for loc in o.dictionary.location_table if loc.lines))
        r = stub.Symbolize(symbolize_req(), timeout=60)
        check(r.mappings[0].status == spb.MappingResult.STATUS_OK, "stub: %r" % r.mappings)
        check(sum(1 for loc in r.locations if loc.lines) >= len(addrs) * 0.9,
              "stub: lines for %d of %d" % (sum(1 for loc in r.locations if loc.lines),
                                            len(addrs)))
        check(d.metric('symbolizer_rpc_requests_total{method="Symbolize",code="ok"}') >= 2,
              "gRPC calls not in the RPC metrics")

    def case_gzip_both_ways():
        want = raw_call("Symbolize", symbolize_req().SerializeToString())
        got = raw_call("Symbolize", symbolize_req().SerializeToString(),
                       compression=grpc.Compression.Gzip)
        check(got == want, "gzipped request: a different answer")
        gz_channel = grpc.insecure_channel(target, compression=grpc.Compression.Gzip)
        check(raw_call("Symbolize", symbolize_req().SerializeToString(), ch=gz_channel) == want,
              "gzip channel: a different answer")
        gz_channel.close()
        body = symbolize_req().SerializeToString()
        h = H2(d.port)
        hdrs, data, trailers = h.call(PATH + "Symbolize", frame(gzip.compress(body), True),
                                      [("grpc-encoding", "gzip"),
                                       ("grpc-accept-encoding", "gzip")])
        check(trailers.get("grpc-status") == "0", "raw gzip: %r %r" % (hdrs, trailers))
        check(hdrs.get("grpc-encoding") == "gzip" and data[0] == 1,
              "response not gzipped: %r flag %r" % (hdrs, data[:1]))
        n = struct.unpack(">I", data[1:5])[0]
        check(len(data) == 5 + n and gzip.decompress(data[5:]) == want,
              "gzipped response: %d bytes, prefix says %d" % (len(data), n))
        hdrs, data, trailers = h.call(PATH + "Symbolize", frame(body),
                                      [("grpc-accept-encoding", "identity")])
        check(data[0] == 0 and data[5:] == want and "grpc-encoding" not in hdrs,
              "identity: %r" % hdrs)
        check("gzip" in hdrs.get("grpc-accept-encoding", ""), "grpc-accept-encoding: %r" % hdrs)
        h.close()
        print("  gzip: request (grpcio), response (flag 1, grpc-encoding), identity")

    def case_status_codes():
        SC = grpc.StatusCode
        code, msg = grpc_error("Symbolize", b"\xff\xff\xff")
        check(code == SC.INVALID_ARGUMENT, "malformed message: %s %s" % (code, msg))
        code, msg = grpc_error("Nope%41", b"")
        check(code == SC.UNIMPLEMENTED and "Nope%41" in msg,
              "unknown method (grpc-message percent-encoded): %s %r" % (code, msg))
        svc = "caf\u00e9 100%\n".encode()
        code, msg = grpc_error("/grpc.health.v1.Health/Check", b"\x0a" + bytes([len(svc)]) + svc)
        check(code == SC.NOT_FOUND and "caf\u00e9 100%\n" in msg,
              "health of an unknown service (UTF-8, %%, newline in grpc-message): %s %r"
              % (code, msg))
        code, msg = grpc_error("Symbolize", symbolize_req(0).SerializeToString() +
                               b"\x0a\x00" * 40000)
        check(code == SC.RESOURCE_EXHAUSTED and "limit" in msg, "over the cap: %s %s"
              % (code, msg))
        h = H2(d.port)
        body = symbolize_req(3).SerializeToString()
        cases = [
            ("bad grpc-timeout", frame(body), [("grpc-timeout", "soon")], "3"),
            ("9-digit grpc-timeout", frame(body), [("grpc-timeout", "123456789S")], "3"),
            ("compressed without grpc-encoding", frame(gzip.compress(body), True), [], "13"),
            ("unknown grpc-encoding", frame(body), [("grpc-encoding", "br")], "12"),
            ("truncated message", frame(body)[:-2], [], "3"),
            ("two messages", frame(body) + frame(body), [], "3"),
            ("no message", b"", [], "3"),
            ("not gzip", frame(b"nope", True), [("grpc-encoding", "gzip")], "3"),
        ]
        for label, payload, extra, want in cases:
            hdrs, data, trailers = h.call(PATH + "Symbolize", payload, extra)
            status = trailers.get("grpc-status", hdrs.get("grpc-status"))
            check(hdrs.get(":status") == "200" and status == want and not data,
                  "%s: %r %r" % (label, hdrs, trailers))
            print("  %s: grpc-status %s (%s)" % (label, want, hdrs.get("grpc-message")))
        hdrs, _, _ = h.call(PATH + "Symbolize", frame(body), [("content-type", "text/plain")])
        check(hdrs.get(":status") == "415", "text/plain: %r" % hdrs)
        sid = h.conn.get_next_available_stream_id()
        h.conn.send_headers(sid, [(":method", "GET"), (":scheme", "http"),
                                  (":authority", "x"), (":path", PATH + "Symbolize"),
                                  ("content-type", "application/grpc")], end_stream=True)
        h.flush()
        h.pump(lambda s: s.ended(sid))
        check(dict(h.of("ResponseReceived", sid)[0].headers).get(":status") == "405", "GET")
        h.close()

    def case_health():
        out = raw_call("/grpc.health.v1.Health/Check", b"")
        check(out == b"\x08\x01", "Check(''): %r" % out)
        out = raw_call("/grpc.health.v1.Health/Check",
                       b"\x0a" + bytes([31]) + b"symbolizer.v1.SymbolizerService")
        check(out == b"\x08\x01", "Check(SymbolizerService): %r" % out)

    def case_reflection():
        """ServerReflectionInfo (v1 and v1alpha) on one stream: several requests, one
        answer each, in order; the trailers once the request ends."""
        import pb as wire
        from google.protobuf import descriptor_pb2

        def fields(data):
            out = {}
            for num, _, v in wire.parse(data):
                out.setdefault(num, []).append(v)
            return out
        for version in ("v1", "v1alpha"):
            path = "/grpc.reflection.%s.ServerReflection/ServerReflectionInfo" % version
            reqs = [wire.field_bytes(7, b""),                                   # list_services
                    wire.field_bytes(4, b"symbolizer.v1.SymbolizerService"),    # a symbol
                    wire.field_bytes(4, b"symbolizer.v1.SymbolizeRequest"),
                    wire.field_bytes(3, b"symbolizer/v1/symbolizer.proto"),     # a file
                    wire.field_bytes(4, b"nope.Nothing"),                        # unknown
                    wire.field_bytes(1, b"h") + wire.field_bytes(6, b"x.Y"),    # extensions
                    b"\xff"]                                                    # malformed
            h = H2(d.port)
            sid = h.request(path, frame(reqs[0]), end=False)
            for r in reqs[1:]:
                h.conn.send_data(sid, frame(r))
                h.flush()
            h.conn.end_stream(sid)
            h.flush()
            check(h.pump(lambda s: s.ended(sid)), "reflection stream did not end")
            data = b"".join(e.data for e in h.of("DataReceived", sid))
            trailers = dict(h.of("TrailersReceived", sid)[0].headers)
            check(trailers.get("grpc-status") == "0", "reflection trailers %r" % trailers)
            answers = []
            while data:
                n = struct.unpack(">I", data[1:5])[0]
                answers.append(fields(data[5:5 + n]))
                data = data[5 + n:]
            check(len(answers) == len(reqs), "%d answers to %d requests" % (len(answers),
                                                                          len(reqs)))
            for a, r in zip(answers, reqs):
                check(a.get(2, [None])[0] == r, "original_request not echoed")
            listed = [fields(sv)[1][0] for sv in fields(answers[0][6][0]).get(1, [])]
            check(b"symbolizer.v1.SymbolizerService" in listed, "list_services: %r" % listed)
            check(not any(x.startswith(b"opentelemetry.") for x in listed),
                  "list_services names the OTLP service we do not serve: %r" % listed)
            for k in (1, 2, 3):
                files = fields(answers[k][4][0])[1]
                fd = descriptor_pb2.FileDescriptorProto.FromString(files[0])
                check(fd.name == "symbolizer/v1/symbolizer.proto" and
                      [m.name for m in fd.service[0].method] ==
                      [m.name for m in spb.DESCRIPTOR.services_by_name["SymbolizerService"].methods],
                      "descriptor of answer %d: %s" % (k, fd.name))
                # SymbolizeOTLP's request: its files come along, transitively.
                names = {descriptor_pb2.FileDescriptorProto.FromString(f).name for f in files}
                check({"opentelemetry/proto/" + n for n in (
                    "collector/profiles/v1development/profiles_service.proto",
                    "profiles/v1development/profiles.proto", "common/v1/common.proto",
                    "resource/v1/resource.proto")} <= names,
                      "answer %d: the OTLP imports missing: %r" % (k, names))
            err = fields(answers[4][7][0])
            check(err[1][0] == 5, "unknown symbol: %r" % err)
            check(answers[5][1][0] == b"h" and fields(answers[5][7][0])[1][0] == 12,
                  "extensions: %r" % answers[5])
            check(fields(answers[6][7][0])[1][0] == 3, "malformed: %r" % answers[6])
            h.close()
        print("  v1 and v1alpha: list_services, symbols, a file, errors; 7 answers in order")

    def case_streams_and_settings():
        h = H2(d.port)
        h.pump(lambda s: s.of("RemoteSettingsChanged"))
        s = h.of("RemoteSettingsChanged")[0].changed_settings
        import h2.settings
        check(s[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS].new_value == MAX_STREAMS,
              "SETTINGS_MAX_CONCURRENT_STREAMS: %r" % s)
        check(s[h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE].new_value == 16384,
              "SETTINGS_MAX_HEADER_LIST_SIZE: %r" % s)
        h.close()
        want = raw_call("Symbolize", symbolize_req(50).SerializeToString())
        fn = channel.unary_unary(PATH + "Symbolize")
        futures = [fn.future(symbolize_req(50).SerializeToString(), timeout=120)
                   for _ in range(64)]
        check(all(f.result() == want for f in futures), "parallel calls differ")
        check(d.metric("symbolizer_h2_streams_total") >= 64, "streams not counted")
        print("  64 calls on one connection, %d at once at most" % MAX_STREAMS)

    def case_slow_reader():
        # Answers larger than the socket takes, to a client that reads none
        # for a while: the daemon keeps the rest and writes it as the socket
        # drains (partial writes, EV_WRITE), every answer whole and in order.
        # A daemon of the default request cap: 8 answers of ~1 MB, past what
        # loopback's socket buffers hold (tcp_wmem's 4 MB at most).
        import h2.settings
        d3 = Daemon(args.symbolizerd, os.path.join(work, "data3"), os.path.join(work, "d3.log"),
                    debug_dirs=[debug])
        ch3 = grpc.insecure_channel("127.0.0.1:%d" % d3.port)
        many = (addrs * 200)[:60000]
        req = spb.SymbolizeRequest(mappings=[spb.Mapping(build_id=bid)],
                                   locations=[spb.Location(mapping_index=0, address=a)
                                              for a in many],
                                   options=spb.Options(max_wait_ms=30000)).SerializeToString()
        want = raw_call("Symbolize", req, ch=ch3)
        ch3.close()
        win = 2 ** 31 - 1
        h = H2(d3.port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: win},
               rcvbuf=4096)
        h.conn.increment_flow_control_window(win - 65535)
        h.flush()
        sids = [h.request(PATH + "Symbolize", frame(req)) for _ in range(MAX_STREAMS)]
        time.sleep(1)  # the answers pile up in the daemon while nothing is read
        check(h.pump(lambda s: all(s.ended(i) for i in sids), limit=100000),
              "slow reader: not every stream ended")
        for i in sids:
            data = b"".join(e.data for e in h.of("DataReceived", i))
            ts = h.of("TrailersReceived", i)
            check(ts and dict(ts[0].headers).get("grpc-status") == "0",
                  "slow reader: stream %d trailers %r" % (i, ts))
            check(data == frame(want), "slow reader: stream %d: %d bytes, want %d" %
                  (i, len(data), len(want) + 5))
        h.close()
        check(d3.stop() == 0, "slow reader: daemon exit status")
        print("  slow reader: %d answers of %d bytes, whole" % (len(sids), len(want)))

    def case_http1_beside():
        r = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs[:5]],
                        max_wait_ms=30000)
        check(pb.STATUS[r["mappings"][0]["status"]] == "OK", "Connect: %r" % r["mappings"])
        status, _, body = d.request("/healthz")
        check(status == 200, "/healthz: %d" % status)
        check(d.metric("symbolizer_h2_connections_total") >= 1, "h2 connections not counted")

    def case_deadline_and_goaway():
        hang = "cd" * 20
        fs = FaultServer(work, "hang", {hang + "/debuginfo": "hang"})
        d2 = Daemon(args.symbolizerd, os.path.join(work, "data2"), os.path.join(work, "d2.log"),
                    upstreams=[fs.url])
        ch2 = grpc.insecure_channel("127.0.0.1:%d" % d2.port)
        req = spb.SymbolizeRequest(mappings=[spb.Mapping(build_id=hang)],
                                   locations=[spb.Location(address=1)],
                                   options=spb.Options(max_wait_ms=60000)).SerializeToString()
        try:
            t0 = time.monotonic()
            out = spb.SymbolizeResponse.FromString(raw_call("Symbolize", req, timeout=1.0,
                                                            ch=ch2))
            took = time.monotonic() - t0
            check(out.mappings[0].status == spb.MappingResult.STATUS_PENDING, "deadline: %r" % out.mappings)
            print("  grpc-timeout 1 s: PENDING after %.2f s" % took)
            # SIGTERM with a call in flight, a health Watch and an idle connection:
            # GOAWAY, the call answered, the Watch told NOT_SERVING.
            h = H2(d2.port)
            h.pump(lambda s: s.of("RemoteSettingsChanged"))
            watch = h.request("/grpc.health.v1.Health/Watch", frame(b""))
            check(h.pump(lambda s: s.of("DataReceived", watch)), "Watch: no first status")
            check(h.of("DataReceived", watch)[0].data == frame(b"\x08\x01"), "Watch: not SERVING")
            fut = ch2.unary_unary(PATH + "Symbolize").future(req, timeout=60)
            deadline = time.monotonic() + 30
            while d2.metric("symbolizer_calls_in_flight") != 1:
                check(time.monotonic() < deadline, "the call never got in flight")
                time.sleep(0.05)
            d2.proc.send_signal(signal.SIGTERM)
            out = spb.SymbolizeResponse.FromString(fut.result())
            check(out.mappings[0].status == spb.MappingResult.STATUS_PENDING, "in flight: %r" % out.mappings)
            check(h.pump(lambda s: s.of("ConnectionTerminated")), "no GOAWAY")
            ev = h.of("ConnectionTerminated")[0]
            check(ev.error_code == 0, "GOAWAY error %r" % ev.error_code)
            check(h.pump(lambda s: s.ended(watch)), "Watch did not end")
            got = b"".join(e.data for e in h.of("DataReceived", watch))
            check(got == frame(b"\x08\x01") + frame(b"\x08\x02"), "Watch: %r" % got)
            check(dict(h.of("TrailersReceived", watch)[0].headers).get("grpc-status") == "14",
                  "Watch trailers")
            h.close()
            d2.proc.wait(30)
            check(d2.stop() == 0, "exit status after SIGTERM")
            print("  SIGTERM: GOAWAY (NO_ERROR), the call in flight answered, Watch NOT_SERVING, exit 0")
        finally:
            ch2.close()
            if d2.proc.poll() is None:
                d2.stop()
            fs.stop()

    def web_post(port, path, body, headers):
        """A gRPC-Web call over HTTP/1.1: (status, lowercase headers, body)."""
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("POST", path, body, headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def web_frames(data):
        """(message, trailers dict) of a gRPC-Web response body."""
        msg, trailers = None, {}
        while data:
            flag, n = struct.unpack(">BI", data[:5])
            payload, data = data[5:5 + n], data[5 + n:]
            check(len(payload) == n, "truncated gRPC-Web frame")
            if flag & 0x80:
                for line in payload.decode().split("\r\n"):
                    if line:
                        k, v = line.split(":", 1)
                        trailers[k.strip()] = v.strip()
            else:
                check(msg is None, "two messages in a unary answer")
                msg = gzip.decompress(payload) if flag & 1 else payload
        return msg, trailers

    def case_grpc_web():
        import base64
        body = symbolize_req().SerializeToString()
        want = raw_call("Symbolize", body)
        for ctype in ("application/grpc-web", "application/grpc-web+proto"):
            status, hdrs, data = web_post(d.port, PATH + "Symbolize", frame(body),
                                          {"Content-Type": ctype, "X-Grpc-Web": "1"})
            check(status == 200 and hdrs["content-type"] == "application/grpc-web+proto",
                  "%s: %d %r" % (ctype, status, hdrs))
            msg, trailers = web_frames(data)
            check(msg == want and trailers.get("grpc-status") == "0",
                  "%s: answer %r" % (ctype, trailers))
        # -text: base64 both ways; the request sent as two padded chunks.
        f = frame(body)
        text = base64.b64encode(f[:7]) + base64.b64encode(f[7:])
        status, hdrs, data = web_post(d.port, PATH + "Symbolize", text,
                                      {"Content-Type": "application/grpc-web-text",
                                       "grpc-accept-encoding": "gzip"})
        check(status == 200 and hdrs["content-type"] == "application/grpc-web-text+proto",
              "text: %d %r" % (status, hdrs))
        msg, trailers = web_frames(base64.b64decode(data))
        check(msg == want and trailers.get("grpc-status") == "0",
              "text: %r %r %d/%d" % (trailers, hdrs, len(msg or b""), len(want)))
        # gzipped request, errors trailers-only, bad base64, health
        status, hdrs, data = web_post(d.port, PATH + "Symbolize", frame(gzip.compress(body), True),
                                      {"Content-Type": "application/grpc-web",
                                       "grpc-encoding": "gzip"})
        check(web_frames(data)[0] == want, "gzipped gRPC-Web request")
        for label, path, payload, ctype, code in (
                ("malformed", PATH + "Symbolize", frame(b"\xff\xff"), "application/grpc-web", "3"),
                ("unknown method", PATH + "Nope", frame(b""), "application/grpc-web", "12"),
                ("not base64", PATH + "Symbolize", b"@@@@", "application/grpc-web-text", "3"),
                ("truncated", PATH + "Symbolize", frame(body)[:9], "application/grpc-web", "3"),
                ("over the cap", PATH + "Symbolize", frame(b"\0" * 70000),
                 "application/grpc-web", "8")):
            status, hdrs, data = web_post(d.port, path, payload, {"Content-Type": ctype})
            check(status == 200 and hdrs.get("grpc-status") == code and not data,
                  "%s: %d %r %r" % (label, status, hdrs, data[:100]))
        status, hdrs, data = web_post(d.port, "/grpc.health.v1.Health/Check", frame(b""),
                                      {"Content-Type": "application/grpc-web"})
        check(web_frames(data)[0] == b"\x08\x01", "health over gRPC-Web: %r" % data)
        # CORS is off by default: no header, a preflight is refused.
        status, hdrs, _ = web_post(d.port, PATH + "Symbolize", frame(body),
                                   {"Content-Type": "application/grpc-web",
                                    "Origin": "http://dash.example"})
        check("access-control-allow-origin" not in hdrs, "CORS on by default: %r" % hdrs)
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        c.request("OPTIONS", PATH + "Symbolize", headers={
            "Origin": "http://dash.example", "Access-Control-Request-Method": "POST"})
        r = c.getresponse()
        r.read()
        check(r.status >= 400 and not r.getheader("Access-Control-Allow-Origin"),
              "preflight with CORS off: %d" % r.status)
        c.close()
        print("  gRPC-Web binary, -text (chunked base64), gzip, errors trailers-only, health")

    def case_cors():
        d3 = Daemon(args.symbolizerd, os.path.join(work, "data3"), os.path.join(work, "d3.log"),
                    extra=["--cors-allowed-origins", "http://dash.example, https://b.example"])
        try:
            import http.client
            c = http.client.HTTPConnection("127.0.0.1", d3.port, timeout=60)
            c.request("OPTIONS", PATH + "Symbolize", headers={
                "Origin": "https://b.example", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-grpc-web,grpc-timeout"})
            r = c.getresponse()
            r.read()
            h = {k.lower(): v for k, v in r.getheaders()}
            check(r.status == 204 and h.get("access-control-allow-origin") == "https://b.example",
                  "preflight: %d %r" % (r.status, h))
            for need in ("x-grpc-web", "grpc-timeout", "content-type", "connect-protocol-version"):
                check(need in h.get("access-control-allow-headers", ""), "allow-headers: %r" % h)
            check("POST" in h.get("access-control-allow-methods", ""), "allow-methods: %r" % h)
            c.close()
            req = spb.SymbolizeRequest(mappings=[spb.Mapping(build_id="ab" * 20)]).SerializeToString()
            status, hdrs, data = web_post(d3.port, PATH + "Symbolize", frame(req),
                                          {"Content-Type": "application/grpc-web",
                                           "Origin": "http://dash.example"})
            check(hdrs.get("access-control-allow-origin") == "http://dash.example" and
                  "grpc-status" in hdrs.get("access-control-expose-headers", ""),
                  "gRPC-Web with CORS: %r" % hdrs)
            # Connect on the same route gets the same headers; another origin none.
            status, hdrs, _ = d3.post(req, {"Origin": "http://dash.example"})
            check(status == 200 and hdrs.get("access-control-allow-origin") == "http://dash.example",
                  "Connect with CORS: %d %r" % (status, hdrs))
            status, hdrs, _ = d3.post(req, {"Origin": "http://evil.example"})
            check("access-control-allow-origin" not in hdrs, "another origin: %r" % hdrs)
            print("  preflight 204, allowed origins echoed, others not")
        finally:
            check(d3.stop() == 0, "CORS daemon exit status")

    def case_symbolctl_protocols():
        """symbolctl --protocol connect|grpc|grpc-web: the same frames."""
        import subprocess
        outs = {}
        for proto in ("connect", "grpc", "grpc-web"):
            r = subprocess.run([args.symbolctl, "symbolize", "--server", d.url, "--protocol", proto,
                                "--build-id", bid] + ["0x%x" % a for a in addrs[:20]],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "symbolctl --protocol %s: %d %s" % (proto, r.returncode,
                                                                        r.stderr))
            outs[proto] = r.stdout
        check(outs["grpc"] == outs["connect"] == outs["grpc-web"], "symbolctl: protocols differ")
        check(outs["grpc"].count(".c:") >= 10, "symbolctl: few frames:\n" + outs["grpc"])
        r = subprocess.run([args.symbolctl, "symbolize", "--server", d.url, "--protocol", "grpc",
                            "--build-id", bid, "--timeout", "5s", "0x1"], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode in (0, 1), "symbolctl grpc with a timeout: %s" % r.stderr)
        r = subprocess.run([args.symbolctl, "symbolize", "--server", d.url, "--protocol", "spdy",
                            "--build-id", bid, "0x1"], capture_output=True, text=True)
        check(r.returncode == 2 and "spdy" in r.stderr, "a bad --protocol: %d" % r.returncode)
        print("  20 addresses: the same frames over connect, grpc and grpc-web")

    cases = [("every_method", case_every_method), ("grpc_web", case_grpc_web), ("cors", case_cors), ("gzip_both_ways", case_gzip_both_ways),
             ("status_codes", case_status_codes), ("health", case_health), ("reflection", case_reflection),
             ("streams_and_settings", case_streams_and_settings),
             ("slow_reader", case_slow_reader),
             ("http1_beside", case_http1_beside),
             ("symbolctl_protocols", case_symbolctl_protocols),
             ("deadline_and_goaway", case_deadline_and_goaway)]
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
