#!/usr/bin/env bash
# Formats the C sources with .clang-format; --check only lists the files
# that differ and fails if any does (scripts/test.sh runs it).
# The sources: *.c and *.h under src/ include/ tests/ fuzz/ bench/ examples/
# that git tracks or would track; build trees and node_modules are ignored,
# as are files CMake generates (they live in the build trees).
# clang-format versions format differently: the tree follows Debian 12's
# clang-format 14; CLANG_FORMAT=... picks another binary.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*)
	echo "usage: scripts/format.sh [--check]" >&2
	exit 2
	;;
esac

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format-14 clang-format; do
		if command -v "$c" >/dev/null; then
			cf=$c
			break
		fi
	done
fi
if [ -z "$cf" ]; then
	echo "format: clang-format not found (scripts/deps.sh installs it)" >&2
	exit 1
fi

dirs=(src include tests fuzz bench examples)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files --cached --others --exclude-standard \
		-- "${dirs[@]/%//*.c}" "${dirs[@]/%//*.h}" | sort -u)
else
	mapfile -t files < <(find "${dirs[@]}" \( -name 'build*' -o \
		-name node_modules \) -prune -o -type f \
		\( -name '*.c' -o -name '*.h' \) -print | sort)
fi

if [ "$check" -eq 0 ]; then
	"$cf" -i --style=file "${files[@]}"
	exit 0
fi
bad=0
for f in "${files[@]}"; do
	[ -f "$f" ] || continue # deleted, not yet staged
	if ! "$cf" --style=file "$f" | cmp -s - "$f"; then
		echo "$f"
		bad=$((bad + 1))
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "format: $bad file(s) differ from .clang-format ($("$cf" --version |
		sed 's/.*version //')); scripts/format.sh rewrites them" >&2
	exit 1
fi
