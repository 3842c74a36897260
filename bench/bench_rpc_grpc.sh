#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_rpc_grpc.sh: the gRPC rows of bench_rpc.sh, next to Connect binary, on
# the daemon bench_rpc.sh started, each protocol driven by the same client:
#
#   bench/bench_rpc_grpc.sh PORT BUILD_ID ADDRS_FILE SCALE DAEMON_PID BENCH_RPC
#
# h2load (Debian's nghttp2-client): one Symbolize request of 1,000 addresses
# (the first 1,000 of ADDRS_FILE), sent over and over: Connect binary over
# HTTP/1.1 (h2load --h1, 16 keep-alive connections), gRPC over h2c (16
# connections of one stream each, and 16 streams on one connection).
# bench_rpc (our C client, one blocking connection per thread, 16 threads,
# random 1,000-address slices): Connect binary over HTTP/1.1 next to gRPC over
# h2c on nghttp2 (--grpc), one stream at a time per connection.
# Interleaved over three rounds; the median of each is printed: frames/s, p99
# (h2load's from its --log-file, per request), the CPU of the daemon and of the
# client (cores, and microseconds per call: the two share this machine's
# cores, so a client that costs more per call leaves the daemon less). Not a
# test: the goal (gRPC >= Connect binary, p99 no worse) is printed next to
# the figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=$1 bid=$2 addrs=$3 scale=$4 daemon_pid=$5 bench_rpc=$6
command -v h2load >/dev/null || { echo "bench_rpc_grpc: h2load not found (nghttp2-client)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench_rpc_grpc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The request (binary) and the same in gRPC's framing; the frames of its answer.
BENCH_INTEGRATION=$root/tests/integration python3 - "$bid" "$addrs" "$tmp" "$port" <<'PY'
import http.client, os, struct, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import pb
bid, addrs, tmp, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
a = [int(x, 16) for x in open(addrs).read().split()[:1000]]
req = pb.request([pb.mapping(bid)], [pb.location(0, x) for x in a])
open(tmp + "/req.bin", "wb").write(req)
open(tmp + "/req.grpc", "wb").write(struct.pack(">BI", 0, len(req)) + req)
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
c.request("POST", "/symbolizer.v1.SymbolizerService/Symbolize", req,
          {"Content-Type": "application/proto"})
r = pb.decode_response(c.getresponse().read())
open(tmp + "/frames", "w").write(str(sum(len(l["lines"]) for l in r["locations"])))
PY
frames=$(cat "$tmp/frames")
n=$(python3 -c "print(max(160, int(4000 * $scale)))")
url=http://127.0.0.1:$port/symbolizer.v1.SymbolizerService/Symbolize
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# row NAME H2LOAD-ARGS...: h2load's output, the daemon's and h2load's CPU seconds.
TIMEFORMAT='client_cpu_seconds %U %S'
row() {
	local name=$1 d0 d1
	shift
	d0=$(cpu_ticks "$daemon_pid")
	{ time h2load -n "$n" --log-file "$tmp/$name.$round.log" "$@" "$url" \
		> "$tmp/$name.$round.out" 2>&1; } 2> "$tmp/$name.$round.time"
	d1=$(cpu_ticks "$daemon_pid")
	echo "daemon_cpu_seconds $(python3 -c "print(($d1 - $d0) / $hz)")" >> "$tmp/$name.$round.out"
	cat "$tmp/$name.$round.time" >> "$tmp/$name.$round.out"
}
# crow NAME BENCH_RPC-ARGS...: bench_rpc's key-value output plus the daemon's CPU.
m=$(python3 -c "print(max(10, int(250 * $scale)))")
crow() {
	local name=$1 d0 d1
	shift
	d0=$(cpu_ticks "$daemon_pid")
	"$bench_rpc" --port "$port" --build-id "$bid" --addrs "$addrs" --clients 16 --batch 1000 \
		--requests "$m" --seed 7 "$@" > "$tmp/$name.$round.out"
	d1=$(cpu_ticks "$daemon_pid")
	echo "daemon_cpu_seconds $(python3 -c "print(($d1 - $d0) / $hz)")" >> "$tmp/$name.$round.out"
}
for round in 1 2 3; do
	row connect --h1 -c 16 -m 1 -d "$tmp/req.bin" -H 'content-type: application/proto'
	row grpc_conns -c 16 -m 1 -d "$tmp/req.grpc" -H 'content-type: application/grpc' -H 'te: trailers'
	row grpc_streams -c 1 -m 16 -d "$tmp/req.grpc" -H 'content-type: application/grpc' -H 'te: trailers'
	crow c_connect
	crow c_grpc --grpc
done
python3 - "$tmp" "$frames" "$n" "$m" <<'PY'
import re, sys
tmp, frames, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def h2load(path):
    """frames/s, p99 ms, daemon s, client s, wall s, calls of an h2load run."""
    t = open(path).read()
    rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", t).group(1))
    ok = int(re.search(r"requests: .* (\d+) succeeded", t).group(1))
    secs, unit = re.search(r"finished in ([\d.]+)(\w+),", t).groups()
    secs = float(secs) / (1000 if unit == "ms" else 1)
    cpu = float(re.search(r"daemon_cpu_seconds (\S+)", t).group(1))
    cu, cs = re.search(r"client_cpu_seconds (\S+) (\S+)", t).groups()
    us = sorted(int(line.split("\t")[2]) for line in open(path[:-4] + ".log") if line.strip())
    p99 = us[min(len(us) - 1, int(len(us) * 0.99))] / 1000
    return rps * frames, p99, cpu, float(cu) + float(cs), secs, ok
def ours(path):
    d = dict(line.split(" ", 1) for line in open(path).read().splitlines())
    calls = int(d["requests"])
    return (float(d["frames_per_second"]), float(d["latency_p99_ms"]),
            float(d["daemon_cpu_seconds"]), float(d["client_cpu_seconds"]),
            float(d["seconds"]), calls)
print()
print("gRPC next to Connect binary, each pair driven by one client; median of 3 interleaved")
print("rounds (by frames/s; p99 the median of the rounds'). h2load: one 1,000-address request")
print("(%d frames) sent %d times; bench_rpc: 16 threads x %s random 1,000-address requests"
      % (frames, n, m))
print("  %-40s %12s %9s %7s %7s %11s %11s" % ("", "frames/s", "p99 ms", "daemon", "client",
                                              "daemon/call", "client/call"))
res = {}
for name, label, parse in (
        ("connect", "h2load: Connect binary, HTTP/1.1, 16 conns", h2load),
        ("grpc_conns", "h2load: gRPC, h2c, 16 connections", h2load),
        ("grpc_streams", "h2load: gRPC, h2c, 16 streams on 1 conn", h2load),
        ("c_connect", "bench_rpc: Connect binary, HTTP/1.1, 16", ours),
        ("c_grpc", "bench_rpc: gRPC, h2c (nghttp2), 16 conns", ours)):
    runs = sorted((parse("%s/%s.%d.out" % (tmp, name, r)) for r in (1, 2, 3)),
                  key=lambda x: x[0])
    fps, _, dcpu, ccpu, secs, calls = runs[1]
    p99 = sorted(r[1] for r in runs)[1]
    res[name] = (fps, p99)
    print("  %-40s %12s %9.2f %6.2fc %6.2fc %9.0fus %9.0fus" % (
        label, "{:,.0f}".format(fps), p99, dcpu / secs, ccpu / secs,
        dcpu / calls * 1e6, ccpu / calls * 1e6))
r = lambda a, b, i: res[a][i] / res[b][i]
print("goal: gRPC frames/s >= Connect binary's: h2load %.2f (16 conns), %.2f (16 streams);"
      % (r("grpc_conns", "connect", 0), r("grpc_streams", "connect", 0)))
print("      bench_rpc %.2f" % r("c_grpc", "c_connect", 0))
print("      p99 over Connect's: h2load %.2f (16 conns), %.2f (16 streams); bench_rpc %.2f"
      % (r("grpc_conns", "connect", 1), r("grpc_streams", "connect", 1),
         r("c_grpc", "c_connect", 1)))
print("  (daemon/client: cores used, and CPU microseconds per call; the two share the cores)")
PY
