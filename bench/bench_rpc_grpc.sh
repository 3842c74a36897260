#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_rpc_grpc.sh: the gRPC rows of bench_rpc.sh, next to Connect binary,
# measured by one client for both (h2load, Debian's nghttp2-client), on the
# daemon bench_rpc.sh started:
#
#   bench/bench_rpc_grpc.sh PORT BUILD_ID ADDRS_FILE SCALE DAEMON_PID
#
# One Symbolize request of 1,000 addresses (the first 1,000 of ADDRS_FILE),
# sent over and over: Connect binary over HTTP/1.1 (h2load --h1, 16 keep-alive
# connections), gRPC over h2c (16 connections of one stream each, and 16
# streams on one connection). Interleaved over three rounds; the median of each
# is printed: frames/s (requests/s x the frames of the one response), mean,
# p99 (from h2load's --log-file, per request) and max latency, the daemon's
# CPU (cores). Not a test: the goal (gRPC >= Connect binary, p99 no worse) is
# printed next to the figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=$1 bid=$2 addrs=$3 scale=$4 daemon_pid=$5
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
# row NAME H2LOAD-ARGS...: h2load's output plus the daemon's CPU seconds.
row() {
	local name=$1 d0 d1
	shift
	d0=$(cpu_ticks "$daemon_pid")
	h2load -n "$n" --log-file "$tmp/$name.$round.log" "$@" "$url" > "$tmp/$name.$round.out" 2>&1
	d1=$(cpu_ticks "$daemon_pid")
	echo "daemon_cpu_seconds $(python3 -c "print(($d1 - $d0) / $hz)")" >> "$tmp/$name.$round.out"
}
for round in 1 2 3; do
	row connect --h1 -c 16 -m 1 -d "$tmp/req.bin" -H 'content-type: application/proto'
	row grpc_conns -c 16 -m 1 -d "$tmp/req.grpc" -H 'content-type: application/grpc' -H 'te: trailers'
	row grpc_streams -c 1 -m 16 -d "$tmp/req.grpc" -H 'content-type: application/grpc' -H 'te: trailers'
done
python3 - "$tmp" "$frames" "$n" <<'PY'
import re, statistics, sys
tmp, frames, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def parse(path):
    t = open(path).read()
    rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", t).group(1))
    ok = int(re.search(r"requests: .* (\d+) succeeded", t).group(1))
    m = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", t)
    secs = float(re.search(r"finished in ([\d.]+)(\w+),", t).group(1))
    unit = re.search(r"finished in [\d.]+(\w+),", t).group(1)
    secs = secs / 1000 if unit == "ms" else secs
    cpu = float(re.search(r"daemon_cpu_seconds (\S+)", t).group(1))
    us = sorted(int(line.split("\t")[2]) for line in open(path[:-4] + ".log") if line.strip())
    p99 = "%.2fms" % (us[min(len(us) - 1, int(len(us) * 0.99))] / 1000)
    return rps, ok, m.group(3), m.group(2), cpu / secs, p99
print()
print("gRPC next to Connect binary: one 1,000-address request (%d frames) sent %d times;"
      % (frames, n))
print("h2load for both, median of 3 interleaved rounds")
print("  %-34s %13s %10s %10s %10s %9s %7s" % ("", "frames/s", "mean", "p99", "max", "succeeded",
                                               "daemon"))
rows, p99s = {}, {}
for name, label in (("connect", "Connect binary, HTTP/1.1, 16 conns"),
                    ("grpc_conns", "gRPC, h2c, 16 connections"),
                    ("grpc_streams", "gRPC, h2c, 16 streams on 1 conn")):
    runs = sorted((parse("%s/%s.%d.out" % (tmp, name, r)) for r in (1, 2, 3)),
                  key=lambda x: x[0])
    rps, ok, mean, mx, cores, p99 = runs[1]
    rows[name], p99s[name] = rps, sorted(float(r[5][:-2]) for r in runs)[1]
    print("  %-34s %13s %10s %10s %10s %9d %6.2fc" % (label, "{:,.0f}".format(rps * frames), mean,
                                                      p99, mx, ok, cores))
print("goal: gRPC frames/s >= Connect binary's: %.2f (16 conns), %.2f (16 streams);"
      % (rows["grpc_conns"] / rows["connect"], rows["grpc_streams"] / rows["connect"]))
print("      p99 (median of the rounds') over Connect's: %.2f (16 conns), %.2f (16 streams)"
      % (p99s["grpc_conns"] / p99s["connect"], p99s["grpc_streams"] / p99s["connect"]))
PY
