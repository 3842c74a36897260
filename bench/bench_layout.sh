#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_layout.sh: the type-layout index (symbolctl layout, issue 14) next to
# pahole --sizes on the same file, in the same run.
#
#   bench/bench_layout.sh [--build DIR] [FILE...]
#
# Default files: libpython3.11d.so (python3.11-dbg) and, when one is found, a
# kernel vmlinux (/usr/lib/debug/boot/vmlinux-*, Debian's linux-image-*-dbg);
# skipped when absent. Per file: layout index build time, peak RSS (the whole
# bench_layout process: file mapped, DWARF walked, blob written), blob size,
# types, warm latency of a 20-path query batch; pahole --sizes wall time and
# peak RSS. Not a test: the figures are printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
files=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	-h|--help) sed -n '2,13p' "$0"; exit 0 ;;
	*) files+=("$1"); shift ;;
	esac
done
if [ ${#files[@]} -eq 0 ]; then
	files=(/usr/lib/x86_64-linux-gnu/libpython3.11d.so.1.0)
	vm=$(ls /usr/lib/debug/boot/vmlinux-* 2>/dev/null | head -1 || true)
	if [ -n "$vm" ]; then files+=("$vm"); else echo "(no vmlinux found: skipped)"; fi
fi
bench=$build/bench/bench_layout
[ -x "$bench" ] || { echo "bench_layout.sh: build $bench first" >&2; exit 1; }
# time_v CMD...: "seconds peak_kb" of one run (stdout of CMD discarded).
time_v() {
	/usr/bin/time -f '%e %M' -o "$build/bench_layout.$BASHPID.time" "$@" >/dev/null 2>&1 || true
	cat "$build/bench_layout.$BASHPID.time"
	rm -f "$build/bench_layout.$BASHPID.time"
}
for f in "${files[@]}"; do
	echo "== $f ($(stat -c %s "$f") bytes)"
	"$bench" "$f" | sed 's/^/  layout index: /'
	read -r s kb < <(time_v "$bench" "$f")
	echo "  layout index: process ${s} s, peak RSS $((kb / 1024)) MB"
	read -r s kb < <(time_v pahole --sizes "$f")
	echo "  pahole --sizes: ${s} s, peak RSS $((kb / 1024)) MB"
done
