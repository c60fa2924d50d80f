#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// node view.mjs URL [options]
//
// Opens evprof's page (a file:// path or the http:// URL evprof view
// prints) in headless Chromium driven by playwright-core (pinned in
// package.json next to this script) and prints one JSON object:
//   ready_ms     goto() to the page's first complete render, as seen here
//   page_ms      the same in the page's own clock (navigation start to the
//                end of its first render; no driver overhead)
//   heap_bytes   the page's JS heap after it (CDP JSHeapUsedSize)
//   requests     every request the page made beyond URL itself; with
//                --offline each was also aborted by request interception
//   errors       console errors and uncaught exceptions
//   title        the document's title; heading the page's h1
//   weights      the weight menu's entries; colours the colour menu's
//   frames       the distinct frame names drawn in the flame graph
//   text         the page's visible text (the function table included)
//   legend       the colour legend's text
//   rows         the function table's rows, each its cells' text
//   widths       with --funcs: per name the summed width (px) of its
//                frames, and "all" (the root's), after --weight and
//                --colour were chosen
//   fills        with --funcs: per name the fill colour of its widest frame
//   zoom         with --zoom: the first frame at depth 4 or more whose small
//                call paths were folded into it, clicked: its name, its
//                children before and after (drawn frames one level
//                below it, by d3's data), its width after and the chart's
//   layout       with --layout: the viewport (vw, vh), the rectangles
//                ({top, bottom}) of the graph's frames two levels deep
//                (all, the thread, its roots) and of the table's first 3
//                rows; per table row, lines: the most lines of text in
//                one of its cells, and its cells' text and title; scroll_w:
//                the page's width
// Options: --offline (abort every other request), --zoom, --layout, --weight NAME,
// --colour LABEL-SUBSTRING, --thread LABEL-PREFIX, --search TERM, --funcs A,B,
// --screenshot PNG, --width PX, --height PX.
// The browser is $CHROMIUM or /usr/bin/chromium (Debian's chromium).
// Exit 0 with the JSON; 1 on a failure; 77 when no browser is installed.
import fs from "node:fs";
import { chromium } from "playwright-core";

const args = process.argv.slice(2);
const url0 = args.shift();
const opt = {};
for (let i = 0; i < args.length; i++) {
	const a = args[i].replace(/^--/, "");
	opt[a] = ["offline", "zoom", "layout"].includes(a) ? true : args[++i];
}
if (!url0) {
	console.error("usage: view.mjs URL [--offline] [--weight W] ...");
	process.exit(2);
}
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(exe)) {
	console.error(`view.mjs: SKIP: no browser at ${exe}`);
	process.exit(77);
}
const url = /^[a-z]+:\/\//.test(url0) ? url0 :
	"file://" + fs.realpathSync(url0);

