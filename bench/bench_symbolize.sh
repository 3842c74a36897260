#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_symbolize.sh: our symbolizer and its peers side by side, measured in the same run.
#
#   bench/bench_symbolize.sh [--build DIR] [--warm N] [--cold N]
#   bench/bench_symbolize.sh --vmlinux [PATH] [--build DIR] [--addrs N]
#
# Default mode, on this machine's libc.so.6 debug file (Debian's libc6-dbg):
#   warm   lookups/second with the index in memory (bench_lookup, one core, best
#          of 5 passes over N random addresses inside functions, default 1M);
#          llvm-symbolizer has no in-memory mode: its whole-process rate is shown
#   cold   whole processes over the same N addresses (default 100k), index build
#          included: symbolctl addr2line vs llvm-symbolizer --obj vs binutils
#          addr2line -f -i -e (hyperfine, 1 warmup + 3 runs, else best of 3 by date)
#   size   index blob bytes, and as a fraction of the DWARF sections it came from,
#          as stored (compressed) and decompressed
# --vmlinux: a Linux kernel debug file (PATH, or Debian's linux-image-amd64-dbg,
# installed with apt-get, ~600 MB download): index build time and peak memory
# (/usr/bin/time -v) of symbolctl vs llvm-symbolizer on a few thousand addresses.
#
# Needs a built tree (default: build/, from scripts/build.sh build). Not a test:
# no figure here is checked, they are printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
mode=libc
vmlinux=""
n_warm=1000000
n_cold=100000
n_vm=5000
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--warm) n_warm=$2; shift 2 ;;
	--cold) n_cold=$2; shift 2 ;;
	--addrs) n_vm=$2; shift 2 ;;
	--vmlinux)
		mode=vmlinux
		if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then vmlinux=$2; shift; fi
		shift ;;
	-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "bench_symbolize: unknown argument $1" >&2; exit 2 ;;
	esac
done

symbolctl=$build/cmd/symbolctl/symbolctl
bench_lookup=$build/bench/bench_lookup
for t in "$symbolctl" "$bench_lookup"; do
	[ -x "$t" ] || { echo "bench_symbolize: $t not built (bash scripts/build.sh ${build#$root/})" >&2; exit 1; }
done
for t in llvm-symbolizer addr2line readelf python3; do
	command -v $t >/dev/null || { echo "bench_symbolize: $t not found (scripts/install-deps.sh)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/bench_symbolize.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# sample FILE N SEED OUT: N random addresses inside FUNC symbols, one hex per line.
sample() {
	python3 - "$1" "$2" "$3" "$4" <<'EOF'
import os, random, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["BENCH_INTEGRATION"])
import compare_llvm
syms = compare_llvm.Symbols(sys.argv[1], demangle=False)
addrs = syms.draw(int(sys.argv[2]), random.Random(int(sys.argv[3])))
with open(sys.argv[4], "w") as f:
    f.write("".join("0x%x\n" % a for a in addrs))
EOF
}
export BENCH_INTEGRATION=$root/tests/integration

# dwarf_sizes FILE: "stored decompressed" total bytes of the .debug_*/.zdebug_* sections.
dwarf_sizes() {
	python3 - "$1" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
    sys.exit("not a 64-bit little-endian ELF file")
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
stroff = secs[shstrndx][4]
def name(s):
    end = data.index(b"\0", stroff + s[0])
    return data[stroff + s[0]:end].decode()
stored = full = 0
for s in secs:
    n = name(s)
    if not (n.startswith(".debug_") or n.startswith(".zdebug_")) or s[1] == 8:  # NOBITS
        continue
    stored += s[5]
    if s[2] & 0x800:                        # SHF_COMPRESSED: Elf64_Chdr.ch_size
        full += struct.unpack_from("<Q", data, s[4] + 8)[0]
    elif n.startswith(".zdebug_") and data[s[4]:s[4] + 4] == b"ZLIB":
        full += struct.unpack_from(">Q", data, s[4] + 4)[0]
    else:
        full += s[5]
print(stored, full)
EOF
}

