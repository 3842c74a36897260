#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is needed, then builds five trees, every one with warnings as errors
# (-DSYMBOLIZER_WERROR=ON), and runs ctest in each (labels: tests/CMakeLists.txt):
#   build/                gcc Release (-O3)            every test
#   build-relwithdebinfo/ gcc RelWithDebInfo           the `unit` tests (the tree is for
#                                                      gcc -O2's warnings)
#   build-clang/          clang Release                the `unit` tests (clang's warnings;
#                                                      clang's code runs end to end below)
#   build-tsan/           clang ThreadSanitizer        `unit` and `threads` (the daemon,
#                                                      the fetcher against upstreams)
#   build-asan/           clang Debug, ASan + UBSan    all but the `slow` ones, and the
#                         and the fuzzers              libFuzzer targets for a bounded time
# So the `slow` integration tests run in the Release tree (and in TSan where they are
# `threads`), the integration tests in two trees, the unit tests in all five.
# The extra trees skip bench/. Each tree's build and test times are printed; the
# last lines are the final tree's ctest summary. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export CTEST_OUTPUT_ON_FAILURE=1

times=()

# why TREE: after a failing ctest, which check failed, in the closing lines.
why() {
	python3 scripts/ctest_why.py "$1" || true
}

# build_tree NAME CC CXX [cmake options...]
build_tree() {
	local name=$1 cc=$2 cxx=$3
	shift 3
	local t0=$SECONDS
	echo "== $name: build ($cc $*)"
	CC=$cc CXX=$cxx bash scripts/build.sh "$name" -DSYMBOLIZER_WERROR=ON "$@"
	build_s=$((SECONDS - t0))
	echo "== $name: built in ${build_s}s"
}

# test_tree NAME [ctest options...]
test_tree() {
	local name=$1
	shift
	local t0=$SECONDS
	echo "== $name: ctest $*"
	(cd "$name" && ctest -j2 "$@") || { why "$name"; exit 1; }
	local test_s=$((SECONDS - t0))
	echo "== $name: tested in ${test_s}s"
	times+=("$(printf '%-22s build %4ss  test %4ss' "$name" "$build_s" "$test_s")")
}

build_tree build gcc g++ -DCMAKE_BUILD_TYPE=Release
test_tree build --timeout 900

build_tree build-relwithdebinfo gcc g++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYMBOLIZER_BENCH=OFF
test_tree build-relwithdebinfo --timeout 600 -L unit

build_tree build-clang clang clang++ -DCMAKE_BUILD_TYPE=Release -DSYMBOLIZER_BENCH=OFF
test_tree build-clang --timeout 600 -L unit

build_tree build-tsan clang clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DENABLE_TSAN=ON \
	-DSYMBOLIZER_BENCH=OFF
test_tree build-tsan --timeout 900 -L 'unit|threads'

build_tree build-asan clang clang++ -DCMAKE_BUILD_TYPE=Debug \
	-DENABLE_ASAN=ON -DENABLE_UBSAN=ON -DENABLE_FUZZERS=ON
echo "== times so far (the total: $((SECONDS / 60))m$((SECONDS % 60))s)"
printf '   %s\n' "${times[@]}"
# Last: its ctest summary closes the output (CI reads the closing lines), followed
# on a failure by the failed checks' own lines (scripts/ctest_why.py).
echo "== build-asan: ctest (all but the slow ones, the fuzzers included)"
(cd build-asan && ctest -j2 --timeout 1800 -LE slow) || { why build-asan; exit 1; }
