#!/usr/bin/env bash
# Unpacks the arm64 libraries evprof builds against into a sysroot (first
# argument), for cmake/aarch64-linux-gnu.cmake. apt-get download + dpkg-deb
# -x, not multiarch installs: installing libisal-dev:arm64 or
# linux-perf:arm64 would remove the amd64 packages the native build needs.
# Downloads are kept in DIR/../debs; a sysroot made of the same packages is
# kept.
set -euo pipefail
root=$(realpath -m "${1:?usage: arm64-sysroot.sh DIR}")
debs=$(dirname "$root")/debs
pkgs=(libc6 libc6-dev linux-libc-dev libgcc-s1 libelf1 libelf-dev libdw1
      libdw-dev zlib1g zlib1g-dev libzstd1 libzstd-dev libjson-c5
      libjson-c-dev libisal2 libisal-dev libiberty-dev liblzma5 liblzma-dev
      libbz2-1.0 libbpf1 libbpf-dev libcurl4-openssl-dev libpfm4 libpfm4-dev)
# libcurl and libpfm4 are opened with dlopen() when used: headers suffice.
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$sudo dpkg --add-architecture arm64
	$sudo apt-get update -qq
fi
mkdir -p "$debs"
need=()
[ "$(cat "$root/.done" 2>/dev/null)" = "${pkgs[*]}" ] && exit 0
for p in "${pkgs[@]}"; do
	compgen -G "$debs/${p}_*_arm64.deb" >/dev/null || need+=("$p:arm64")
done
if [ ${#need[@]} -gt 0 ]; then
	# apt's _apt user may not enter a 0700 directory: download from /tmp.
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -qq "${need[@]}" 2>&1 | grep -v "unsandboxed" || true)
	mv "$tmp"/*.deb "$debs"/
	rmdir "$tmp"
fi
rm -rf "$root"
mkdir -p "$root"
for d in "$debs"/*_arm64.deb; do
	dpkg-deb -x "$d" "$root"
done
echo "${pkgs[*]}" >"$root/.done"
