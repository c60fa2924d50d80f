#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Debian packages (debian/) as a user gets them: builds them from a copy
# of the tree (dpkg-buildpackage -b, no tests, no debug packages), runs
# lintian (an error or warning fails), installs them with dpkg -i, runs the
# installed evprof (--version, info, a short record, man, completion),
# builds a program against libevprof-dev (shared and static), then purges
# them and checks that every file they installed is gone. The host is left
# as found: the packages are purged on any exit. Run by scripts/test.sh,
# not CTest (it installs into /usr, as root).
#
# usage: tests/pkg/deb.sh   (root; work files in ${DEB_DIR:-build-deb})
set -euo pipefail
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
W=$(realpath -m "${DEB_DIR:-$SRCDIR/build-deb}")
PKGS=(evprof libevprof0 libevprof-dev)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
t0=$(date +%s)
die() {
	echo "FAIL: deb: $*" >&2
	exit 1
}
say() { echo "deb: $*"; }
# A pipe into grep -q would fail under pipefail when grep stops reading
# first (SIGPIPE): each command's output is taken whole, then matched.
has() { grep -q "$1" <<<"$2"; }
installed() { has '^[ih]' "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)"; }

[ "$(id -u)" -eq 0 ] || die "needs root (it installs the packages)"
for p in "${PKGS[@]}"; do
	! installed "$p" || die "$p is installed already: purge it first (this test installs and purges it)"
done
# Files no package owns would be overwritten, then purged with the package.
for f in /usr/bin/evprof /usr/include/evprof /usr/lib/"$MA"/libevprof.so.0 \
	/usr/lib/"$MA"/pkgconfig/evprof.pc; do
	[ ! -e "$f" ] || die "$f exists outside the packages: remove it first"
done

# The package's version is the project's.
ver=$(sed -n 's/^project(evprof VERSION \([0-9.]*\).*/\1/p' "$SRCDIR/CMakeLists.txt")
dver=$(dpkg-parsechangelog -l "$SRCDIR/debian/changelog" -S Version)
[ "$dver" = "$ver" ] || die "debian/changelog says $dver, CMakeLists.txt $ver: add a changelog entry (dch -v $ver)"

