#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# grpc_client_test.sh: runs grpc_client.mjs (symbolizerd called by @grpc/grpc-js
# and buf curl) in a work dir of the build tree: copies package.json and
# package-lock.json there, `npm ci` (the pinned @grpc/grpc-js,
# @grpc/proto-loader, @bufbuild/buf), then runs the test script. node_modules
# never touches the source tree.
#
# Usage: grpc_client_test.sh --symbolizerd PATH --fixtures DIR --workdir DIR
# A missing node or npm is a failure, not a skip: scripts/install-deps.sh
# installs them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
proto_root=$(cd "$here/../../../proto" && pwd)
symbolizerd= fixtures= workdir=
while [ $# -gt 0 ]; do
	case $1 in
	--symbolizerd) symbolizerd=$2; shift 2 ;;
	--fixtures) fixtures=$2; shift 2 ;;
	--workdir) workdir=$2; shift 2 ;;
	*) echo "grpc_client_test.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$symbolizerd" ] || [ -z "$fixtures" ] || [ -z "$workdir" ]; then
	echo "usage: $0 --symbolizerd PATH --fixtures DIR --workdir DIR" >&2
	exit 2
fi
for t in node npm readelf nm; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "grpc_client_test.sh: FAIL: $t not found (bash scripts/install-deps.sh)" >&2
		exit 1
	fi
done
mkdir -p "$workdir"
cp "$here/package.json" "$here/package-lock.json" "$here/grpc_client.mjs" "$workdir/"
cd "$workdir"
if ! cmp -s package-lock.json node_modules/.installed-lock.json 2>/dev/null; then
	echo "== npm ci in $workdir"
	npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.installed-lock.json
fi
echo "== @grpc/grpc-js $(node -p 'require("./node_modules/@grpc/grpc-js/package.json").version')," \
	"buf $(node_modules/.bin/buf --version), node $(node --version)"
# buf keeps its cache under the work dir, not in $HOME.
export BUF_CACHE_DIR="$workdir/buf-cache"
exec node grpc_client.mjs --symbolizerd "$symbolizerd" --fixtures "$fixtures" \
	--proto "$proto_root" --buf "$workdir/node_modules/.bin/buf"