# wall SECONDS of the fastest of 3 runs of a shell command (hyperfine if present).
wall() {
	if command -v hyperfine >/dev/null; then
		hyperfine -N --warmup 1 --runs 3 --export-json "$tmp/h.json" "$1" >/dev/null 2>&1 ||
			hyperfine --warmup 1 --runs 3 --export-json "$tmp/h.json" "$1" >/dev/null
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f" % min(r["times"]))' "$tmp/h.json"
	else
		best=""
		for _ in 1 2 3; do
			t0=$(date +%s.%N); bash -c "$1"; t1=$(date +%s.%N)
			best=$(python3 -c "import sys; t=$t1-$t0; b='$best'; print('%.3f' % (min(t, float(b)) if b else t))")
		done
		echo "$best"
	fi
}

# peak CMD...: "seconds max_rss_kib" of one run under /usr/bin/time -v.
peak() {
	/usr/bin/time -v -o "$tmp/time.txt" "$@" >/dev/null
	python3 - "$tmp/time.txt" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)", t)
h, mi, s = m.group(1), m.group(2), m.group(3)
secs = (int(h) * 3600 if h else 0) + int(mi) * 60 + float(s)
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)
print("%.2f %s" % (secs, rss))
EOF
}

if [ "$mode" = libc ]; then
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)
	[ -n "$libc" ] || libc=$(readlink -f "$(gcc -print-file-name=libc.so.6)")
	bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: //p')
	dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
	[ -f "$dbg" ] || { echo "bench_symbolize: no $dbg: install libc6-dbg" >&2; exit 1; }
	echo "== bench_symbolize on $libc's debug file"
	echo "   $dbg ($(stat -c %s "$dbg") bytes), $(nproc) CPUs, $(uname -m)"
	sample "$dbg" "$n_warm" 1 "$tmp/warm.txt"
	head -n "$n_cold" "$tmp/warm.txt" > "$tmp/cold.txt"
	n_cold=$(wc -l < "$tmp/cold.txt")

	# Warm: ours in memory.
	"$bench_lookup" "$dbg" "$tmp/warm.txt" --blob-out "$tmp/index.blob" > "$tmp/warm.out"
	get() { sed -n "s/^$1 //p" "$tmp/warm.out"; }

	# Cold: whole processes on the same list.
	t_ours=$(wall "sh -c '$symbolctl addr2line -e $dbg < $tmp/cold.txt > /dev/null'")
	t_llvm=$(wall "sh -c 'llvm-symbolizer --obj=$dbg --inlining < $tmp/cold.txt > /dev/null'")
	t_binu=$(wall "sh -c 'addr2line -f -i -e $dbg < $tmp/cold.txt > /dev/null'")
	t_ours_idx=$(wall "sh -c '$symbolctl addr2line --index $tmp/index.blob < $tmp/cold.txt > /dev/null'")
	read -r stored full < <(dwarf_sizes "$dbg")
	blob=$(get blob_bytes)

	python3 - "$n_warm" "$n_cold" "$(get lookups_per_second)" "$(get ns_per_lookup)" \
		"$(get build_seconds)" "$(get frames_per_address)" "$(get found)" \
		"$t_ours" "$t_llvm" "$t_binu" "$t_ours_idx" "$blob" "$stored" "$full" <<'EOF'
import sys
(n_warm, n_cold, lps, ns, build, fpa, found, t_ours, t_llvm, t_binu, t_idx, blob, stored,
 full) = sys.argv[1:]
n_warm, n_cold = int(n_warm), int(n_cold)
t_ours, t_llvm, t_binu, t_idx = map(float, (t_ours, t_llvm, t_binu, t_idx))
blob, stored, full = int(blob), int(stored), int(full)
peer = min(t_llvm, t_binu)
print()
print("warm lookups, index in memory, one core (%d random addresses in functions)" % n_warm)
print("  %-34s %14s lookups/s  (%s ns each, %s frames/address, %s/%d found)"
      % ("ours (bench_lookup)", format(int(float(lps)), ","), ns, fpa, found, n_warm))