purge() {
	local left=()
	for p in "${PKGS[@]}"; do
		! installed "$p" && ! dpkg-query -W "$p" >/dev/null 2>&1 || left+=("$p")
	done
	[ ${#left[@]} -eq 0 ] || dpkg --purge "${left[@]}" >"$W/purge.log" 2>&1
}
on_exit() {
	local rc=$?
	purge || echo "FAIL: deb: dpkg --purge failed: $(tail -3 "$W/purge.log")" >&2
	exit $rc
}
trap on_exit EXIT
# A step that fails without its own message still says where.
trap 'echo "FAIL: deb: line $LINENO: $BASH_COMMAND" >&2' ERR

# ---- build ---------------------------------------------------------------
# A copy of what git tracks (and untracked files it does not ignore), so the
# tree is not written; web/node_modules, the page's libraries that the
# tree's own build fetched, so the package build needs no network.
rm -rf "$W"
src=$W/evprof-$ver
mkdir -p "$src"
git -C "$SRCDIR" ls-files -z --cached --others --exclude-standard |
	tar -C "$SRCDIR" --null -T - --ignore-failed-read -cf - 2>/dev/null |
	tar -C "$src" -xf -
[ ! -d "$SRCDIR/web/node_modules" ] || cp -a "$SRCDIR/web/node_modules" "$src/web/"
say "dpkg-buildpackage in $src"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2" \
	dpkg-buildpackage -b -us -uc) >"$W/build.log" 2>&1 ||
	die "dpkg-buildpackage: $(grep -m5 -iE 'error|warning: .*symbols' "$W/build.log" || tail -5 "$W/build.log")"
changes=$(ls "$W"/evprof_"$ver"_*.changes)
debs=()
for p in "${PKGS[@]}"; do
	debs+=("$(ls "$W/${p}_${ver}"_*.deb)")
done
say "built in $(($(date +%s) - t0)) s: ${debs[*]##*/}"
grep -q 'page: embedded' "$W/build.log" || say "note: the page of evprof view is not embedded (no node/npm here)"
for d in "${debs[@]}"; do
	echo "--- dpkg -c ${d##*/}"
	dpkg-deb -c "$d" | awk '{ print $1, $3, $6, $7, $8 }'
done
has 'activate-noawait ldconfig' "$(dpkg-deb -I "$W"/libevprof0_*.deb triggers 2>/dev/null)" ||
	die "libevprof0 has no ldconfig trigger"
has 'libevprof.so.0 libevprof0' "$(dpkg-deb -I "$W"/libevprof0_*.deb symbols 2>/dev/null)" ||
	die "libevprof0 has no symbols file"

# ---- lintian ---------------------------------------------------------------
say "lintian -I (info tags shown; an error or a warning fails; debian/ overrides none)"
lintian -I --show-overrides --fail-on error,warning "$changes" | tee "$W/lintian.log" ||
	die "lintian: errors or warnings (above)"
say "lintian: $(grep -c '^[EW]:' "$W/lintian.log" || true) errors and warnings"

# ---- install and use -------------------------------------------------------
dpkg -i "${debs[@]}" >"$W/install.log" 2>&1 || die "dpkg -i: $(tail -5 "$W/install.log")"
for p in "${PKGS[@]}"; do
	installed "$p" || die "$p is not installed after dpkg -i"
done
for p in "${PKGS[@]}"; do
	dpkg -L "$p"
done | sort -u >"$W/files"
say "installed: $(wc -l <"$W/files") paths"

export EVPROF_DEBUG_CACHE=$W/cache # not root's ~/.cache
v=$(/usr/bin/evprof --version) || die "evprof --version failed"
[[ $v == "evprof $ver "* ]] || die "evprof --version says '$v', wanted $ver"
say "/usr/bin/evprof --version: ${v%%$'\n'*}"
/usr/bin/evprof info >"$W/info.txt" 2>&1 || die "evprof info: $(tail -3 "$W/info.txt")"
grep -q '^kernel features:' "$W/info.txt" || die "evprof info: no kernel features"
say "evprof info: $(grep -c '  yes  ' "$W/info.txt") features and engines yes"
# shellcheck disable=SC2016 # the loop is sh's
/usr/bin/evprof record -o "$W/rec.json.gz" -- sh -c \
	'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done' 2>"$W/record.err" ||
	die "evprof record: $(cat "$W/record.err")"
gzip -t "$W/rec.json.gz" || die "the recording is not gzip"
python3 - "$W/rec.json.gz" <<'PY' || die "the recording has no sample"
import gzip, json, sys
p = json.load(gzip.open(sys.argv[1]))
n = sum(t["samples"]["length"] for t in p["threads"])
print(f"deb: recorded {n} samples in {len(p['threads'])} threads")
sys.exit(n == 0)
PY
man -w evprof-record >/dev/null 2>&1 || die "man evprof-record: no page"
bash -c '. /usr/share/bash-completion/completions/evprof && complete -p evprof' >/dev/null ||
	die "the bash completion does not complete evprof"
# /lib is /usr/lib (merged /usr): ldconfig may name either.
has "libevprof.so.0 .*=> \(/usr\)\?/lib/$MA/libevprof.so.0" "$(ldconfig -p)" ||
	die "ldconfig -p does not list libevprof.so.0"

flags=$(pkg-config --cflags --libs evprof) || die "pkg-config evprof failed"
[[ " $flags " == *" -levprof "* ]] || die "pkg-config --libs evprof: '$flags'"
cat >"$W/t.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <evprof/evprof.h>
int main(int argc, char **argv)
{
	const struct evprof_build_info *b = evprof_version();
	printf("%s\n", b->version);
	return argc < 2 || strcmp(b->version, argv[1]) != 0;
}
C
# shellcheck disable=SC2086 # pkg-config's words
cc -o "$W/t" "$W/t.c" $flags || die "cannot build against libevprof-dev"
"$W/t" "$ver" >/dev/null || die "the program linked against libevprof.so.0 failed"
has "libevprof.so.0 => \(/usr\)\?/lib/$MA/libevprof.so.0" "$(ldd "$W/t")" ||
	die "the program does not load /usr/lib/$MA/libevprof.so.0"
static=$(pkg-config --static --libs evprof | sed 's/-levprof\b/-l:libevprof.a/')
# shellcheck disable=SC2046,SC2086
cc -o "$W/ts" "$W/t.c" $(pkg-config --cflags evprof) $static ||
	die "cannot link libevprof.a with pkg-config --static"
"$W/ts" "$ver" >/dev/null || die "the program linked against libevprof.a failed"
! has libevprof "$(ldd "$W/ts")" || die "the static program loads libevprof"
say "pkg-config: '$flags'; a program built against the shared and the static library runs"

# ---- purge -----------------------------------------------------------------
dpkg --purge "${PKGS[@]}" >"$W/purge.log" 2>&1 || die "dpkg --purge: $(tail -3 "$W/purge.log")"
for p in "${PKGS[@]}"; do
	! dpkg-query -W "$p" >/dev/null 2>&1 || die "$p is still known to dpkg after purge"
done
stray=0
while read -r f; do
	# A folder other packages share (/usr/share/man/man1) stays; so does /.
	[ "$f" != /. ] || continue
	if [ -e "$f" ] || [ -L "$f" ]; then
		if ! dpkg -S "$f" >/dev/null 2>&1; then
			echo "left after purge: $f" >&2
			stray=$((stray + 1))
		fi
	fi
done <"$W/files"
[ "$stray" -eq 0 ] || die "$stray installed paths left after purge"
! ls /usr/lib/"$MA"/libevprof* >/dev/null 2>&1 || die "a libevprof is left in /usr/lib/$MA"
! has libevprof "$(ldconfig -p)" || die "ldconfig -p still lists libevprof"
say "purged: none of the $(wc -l <"$W/files") paths left; ldconfig forgot libevprof"
say "ok in $(($(date +%s) - t0)) s"
