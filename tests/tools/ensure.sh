#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# ensure.sh: makes sure every package of package.json (next to this
# script) is installed under node_modules, running `npm ci` once when one
# is missing (parallel tests: one installs, the others wait on the lock).
# Exit: 0 all there; 77 when node/npm is missing or the install failed.
set -u
tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v node >/dev/null 2>&1; then
	echo "ensure: SKIP: node is not installed" >&2
	exit 77
fi
missing() {
	node -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1];
const deps = Object.keys(JSON.parse(fs.readFileSync(path.join(dir, "package.json"))).dependencies || {});
const gone = deps.filter((d) => !fs.existsSync(path.join(dir, "node_modules", d, "package.json")));
process.exit(gone.length ? 0 : 1);
' "$tools"
}
if missing; then
	(
		flock 9
		! missing || npm ci --prefix "$tools" --no-audit --no-fund \
			--loglevel=error >&2
	) 9>"$tools/.install.lock"
	if missing; then
		echo "ensure: SKIP: packages missing and 'npm ci --prefix $tools' failed" >&2
		exit 77
	fi
fi
exit 0