print("  %-34s %14s lookups/s  (whole process over %d; no in-memory mode)"
      % ("llvm-symbolizer, for reference", format(int(n_cold / t_llvm), ","), n_cold))
print("  goal: >= 10,000,000/s")
print()
print("cold, whole process, %d addresses, index build included (best of 3)" % n_cold)
print("  %-34s %8.3f s" % ("symbolctl addr2line -e", t_ours))
print("  %-34s %8.3f s" % ("llvm-symbolizer --obj", t_llvm))
print("  %-34s %8.3f s" % ("addr2line -f -i -e (binutils)", t_binu))
print("  %-34s %8.3f s  (index build excluded)" % ("symbolctl addr2line --index", t_idx))
print("  ours / faster peer: %.2f  (goal <= 0.50); index build in-process: %s s"
      % (t_ours / peer, build))
print()
print("index size")
print("  %-34s %14s bytes" % ("index blob", format(blob, ",")))
print("  %-34s %14s bytes  -> index is %.3f of it" % ("DWARF sections as stored", format(stored, ","),
                                                     blob / stored))
print("  %-34s %14s bytes  -> index is %.3f of it" % ("DWARF sections decompressed",
                                                     format(full, ","), blob / full))
print("  goal: <= 0.2")
EOF
	exit 0
fi

# --vmlinux
if [ -z "$vmlinux" ]; then
	vmlinux=$(ls -1 /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$vmlinux" ]; then
		echo "bench_symbolize: installing linux-image-amd64-dbg (about 600 MB download)" >&2
		[ "$(id -u)" = 0 ] || { echo "bench_symbolize: run as root, or pass --vmlinux PATH" >&2; exit 1; }
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends linux-image-amd64-dbg >&2
		vmlinux=$(ls -1 /usr/lib/debug/boot/vmlinux-* | sort -V | tail -1)
	fi
fi
[ -f "$vmlinux" ] || { echo "bench_symbolize: no such file $vmlinux" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench_symbolize: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
echo "== bench_symbolize --vmlinux $vmlinux ($(stat -c %s "$vmlinux") bytes)"
sample "$vmlinux" "$n_vm" 1 "$tmp/vm.txt"
read -r o_s o_kb < <(peak sh -c "$symbolctl addr2line -e $vmlinux < $tmp/vm.txt")
read -r l_s l_kb < <(peak sh -c "llvm-symbolizer --obj=$vmlinux --inlining < $tmp/vm.txt")
read -r b_s b_kb < <(peak "$bench_lookup" "$vmlinux" "$tmp/vm.txt" --passes 1 --blob-out "$tmp/vm.blob")
"$bench_lookup" "$vmlinux" "$tmp/vm.txt" --passes 1 > "$tmp/vm.out"
build_s=$(sed -n 's/^build_seconds //p' "$tmp/vm.out")
read -r stored full < <(dwarf_sizes "$vmlinux")
blob=$(stat -c %s "$tmp/vm.blob")
printf '\n%d addresses, one process each, index build included\n' "$(wc -l < "$tmp/vm.txt")"
printf '  %-34s %8s s  peak %8d MiB\n' "symbolctl addr2line -e" "$o_s" $((o_kb / 1024))
printf '  %-34s %8s s  peak %8d MiB\n' "llvm-symbolizer --obj" "$l_s" $((l_kb / 1024))
printf '  %-34s %8s s  peak %8d MiB  (index build alone: %s s)\n' "bench_lookup (build+load+lookup)" "$b_s" $((b_kb / 1024)) "$build_s"
printf '  goal: build <= 30 s, peak <= 2048 MiB\n'
python3 -c 'import sys; b,s,f=map(int,sys.argv[1:]); print("  index %s bytes: %.3f of the DWARF sections as stored (%s), %.3f decompressed (%s)" % (format(b,","), b/s, format(s,","), b/f, format(f,",")))' "$blob" "$stored" "$full"
