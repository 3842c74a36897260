#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_pprof.sh: the pprof row of bench_rpc.sh (which calls it): a profile of
# 100,000 locations in this machine's libc.so.6 (random addresses inside its
# functions, 10,000 samples of 10 frames, gzipped), symbolized end to end by
# `symbolctl pprof` through symbolizerd (warm index), next to pprof's own
# symbolization of the same profile (-symbolize=local, through llvm-symbolizer,
# the binary found through PPROF_BINARY_PATH), each writing a symbolized
# profile. Prints both wall times and locations/s. The pprof is the one in Go's
# source tree (what `go tool pprof` is made of), built offline with its
# upstream driver, since `go tool pprof` itself reads lines of Go binaries only.
#
#   bench/bench_pprof.sh [--build DIR] [--locations N] [--runs N]
#
# Needs libc6-dbg, golang-go and llvm (scripts/install-deps.sh). Not a test:
# nothing is checked but that both wrote a profile with lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
n=100000
runs=3
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--locations) n=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "bench_pprof: unknown argument $1" >&2; exit 2 ;;
	esac
done
symbolizerd=$build/cmd/symbolizerd/symbolizerd
symbolctl=$build/cmd/symbolctl/symbolctl
[ -x "$symbolizerd" ] && [ -x "$symbolctl" ] || bash "$root/scripts/build.sh" "$build" >&2
for t in go llvm-symbolizer readelf python3; do
	command -v $t >/dev/null || { echo "bench_pprof: $t not found (scripts/install-deps.sh)" >&2; exit 1; }
done
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: //p')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ -f "$dbg" ] || { echo "bench_pprof: no $dbg: install libc6-dbg" >&2; exit 1; }

