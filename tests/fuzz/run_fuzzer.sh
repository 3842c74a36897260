#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer target for a bounded time: new inputs go to a scratch
# corpus in the build tree, the committed seeds are read only.
# Usage: run_fuzzer.sh FUZZER SEED_DIR WORK_DIR SECONDS
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work"
exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 \
  -max_len=262144 -print_final_stats=1 "$work" "$seeds"
