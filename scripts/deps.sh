#!/usr/bin/env bash
# Installs the Debian packages evprof needs to build and test, when missing.
set -euo pipefail

pkgs=(build-essential cmake pkg-config libelf-dev libdw-dev zlib1g-dev
      libzstd-dev libisal-dev libpfm4-dev libcmocka-dev binutils libjson-c-dev
      golang-go libiberty-dev xz-utils man-db util-linux clang-format
      python3 coreutils linux-perf chromium
      libcurl4-openssl-dev openssl curl clang libbpf-dev bpftool
      gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-system-arm qemu-user
      cpio debhelper lintian python3-yaml)
# libisal-dev: gzip outputs compressed on worker threads (ISA-L).
# libcurl: evprof record --push; openssl and curl: its tests.
# clang, libbpf-dev, bpftool: the BPF engine (optional: without them the
# build leaves it out, see EVPROF_WITH_BPF).
# chromium: the page of evprof view is tested in it (headless).
# gcc-aarch64-linux-gnu, qemu-system-arm, qemu-user, cpio: tests/hw, the
# hardware path against QEMU's emulated arm64 PMU (the arm64 libraries and
# kernels it fetches itself).
# debhelper, lintian: tests/pkg/deb.sh builds and checks the .deb packages
# (debian/); python3-yaml: tests/contrib/daemonset.py reads the DaemonSet.
# podman, runc: tests/cli/test_container.sh runs a rootful --rootfs container
# (no image, no registry), with runc: crun refuses cgroup v1/v2 hybrid hosts.
# Installed without their recommends (buildah, slirp4netns, fuse-overlayfs,
# uidmap, catatonit: the test needs none); podman pulls conmon,
# containernetworking-plugins and iptables in.
bare=(podman runc)
# Node runs the Firefox Profiler's loader in the tests and builds the page
# (npm ci in web/); a node installed
# outside apt (e.g. from nodesource) is fine, and apt's npm would fight it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	pkgs+=(nodejs npm)
fi

# not_installed PKG...: those of them dpkg does not have installed.
not_installed() {
	local p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed"; then
			echo "$p"
		fi
	done
}
mapfile -t missing < <(not_installed "${pkgs[@]}")
mapfile -t missing_bare < <(not_installed "${bare[@]}")
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_bare[@]} -eq 0 ]; then
	exit 0
fi
echo "deps: installing ${missing[*]} ${missing_bare[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
$sudo apt-get update -qq
if [ ${#missing[@]} -ne 0 ]; then
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		"${missing[@]}" >/dev/null
fi
if [ ${#missing_bare[@]} -ne 0 ]; then
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends "${missing_bare[@]}" >/dev/null
fi
