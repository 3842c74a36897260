#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A debuginfod-shaped HTTP server that misbehaves on purpose, for the upstream tests.

    upstream_fault_server.py --port-file FILE --config CONFIG.json

CONFIG maps "<buildid>/<debuginfo|executable>" to a behaviour:
    "404" | "406" | "500"      that status, short body
    "file:PATH"                200 with the file (Content-Length, X-DEBUGINFOD-SIZE)
    "flaky:N:PATH"             500 for the first N requests, then like file:PATH
    "slow:PATH"                like file:PATH, after 300 ms
    "hang"                     read the request, never answer (until the client leaves)
    "trickle:PATH"             200, Content-Length, then 16 bytes every 200 ms
    "close:PATH"               200, full Content-Length, half the body, then close
    "reset"                    read the request, then close with a TCP RST
    "big:BYTES"                200 with Content-Length BYTES, streams zeros
    "stream:BYTES"             200 without Content-Length (close-delimited), streams zeros
    "bomb"                     200 without Content-Length, zeros until the client leaves
    "auth:USER:PASSWORD:PATH"  like file:PATH with Basic auth of USER:PASSWORD, else 401
    "redirect:URL"             302 to URL (absolute or not), with a body of its own
Anything else is 404. GET /stats answers JSON: per path the request count, the
bytes of body sent, and the last X-DEBUGINFOD-MAXSIZE and User-Agent seen; under
"_server", the most requests it ever had in progress at once ("max_active").
Listens on 127.0.0.1 only; writes the port to --port-file once listening.
"""
import argparse
import base64
import json
import os
import socket
import socketserver
import struct
import threading
import time

LOCK = threading.Lock()
STATS = {}
ACTIVE = {"now": 0, "max_active": 0}


def stat(path):
    with LOCK:
        return STATS.setdefault(path, {"requests": 0, "sent": 0, "maxsize": None,
                                       "user_agent": None})


class Handler(socketserver.BaseRequestHandler):
    def read_request(self):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(4096)
            if not chunk:
                return None, {}
            data += chunk
            if len(data) > 65536:
                return None, {}
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        parts = head[0].split(" ")
        headers = {}
        for line in head[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        return (parts[1] if len(parts) > 1 else "/"), headers

    def send(self, b):
        self.request.sendall(b)

    def status(self, code, reason, body=b"", extra=""):
        self.send(("HTTP/1.1 %d %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n"
                   % (code, reason, len(body), extra)).encode() + body)

    def file_head(self, size, with_length=True):
        h = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n"
        if with_length:
            h += "Content-Length: %d\r\nX-DEBUGINFOD-SIZE: %d\r\n" % (size, size)
        self.send((h + "\r\n").encode())

    def body(self, st, data):
        self.send(data)
        with LOCK:
            st["sent"] += len(data)

    def handle(self):
        try:
            self.serve()
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass

    def busy(self, delta):
        with LOCK:
            ACTIVE["now"] += delta
            ACTIVE["max_active"] = max(ACTIVE["max_active"], ACTIVE["now"])

    def serve(self):
        path, headers = self.read_request()
        if path is None:
            return
        if path == "/stats":
            with LOCK:
                body = json.dumps(dict(STATS, _server={"max_active": ACTIVE["max_active"]})).encode()
            self.status(200, "OK", body)
            return
        key = path.strip("/")
        if key.startswith("buildid/"):
            key = key[len("buildid/"):]
        st = stat(key)
        with LOCK:
            st["requests"] += 1
            st["maxsize"] = headers.get("x-debuginfod-maxsize")
            st["user_agent"] = headers.get("user-agent")
            n = st["requests"]
        behaviour = self.server.config.get(key, "404")
        kind, _, arg = behaviour.partition(":")
        if kind == "flaky":
            count, _, arg = arg.partition(":")
            if n <= int(count):
                self.status(500, "Internal Server Error", b"flaky\n")
                return
            kind = "file"
        if kind == "auth":
            user, pw, arg = arg.split(":", 2)
            want = "Basic " + base64.b64encode(("%s:%s" % (user, pw)).encode()).decode()
            with LOCK:
                st["authorized"] = st.get("authorized", 0)
            if headers.get("authorization") != want:
                self.status(401, "Unauthorized", b"who are you\n",
                            'WWW-Authenticate: Basic realm="fault"\r\n')
                return
            with LOCK:
                st["authorized"] += 1
            kind = "file"
        if kind in ("404", "406", "500"):
            self.status(int(kind), "Status", b"fault server\n")
        elif kind == "slow":
            self.busy(1)
            time.sleep(0.3)
            self.busy(-1)
            data = open(arg, "rb").read()
            self.file_head(len(data))
            self.body(st, data)
        elif kind == "file":
            data = open(arg, "rb").read()
            self.file_head(len(data))
            self.body(st, data)
        elif kind == "hang":
            self.request.settimeout(60)
            while self.request.recv(4096):
                pass
        elif kind == "trickle":
            data = open(arg, "rb").read()
            self.file_head(len(data))
            for i in range(0, len(data), 16):
                self.body(st, data[i:i + 16])
                time.sleep(0.2)
        elif kind == "close":
            data = open(arg, "rb").read()
            self.file_head(len(data))
            self.body(st, data[:len(data) // 2])
        elif kind == "reset":
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
        elif kind == "redirect":
            self.status(302, "Found", b"secret page of the fault server\n",
                        "Location: %s\r\n" % arg)
        elif kind == "bomb":
            self.file_head(0, with_length=False)
            chunk = b"\0" * 65536
            while True:
                self.body(st, chunk)
        elif kind in ("big", "stream"):
            size = int(arg)
            self.file_head(size, with_length=(kind == "big"))
            chunk = b"\0" * 65536
            sent = 0
            while sent < size:
                self.body(st, chunk[:min(len(chunk), size - sent)])
                sent += len(chunk)
        else:
            self.status(404, "Not Found", b"not here\n")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--config", required=True)
    a = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.config = json.load(open(a.config))
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
