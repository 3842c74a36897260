#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_soak.sh: symbolizerd under 16 clients for 10 minutes, with cold build
# IDs mixed in and a hostile upstream alongside (issue 11): RSS over time,
# errors, p99 next to the quiet figure. Not a test: the figures are printed.
#
#   bench/bench_soak.sh [--build DIR] [--short] [--duration SECONDS] [--clients N]
#
# --short: 30 seconds (a smoke run). Good build IDs: the debug files of
# /usr/lib/debug (libc6-dbg and the other -dbg packages of install-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--short) args+=(--duration 30); shift ;;
	-h|--help) sed -n '2,10p' "$0"; exit 0 ;;
	*) args+=("$1"); shift ;;
	esac
done
exec python3 "$root/bench/bench_soak.py" --symbolizerd "$build/cmd/symbolizerd/symbolizerd" "${args[@]}"
