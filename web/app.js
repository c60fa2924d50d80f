// SPDX-License-Identifier: MIT
// evprof's page: a flame graph (d3-flame-graph) and a function table over
// the data evprof embeds in #evprof-data (written by src/lib/out_page.c,
// whose comment describes the format). Every view is computed from the
// per-(thread, call tree node) sums: switching the weight, the colour or
// the thread rebuilds the tree from them, nothing is stored per sample.
"use strict";

(function () {
	const data = JSON.parse(document.getElementById("evprof-data").textContent);
	const $ = (id) => document.getElementById(id);
	const cols = data.columns;
	const colIndex = (name) => cols.findIndex((c) => c.name === name);
	const fmtCount = d3.format(",");
	const fmtPct = d3.format(".2f");
	const fmtRatio = d3.format(".3~g");

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

	// Per thread name, the chart node of every (group, tree node) that has
	// values, made on demand with its ancestors. Nodes carry: n (name),
	// v (self value of the weight: d3-flame-graph sums totals with
	// selfValue(true)), c (children), l ("kernel" for kernel frames), f
	// (function), sn/sd (self numerator, denominator of the colour ratio).
	function buildTree(ds, weight, num, den, threadName) {
		const nodes = ds.nodes, funcs = ds.funcs;
		const root = { n: "all", v: 0, c: [], f: -1, sn: 0, sd: 0 };
		const groups = new Map();
		const memo = new Map();
		const w = colIndexIn(ds, weight);
		const ni = num ? colIndexIn(ds, num) : -1;
		const di = den ? colIndexIn(ds, den) : -1;

		function node(group, g, id) {
			const key = g * nodes.parent.length + id;
			let n = memo.get(key);

			if (n)
				return n;
			const par = nodes.parent[id];
			const up = par < 0 ? group : node(group, g, par);
			const f = nodes.func[id];
			n = { n: funcs.name[f], v: 0, c: [], f: f, sn: 0, sd: 0 };
			if (funcs.kernel[f])
				n.l = "kernel";
			up.c.push(n);
			memo.set(key, n);
			return n;
		}

		if (w < 0)
			return root;
		ds.threads.forEach((t, ti) => {
			if (threadName !== null && t.name !== threadName)
				return;
			let group = groups.get(t.name);
			if (!group) {
				group = { n: t.name, v: 0, c: [], f: -1, sn: 0, sd: 0,
					  g: groups.size };
				groups.set(t.name, group);
				root.c.push(group);
			}
			const e = ds.entries[ti], vw = e.values[w];
			const vn = ni >= 0 ? e.values[ni] : null;
			const vd = di >= 0 ? e.values[di] : null;
			for (let i = 0; i < e.node.length; i++) {
				if (!vw[i])
					continue;
				const n = e.node[i] < 0 ? group :
					node(group, group.g, e.node[i]);
				n.v += vw[i];
				if (vn)
					n.sn += vn[i];
				if (vd)
					n.sd += vd[i];
			}
		});
		// Totals (t, tn, td) bottom-up, without recursion: trees are deep.
		const order = [root];
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
			}
		}
		root.order = order;
		return root;
	}

	function colIndexIn(ds, name) {
		return ds.columns.findIndex((c) => c.name === name);
	}

	// Per function: self, total (a function counted once per path, however
	// often it recurses), self numerator and denominator.
	function functionTable(ds, root) {
		const nf = ds.funcs.name.length;
		const self = new Float64Array(nf), total = new Float64Array(nf);
		const sn = new Float64Array(nf), sd = new Float64Array(nf);
		const stamp = new Int32Array(nf).fill(-1);
		let seq = 0;

		// Depth-first with the path's functions on a stack.
		const stack = [[root, 0]], path = [];
		while (stack.length) {
			const [n, depth] = stack.pop();
			path.length = depth;
			path.push(n.f);
			if (n.f >= 0) {
				self[n.f] += n.v;
				sn[n.f] += n.sn;
				sd[n.f] += n.sd;
			}
			if (n.v) {
				seq++;
				for (const f of path)
					if (f >= 0 && stamp[f] !== seq) {
						stamp[f] = seq;
						total[f] += n.v;
					}
			}
			for (const ch of n.c)
				stack.push([ch, depth + 1]);
		}
		const rows = [];
		for (let f = 0; f < nf; f++)
			if (self[f] || total[f])
				rows.push({ f: f, self: self[f], total: total[f],
					    ratio: sd[f] ? sn[f] / sd[f] : NaN });
		return rows;
	}

	// ---- controls ---------------------------------------------------------

	const state = {
		weight: null, num: null, den: null, colour: "name",
		thread: -1, search: "", sort: "self", diff: "share",
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

	// Ratios worth a preset, when both columns exist.
	const presets = [];
	const has = (n) => colIndex(n) >= 0 && sum(n) > 0;
	if (has("instructions") && has("cycles"))
		presets.push(["instructions", "cycles", "IPC (instructions / cycles)"]);
	for (const c of cols) {
		if (/miss/.test(c.name) && has("instructions"))
			presets.push([c.name, "instructions",
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
		if (den === "instructions" && num !== "instructions")
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
		if (state.num === "instructions" && state.den === "cycles")
			return "IPC";
		return state.num + " / " + state.den;
	}

	data.threads.forEach((t, i) =>
		option($("thread"), i, t.name + " (" + t.tid + ")"));
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
		.transitionDuration(200)
		.setDetailsElement($("details"))
		.setSearchMatch((d, term) => searchMatch(d.data.n, term));
	let root = null, scale = null, deltas = null;

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
					   threadName());
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
		root = buildTree(data, state.weight, scaleWanted() ? state.num : null,
				 scaleWanted() ? state.den : null, threadName());
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
			" thread(s)" + (data.base ? ", against a base profile" : "");
		legend();
		const el = $("chart");
		chart.destroy();
		d3.select(el).datum(root).call(chart);
		if (state.search)
			chart.search(state.search);
		table();
		document.body.dataset.ready = "1";
	}

	function scaleWanted() {
		return state.colour !== "name" && state.num && state.den;
	}

	// ---- table ------------------------------------------------------------

	function table() {
		const rows = functionTable(data, root);
		const key = state.sort;
		rows.sort((a, b) => key === "name" ?
			d3.ascending(data.funcs.name[a.f], data.funcs.name[b.f]) :
			key === "lib" ? d3.ascending(libOf(a.f), libOf(b.f)) :
			(isNaN(b[key]) ? -Infinity : b[key]) -
			(isNaN(a[key]) ? -Infinity : a[key]));
		const w = colIndex(state.weight), all = root.t || 1;
		const body = document.querySelector("#functions tbody");
		body.textContent = "";
		$("ratiohead").textContent = scaleWanted() ? ratioName() : "ratio";
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
			for (const c of cells) {
				const td = document.createElement("td");
				td.textContent = c;
				tr.appendChild(td);
			}
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
	$("reset").onclick = () => chart.resetZoom();
	for (const th of document.querySelectorAll("#functions th"))
		th.onclick = () => { state.sort = th.dataset.sort; table(); };
	$("custom").hidden = true;
	render();
})();
