#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_otlp.sh: OTLP enrichment next to SymbolizeProfile on the same data
# (issue 27): 100,000 locations in this machine's libc.so.6 (random addresses
# inside its functions, as bench_pprof.sh draws them; 10,000 samples of 10
# frames), once as a pprof profile (runtime addresses) through `symbolctl pprof`
# (SymbolizeProfile) and once as an OTLP ExportProfilesServiceRequest (ELF
# addresses, the mapping named by process.executable.build_id.gnu, built with
# the official .proto, tests/integration/otlp_pb.py) through `symbolctl otlp`
# (SymbolizeOTLP), each against its own symbolizerd with the index warm. Prints
# the best wall time of N runs and the daemon's peak RSS (VmHWM) for each, and
# the ratio.
#
#   bench/bench_otlp.sh [--build DIR] [--locations N] [--runs N]
#
# Needs libc6-dbg, python3-protobuf and protoc (scripts/install-deps.sh). Not a
# test: nothing is checked but that both calls succeeded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
n=100000
runs=5
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--locations) n=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,18p' "$0"; exit 0 ;;
	*) echo "bench_otlp: unknown argument $1" >&2; exit 2 ;;
	esac
done
symbolizerd=$build/cmd/symbolizerd/symbolizerd
symbolctl=$build/cmd/symbolctl/symbolctl
[ -x "$symbolizerd" ] && [ -x "$symbolctl" ] || bash "$root/scripts/build.sh" "$build" >&2
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: //p')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ -f "$dbg" ] || { echo "bench_otlp: no $dbg: install libc6-dbg" >&2; exit 1; }

tmp=$(mktemp -d /tmp/bench_otlp.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

BENCH_INTEGRATION=$root/tests/integration python3 - "$dbg" "$libc" "$bid" "$n" "$tmp" <<'PY'
import os, random, subprocess, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import compare_llvm, otlp_pb, pb
dbg, libc, bid, n, tmp = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
segs = [l.split() for l in subprocess.run(["readelf", "-lW", libc], capture_output=True,
        text=True, check=True).stdout.splitlines() if l.split()[:1] == ["LOAD"]]
seg = next(s for s in segs if "E" in s[6:-1])
off, vaddr, size = int(seg[1], 16), int(seg[2], 16), int(seg[4], 16)
base = 0x7f1000000000
start, page = base + (off & ~0xfff), off & ~0xfff
addrs = compare_llvm.Symbols(dbg, demangle=False).draw(n, random.Random(7))
addrs = [a for a in addrs if vaddr <= a < vaddr + size]
# pprof, as bench_pprof.sh writes it (not gzipped here: the same bytes either way).
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
open(os.path.join(tmp, "in.pb"), "wb").write(bytes(body + m + locs))
# OTLP: the same addresses, ELF virtual addresses as the eBPF profiler sends them.
_, svc, _, _ = otlp_pb.load(tmp)
r = svc.ExportProfilesServiceRequest()
d = r.dictionary
d.string_table.extend(["", "process.executable.build_id.gnu", libc, "samples", "count"])
d.mapping_table.add(); d.location_table.add(); d.function_table.add(); d.stack_table.add()
d.attribute_table.add()
a = d.attribute_table.add(); a.key_strindex = 1; a.value.string_value = bid
mp = d.mapping_table.add(); mp.memory_start = start; mp.file_offset = page
mp.memory_limit = start + (size + (off - page) + 0xfff & ~0xfff); mp.filename_strindex = 2
mp.attribute_indices.append(1)
for x in addrs:
    l = d.location_table.add(); l.mapping_index = 1; l.address = x
p = r.resource_profiles.add().scope_profiles.add().profiles.add()
p.sample_type.type_strindex = 3; p.sample_type.unit_strindex = 4
for s in range(len(addrs) // 10):
    d.stack_table.add().location_indices.extend(range(s * 10 + 1, s * 10 + 11))
    smp = p.samples.add(); smp.stack_index = s + 1; smp.values.append(1)
open(os.path.join(tmp, "in.otlp"), "wb").write(r.SerializeToString())
print("locations:", len(addrs))
PY

# start NAME: a daemon of its own; sets url.
start() {
	"$symbolizerd" --listen 127.0.0.1:0 --data-dir "$tmp/data-$1" --debug-dir /usr/lib/debug \
		--debuginfod-upstream-servers= --workers 2 2> "$tmp/$1.log" &
	pids+=($!)
	pid=$!
	port=""
	for _ in $(seq 1 300); do
		port=$(sed -n 's/.*msg="listening".* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$1.log" | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$tmp/$1.log" >&2; exit 1; }
	url=http://127.0.0.1:$port
}

best_of() {
	local k=$1 best="" t0 t1 s
	shift
	for _ in $(seq 1 "$k"); do
		t0=$(date +%s.%N)
		"$@" > /dev/null
		t1=$(date +%s.%N)
		s=$(python3 -c "print($t1 - $t0)")
		best=$(python3 -c "print(min(x for x in ($s, ${best:-$s})))")
	done
	echo "$best"
}

hwm() { sed -n 's/^VmHWM:\s*//p' "/proc/$1/status"; }

start pprof
"$symbolctl" pprof "$tmp/in.pb" -o "$tmp/warm.pb" --server "$url"   # the index, built once
t_pprof=$(best_of "$runs" "$symbolctl" pprof "$tmp/in.pb" -o "$tmp/out.pb" --server "$url")
m_pprof=$(hwm "$pid")
start otlp
"$symbolctl" otlp "$tmp/in.otlp" -o "$tmp/warm.otlp" --server "$url"
t_otlp=$(best_of "$runs" "$symbolctl" otlp "$tmp/in.otlp" -o "$tmp/out.otlp" --server "$url")
m_otlp=$(hwm "$pid")
printf '%-28s %10s %14s\n' "" "best wall" "daemon VmHWM"
printf '%-28s %9.3fs %14s\n' "SymbolizeProfile (pprof)" "$t_pprof" "$m_pprof"
printf '%-28s %9.3fs %14s\n' "SymbolizeOTLP (OTLP)" "$t_otlp" "$m_otlp"
python3 -c "print('OTLP / pprof time: %.2fx' % ($t_otlp / $t_pprof))"
BENCH_INTEGRATION=$root/tests/integration python3 - "$tmp" <<'PY'
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import otlp_pb
_, svc, _, _ = otlp_pb.load(sys.argv[1])
r = svc.ExportProfilesServiceRequest()
r.ParseFromString(open(os.path.join(sys.argv[1], "out.otlp"), "rb").read())
locs = r.dictionary.location_table
print("OTLP locations with lines: %d of %d" % (sum(1 for l in locs if l.lines), len(locs) - 1))
PY
