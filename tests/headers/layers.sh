#!/usr/bin/env bash
# Each folder of src/lib compiles with an include root that reaches only the
# folders it may use (src/lib/CMakeLists.txt; the build lists them in
# layers.txt): from every folder, a header of each folder it may use must
# preprocess, and a header of every other folder must not be found.
# Usage: layers.sh <build dir> <source dir> <C compiler>
set -euo pipefail
build=$1
src=$2
cc=$3
layers=$build/layers.txt
[ -r "$layers" ] || { echo "no $layers: configure the build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
folders=$(sed -n 's/^\([a-z]*\): .*/\1/p; s/^\([a-z]*\):$/\1/p' "$layers" | grep -vx entry)
[ -n "$folders" ] || { echo "no layers in $layers" >&2; exit 1; }
bad=0 tried=0
for x in $folders; do
	uses=" $(sed -n "s/^$x: *//p" "$layers") "
	for y in $folders; do
		[ "$y" != "$x" ] || continue
		# The folder's own header, which says what it offers above;
		# a folder with none offers nothing, so any of its headers.
		hs=("$src/src/lib/$y/$y.h" "$src/src/lib/$y"/*.h)
		[ -e "${hs[0]}" ] || hs=("${hs[@]:1}")
		[ -e "${hs[0]}" ] || continue
		h=${hs[0]##*/}
		echo "#include \"$y/$h\"" >"$tmp/t.c"
		if "$cc" -E -I"$build/layers/$x" -I"$src/include" -I"$build" \
			"$tmp/t.c" -o /dev/null 2>"$tmp/err"; then
			found=1
		else
			found=0
			grep -q 'No such file' "$tmp/err" || { cat "$tmp/err" >&2; bad=1; }
		fi
		tried=$((tried + 1))
		case $uses in
		*" $y "*) [ $found = 1 ] || { echo "$x may use $y, but \"$y/$h\" is not found from it" >&2; bad=1; } ;;
		*) [ $found = 0 ] || { echo "$x may not use $y, yet \"$y/$h\" is found from it" >&2; bad=1; } ;;
		esac
	done
done
[ $bad = 0 ] || exit 1
echo "$tried includes across folders: each found where its layer may use it, refused elsewhere"
