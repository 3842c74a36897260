#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is needed, builds, and runs symbolizerd on its embedded defaults:
# 127.0.0.1:8080, store in ~/.local/state/symbolizer, debug info from /usr/lib/debug, then
# $DEBUGINFOD_URLS or https://debuginfod.elfutils.org/. Arguments go to symbolizerd.
# (Without a built daemon it falls back to symbolctl addr2line on this machine's libc.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
if [ -x build/cmd/symbolizerd/symbolizerd ]; then
  exec build/cmd/symbolizerd/symbolizerd "$@"
fi
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
echo "symbolctl addr2line -e $libc: type addresses (hex), one per line" >&2
exec build/cmd/symbolctl/symbolctl addr2line -e "$libc" "$@"
