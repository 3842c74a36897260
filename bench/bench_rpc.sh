#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_rpc.sh: symbolizerd's Symbolize RPC end to end over loopback, on a warm
# index, next to the in-process lookup rate of the same index.
#
#   bench/bench_rpc.sh [--build DIR] [--scale F] [--pool N] [--workers N]
#                      [--daemon-arg ARG]...
#
# On this machine's libc.so.6 debug file (Debian's libc6-dbg, found by build ID
# under /usr/lib/debug): starts symbolizerd (--workers 2, a fresh data dir,
# --debug-dir /usr/lib/debug, no upstream) on 127.0.0.1:0, warms the index with
# one request (waits until the mapping is OK), then runs bench_rpc (C, blocking
# HTTP/1.1 keep-alive, one thread per client, protobuf-c requests) in four
# configurations: 1 and 16 clients x batches of 1,000 and 10,000 random
# addresses inside libc's functions. For each: frames/s, addresses/s,
# requests/s, p50/p99/max latency per request, and the CPU the daemon and the
# client used (cores). Then bench_lookup's warm in-process rate (one core) on
# the same addresses, and bench_response's (the daemon's lookups, response
# tables and encoding, in process), so the protocol's cost is visible; and gRPC
# rows next to Connect binary, both through h2load, and both through bench_rpc
# (--grpc: nghttp2, one stream at a time per connection), with the client's
# CPU per call beside the daemon's (bench_rpc_grpc.sh).
#
# The clients read each response with a walk over its wire format; more runs
# at 16 x 1,000, for comparison: one decodes every response with protobuf-c;
# then, interleaved over five rounds (the median of each configuration is
# printed, so that load elsewhere on a shared machine hits them alike):
# binary, binary accepting gzip (as Connect clients do by default), Connect
# JSON (application/json: the daemon decodes the request's text and writes the
# response's; the client writes JSON requests and scans the responses' text),
# and JSON accepting gzip.
# --scale multiplies the number of requests of each run (default 1: a few
# seconds each). --pool is the number of distinct addresses drawn (200000).
# --daemon-arg passes one more flag to symbolizerd (e.g. --worker-lookup-min=1).
# Builds DIR (default build/, scripts/build.sh) when a program is missing. Not a
# test: the goals are printed next to the figures, never checked.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
scale=1
pool=200000
workers=2
daemon_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) mkdir -p "$2"; build=$(cd "$2" && pwd); shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--pool) pool=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--daemon-arg) daemon_args+=("$2"); shift 2 ;;
	-h|--help) sed -n '2,34p' "$0"; exit 0 ;;
	*) echo "bench_rpc: unknown argument $1" >&2; exit 2 ;;
	esac
done

symbolizerd=$build/cmd/symbolizerd/symbolizerd
bench_rpc=$build/bench/bench_rpc
bench_lookup=$build/bench/bench_lookup
bench_response=$build/bench/bench_response
if [ ! -x "$symbolizerd" ] || [ ! -x "$bench_rpc" ] || [ ! -x "$bench_lookup" ] ||
   [ ! -x "$bench_response" ]; then
	echo "== building $build" >&2
	bash "$root/scripts/build.sh" "$build" >&2
fi
for t in readelf python3; do
	command -v $t >/dev/null || { echo "bench_rpc: $t not found (scripts/install-deps.sh)" >&2; exit 1; }
done

libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)
[ -n "$libc" ] || libc=$(readlink -f "$(gcc -print-file-name=libc.so.6)")
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: //p')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ -f "$dbg" ] || { echo "bench_rpc: no $dbg: install libc6-dbg" >&2; exit 1; }

