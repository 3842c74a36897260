#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# connect_client_test.sh: runs connect_client.mjs (symbolizerd called by a real
# Connect client) in a work dir of the build tree: copies package.json and
# package-lock.json there, `npm ci` (the pinned @connectrpc/connect-node and
# @bufbuild/protobuf), generates the client code with protoc and
# @bufbuild/protoc-gen-es into WORKDIR/gen, then runs the test script.
# node_modules and generated code never touch the source tree.
#
# Usage: connect_client_test.sh --symbolizerd PATH --fixtures DIR --workdir DIR
# A missing node, npm or protoc is a failure, not a skip: scripts/install-deps.sh
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
	*) echo "connect_client_test.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$symbolizerd" ] || [ -z "$fixtures" ] || [ -z "$workdir" ]; then
	echo "usage: $0 --symbolizerd PATH --fixtures DIR --workdir DIR" >&2
	exit 2
fi

missing=()
for t in node npm protoc llvm-symbolizer readelf nm; do
	command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "connect_client_test.sh: FAIL: required tool(s) not found: ${missing[*]}" >&2
	echo "  (install them: bash scripts/install-deps.sh)" >&2
	exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
	echo "connect_client_test.sh: FAIL: node $(node --version) is too old; the pinned packages need node >= 20" >&2
	exit 1
fi

mkdir -p "$workdir"
cp "$here/package.json" "$here/package-lock.json" "$here/connect_client.mjs" "$workdir/"
cd "$workdir"
# npm ci only when the lock file changed since the last install (npm writes
# node_modules/.package-lock.json; the copy below marks what was installed).
if ! cmp -s package-lock.json node_modules/.installed-lock.json 2>/dev/null; then
	echo "== npm ci in $workdir"
	npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.installed-lock.json
fi

echo "== protoc-gen-es $(node -p 'require("./node_modules/@bufbuild/protoc-gen-es/package.json").version')," \
	"@connectrpc/connect-node $(node -p 'require("./node_modules/@connectrpc/connect-node/package.json").version')," \
	"node $(node --version)"
rm -rf gen && mkdir gen
protoc --plugin=protoc-gen-es="$workdir/node_modules/.bin/protoc-gen-es" \
	--es_out=gen --es_opt=target=js --es_opt=import_extension=js \
	--proto_path="$proto_root" --proto_path="$proto_root/otlp" \
	--proto_path="$here/proto" \
	"$proto_root/symbolizer/v1/symbolizer.proto" \
	"$here/proto/google/rpc/error_details.proto" \
	$(cd "$proto_root/otlp" && find opentelemetry -name '*.proto' | sort)

exec node connect_client.mjs --symbolizerd "$symbolizerd" --fixtures "$fixtures"
