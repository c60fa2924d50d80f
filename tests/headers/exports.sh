#!/usr/bin/env bash
# The exported set of libevprof.so is exactly the functions declared with
# EVPROF_API in include/evprof/*.h, each listed by name in the version script
# under the node it is exported with. Three sources, compared both ways, so
# a public function added in one place and forgotten in another fails here
# with the line to add, instead of in a user's link. Besides, the versions
# kept for old binaries (name@NODE, one "@", from src/lib/compat.c): each is
# the old version of a declared function, or an alias that the map lists in
# that node and no header declares.
# Usage: exports.sh <libevprof.so> <srcdir>
set -euo pipefail
export LC_ALL=C # one collation for sort, comm and join
lib=$1
src=$2
map=$src/src/lib/libevprof.map
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Headers: "name header:line" for each EVPROF_API declaration. The name is
# the identifier just before the first "(" after the macro; comments and
# preprocessor lines (the macro's own #define) are blanked first, keeping
# line numbers.
perl -0777 -ne '
	my $t = $_;
	$t =~ s{/\*.*?\*/}{ (my $c = $&) =~ tr/\n//cd; $c }gse;
	$t =~ s{//[^\n]*}{}g;
	$t =~ s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{ (my $c = $&) =~ tr/\n//cd; $c }gme;
	while ($t =~ /\bEVPROF_API\b([^;{]*?)\(/gs) {
		my ($pre, $at) = ($1, $-[0]);
		my $line = 1 + (substr($t, 0, $at) =~ tr/\n//);
		my ($name) = $pre =~ /(\w+)\s*$/;
		print "", ($name // "?"), " $ARGV:$line\n";
	}' "$src"/include/evprof/*.h | sed "s|$src/||" | sort >"$tmp/hdr"

# Version script: "name node" for each name under global:, and the nodes in
# order (the last one is where new functions go).
perl -0777 -ne '
	my $t = $_;
	$t =~ s{/\*.*?\*/}{}gs;
	$t =~ s{#[^\n]*}{}g;
	while ($t =~ /(\w[\w.]*)\s*\{(.*?)\}\s*[\w.]*\s*;/gs) {
		my ($node, $body) = ($1, $2);
		print STDERR "$node\n";
		my ($global) = $body =~ /global:(.*?)(?:local:|$)/s;
		next unless defined $global;
		print "$_ $node\n" for grep { length } map { s/^\s+|\s+$//gr }
			split /;/, $global;
	}' "$map" 2>"$tmp/nodes" | sort >"$tmp/map"
newest=$(tail -n1 "$tmp/nodes")

# Library: "name version" for each defined dynamic symbol, less the
# version nodes themselves (absolute symbols): the default versions (@@, or
# none) in lib, those kept for old binaries (a single @) in old.
nm -D --defined-only "$lib" |
	awk -v old="$tmp/old" '$2 != "A" { n = $3; v = "-"; o = 0
		if (i = index(n, "@")) { v = substr(n, i); o = v !~ /^@@/
			sub(/^@+/, "", v); n = substr(n, 1, i - 1) }
		if (o) print n, v >old; else print n, v }' | sort >"$tmp/lib"
touch "$tmp/old"
sort -o "$tmp/old" "$tmp/old"

# Every finding goes to one file; the test fails when it is not empty.
err()
{
	echo "exports: $*" >>"$tmp/err"
}
hdr_of()
{
	awk -v n="$1" '$1 == n { print $2 }' "$tmp/hdr"
}

while read -r name loc; do
	case $name in
	evprof_*) ;;
	*) err "$loc: EVPROF_API declares '$name': public functions start" \
		"with evprof_ (STYLE: names and headers)" ;;
	esac
	case $name in
	*__close | *__delete | *__destroy) err "$loc: '$name': destructors" \
		"are named evprof_<object>__free (include/evprof/common.h)" ;;
	esac
done <"$tmp/hdr"
for name in $(awk '{ print $1 }' "$tmp/hdr" | uniq -d); do
	err "$name is declared EVPROF_API more than once:" $(hdr_of "$name")
done

for name in $(awk '{ print $1 }' "$tmp/map" | uniq -d); do
	err "$name is listed in more than one node of src/lib/libevprof.map:" \
		"GNU ld then exports no default version of it; list it in the" \
		"node of its current version only (older ones: src/lib/compat.c)"
done
while read -r name node; do
	case $name in
	*[!A-Za-z0-9_]*) err "src/lib/libevprof.map: '$name' in $node is" \
		"not a plain name: list each exported function by name, no" \
		"globs (local: *; is the only pattern)" ;;
	esac
done <"$tmp/map"

names() { awk '{ print $1 }' "$1" | sort -u; }
names "$tmp/hdr" >"$tmp/hdr.n"
names "$tmp/map" >"$tmp/map.n"
names "$tmp/lib" >"$tmp/lib.n"

# Declared, not in the map: the usual miss when adding a function.
comm -23 "$tmp/hdr.n" "$tmp/map.n" | while read -r name; do
	err "$name is declared EVPROF_API at $(hdr_of "$name")" \
		"but not in src/lib/libevprof.map: add the line" \
		"'$name;' under global: in node $newest (with the other" \
		"functions of its header)"
done
# In the map, not declared: a removed or renamed function left behind,
# unless the library keeps it for old binaries in that node (an alias).
comm -13 "$tmp/hdr.n" "$tmp/map.n" | while read -r name; do
	node=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/map")
	grep -qx "$name $node" "$tmp/old" && continue
	err "$name is in src/lib/libevprof.map but no header in" \
		"include/evprof/ declares it with EVPROF_API: declare it" \
		"(documented), or remove its line from the map, or, for a name" \
		"a release removed, define its old version in src/lib/compat.c" \
		"(exported as $name@$node)"
done
# Kept for old binaries: an old version of a declared function (listed in
# a newer node), or an alias the map lists in that node.
while read -r name ver; do
	cur=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/map")
	if [ "$ver" = "$newest" ]; then
		err "$lib exports $name@$ver, a non-default version in the" \
			"newest node: old versions belong to released nodes"
	elif grep -qx "$name" "$tmp/hdr.n"; then
		[ "$cur" != "$ver" ] && continue
		err "$name is declared at $(hdr_of "$name") and listed in $ver," \
			"which also holds its old version $name@$ver: list it in" \
			"the node of its current version"
	elif [ "$cur" != "$ver" ]; then
		err "$lib exports $name@$ver, which no header declares and" \
			"src/lib/libevprof.map does not list in $ver: list it" \
			"there (an alias kept for old binaries) or drop it from" \
			"src/lib/compat.c"
	fi
done <"$tmp/old"
# Declared and mapped, not exported: no definition, or a static one.
comm -23 "$tmp/hdr.n" "$tmp/lib.n" | while read -r name; do
	grep -qx "$name" "$tmp/map.n" || continue
	err "$name is declared at $(hdr_of "$name") and in the" \
		"map but $lib does not export it: define it (not static) in" \
		"src/lib/ in a file that includes its header"
done
# Exported, not declared: a default-visibility definition without a
# public declaration, or a symbol the map lets through.
comm -13 "$tmp/hdr.n" "$tmp/lib.n" | while read -r name; do
	err "$lib exports $name, which no header in" \
		"include/evprof/ declares with EVPROF_API: declare it there" \
		"(documented) and list it in the map, or make it static or" \
		"drop its visibility attribute"
done
# Exported under another node than the map says (or unversioned).
join "$tmp/map" "$tmp/lib" | while read -r name node ver; do
	[ "$node" = "$ver" ] && continue
	err "$name is exported as version '$ver' but the map" \
		"lists it under $node: rebuild, or check the link uses" \
		"-Wl,--version-script=src/lib/libevprof.map"
done

if [ -s "$tmp/err" ]; then
	cat "$tmp/err" >&2
	exit 1
fi
echo "exports: $(wc -l <"$tmp/hdr.n") functions: headers, map and" \
	"$(basename "$lib") agree (version $newest)"
