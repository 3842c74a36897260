#!/usr/bin/env bash
# Installs what is needed, builds twice (optimized with gcc; clang with ASan+UBSan
# and the fuzzers), and runs every test in both trees, then the fuzzers for a
# bounded time. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export CTEST_OUTPUT_ON_FAILURE=1

echo "== release build (gcc)"
CC=gcc CXX=g++ bash scripts/build.sh build
(cd build && ctest -j2 --timeout 900)

echo "== sanitizer build (clang, ASan + UBSan, fuzzers)"
CC=clang CXX=clang++ bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug \
  -DENABLE_ASAN=ON -DENABLE_UBSAN=ON -DENABLE_FUZZERS=ON
(cd build-asan && ctest -j2 --timeout 1800)
