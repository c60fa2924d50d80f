#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/view_open.sh [SAMPLES [PATHS]]: how long the page takes to open a
# large profile. bench_view_profile writes a synthetic profile (500 000
# samples, 20 000 distinct call paths, 4 threads, CPU time and three
# counters by default) as Firefox JSON and as pprof; `evprof view -o`
# turns each into the page (time and peak RSS from GNU time); headless
# Chromium (tests/tools/view.mjs) opens the page offline and reports the
# time from navigation start to the end of the first render (open_ms, the
# page's own clock; goto_ms as the driver sees it) and the page's JS heap,
# then the time to switch the weight to page-faults.
# BUILD=dir picks the build tree (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
samples=${1:-500000}
paths=${2:-20000}
tmp=$(mktemp -d /tmp/view-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cmake --build "$build" --target evprof bench_view_profile >/dev/null
[ -d tests/tools/node_modules/playwright-core ] ||
	npm ci --prefix tests/tools --no-audit --no-fund --loglevel=error

printf '%-8s %8s %7s %12s %8s %8s %8s %8s %10s\n' format file_kB view_s \
	view_rss_kB page_kB open_ms goto_ms heap_MB switch_ms
for fmt in json.gz pb.gz; do
	"$build/bench_view_profile" "$tmp/p.$fmt" "$samples" "$paths"
	/usr/bin/time -f '%e %M' -o "$tmp/time" \
		"$build/evprof" view -o "$tmp/p.html" "$tmp/p.$fmt"
	read -r secs rss <"$tmp/time"
	node tests/tools/view.mjs "$tmp/p.html" --offline >"$tmp/open.json"
	# The same page again, switched to page-faults: the re-render's time.
	node -e '
		const d = require(process.argv[1]);
		if (d.requests.length || d.errors.length) {
			console.error("requests/errors:", d.requests, d.errors);
			process.exit(1);
		}
		console.log(d.page_ms, d.ready_ms, (d.heap_bytes / 1048576).toFixed(1));
	' "$tmp/open.json" >"$tmp/open.txt"
	read -r ms goto heap <"$tmp/open.txt"
	switch=$(node -e '
		const { chromium } = require(process.argv[1] + "/tests/tools/node_modules/playwright-core");
		(async () => {
			const b = await chromium.launch({ executablePath:
				process.env.CHROMIUM || "/usr/bin/chromium",
				args: ["--no-sandbox"] });
			const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
			await p.goto("file://" + process.argv[2]);
			await p.waitForSelector("body[data-ready=\"1\"]", { state: "attached" });
			await p.evaluate(() => { document.body.dataset.ready = "0"; });
			const t0 = Date.now();
			await p.selectOption("#weight", "page-faults");
			await p.waitForSelector("body[data-ready=\"1\"]", { state: "attached" });
			console.log(Date.now() - t0);
			await b.close();
		})();
	' "$PWD" "$tmp/p.html")
	printf '%-8s %8d %7s %12s %8d %8s %8s %8s %10s\n' "$fmt" \
		$(($(stat -c %s "$tmp/p.$fmt") / 1024)) "$secs" "$rss" \
		$(($(stat -c %s "$tmp/p.html") / 1024)) "$ms" "$goto" "$heap" \
		"$switch"
done
