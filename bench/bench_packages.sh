#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_packages.sh: package archives as a source (issue 12) on Debian's kernel
# debug package (scripts/fetch-kernel-dbg.sh downloads it once), next to
# elfutils debuginfod (-U) serving the same .deb, in the same run.
#
#   bench/bench_packages.sh [--build DIR] [--deb FILE] [--no-debuginfod]
#
# symbolizerd: catalogue scan time (its log) and peak RSS when the scan ends;
# then 30 modules picked at random (fixed seed) from its catalogue, symbolized
# through the cold daemon (catalogue built, store empty) in one Symbolize call
# with 30 mappings and one address each (member extracted, checked, stored,
# indexed), the same 30 fetched as files on /buildid/ID/debuginfo, and 30 other
# modules fetched cold as files one at a time. debuginfod (-U, which needs
# bsdtar): scan time (until its scanner is idle), peak RSS, debuginfod-find
# debuginfo for the same 30 build IDs and for the 30 others.
# Goals: scan <= 20 s, 30 modules <= 5 s, peak <= 512 MB during the scan.
# Not a test: the figures are printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
deb=
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--deb) deb=$2; shift 2 ;;
	--no-debuginfod) extra+=(--no-debuginfod); shift ;;
	-h|--help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "bench_packages.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$deb" ] || deb=$(bash "$root/scripts/fetch-kernel-dbg.sh")
exec python3 "$root/bench/bench_packages.py" --symbolizerd "$build/cmd/symbolizerd/symbolizerd" \
	--deb "$deb" "${extra[@]}"
