#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Downloads Go 1.15 (Debian bullseye's golang-1.15-go and golang-1.15-src,
# 1.15.15-1~deb11u4, ~61 MB) from deb.debian.org, checks them against the
# SHA256 sums of bullseye's main/binary-amd64 Packages index (pinned below),
# unpacks them with dpkg-deb -x into a cache outside the clone, once, and
# prints the GOROOT. Used by tests/integration/go_test.py --go115 (the Go
# 1.2-format pclntab, Go 1.12-1.15's inline tree). Cache:
# $SYMBOLIZER_GO115_CACHE, default /var/cache/symbolizer-test/go1.15. amd64 only.
set -euo pipefail
dir=${SYMBOLIZER_GO115_CACHE:-/var/cache/symbolizer-test/go1.15}
base=http://deb.debian.org/debian/pool/main/g/golang-1.15
ver=1.15.15-1~deb11u4
declare -A sums=(
  [golang-1.15-go]=33f6680406698b60370322aa5710be199006b3d66fbb0974b44da012de3aa82a
  [golang-1.15-src]=e580f570f706d801191f9a17e55156736fc5979a6a878bab9304ca007ae29941
)
root=$dir/root/usr/lib/go-1.15
if [ -x "$root/bin/go" ] && [ -f "$root/src/runtime/symtab.go" ] && [ -f "$dir/root/.complete" ]; then
  echo "$root"
  exit 0
fi
if [ "$(dpkg --print-architecture 2>/dev/null || uname -m)" != amd64 ] &&
   [ "$(uname -m)" != x86_64 ]; then
  echo "fetch-go115: amd64 only" >&2
  exit 1
fi
mkdir -p "$dir"
exec 9>"$dir/.lock"   # one download and unpack at a time (build trees in parallel)
flock 9
if [ -x "$root/bin/go" ] && [ -f "$dir/root/.complete" ]; then
  echo "$root"
  exit 0
fi
for pkg in golang-1.15-go golang-1.15-src; do
  deb=$dir/${pkg}_${ver}_amd64.deb
  if [ ! -f "$deb" ] || ! echo "${sums[$pkg]}  $deb" | sha256sum -c --quiet - >/dev/null 2>&1; then
    curl -sSfL --retry 3 -o "$deb.part" "$base/${pkg}_${ver}_amd64.deb"
    if ! echo "${sums[$pkg]}  $deb.part" | sha256sum -c --quiet -; then
      rm -f "$deb.part"
      echo "fetch-go115: $pkg: SHA256 differs from bullseye's Packages index" >&2
      exit 1
    fi
    mv "$deb.part" "$deb"
  fi
done
rm -rf "$dir/root.part"
mkdir -p "$dir/root.part"
for pkg in golang-1.15-go golang-1.15-src; do
  dpkg-deb -x "$dir/${pkg}_${ver}_amd64.deb" "$dir/root.part"
done
touch "$dir/root.part/.complete"
rm -rf "$dir/root"
mv "$dir/root.part" "$dir/root"
"$root/bin/go" version >&2
echo "$root"
