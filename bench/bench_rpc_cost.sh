#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_rpc_cost.sh: what one Symbolize call costs symbolizerd, counted rather
# than timed, so that two builds can be compared on a machine that is busy.
#
#   bench/bench_rpc_cost.sh [--build DIR] [--against DIR] [--requests N]
#                           [--json | --grpc]
#
# Wall-clock figures (bench_rpc.sh) move by 2x on a shared 2-core machine;
# instruction counts do not. For each build (DIR, and the --against DIR of
# another commit when given), symbolizerd runs under valgrind's callgrind on
# libc's debug file (as bench_rpc.sh sets it up), is warmed with one request,
# then serves 16 clients x 5 requests x 1,000 addresses and, in a second run,
# 16 x (5 + N) (default N = 15). The difference of the two runs' totals over
# 16 x N requests is the daemon's instructions per request: parsing, lookups,
# response, encoding, the event loop and the workers' hand-off; index build
# and start-up cancel out. Printed per request and per address, the builds
# side by side, with the top functions of the second run (index build
# included there, so read them as a guide). --json makes the requests Connect
# JSON; --grpc makes them gRPC calls on h2c (bench_rpc --grpc, nghttp2, one
# connection per client). Needs valgrind (scripts/install-deps.sh). Not a test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
builds=("$root/build")
requests=15
codec=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) builds[0]=$(cd "$2" && pwd); shift 2 ;;
	--against) builds+=("$(cd "$2" && pwd)"); shift 2 ;;
	--requests) requests=$2; shift 2 ;;
	--json) codec=(--json); shift ;;
	--grpc) codec=(--grpc); shift ;;
	-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "bench_rpc_cost: unknown argument $1" >&2; exit 2 ;;
	esac
done
command -v valgrind >/dev/null || { echo "bench_rpc_cost: valgrind not found (scripts/install-deps.sh)" >&2; exit 1; }

libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: //p')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ -f "$dbg" ] || { echo "bench_rpc_cost: no $dbg: install libc6-dbg" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench_rpc_cost.XXXXXX)
daemon_pid=""
cleanup() {
	[ -z "$daemon_pid" ] || kill -TERM "$daemon_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

BENCH_INTEGRATION=$root/tests/integration python3 - "$dbg" 200000 1 "$tmp/addrs.txt" <<'EOF'
import os, random, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import compare_llvm
syms = compare_llvm.Symbols(sys.argv[1], demangle=False)
addrs = syms.draw(int(sys.argv[2]), random.Random(int(sys.argv[3])))
with open(sys.argv[4], "w") as f:
    f.write("".join("0x%x\n" % a for a in addrs))
EOF

# one_run BUILD PER_CLIENT OUT: the daemon's instruction total over a run.
one_run() {
	local build=$1 per=$2 out=$3 port=""
	rm -rf "$tmp/data"
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$build/cmd/symbolizerd/symbolizerd" --listen 127.0.0.1:0 --data-dir "$tmp/data" \
		--debug-dir /usr/lib/debug --debuginfod-upstream-servers= --workers 2 \
		--default-wait 120s 2> "$tmp/daemon.log" &
	daemon_pid=$!
	for _ in $(seq 1 1200); do
		port=$(sed -n 's/.*msg="listening".* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/daemon.log" | head -1)
		[ -n "$port" ] && break
		kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/daemon.log" >&2; exit 1; }
		sleep 0.1
	done
	[ -n "$port" ] || { echo "bench_rpc_cost: symbolizerd did not listen" >&2; exit 1; }
	"$build/bench/bench_rpc" --port "$port" --build-id "$bid" --addrs "$tmp/addrs.txt" \
		--batch 1000 --warm > /dev/null
	"$build/bench/bench_rpc" --port "$port" --build-id "$bid" --addrs "$tmp/addrs.txt" \
		--clients 16 --batch 1000 --requests "$per" --seed 1600999 \
		${codec[@]+"${codec[@]}"} > "$tmp/run.out"
	grep -q '^not_ok_responses 0$' "$tmp/run.out" ||
		{ echo "bench_rpc_cost: responses not OK" >&2; exit 1; }
	kill -TERM "$daemon_pid"
	wait "$daemon_pid" || true
	daemon_pid=""
	sed -n 's/^summary: //p' "$out"
}

echo "== bench_rpc_cost: symbolizerd instructions per Symbolize call (callgrind)"
echo "   $dbg, 16 clients x $requests requests x 1,000 addresses${codec[*]:+, ${codec[*]#--}}"
printf "   %-44s %16s %14s\n" "build" "instr/request" "instr/address"
i=0
for b in "${builds[@]}"; do
	small=$(one_run "$b" 5 "$tmp/small.$i.cg")
	large=$(one_run "$b" $((5 + requests)) "$tmp/large.$i.cg")
	per=$(( (large - small) / (16 * requests) ))
	printf "   %-44s %16s %14s\n" "$b" "$(printf "%'d" "$per")" "$(printf "%'d" $((per / 1000)))"
	i=$((i + 1))
done
echo
echo "   top functions of the larger run of $(basename "${builds[0]}") (index build included):"
callgrind_annotate "$tmp/large.0.cg" 2>/dev/null | sed -n '/file:function/,$p' | sed -n '3,17p' |
	sed -E 's/ \[[^]]*\]$//; s/^/   /' | cut -c1-110