const browser = await chromium.launch({
	executablePath: exe,
	headless: true,
	// Root in a container has no user namespace for the sandbox.
	args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const out = { requests: [], errors: [] };
try {
	const page = await browser.newPage({
		viewport: { width: +(opt.width || 1400), height: +(opt.height || 900) },
	});
	page.on("console", (m) => {
		if (m.type() === "error")
			out.errors.push(m.text());
	});
	page.on("pageerror", (e) => out.errors.push(String(e)));
	// Interception sees every request the page makes, whatever its kind.
	await page.route("**/*", (route) => {
		const u = route.request().url();
		if (u === url)
			return route.continue();
		out.requests.push(u);
		return opt.offline ? route.abort() : route.continue();
	});
	const t0 = Date.now();
	await page.goto(url, { waitUntil: "load", timeout: 60000 });
	await page.waitForSelector("body[data-ready='1']", { timeout: 20000, state: "attached" });
	out.ready_ms = Date.now() - t0;
	out.page_ms = +(await page.getAttribute("body", "data-ready-ms"));
	const cdp = await page.context().newCDPSession(page);
	await cdp.send("Performance.enable");
	const m = (await cdp.send("Performance.getMetrics")).metrics;
	out.heap_bytes = (m.find((x) => x.name === "JSHeapUsedSize") || {}).value;

	// Each choice re-renders; ready goes back to 1 when it has.
	const choose = async (sel, value) => {
		await page.evaluate(() => { document.body.dataset.ready = "0"; });
		await page.selectOption(sel, value);
		await page.waitForSelector("body[data-ready='1']", { timeout: 20000, state: "attached" });
	};
	out.title = await page.title();
	out.heading = await page.innerText("h1");
	out.weights = await page.$$eval("#weight option", (o) =>
		o.map((x) => x.value));
	out.colours = await page.$$eval("#colour option", (o) =>
		o.map((x) => x.textContent));
	if (opt.weight)
		await choose("#weight", opt.weight);
	if (opt.colour) {
		const i = out.colours.findIndex((c) => c.includes(opt.colour));
		if (i < 0)
			throw new Error(`no colour '${opt.colour}' in ${out.colours}`);
		await choose("#colour", { index: i });
	}
	if (opt.thread) {
		const names = await page.$$eval("#thread option", (o) =>
			o.map((x) => x.textContent));
		const i = names.findIndex((t) => t.startsWith(opt.thread));
		if (i < 0)
			throw new Error(`no thread '${opt.thread}' in ${names}`);
		await choose("#thread", { index: i });
	}
	if (opt.zoom) {
		// d3 keeps each frame's hierarchy node on its element; k and g
		// name the frame's call path across re-renders. Returns the
		// frame's width and its drawn children.
		const look = () => page.evaluate((z) => {
			const gs = [...document.querySelectorAll("#chart g")];
			const g = gs.find((x) => x.__data__.data.k === z.k &&
				x.__data__.data.g === z.g);
			return [+g.getAttribute("width"), gs.filter((x) =>
				x.__data__.parent === g.__data__ &&
				+x.getAttribute("width") > 0).length];
		}, out.zoom);
		out.zoom = await page.evaluate(() => {
			let best = null;
			for (const x of document.querySelectorAll("#chart g")) {
				const d = x.__data__;
				if (d.depth >= 4 && d.data.hid && (!best ||
				    +x.getAttribute("width") > +best.getAttribute("width")))
					best = x;
			}
			if (!best)
				return null;
			best.setAttribute("data-zoom", "1");
			const d = best.__data__.data;
			return { name: d.n, k: d.k, g: d.g };
		});
		if (!out.zoom)
			throw new Error("no frame with folded paths");
		out.zoom.before = (await look())[1];
		await page.evaluate(() => { document.body.dataset.ready = "0"; });
		await page.click("#chart g[data-zoom='1']");
		await page.waitForSelector("body[data-ready='1']",
			{ timeout: 20000, state: "attached" });
		await page.waitForTimeout(600);
		[out.zoom.width, out.zoom.after] = await look();
		out.zoom.chart = +(await page.getAttribute("#chart svg", "width"));
	}
	if (opt.search) {
		await page.fill("#search", opt.search);
		await page.waitForTimeout(300);
	}
	// Wait out d3's transitions before measuring or taking the picture.
	await page.waitForTimeout(600);
	out.frames = await page.$$eval("#chart g[name]", (gs) =>
		[...new Set(gs.map((g) => g.getAttribute("name")))]);
	out.text = await page.evaluate(() => document.body.innerText);
	out.legend = await page.evaluate(() =>
		document.getElementById("legend").innerText);
	out.rows = await page.$$eval("#functions tbody tr", (trs) =>
		trs.map((tr) => [...tr.cells].map((td) => td.innerText)));
	if (opt.funcs) {
		const r = await page.$$eval("#chart g[name]", (gs, names) => {
			const w = {}, f = {}, best = {};
			for (const g of gs) {
				const n = g.getAttribute("name");
				const x = +g.getAttribute("width");
				if (!names.includes(n) && n !== "all")
					continue;
				w[n] = (w[n] || 0) + x;
				if (!(x <= best[n])) {
					best[n] = x;
					f[n] = g.querySelector("rect").getAttribute("fill");
				}
			}
			return [w, f];
		}, opt.funcs.split(","));
		out.widths = r[0];
		out.fills = r[1];
	}
	if (opt.layout)
		out.layout = await page.evaluate(() => {
			const box = (e) => {
				const r = e.getBoundingClientRect();
				return { top: r.top, bottom: r.bottom };
			};
			const lines = (td) => {
				const cs = getComputedStyle(td);
				const h = td.clientHeight - parseFloat(cs.paddingTop) -
					parseFloat(cs.paddingBottom);
				return Math.round(h / parseFloat(cs.lineHeight));
			};
			const trs = [...document.querySelectorAll("#functions tbody tr")];
			return {
				vw: innerWidth, vh: innerHeight,
				scroll_w: document.documentElement.scrollWidth,
				frames: [...document.querySelectorAll("#chart g")]
					.filter((g) => g.__data__.depth <= 2)
					.map((g) => Object.assign(box(g),
						{ name: g.__data__.data.n })),
				rows: trs.slice(0, 3).map(box),
				cells: trs.map((tr) => ({
					lines: Math.max(...[...tr.cells].map(lines)),
					text: tr.cells[0].textContent,
					title: tr.cells[0].title })),
			};
		});
	if (opt.screenshot)
		await page.screenshot({ path: opt.screenshot, fullPage: false });
	console.log(JSON.stringify(out));
} catch (e) {
	console.error("view.mjs: FAIL: " + e.message);
	console.log(JSON.stringify(out));
	process.exitCode = 1;
} finally {
	await browser.close();
}
