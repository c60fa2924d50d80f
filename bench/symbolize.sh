#!/usr/bin/env bash
# Symbolizer against binutils addr2line on the same addresses, in one run:
# (1) a generated C++ program (templates in namespaces, always-inline
# helpers) built with -O2 -g, so DWARF inline chains and lines are compared;
# (2) a large system library with symbols only (libLLVM when installed),
# or every BIN given. Addresses: each function's first and middle byte.
# Usage: bench/symbolize.sh [BIN...] (needs build/bench_symbolize; MAX
# caps the addresses per binary, default 100000).
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${BENCH:-build/bench_symbolize}
max=${MAX:-100000}
out=$(mktemp -d /tmp/evprof-symbench.XXXXXX)
trap 'rm -rf "$out"' EXIT

# gen N: C++ source with 2N functions, each with an always-inline helper.
gen() {
	local i
	echo '#include <cstdio>'
	for ((i = 0; i < $1; i++)); do
		cat <<CXX
namespace gen { namespace n$i {
template <typename T> static inline __attribute__((always_inline)) T
inl(T x) { return x * $((i + 3)) + (x >> 3); }
template <typename T> __attribute__((noinline)) T fn(T x)
{ T y = inl(x); for (int k = 0; k < (int)(x & 7); k++) y ^= inl(y) << 1;
  return y; }
} }
CXX
	done
	echo 'int main(int argc, char **) { long s = 0;'
	for ((i = 0; i < $1; i++)); do
		echo "s += gen::n$i::fn<int>(argc) + gen::n$i::fn<long>(argc);"
	done
	echo 'std::printf("%ld\n", s); return 0; }'
}

# funcs BIN [-D]: "START SIZE" of every sized function.
funcs() {
	nm -S --defined-only ${2:-} "$1" 2>/dev/null |
		awk '$3 ~ /^[tTwWiu]$/ && NF >= 4 { print $1, $2 }'
}

gen "${GEN_N:-2000}" >"$out/big.cc"
c++ -O2 -g -o "$out/big" "$out/big.cc"
funcs "$out/big" >"$out/big.funcs"
echo "== generated C++, -O2 -g ($(stat -c %s "$out/big") bytes)"
"$bench" "$out/big" "$out/big.funcs" "$max"

bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
	for b in /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/bin/cmake; do
		if [ -e "$b" ]; then
			bins=("$(readlink -f "$b")")
			break
		fi
	done
fi
for b in "${bins[@]}"; do
	if nm "$b" >/dev/null 2>&1 && [ -n "$(nm "$b" 2>/dev/null | head -1)" ]; then
		funcs "$b" >"$out/bin.funcs"
	else
		funcs "$b" -D >"$out/bin.funcs"
	fi
	echo "== $b ($(stat -c %s "$b") bytes)"
	"$bench" "$b" "$out/bin.funcs" "$max"
done