tmp=$(mktemp -d /tmp/bench_pprof.XXXXXX)
daemon_pid=""
cleanup() {
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
	fi
	[ -n "${BENCH_PPROF_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

# The profile: libc's executable segment mapped at 0x7f1000000000 + its offset.
BENCH_INTEGRATION=$root/tests/integration python3 - "$dbg" "$libc" "$bid" "$n" "$tmp/in.pb.gz" <<'PY'
import gzip, os, random, subprocess, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import compare_llvm, pb
dbg, libc, bid, n, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
segs = [l.split() for l in subprocess.run(["readelf", "-lW", libc], capture_output=True,
        text=True, check=True).stdout.splitlines() if l.split()[:1] == ["LOAD"]]
seg = next(s for s in segs if "E" in s[6:-1])
off, vaddr, size = int(seg[1], 16), int(seg[2], 16), int(seg[4], 16)
base = 0x7f1000000000
start, page = base + (off & ~0xfff), off & ~0xfff
addrs = compare_llvm.Symbols(dbg, demangle=False).draw(n, random.Random(7))
addrs = [a for a in addrs if vaddr <= a < vaddr + size]
v = pb.varint
body = bytearray(pb.field_bytes(1, pb.field_varint(1, 1) + pb.field_varint(2, 2)))
for s in range(len(addrs) // 10):
    b = pb.field_bytes(1, b"".join(v(s * 10 + j + 1) for j in range(10))) + pb.field_bytes(2, v(1))
    body += pb.field_bytes(2, b)
locs = bytearray()
for i, a in enumerate(addrs):
    locs += pb.field_bytes(4, pb.field_varint(1, i + 1) + pb.field_varint(2, 1) +
                           pb.field_varint(3, a - vaddr + off - page + start))
for s in ("", "samples", "count", libc, bid):
    locs += pb.field_bytes(6, s)
m = pb.field_bytes(3, pb.field_varint(1, 1) + pb.field_varint(2, start) +
                   pb.field_varint(3, start + (size + (off - page) + 0xfff & ~0xfff)) +
                   pb.field_varint(4, page) + pb.field_varint(5, 3) + pb.field_varint(6, 4))
open(out, "wb").write(gzip.compress(bytes(body + m + locs)))
print(len(addrs))
PY

"$symbolizerd" --listen 127.0.0.1:0 --data-dir "$tmp/data" --debug-dir /usr/lib/debug \
	--debuginfod-upstream-servers= --workers 2 2> "$tmp/daemon.log" &
daemon_pid=$!
port=""
for _ in $(seq 1 300); do
	port=$(sed -n 's/.*msg="listening".* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/daemon.log" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$tmp/daemon.log" >&2; exit 1; }
url=http://127.0.0.1:$port
"$symbolctl" pprof "$tmp/in.pb.gz" -o "$tmp/warm.pb.gz" --server "$url"   # the index, built once

# best_of N CMD...: the best wall time of N runs, in seconds.
best_of() {
	local k=$1 best="" t0 t1 s
	shift
	for _ in $(seq 1 "$k"); do
		t0=$(date +%s.%N)
		"$@" > /dev/null 2>> "$tmp/cmd.log"
		t1=$(date +%s.%N)
		s=$(python3 -c "print($t1 - $t0)")
		best=$(python3 -c "print(min(x for x in ($s, ${best:-$s})))")
	done
	echo "$best"
}
ours=$(best_of "$runs" "$symbolctl" pprof "$tmp/in.pb.gz" -o "$tmp/ours.pb.gz" --server "$url")

# `go tool pprof` (Go's cmd/pprof) symbolizes with Go's own object reader,
# which finds no lines in a C library; the pprof driver of Go's source tree
# (cmd/vendor/github.com/google/pprof, the upstream code) built as is uses
# llvm-symbolizer (internal/binutils). Built offline from that copy.
goroot=$(go env GOROOT)
gob=$tmp/gob
mkdir -p "$gob/vendor/github.com/google" "$gob/vendor/github.com/ianlancetaylor" "$tmp/bin/$bid"
cp -r "$goroot/src/cmd/vendor/github.com/google/pprof" "$gob/vendor/github.com/google/"
cp -r "$goroot/src/cmd/vendor/github.com/ianlancetaylor/demangle" "$gob/vendor/github.com/ianlancetaylor/"
awk '/^# /{keep = ($2 == "github.com/google/pprof" || $2 == "github.com/ianlancetaylor/demangle")} keep' \
	"$goroot/src/cmd/vendor/modules.txt" > "$gob/vendor/modules.txt"
{
	echo "module pprofbench"; echo; echo "go 1.17"; echo; echo "require ("
	sed -n 's/^# \(\S*\) \(\S*\)$/\t\1 \2/p' "$gob/vendor/modules.txt"; echo ")"
} > "$gob/go.mod"
cat > "$gob/main.go" <<'GO'
package main

import (
	"os"

	"github.com/google/pprof/driver"
)

func main() {
	if err := driver.PProf(&driver.Options{}); err != nil {
		os.Exit(2)
	}
}
GO
export HOME=$tmp GOPATH=$tmp/go GOCACHE=$tmp/go/cache GOPROXY=off GOFLAGS=-mod=vendor \
	GOTOOLCHAIN=local PPROF_TMPDIR=$tmp
(cd "$gob" && go build -o "$tmp/pprof" .) || { echo "bench_pprof: could not build pprof" >&2; exit 1; }
# The executable by build ID: pprof checks it; llvm-symbolizer finds its debug
# file by build ID under /usr/lib/debug, as the daemon does.
ln -s "$libc" "$tmp/bin/$bid/$(basename "$libc")"
export PPROF_BINARY_PATH=$tmp/bin
theirs=$(best_of "$runs" "$tmp/pprof" -symbolize=local -proto -output "$tmp/theirs.pb.gz" \
	"$tmp/in.pb.gz")
"$tmp/pprof" -symbolize=none -top -lines "$tmp/theirs.pb.gz" 2>/dev/null | grep -q "\.[ch]:[0-9]" ||
	echo "bench_pprof: warning: pprof's profile has no lines" >&2

locs=$(python3 -c "
import gzip, sys
sys.path.insert(0, '$root/tests/integration')
import profile_pb
p = profile_pb.decode(gzip.decompress(open('$tmp/ours.pb.gz', 'rb').read()))
print(len(p['location']), sum(1 for l in p['location'] if l['line']))")
set -- $locs
echo
echo "pprof profile symbolization, $1 locations in libc.so.6 (gzipped profile in, out; best of $runs)"
python3 -c "
n = $1
print('  %-52s %8.3f s %12s locations/s' % ('symbolctl pprof via symbolizerd (warm index)', $ours, format(int(n / $ours), ',')))
print('  %-52s %8.3f s %12s locations/s' % ('pprof -symbolize=local (llvm-symbolizer)', $theirs, format(int(n / $theirs), ',')))
print('  (%d of the locations symbolized by the daemon; ratio %.1fx)' % ($2, $theirs / $ours))"