tmp=$(mktemp -d /tmp/bench_rpc.XXXXXX)
daemon_pid=""
cleanup() {
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# The same random addresses inside functions as bench_symbolize.sh draws.
BENCH_INTEGRATION=$root/tests/integration python3 - "$dbg" "$pool" 1 "$tmp/addrs.txt" <<'EOF'
import os, random, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import compare_llvm
syms = compare_llvm.Symbols(sys.argv[1], demangle=False)
addrs = syms.draw(int(sys.argv[2]), random.Random(int(sys.argv[3])))
with open(sys.argv[4], "w") as f:
    f.write("".join("0x%x\n" % a for a in addrs))
EOF

echo "== bench_rpc: symbolizerd on 127.0.0.1, $libc's debug file"
echo "   $dbg ($(stat -c %s "$dbg") bytes), build ID $bid"
echo "   $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), --workers $workers ${daemon_args[*]-}"

"$symbolizerd" --listen 127.0.0.1:0 --data-dir "$tmp/data" --debug-dir /usr/lib/debug \
	--debuginfod-upstream-servers= --workers "$workers" --default-wait 2s \
	${daemon_args[@]+"${daemon_args[@]}"} 2> "$tmp/daemon.log" &
daemon_pid=$!
port=""
for _ in $(seq 1 300); do
	port=$(sed -n 's/.*msg="listening".* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/daemon.log" | head -1)
	[ -n "$port" ] && break
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/daemon.log" >&2; echo "bench_rpc: symbolizerd exited" >&2; exit 1; }
	sleep 0.1
done
[ -n "$port" ] || { cat "$tmp/daemon.log" >&2; echo "bench_rpc: symbolizerd did not listen" >&2; exit 1; }

"$bench_rpc" --port "$port" --build-id "$bid" --addrs "$tmp/addrs.txt" --batch 1000 --warm > "$tmp/warm.out"
echo "   index ready after $(sed -n 's/^warm_seconds //p' "$tmp/warm.out") s (fetch from /usr/lib/debug + index build), port $port"

# cpu_ticks PID: utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

runs=""
# run CLIENTS BATCH REQUESTS_PER_CLIENT [DECODE] [--gzip]
run() {
	local c=$1 b=$2 m=$3 dec=${4:-walk} gz=${5:-} out=$tmp/run_${1}_${2}_${4:-walk}${5:-}_${round:-0}.out
	m=$(python3 -c "print(max(1, int($m * $scale)))")
	local d0 d1
	d0=$(cpu_ticks "$daemon_pid")
	local codec=(--decode "$dec")
	[ "$dec" = json ] && codec=(--json)
	"$bench_rpc" --port "$port" --build-id "$bid" --addrs "$tmp/addrs.txt" \
		--clients "$c" --batch "$b" --requests "$m" --seed "$((c * 100003 + b))" \
		"${codec[@]}" ${gz:+"$gz"} > "$out"
	d1=$(cpu_ticks "$daemon_pid")
	echo "daemon_cpu_seconds $(python3 -c "print(($d1 - $d0) / $hz)")" >> "$out"
	runs="$runs $out"
}
run 1 1000 3000
run 16 1000 250
run 1 10000 300
run 16 10000 25
run 16 1000 250 protobuf-c
# The codecs at 16 x 1,000, interleaved over five rounds (the median of each
# is printed), so that a load elsewhere on a shared machine hits them alike.
for round in 1 2 3 4 5; do
	run 16 1000 250 walk
	run 16 1000 250 walk --gzip
	run 16 1000 250 json
	run 16 1000 250 json --gzip
done

# gRPC rows next to Connect binary (h2load for both, bench_rpc for both; printed by
# bench_rpc_grpc.sh).
bash "$root/bench/bench_rpc_grpc.sh" "$port" "$bid" "$tmp/addrs.txt" "$scale" "$daemon_pid" "$bench_rpc" \
	> "$tmp/grpc.out"

"$bench_lookup" "$dbg" "$tmp/addrs.txt" > "$tmp/lookup.out"
"$bench_lookup" "$dbg" "$tmp/addrs.txt" --ids > "$tmp/lookup_ids.out"
"$bench_response" "$dbg" "$tmp/addrs.txt" --batch 1000 > "$tmp/response.out"

kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
[ "$rc" = 0 ] || echo "bench_rpc: warning: symbolizerd exited $rc after SIGTERM" >&2
metrics_note=$(grep -c 'level=error' "$tmp/daemon.log" || true)

python3 - "$tmp/lookup.out" "$tmp/lookup_ids.out" "$tmp/response.out" "$metrics_note" $runs <<'EOF'
import sys
def kv(path):
    d = {}
    for line in open(path):
        k, _, v = line.strip().partition(" ")
        d[k] = v
    return d
lookup = kv(sys.argv[1])
lookup_ids = kv(sys.argv[2])
response = kv(sys.argv[3])
errors = int(sys.argv[4])
runs = [kv(p) for p in sys.argv[5:]]
# Repeated configurations (the interleaved rounds): the median by frames/s.
groups = {}
for r in runs:
    groups.setdefault((r["clients"], r["batch"], r["client_decode"]), []).append(r)
rows = []
for r in runs:
    key = (r["clients"], r["batch"], r["client_decode"])
    g = groups.pop(key, None)
    if g:
        g.sort(key=lambda x: float(x["frames_per_second"]))
        m = g[len(g) // 2]
        m["rounds"] = len(g)
        rows.append(m)
fmt = lambda x: format(int(float(x)), ",")
print()
print("end to end over loopback, warm index (frames = Line entries in the responses)")
print("  %7s %7s %9s %13s %13s %9s %9s %9s %9s %7s %7s  %s" % (
    "clients", "batch", "requests", "frames/s", "addresses/s", "req/s",
    "p50 ms", "p99 ms", "max ms", "daemon", "client", "client reads with"))
for r in rows:
    secs = float(r["seconds"])
    print("  %7s %7s %9s %13s %13s %9s %9s %9s %9s %6.2fc %6.2fc  %s" % (
        r["clients"], fmt(r["batch"]), r["requests"], fmt(r["frames_per_second"]),
        fmt(r["addresses_per_second"]), r["requests_per_second"], r["latency_p50_ms"],
        r["latency_p99_ms"], r["latency_max_ms"],
        float(r["daemon_cpu_seconds"]) / secs, float(r["client_cpu_seconds"]) / secs,
        r["client_decode"]))
bad = [r for r in rows if r["not_ok_responses"] != "0"]
print("  (%s frames per address, %s of the addresses found; daemon/client: CPU cores used"
      % (rows[0]["frames_per_address"], rows[0]["found_fraction"]) +
      (", %d responses NOT OK" % sum(int(r["not_ok_responses"]) for r in bad) if bad else "") + ")")
lps = float(lookup["lookups_per_second"])
fpa = float(lookup["frames_per_address"])
print()
print("in process, same index and addresses, one core (bench_lookup, best of 5 passes)")
print("  %13s frames/s  (%s lookups/s, %s ns each, %s frames/address)" % (
    fmt(lps * fpa), fmt(lps), lookup["ns_per_lookup"], lookup["frames_per_address"]))
ids_lps = float(lookup_ids["lookups_per_second"])
print("  %13s frames/s  as ids, the daemon's lookup (--ids: %s lookups/s, %s ns each)" % (
    fmt(ids_lps * fpa), fmt(ids_lps), lookup_ids["ns_per_lookup"]))
print("  %13s frames/s  lookups + response tables + encoding (svc_lookup_run, batches of 1,000:"
      % fmt(response["run_frames_per_second"]))
print("                 %s ns per address, %s bytes per response; bare lookups in the same run %s ns)"
      % (response["run_ns_per_address"], fmt(response["response_bytes_avg"]),
         response["lookup_ns_per_address"]))
print()
walk = [r for r in rows if r["client_decode"] == "walk"]
best1k = max(float(r["frames_per_second"]) for r in walk if r["batch"] == "1000")
print("goal (2 cores): >= 1,000,000 frames/s with 1,000-address batches: best %s frames/s;"
      % fmt(best1k))
print("                p99 <= 10 ms per 1,000-address batch: %s"
      % ", ".join("%s ms (%s client%s)" % (r["latency_p99_ms"], r["clients"],
                                          "" if r["clients"] == "1" else "s")
                  for r in walk if r["batch"] == "1000"))
print("  (protobuf-c: the client decodes every response with protobuf-c, whose CPU on the")
print("   same 2 cores is taken from the daemon; walk+gzip: the client accepts gzip, as")
print("   Connect clients do by default, and the daemon gzips every response (ISA-L at its")
print("   default level, 0; see --gzip-library, --gzip-level, --gzip-min-bytes), which the")
print("   client inflates with libdeflate;")
print("   json: Connect JSON both ways; the goal is read on the walk rows)")
by = {r["client_decode"]: r for r in rows if r["clients"] == "16" and r["batch"] == "1000"}
print()
print("16 clients x 1,000 addresses by codec, median of %d interleaved rounds"
      % by["json"].get("rounds", 1))
for name, key in (("binary", "walk"), ("binary+gzip", "walk+gzip"), ("JSON", "json"),
                  ("JSON+gzip", "json+gzip")):
    r = by.get(key)
    if r:
        print("  %-12s %13s frames/s  p99 %8s ms  %8s B/response  %s" % (
            name, fmt(r["frames_per_second"]), r["latency_p99_ms"],
            fmt(r["response_wire_bytes_avg"]),
            "" if key.startswith("walk") else "%.2f of binary%s" % (
                float(r["frames_per_second"]) /
                float(by[key.replace("json", "walk")]["frames_per_second"]),
                "+gzip" if "gzip" in key else "")))
print("  RPC / in-process frames per second: %.2f (1 client, 1,000) ... %.2f (best)"
      % (float(rows[0]["frames_per_second"]) / (lps * fpa),
         max(float(r["frames_per_second"]) for r in rows) / (lps * fpa)))
# The speed issue's goals (29), each next to this run's figure.
b, z, j = by.get("walk"), by.get("walk+gzip"), by.get("json")
print()
print("goals of the speed issue, against this run (printed, never checked):")
goal = lambda what, target, got: print("  %-34s %-26s %s" % (what, target, got))
goal("warm lookups, one core (--ids)", ">= 60 M/s", "%.1f M/s" % (ids_lps / 1e6))
goal("lookups + response, in process", "<= 60 ns an address",
     "%s ns" % response["run_ns_per_address"])
if b:
    goal("binary, 16 x 1,000", ">= 10 M frames/s, p99 <= 5 ms", "%.2f M, %s ms" % (
        float(b["frames_per_second"]) / 1e6, b["latency_p99_ms"]))
if z:
    goal("binary accepting gzip", ">= 4.5 M frames/s",
         "%.2f M" % (float(z["frames_per_second"]) / 1e6))
if b and j:
    goal("Connect JSON", ">= 0.5 of binary",
         "%.2f" % (float(j["frames_per_second"]) / float(b["frames_per_second"])))
if errors:
    print("  daemon logged %d error line(s)" % errors)
EOF

cat "$tmp/grpc.out"

# The pprof row: a 100k-location profile end to end, next to pprof's own symbolization.
bash "$root/bench/bench_pprof.sh" --build "$build"
