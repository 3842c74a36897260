#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Gives every tracked source file the project's license line, as a comment of the
# file's kind, on its first line (after a #! line):
#   .c .cpp .rs .mjs .proto       // SPDX-License-Identifier: Apache-2.0
#   .h .hpp                       /* SPDX-License-Identifier: Apache-2.0 */
#   shell, Python, CMake, dotfiles, YAML, deploy/ files
#                                 # SPDX-License-Identifier: Apache-2.0
#   man pages (.1 to .8)          .\" SPDX-License-Identifier: Apache-2.0
# Skipped: LICENSE, Markdown, JSON (no comments), the fuzzers' seed corpora (binary
# data), generated code. Idempotent: a file with the line in its first three lines
# is left alone.
#   scripts/spdx.sh          add the line where it is missing
#   scripts/spdx.sh --check  list the files without it (or of no known kind), exit 1
#                            if any; exit 77 (skip) outside a git checkout
set -euo pipefail
cd "$(dirname "$0")/.."
TAG="SPDX-License-Identifier: Apache-2.0"
check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# line_for FILE: the comment for FILE; "-" to skip it; nothing when its kind is unknown.
line_for() {
	case $1 in
	LICENSE | */LICENSE | *.md | *.json | tests/fuzz/corpus/* | *.pb-c.c | *.pb-c.h) echo - ;;
	*.h | *.hpp | *.h.in) echo "/* $TAG */" ;;
	*.c | *.cpp | *.rs | *.mjs | *.js | *.proto) echo "// $TAG" ;;
	*.sh | *.py | CMakeLists.txt | */CMakeLists.txt | *.cmake | *.supp | .gitignore | \
		*/.gitignore | .clang-format | .editorconfig | .ci/* | *.yaml | *.yml | */.yamllint | \
		*/Containerfile | *.dockerignore | *.env | *.service) echo "# $TAG" ;;
	*.[1-8]) echo ".\\\" $TAG" ;;
	esac
}

# All in one function, read whole before it runs: this script edits itself.
main() {
	if ! files=$(git ls-files 2>/dev/null) || [ -z "$files" ]; then
		echo "spdx.sh: not a git checkout; nothing to do" >&2
		exit 77
	fi

	bad=0
	while IFS= read -r f; do
		[ -f "$f" ] || continue
		line=$(line_for "$f")
		[ "$line" = - ] && continue
		case $(head -n 3 "$f") in *SPDX-License-Identifier:*) continue ;; esac
		if [ -z "$line" ]; then
			echo "spdx.sh: $f: no rule for this kind of file (add one to line_for)" >&2
			bad=1
			continue
		fi
		if [ $check = 1 ]; then
			echo "spdx.sh: $f: no SPDX-License-Identifier line" >&2
			bad=1
			continue
		fi
		tmp=$(mktemp)
		if [ "$(head -c 2 "$f")" = "#!" ]; then
			{ head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } >"$tmp"
		else
			{ echo "$line"; cat "$f"; } >"$tmp"
		fi
		cat "$tmp" >"$f" # keeps the file's mode
		rm -f "$tmp"
		echo "spdx.sh: $f"
	done <<<"$files"
	return $bad
}
main; exit
