#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_go.sh: the index of a Go binary built from its pclntab (issue 28), next
# to the pclntab's own size.
#
#   bench/bench_go.sh [--build DIR] [--addrs N] [FILE...]
#
# Default file: Debian's Go compiler (/usr/lib/go-1.19/pkg/tool/linux_amd64/compile,
# stripped: no DWARF, no .symtab; ~9 MB of text) and the go command, when
# present. Per file: .text and .gopclntab sizes; bench_lookup's index build
# time (sym_index_build: the pclntab found, read, flattened and packed), blob
# size, and warm lookups per second over N random .text addresses (default
# 200k; full inline chain each, best of 5 passes, one thread). Not a test:
# the figures are printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
n=200000
files=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--addrs) n=$2; shift 2 ;;
	-h|--help) sed -n '2,15p' "$0"; exit 0 ;;
	*) files+=("$1"); shift ;;
	esac
done
if [ ${#files[@]} -eq 0 ]; then
	for f in /usr/lib/go-1.19/pkg/tool/linux_amd64/compile /usr/lib/go-1.19/bin/go; do
		if [ -f "$f" ]; then files+=("$f"); else echo "($f not found: skipped)"; fi
	done
fi
bench=$build/bench/bench_lookup
if [ ! -x "$bench" ]; then
	echo "bench_go: $bench not built (cmake -DSYMBOLIZER_BENCH=ON)" >&2
	exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# section FILE NAME: "addr size" of the section (hex), empty when absent.
section() {
	readelf -SW "$1" | awk -v s="$2" '{for (i = 1; i <= NF; i++) if ($i == s) {print $(i+2), $(i+4); exit}}'
}

printf '%-10s %9s %9s %9s %9s %9s %12s %9s\n' file text_MB pcln_MB build_s blob_MB \
	blob/pcln lookups/s frames
for f in "${files[@]}"; do
	read -r taddr tsize < <(section "$f" .text)
	pcln=$(section "$f" .gopclntab | awk '{print $2}')
	[ -n "$pcln" ] || pcln=$(section "$f" .data.rel.ro.gopclntab | awk '{print $2}')
	python3 - "$taddr" "$tsize" "$n" > "$work/addrs" <<'PY'
import random, sys
lo, size, n = int(sys.argv[1], 16), int(sys.argv[2], 16), int(sys.argv[3])
r = random.Random(28)
sys.stdout.write("".join("%x\n" % (lo + r.randrange(size)) for _ in range(n)))
PY
	"$bench" "$f" "$work/addrs" --passes 5 > "$work/out"
	get() { awk -v k="$1" '$1 == k {print $2}' "$work/out"; }
	python3 - "$(basename "$f")" "$tsize" "${pcln:-0}" "$(get build_seconds)" \
		"$(get blob_bytes)" "$(get lookups_per_second)" "$(get frames_per_address)" <<'PY'
import sys
name, text, pcln, build, blob, lps, frames = sys.argv[1:]
text, pcln, blob = int(text, 16), int(pcln, 16), int(blob)
mb = 1 << 20
print("%-10s %9.1f %9.1f %9.3f %9.1f %9.2f %12.0f %9s" % (
    name, text / mb, pcln / mb, float(build), blob / mb, blob / pcln if pcln else 0,
    float(lps), frames))
PY
done
