#!/usr/bin/env bash
# Installs what is needed, builds, and runs the service on its embedded defaults.
# Until the daemon exists this runs symbolctl addr2line on this machine's libc
# (its Debian debug file), reading addresses from stdin.
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
