#!/usr/bin/env bash
# Installs what is missing, checks the formatting, builds, and runs the whole
# test suite twice: a normal build, then an AddressSanitizer + UBSan build;
# between them the hardware tests under QEMU (tests/hw/vm.sh) and the .deb
# packages (tests/pkg/deb.sh).
# After each run it lists the tests that skipped, with their reasons, and
# fails on a skip that tests/skips.allow does not allow for that build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/format.sh --check
if [ -f tests/tools/package.json ]; then
	npm ci --prefix tests/tools --no-audit --no-fund --loglevel=error
fi
BUILD=build scripts/build.sh
ctest --test-dir build --output-on-failure -j2 --no-tests=error \
	--output-junit junit.xml
scripts/skips.py build/junit.xml normal
# The hardware path against a PMU: QEMU's emulated arm64 one (tests/hw).
tests/hw/vm.sh build/evprof
# The .deb packages, built, installed, used and purged (tests/pkg/deb.sh).
tests/pkg/deb.sh
BUILD=build-asan BUILD_TYPE=Debug scripts/build.sh -DEVPROF_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --test-dir build-asan --output-on-failure -j2 --no-tests=error \
	--output-junit junit.xml
scripts/skips.py build-asan/junit.xml asan
