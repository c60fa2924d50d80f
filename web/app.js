// SPDX-License-Identifier: MIT
// evprof's page: a flame graph (d3-flame-graph) and a function table over
// the data evprof embeds in #evprof-data (written by src/lib/out_page.c,
// whose comment describes the format). Every view is computed from the
// per-(thread, call tree node) sums: switching the weight, the colour or
// the thread rebuilds the tree from them, nothing is stored per sample.
"use strict";

(function () {
	// Marks for bench/view_open.sh: parse, and each render's build and draw.
	performance.mark("evprof:start");
	const data = JSON.parse(document.getElementById("evprof-data").textContent);
	prepare(data);
	if (data.base)
		prepare(data.base);
	performance.measure("evprof:parse", "evprof:start");
	const $ = (id) => document.getElementById(id);
	const cols = data.columns;
	const colIndex = (name) => cols.findIndex((c) => c.name === name);
	const fmtCount = d3.format(",");
	const fmtPct = d3.format(".2f");
	const fmtRatio = d3.format(".3~g");
	// "instructions", or with modifiers: "instructions:u"
	const isInsn = (n) => /^instructions([:/]|$)/.test(n);

	// Column values: ns become ms, counts stay counts.
	function fmtValue(col, v) {
		if (cols[col].unit === "ns")
			return d3.format(",.1f")(v / 1e6) + " ms";
		return fmtCount(Math.round(v));
	}
	function colLabel(c) {
		if (c.name === "cpu")
			return "CPU time (ms)";
		return c.unit === "ns" ? c.name + " (ms)" : c.name;
	}

	// ---- the call tree of one dataset, for one weight -------------------

	// Call paths under this share of the total are drawn as part of their
	// caller (under 0.14 px of a 1400 px graph): a profile with a million
	// nodes would otherwise take seconds to lay out, for frames no one
	// sees. The function table is computed from every node.
	const MIN_SHARE = 1e-4;

	function colIndexIn(ds, name) {
		return ds.columns.findIndex((c) => c.name === name);
	}

	// Once per dataset: scratch arrays by node, and whether a node is the
	// topmost of its function on its path (a function's total counts a
	// path once, however often it recurses).
	function prepare(ds) {
		const par = ds.nodes.parent, fn = ds.nodes.func, n = par.length;
		const top = new Uint8Array(n);
		for (let i = 0; i < n; i++) {
			let a = par[i];
			while (a >= 0 && fn[a] !== fn[i])
				a = par[a];
			top[i] = a < 0 ? 1 : 0;
		}
		const arr = () => new Float64Array(n);
		ds.s = { top: top, self: arr(), sn: arr(), sd: arr(), t: arr(),
			 tn: arr(), td: arr(), seen: new Uint8Array(n),
			 in: new Uint8Array(n),
			 obj: new Array(n).fill(null) };
	}

	// The chart's tree for one weight (and the colour ratio's numerator
	// and denominator), thread names as the first level, and the function
	// table's sums. Chart nodes carry: n (name), v (self value: with
	// selfValue(true) d3-flame-graph sums the totals), c (children),
	// l ("kernel"), f (function), sn/sd (self numerator, denominator),
	// t/tn/td (totals), k and g (the dataset's node and thread name), hid
	// (call paths below were folded into it); focus: {group, node} or null.
	function buildTree(ds, weight, num, den, threadName, focus) {
		const par = ds.nodes.parent, fn = ds.nodes.func;
		const names = ds.funcs.name, nf = names.length;
		const root = { n: "all", v: 0, c: [], f: -1, sn: 0, sd: 0 };
		const fa = () => new Float64Array(nf);
		const res = { root: root, fself: fa(), ftotal: fa(), fsn: fa(),
			      fsd: fa(), folded: 0 };
		const w = colIndexIn(ds, weight);
		const ni = num ? colIndexIn(ds, num) : -1;
		const di = den ? colIndexIn(ds, den) : -1;
		const S = ds.s;

		if (w < 0)
			return finish(res);
		const groups = new Map();
		let grand = 0;
		ds.threads.forEach((t, ti) => {
			if (threadName !== null && t.name !== threadName)
				return;
			if (!groups.has(t.name))
				groups.set(t.name, []);
			groups.get(t.name).push(ti);
			for (const v of ds.entries[ti].values[w])
				grand += v;
		});
		const cut = grand * MIN_SHARE;
		for (const [name, tis] of groups) {
			const g = { n: name, v: 0, c: [], f: -1, sn: 0, sd: 0 };
			const list = [];
			for (const ti of tis) {
				const e = ds.entries[ti], vw = e.values[w];
				const vn = ni >= 0 ? e.values[ni] : null;
				const vd = di >= 0 ? e.values[di] : null;
				for (let i = 0; i < e.node.length; i++) {
					const k = e.node[i];
					if (!vw[i])
						continue;
					if (k < 0) { /* no stack: the thread itself */
						g.v += vw[i];
						g.sn += vn ? vn[i] : 0;
						g.sd += vd ? vd[i] : 0;
						continue;
					}
					if (!S.seen[k]) {
						S.seen[k] = 1;
						list.push(k);
					}
					S.self[k] += vw[i];
					S.sn[k] += vn ? vn[i] : 0;
					S.sd[k] += vd ? vd[i] : 0;
				}
			}
			for (let j = 0; j < list.length; j++) {
				const a = par[list[j]];
				if (a >= 0 && !S.seen[a]) {
					S.seen[a] = 1;
					list.push(a);
				}
			}
			// A parent's index is below its children's: children
			// first going down (typed arrays sort numerically, fast).
			const ks = Int32Array.from(list).sort();
			for (let j = ks.length - 1; j >= 0; j--) {
				const k = ks[j];
				const a = par[k], f = fn[k];
				S.t[k] += S.self[k];
				S.tn[k] += S.sn[k];
				S.td[k] += S.sd[k];
				if (a >= 0) {
					S.t[a] += S.t[k];
					S.tn[a] += S.tn[k];
					S.td[a] += S.td[k];
				}
				res.fself[f] += S.self[k];
				res.fsn[f] += S.sn[k];
				res.fsd[f] += S.sd[k];
				if (S.top[k])
					res.ftotal[f] += S.t[k];
			}
			// Under the focus (a frame clicked), the cut is relative
			// to the focus's total: zooming in shows the detail.
			const fk = focus && focus.group === name && S.seen[focus.node] ?
				focus.node : -1;
			const fcut = fk >= 0 ? S.t[fk] * MIN_SHARE : cut;
			for (let j = 0; j < ks.length; j++) {
				const k = ks[j], a = par[k];
				const up = a < 0 ? g : S.obj[a];
				S.in[k] = k === fk || (a >= 0 && S.in[a]) ? 1 : 0;
				if (S.t[k] < (S.in[k] ? fcut : cut) || !S.t[k]) {
					// Under a drawn caller: part of its self.
					if (up && S.t[k]) {
						up.v += S.t[k];
						up.sn += S.tn[k];
						up.sd += S.td[k];
						up.hid = true;
						res.folded++;
					}
					continue;
				}
				const o = { n: names[fn[k]], v: S.self[k], c: [],
					    f: fn[k], sn: S.sn[k], sd: S.sd[k],
					    k: k, g: name };
				if (k === fk)
					res.focus = o;
				if (ds.funcs.kernel[fn[k]])
					o.l = "kernel";
				up.c.push(o);
				S.obj[k] = o;
			}
			for (const k of list) {
				S.self[k] = S.sn[k] = S.sd[k] = 0;
				S.t[k] = S.tn[k] = S.td[k] = 0;
				S.seen[k] = S.in[k] = 0;
				S.obj[k] = null;
			}
			if (g.v || g.c.length)
				root.c.push(g);
		}
		return finish(res);
	}

	// Totals (t, tn, td) of the chart's nodes bottom-up, without
	// recursion (trees are deep); root.order lists them parents first.
	function finish(res) {
		const root = res.root, order = [root];
		for (let i = 0; i < order.length; i++)
			for (const ch of order[i].c)
				order.push(ch);
		for (let i = order.length - 1; i >= 0; i--) {
			const n = order[i];
			n.t = n.v;
			n.tn = n.sn;
			n.td = n.sd;
			for (const ch of n.c) {
				n.t += ch.t;
				n.tn += ch.tn;
				n.td += ch.td;
				n.hid = n.hid || ch.hid;
			}
		}
		root.order = order;
		return res;
	}

	// Per function: self, total, self numerator and denominator.
	function functionTable(res) {
		const rows = [];
		for (let f = 0; f < res.fself.length; f++)
			if (res.fself[f] || res.ftotal[f])
				rows.push({ f: f, self: res.fself[f],
					    total: res.ftotal[f],
					    ratio: res.fsd[f] ? res.fsn[f] / res.fsd[f] : NaN });
		return rows;
	}

	// ---- controls ---------------------------------------------------------

	const state = {
		weight: null, num: null, den: null, colour: "name",
		thread: -1, search: "", sort: "self", diff: "share", focus: null,
	};

	function option(sel, value, text) {
		const o = document.createElement("option");
		o.value = value;
		o.textContent = text;
		sel.appendChild(o);
	}

	function sum(name) {
		const c = colIndex(name);
		let s = 0;
		if (c < 0)
			return 0;
		for (const e of data.entries)
			for (const v of e.values[c])
				s += v;
		return s;
	}

	for (const c of cols)
		option($("weight"), c.name, colLabel(c));
	state.weight = data.weight && colIndex(data.weight) >= 0 ? data.weight :
		sum("cpu") > 0 ? "cpu" : "samples";
	$("weight").value = state.weight;

	// Ratios worth a preset, when both columns exist: instructions and
	// cycles of the same modifiers ("instructions:u" and "cycles:u").
	const presets = [];
	const has = (n) => colIndex(n) >= 0 && sum(n) > 0;
	const insn = cols.map((c) => c.name).find((n) => isInsn(n) && has(n) &&
		has("cycles" + n.slice(12)));
	if (insn)
		presets.push([insn, "cycles" + insn.slice(12),
			      "IPC (" + insn + " / cycles" + insn.slice(12) + ")"]);
	for (const c of cols) {
		if (/miss/.test(c.name) && insn)
			presets.push([c.name, insn,
				      c.name + " per kilo-instruction"]);
		if (/fault/.test(c.name) && has("cpu"))
			presets.push([c.name, "cpu", c.name + " per ms of CPU"]);
	}
	option($("colour"), "name", "by function name");
	presets.forEach((p, i) => option($("colour"), "preset" + i, p[2]));
	option($("colour"), "custom", "ratio of two columns…");
	for (const c of cols) {
		option($("num"), c.name, c.name);
		option($("den"), c.name, c.name);
	}
	// Per kilo-instruction and per ms scale the plain ratio.
	function ratioScale(num, den) {
		const dc = cols[colIndex(den)];
		if (isInsn(den) && !isInsn(num))
			return 1000;
		return dc && dc.unit === "ns" ? 1e6 : 1;
	}
	function ratioName() {
		if (!state.num)
			return "";
		const s = ratioScale(state.num, state.den);
		if (s === 1000)
			return state.num + " per kilo-instruction";
		if (s === 1e6)
			return state.num + " per ms of " + state.den;
		if (isInsn(state.num) && state.den === "cycles" + state.num.slice(12))
			return "IPC";
		return state.num + " / " + state.den;
	}

	data.threads.forEach((t, i) =>
		option($("thread"), i, t.name + " (" + t.tid + ")" +
			(t.who ? " [" + t.who + "]" : "")));
	if (data.base)
		$("difflabel").hidden = false;

	// ---- chart ------------------------------------------------------------

	// d3-flame-graph's UMD build exports a module object on the global.
	const chart = flamegraph.default()
		.width(Math.max(600, $("chart").clientWidth || 1200))
		.cellHeight(18)
		.minFrameSize(1)
		.selfValue(true)
		.sort(true)
		.inverted($("icicle").checked)
		.transitionDuration(200)
		.setDetailsElement($("details"))
		.setSearchMatch((d, term) => searchMatch(d.data.n, term));
	let tree = null, root = null, scale = null, deltas = null;
	let refocusing = false;

	// A click zooms (d3-flame-graph); where the paths below the frame
	// were folded for being small, the tree is rebuilt with the detail.
	chart.onClick((d) => {
		if (refocusing)
			return;
		const o = d.data;
		const want = o.k === undefined ? null : { group: o.g, node: o.k };
		if (o.hid || (state.focus && !want) ||
		    (state.focus && want && state.focus.node !== want.node)) {
			state.focus = want;
			render();
		}
	});

	function searchMatch(name, term) {
		if (!term || !name)
			return false;
		try {
			return new RegExp(term, "i").test(name);
		} catch (e) {
			return name.toLowerCase().includes(term.toLowerCase());
		}
	}

	const ramp = d3.interpolateRgbBasis(["#2c7bb6", "#ffffbf", "#d7191c"]);

	function nodeRatio(n) {
		return n.td ? n.tn / n.td * ratioScale(state.num, state.den) : NaN;
	}

	function colourOf(d, original) {
		if (d.highlight)
			return "#e600e6";
		if (deltas) {
			const x = deltas.get(d.data);
			if (x === undefined)
				return original;
			const k = Math.min(1, Math.abs(x) / (deltas.max || 1));
			return d3.interpolateRgb("#f4f4f4",
				x > 0 ? "#d7191c" : "#2c7bb6")(k);
		}
		if (!scale)
			return original;
		const r = nodeRatio(d.data);
		return isNaN(r) ? "#c8c8c8" : ramp(scale(r));
	}
	chart.setColorMapper(colourOf);

	chart.setLabelHandler((d) => {
		const w = colIndex(state.weight);
		let s = d.data.n + ": " + fmtValue(w, d.data.t) + " (" +
			fmtPct(100 * d.data.t / (root.t || 1)) + "%)";
		if (scale) {
			const r = nodeRatio(d.data);
			s += ", " + ratioName() + " " + (isNaN(r) ? "-" : fmtRatio(r));
		}
		if (deltas && deltas.get(d.data) !== undefined)
			s += ", change " + fmtDelta(deltas.get(d.data));
		return s;
	});

	function fmtDelta(x) {
		return (x > 0 ? "+" : "") + (state.diff === "share" ?
			fmtPct(x) + " points" : fmtValue(colIndex(state.weight), x));
	}

	function threadName() {
		return state.thread < 0 ? null : data.threads[state.thread].name;
	}

	// Differential view: each NEW node's change against the BASE node of
	// the same path of names, in share points or in the weight's unit.
	function diffOf(rootNew) {
		if (!data.base || state.diff === "off")
			return null;
		const rootBase = buildTree(data.base, state.weight, null, null,
					   threadName()).root;
		const base = new Map();
		const keyOf = new Map([[rootBase, ""]]);
		for (const n of rootBase.order) {
			const k = keyOf.get(n);
			base.set(k, n.t);
			for (const ch of n.c)
				keyOf.set(ch, k + "\n" + ch.n);
		}
		const out = new Map();
		const keyNew = new Map([[rootNew, ""]]);
		let max = 0;
		for (const n of rootNew.order) {
			const k = keyNew.get(n), b = base.get(k) || 0;
			const x = state.diff === "share" ?
				100 * (n.t / (rootNew.t || 1) - b / (rootBase.t || 1)) :
				n.t - b;
			out.set(n, x);
			if (n !== rootNew)
				max = Math.max(max, Math.abs(x));
			for (const ch of n.c)
				keyNew.set(ch, k + "\n" + ch.n);
		}
		out.max = max;
		return out;
	}

	function legend() {
		const el = $("legend");
		el.textContent = "";
		const bar = (stops) => {
			const b = document.createElement("span");
			b.className = "bar";
			b.style.background = "linear-gradient(to right," +
				stops.join(",") + ")";
			return b;
		};
		const text = (t) => el.appendChild(document.createTextNode(t));
		if (deltas) {
			text("shrank " + fmtDelta(-deltas.max) + " ");
			el.appendChild(bar(["#2c7bb6", "#f4f4f4", "#d7191c"]));
			text(" grew " + fmtDelta(deltas.max) +
			     " (against the base profile)");
		} else if (scale) {
			const [lo, hi] = scale.domain();
			text(ratioName() + ": " + fmtRatio(lo) + " ");
			el.appendChild(bar([0, 0.25, 0.5, 0.75, 1].map(ramp)));
			text(" " + fmtRatio(hi) + "  ");
			const g = document.createElement("span");
			g.className = "swatch";
			el.appendChild(g);
			text(" no " + state.den);
		}
	}

	function render() {
		performance.mark("evprof:render");
		tree = buildTree(data, state.weight,
				 scaleWanted() ? state.num : null,
				 scaleWanted() ? state.den : null, threadName(),
				 state.focus);
		root = tree.root;
		scale = null;
		if (scaleWanted()) {
			const rs = root.order.map(nodeRatio).filter((r) => !isNaN(r))
				.sort((a, b) => a - b);
			if (rs.length) {
				// Outliers of tiny frames would flatten the rest.
				const lo = rs[Math.floor(rs.length * 0.02)];
				const hi = rs[Math.ceil(rs.length * 0.98) - 1];
				scale = d3.scaleLinear().domain([lo, hi > lo ? hi : lo + 1])
					.clamp(true);
			}
		}
		deltas = diffOf(root);
		const w = colIndex(state.weight);
		$("summary").textContent = "total " + colLabel(cols[w]) + ": " +
			fmtValue(w, root.t) + " in " + data.threads.length +
			" thread(s)" + (data.base ? ", against a base profile" : "") +
			(tree.folded ? "; " + fmtCount(tree.folded) + " call paths " +
			 "under " + 100 * MIN_SHARE + "% drawn as part of their " +
			 "callers" : "");
		legend();
		performance.measure("evprof:build", "evprof:render");
		performance.mark("evprof:draw");
		const el = $("chart");
		chart.destroy();
		d3.select(el).datum(root).call(chart);
		if (tree.focus) {
			const h = d3.select(el).datum().descendants()
				.find((d) => d.data === tree.focus);
			refocusing = true;
			if (h)
				chart.zoomTo(h);
			refocusing = false;
		}
		// Roots in sight: the top of an icicle, the bottom of a flame graph.
		el.scrollTop = chart.inverted() ? 0 : el.scrollHeight;
		performance.measure("evprof:chart", "evprof:draw");
		if (state.search)
			chart.search(state.search);
		table();
		performance.measure("evprof:render", "evprof:render");
		// Since navigation began: what bench/view_open.sh reports.
		document.body.dataset.readyMs = Math.round(performance.now());
		document.body.dataset.ready = "1";
	}

	function scaleWanted() {
		return state.colour !== "name" && state.num && state.den;
	}

	// ---- table ------------------------------------------------------------

	function table() {
		const rows = functionTable(tree);
		const key = state.sort;
		rows.sort((a, b) => key === "name" ?
			d3.ascending(data.funcs.name[a.f], data.funcs.name[b.f]) :
			key === "lib" ? d3.ascending(libOf(a.f), libOf(b.f)) :
			(isNaN(b[key]) ? -Infinity : b[key]) -
			(isNaN(a[key]) ? -Infinity : a[key]));
		const w = colIndex(state.weight), all = root.t || 1;
		const body = document.querySelector("#functions tbody");
		body.textContent = "";
		$("ratiohead").textContent = $("ratiohead").title =
			scaleWanted() ? ratioName() : "ratio";
		let shown = 0;
		for (const r of rows) {
			const name = data.funcs.name[r.f];
			if (state.search && !searchMatch(name, state.search))
				continue;
			if (++shown > 500)
				break;
			const tr = document.createElement("tr");
			const cells = [name, libOf(r.f), fmtValue(w, r.self),
				fmtPct(100 * r.self / all), fmtValue(w, r.total),
				fmtPct(100 * r.total / all),
				scaleWanted() && !isNaN(r.ratio) ?
				fmtRatio(r.ratio * ratioScale(state.num, state.den)) : "-"];
			cells.forEach((c, i) => {
				const td = document.createElement("td");
				td.textContent = c;
				if (i < 2) /* cut short when long */
					td.title = c;
				tr.appendChild(td);
			});
			body.appendChild(tr);
		}
	}

	function libOf(f) {
		const l = data.funcs.lib[f];
		return l >= 0 ? data.libs[l] : data.funcs.kernel[f] ? "[kernel]" : "";
	}

	// ---- events -----------------------------------------------------------

	$("weight").onchange = (e) => { state.weight = e.target.value; render(); };
	$("thread").onchange = (e) => { state.thread = +e.target.value; render(); };
	$("diff").onchange = (e) => { state.diff = e.target.value; render(); };
	$("colour").onchange = (e) => {
		state.colour = e.target.value;
		const p = presets[+state.colour.replace("preset", "")];
		if (p) {
			state.num = p[0];
			state.den = p[1];
		} else if (state.colour === "custom") {
			state.num = $("num").value;
			state.den = $("den").value;
		}
		$("num").value = state.num || "";
		$("den").value = state.den || "";
		$("custom").hidden = state.colour === "name";
		render();
	};
	$("num").onchange = $("den").onchange = () => {
		state.colour = "custom";
		$("colour").value = "custom";
		state.num = $("num").value;
		state.den = $("den").value;
		render();
	};
	$("search").oninput = (e) => {
		state.search = e.target.value;
		if (state.search)
			chart.search(state.search);
		else
			chart.clear();
		table();
	};
	$("reset").onclick = () => {
		if (state.focus) {
			state.focus = null;
			render();
		} else {
			chart.resetZoom();
		}
	};
	$("icicle").onchange = (e) => {
		chart.inverted(e.target.checked);
		render();
	};
	for (const th of document.querySelectorAll("#functions th"))
		th.onclick = () => { state.sort = th.dataset.sort; table(); };
	$("custom").hidden = true;
	render();
})();
