#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything the project needs to build, run and test, from Debian 12's
# packages (run as root). Safe to run again: apt-get skips what is installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
PKGS=(
  # build
  build-essential cmake pkg-config clang libclang-rt-14-dev
  # libraries
  libdw-dev libelf-dev libiberty-dev zlib1g-dev libzstd-dev
  libevent-dev libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev librocksdb-dev
  # JSON (json-c): Connect JSON requests (service/rpc), GET /buildid/ID/status;
  # gzip of responses (ISA-L's igzip by default, libdeflate with --gzip-library;
  # bench_rpc inflates with libdeflate): service/rpc
  libjson-c-dev libdeflate-dev libisal-dev
  # mimalloc, symbolizerd's malloc (not in the sanitizer builds): json-c's
  # thousands of small objects per JSON call cost a fifth less than with glibc's
  libmimalloc-dev
  # package archives as a source (issue 12): ar/tar/cpio listing, xz random access
  libarchive-dev liblzma-dev
  # package tests: rpmbuild (Debian's rpm), zstd, xz, cpio-free .deb builds (dpkg-deb)
  rpm zstd xz-utils
  # bench/bench_packages.sh: elfutils debuginfod -U unpacks .deb files with bsdtar
  libarchive-tools
  # test and benchmark peers and fixtures
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  llvm binutils elfutils dwz libc6-dbg debuginfod python3 curl hyperfine
  # type layouts (issue 14): pahole, and libpython3.11d.so with its DWARF
  dwarves python3.11-dbg
  # real C++ debug files for compare_llvm.py: libstdc++ (debug build) and ld.gold
  # (LTO, dwz, statically linked libstdc++)
  libstdc++6-12-dbg binutils-x86-64-linux-gnu-dbg
  # Rust-mangled fixture (tests/fixtures) and peak memory in bench/ (/usr/bin/time -v)
  rustc time
  # bench/bench_rpc_cost.sh: instructions per request, counted under callgrind
  valgrind
  # daemon tests: promtool (checks /metrics), protoc (the Node Connect client's code)
  prometheus protobuf-compiler
  # kernel modules (issue 12, tests/integration/kmod_test.py): a module built at
  # test time out of tree against Debian's kernel headers (make -C ... M=DIR)
  linux-headers-cloud-amd64
  # scale-out test (issue 13): nginx in front of three replicas
  nginx
  # the shared S3 tier (issue 30): libcrypto (SHA-256 of objects; libcurl's
  # TLS already loads it), and a real S3 for the tests: Ceph's RADOS Gateway
  # on one memstore OSD (tests/integration/s3_server_start.sh)
  libssl-dev ceph-mon ceph-osd radosgw
  # install test: the man pages rendered (man -l) and checked for warnings (groff)
  man-db groff-base
  # deploy/ checkers (tests/integration/deploy_test.py): systemd-analyze, yamllint,
  # jq, PyYAML; promtool is in prometheus above
  systemd yamllint jq python3-yaml
  # pprof (issue 15): `go tool pprof` reads SymbolizeProfile's output in
  # tests/integration/pprof_test.py; bench/bench_pprof.sh builds Go's pprof (gdb
  # samples the running fixture in the same test)
  golang-go gdb
  # responses decoded by a standard protobuf runtime (tests/integration/utf8_test.py)
  python3-protobuf
  # symbolctl pprof --perf (issue 31): perf record -g in tests/integration/perf_test.py
  linux-perf
  # gRPC on the daemon's port (issue 26): nghttp2 for HTTP/2 (service/http/svc_h2_*);
  # the tests' real clients: grpcio with stubs from our .proto (grpc-tools), a raw
  # HTTP/2 client (python3-h2) and nghttp/h2load (nghttp2-client) for the attack
  # tests and bench_rpc's gRPC rows
  libnghttp2-dev python3-grpcio python3-grpc-tools python3-h2 nghttp2-client
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The Connect client test (tests/integration/node) needs Node.js >= 20 and npm;
# this machine kind ships them. Debian's own nodejs is 18: installed only when
# there is none, and the test then says what is missing.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# kubectl (`kubectl kustomize` for deploy/kubernetes): Debian's kubernetes-client
# when the machine has no kubectl of its own (both ship /usr/bin/kubectl).
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
