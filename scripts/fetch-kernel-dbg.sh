#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Downloads Debian's current kernel debug package (linux-image-*-cloud-amd64-dbg,
# ~280 MB) with `apt-get download` into a cache outside the clone, once, and
# prints its path. Used by tests/integration/package_kernel_test.py and
# bench/bench_packages.sh. Cache: $SYMBOLIZER_KERNEL_CACHE, default
# /var/cache/symbolizer-test/kernel. With no apt index or network, the newest
# package already in the cache is used.
set -euo pipefail
dir=${SYMBOLIZER_KERNEL_CACHE:-/var/cache/symbolizer-test/kernel}
mkdir -p "$dir"
newest() {
  apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-cloud-amd64-dbg$' 2>/dev/null |
    awk '{print $1}' | sort -V | tail -1
}
pkg=$(newest)
if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq >&2 || true
  pkg=$(newest)
fi
cached() {
  # complete files only: apt-get download writes to a partial name first. An empty
  # cache is the normal first run: no match prints nothing and succeeds (no `ls` on a
  # glob that matches nothing, which would end the script under pipefail).
  local f found=()
  for f in "$dir"/$1_*.deb; do
    [ -f "$f" ] && found+=("$f")
  done
  [ ${#found[@]} -eq 0 ] || printf '%s\n' "${found[@]}" | sort -V | tail -1
}
if [ -n "$pkg" ]; then
  have=$(cached "$pkg")
  if [ -z "$have" ]; then
    (cd "$dir" && apt-get download "$pkg" >&2)
    have=$(cached "$pkg")
  fi
else
  have=$(cached 'linux-image-*-cloud-amd64-dbg')
fi
if [ -z "$have" ] || ! dpkg-deb --info "$have" >/dev/null 2>&1; then
  echo "fetch-kernel-dbg: no usable kernel debug package in $dir" >&2
  exit 1
fi
echo "$have"
