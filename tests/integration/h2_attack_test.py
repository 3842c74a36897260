#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""HTTP/2's known attacks against the daemon's port, each answered without
harm: after each, the daemon still answers a gRPC call and a Connect call, has
no call in flight, and counts what it cut.

    h2_attack_test.py --symbolizerd BIN [CASE...]

Raw frames (python3-h2's hpack for header blocks, hand-made frames for the
rest). Which mitigation is whose:
  rapid_reset (CVE-2023-44487)   nghttp2 (Debian 1.52.0-1+deb12u1's backport):
                                 a reset rate limit, then GOAWAY; we set it
                                 (1000 at once, 33/s); calls of reset streams
                                 answer into nothing (orphaned streams)
  continuation_flood (CVE-2024-28182)  nghttp2 (deb12u2): 8 CONTINUATIONs per
                                 header block, then GOAWAY
  hpack_bomb                     ours: the decoded header list is capped
                                 (16 KiB, SETTINGS_MAX_HEADER_LIST_SIZE), the
                                 stream reset; nghttp2 keeps the table at 4 KiB
  settings_flood, ping_flood     nghttp2: acks queued at most 1000
                                 (max_outbound_ack), then GOAWAY
  no_end_stream                  ours: a request not whole by --request-timeout
                                 is reset (CANCEL); an idle connection closed
  window_never_opens             ours: an answer not written by
                                 --request-timeout is reset (CANCEL)
"""
import argparse
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_lib import Daemon  # noqa: E402
from grpc_lib import H2, PATH, debian_modules, frame  # noqa: E402
from upstream_lib import check, run_cases, tempdir  # noqa: E402

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINDOW, CONT = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 1, 4, 1


def raw_frame(kind, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", sid) + payload


def request_block(enc, path=PATH + "Symbolize", extra=()):
    return enc.encode([(":method", "POST"), (":scheme", "http"), (":path", path),
                       (":authority", "127.0.0.1"), ("content-type", "application/grpc"),
                       ("te", "trailers")] + list(extra))


class Raw:
    """A socket that spoke the preface and an empty SETTINGS; reads frames."""

    def __init__(self, port, settings=b"", rcvbuf=0):
        import hpack
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:  # before connecting: the window the server sees stays small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(60)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(PREFACE + raw_frame(SETTINGS, 0, 0, settings))
        self.enc = hpack.Encoder()
        self.buf = b""
        self.acks = 0

    def send(self, data):
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def frames(self, until, limit_bytes=64 << 20):
        """Reads frames until until(kind, flags, sid, payload) or the close:
        the list of (kind, flags, sid, payload); the last is None when closed."""
        out, total = [], 0
        while total < limit_bytes:
            pos, buf = 0, self.buf
            while len(buf) - pos >= 9:
                n = int.from_bytes(buf[pos:pos + 3], "big")
                if len(buf) - pos < 9 + n:
                    break
                f = (buf[pos + 3], buf[pos + 4],
                     int.from_bytes(buf[pos + 5:pos + 9], "big") & 0x7fffffff,
                     buf[pos + 9:pos + 9 + n])
                pos += 9 + n
                if f[0] not in (SETTINGS, PING) or not f[1] & ACK:
                    out.append(f)  # acks are counted, not kept
                else:
                    self.acks += 1
                if until(*f):
                    self.buf = buf[pos:]
                    return out
            self.buf = buf[pos:]
            try:
                data = self.sock.recv(1 << 16)
            except (ConnectionResetError, socket.timeout):
                data = b""
            if not data:
                out.append(None)
                return out
            total += len(data)
            self.buf += data
        return out

    def close(self):
        self.sock.close()


def goaway_or_close(frames):
    return frames and (frames[-1] is None or any(f and f[0] == GOAWAY for f in frames))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    grpc = debian_modules()
    work = tempdir("h2-attack-test-")
    d = Daemon(args.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               extra=["--request-timeout", "2s"])

    def healthy(label):
        """A gRPC call (a new connection) and a Connect call answer; nothing in flight."""
        ch = grpc.insecure_channel("127.0.0.1:%d" % d.port)
        out = ch.unary_unary(PATH + "Symbolize")(b"", timeout=30)
        ch.close()
        status, _, body = d.post(b"")
        check(status == 200 and out == body,
              "%s: gRPC %r and Connect %d %r after the attack" % (label, out, status, body))
        deadline = time.monotonic() + 30
        while d.metric("symbolizer_calls_in_flight") != 0:
            check(time.monotonic() < deadline, "%s: calls left in flight" % label)
            time.sleep(0.05)

    def case_rapid_reset():
        r = Raw(d.port)
        burst = b""
        for i in range(5000):
            sid = 1 + 2 * i
            burst += raw_frame(HEADERS, END_HEADERS | END_STREAM, sid, request_block(r.enc))
            burst += raw_frame(RST, 0, sid, struct.pack(">I", 8))  # CANCEL
        r.send(burst)
        fr = r.frames(lambda k, fl, s, p: k == GOAWAY)
        check(goaway_or_close(fr), "rapid reset: neither GOAWAY nor close")
        ga = [f for f in fr if f and f[0] == GOAWAY]
        code = struct.unpack(">I", ga[0][3][4:8])[0] if ga else None
        print("  5000 streams opened and reset at once: GOAWAY code %r" % code)
        r.close()
        # Whole requests reset right after: their calls run and answer into nothing.
        r = Raw(d.port)
        burst = b""
        for i in range(200):
            sid = 1 + 2 * i
            burst += raw_frame(HEADERS, END_HEADERS, sid, request_block(r.enc))
            burst += raw_frame(DATA, END_STREAM, sid, frame(b""))
            burst += raw_frame(RST, 0, sid, struct.pack(">I", 8))
        r.send(burst + raw_frame(PING, 0, 0, b"12345678"))
        r.frames(lambda k, fl, s, p: k == PING and fl & ACK)
        r.close()
        healthy("rapid reset")

    def case_continuation_flood():
        r = Raw(d.port)
        block = request_block(r.enc)
        out = raw_frame(HEADERS, 0, 1, block[:4])
        for _ in range(10000):
            out += raw_frame(CONT, 0, 1, b"")  # never END_HEADERS
        r.send(out)
        fr = r.frames(lambda k, fl, s, p: k == GOAWAY)
        check(goaway_or_close(fr), "CONTINUATION flood: neither GOAWAY nor close")
        r.close()
        healthy("continuation flood")

    def case_hpack_bomb():
        before = d.metric('symbolizer_h2_refused_total{reason="header_list"}') or 0
        r = Raw(d.port)
        # One 4000-byte header in the dynamic table, then referenced 3000
        # times (1 byte each): 12 MB decoded from a 3 KB block.
        head = request_block(r.enc)
        first = r.enc.encode([("x-bomb", "a" * 4000)])  # evicts the rest: index 62
        block = head + first + bytes([0x80 | 62]) * 3000
        r.send(raw_frame(HEADERS, END_HEADERS | END_STREAM, 1, block))
        fr = r.frames(lambda k, fl, s, p: (k == RST and s == 1) or k == GOAWAY)
        check(fr and fr[-1] is not None, "HPACK bomb: connection closed, no RST_STREAM")
        check(any(f and f[0] in (RST, GOAWAY) for f in fr), "HPACK bomb: the stream went on")
        after = d.metric('symbolizer_h2_refused_total{reason="header_list"}')
        check(after == before + 1, "HPACK bomb not counted: %r -> %r" % (before, after))
        # The connection still serves a normal call.
        r.send(raw_frame(HEADERS, END_HEADERS, 3, request_block(r.enc)) +
               raw_frame(DATA, END_STREAM, 3, frame(b"")))
        fr = r.frames(lambda k, fl, s, p: s == 3 and k == HEADERS and fl & END_STREAM)
        check(fr and fr[-1] is not None, "after the bomb: no answer on the connection: %r"
              % [(f[0], f[1], f[2], f[3][:40]) if f else None for f in fr])
        r.close()
        healthy("hpack bomb")

    def flood(label, one):
        r = Raw(d.port, rcvbuf=4096)
        sent = 0
        chunk = one * 1000
        r.sock.settimeout(2)  # a server that stops reading: the send stalls
        for _ in range(2000):  # up to 2,000,000 frames, never reading the acks
            if not r.send(chunk):
                break
            sent += 1000
        r.sock.settimeout(60)
        fr = r.frames(lambda k, fl, s, p: k == GOAWAY)
        check(goaway_or_close(fr), "%s: neither GOAWAY nor close after %d frames" % (label, sent))
        check(r.acks < sent, "%s: every frame acknowledged" % label)
        r.close()
        healthy(label)
        print("  %s: %d frames sent unread, %d acks, then GOAWAY or close" % (label, sent, r.acks))

    def case_settings_flood():
        flood("SETTINGS flood", raw_frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 65535)))

    def case_ping_flood():
        flood("PING flood", raw_frame(PING, 0, 0, b"abcdefgh"))

    def case_no_end_stream():
        before = d.metric('symbolizer_h2_refused_total{reason="stream_timeout"}') or 0
        r = Raw(d.port)
        r.send(raw_frame(HEADERS, END_HEADERS, 1, request_block(r.enc)) +
               raw_frame(DATA, 0, 1, b"\0\0\0"))
        fr = r.frames(lambda k, fl, s, p: k == RST and s == 1)
        check(fr and fr[-1] is not None, "no END_STREAM: closed without RST_STREAM")
        code = struct.unpack(">I", fr[-1][3])[0]
        check(code == 8, "no END_STREAM: RST_STREAM code %d" % code)
        check(d.metric('symbolizer_h2_refused_total{reason="stream_timeout"}') == before + 1,
              "no END_STREAM: not counted")
        # Then the idle connection is closed (GOAWAY).
        fr = r.frames(lambda k, fl, s, p: k == GOAWAY)
        check(goaway_or_close(fr), "idle connection kept open")
        r.close()
        healthy("no END_STREAM")

    def case_window_never_opens():
        before = d.metric('symbolizer_h2_refused_total{reason="stream_timeout"}') or 0
        # SETTINGS_INITIAL_WINDOW_SIZE 0: the answer's DATA can never go.
        r = Raw(d.port, settings=struct.pack(">HI", 4, 0))
        r.send(raw_frame(HEADERS, END_HEADERS, 1, request_block(r.enc)) +
               raw_frame(DATA, END_STREAM, 1, frame(b"")))
        fr = r.frames(lambda k, fl, s, p: k == RST and s == 1)
        check(fr and fr[-1] is not None, "window 0: closed without RST_STREAM")
        check(not any(f and f[0] == DATA and f[2] == 1 for f in fr), "DATA past a 0 window")
        check(d.metric('symbolizer_h2_refused_total{reason="stream_timeout"}') == before + 1,
              "window 0: not counted")
        r.close()
        healthy("window never opens")

    cases = [("rapid_reset", case_rapid_reset), ("continuation_flood", case_continuation_flood),
             ("hpack_bomb", case_hpack_bomb), ("settings_flood", case_settings_flood),
             ("ping_flood", case_ping_flood), ("no_end_stream", case_no_end_stream),
             ("window_never_opens", case_window_never_opens)]
    try:
        rc = run_cases(cases, args.cases)
        print("  refused: " + ", ".join(
            "%s=%s" % (r, d.metric('symbolizer_h2_refused_total{reason="%s"}' % r))
            for r in ("header_list", "stream_timeout", "idle", "protocol")))
    finally:
        check(d.stop() == 0, "daemon exit status")
    sys.exit(rc)


if __name__ == "__main__":
    main()
