// SPDX-License-Identifier: MIT
/*
 * A flame graph as one SVG file, from the folded stacks (folded.h): the
 * layout of FlameGraph's flamegraph.pl, computed the same way. Sorted
 * lines share their common prefixes; a frame opens where its line's path
 * first differs from the line before and closes where a later one leaves
 * it, its width the sum of the lines it spans. Root at the bottom.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "json.h"
#include "profile/profile.h"

#define WIDTH	 1200 /* px, as flamegraph.pl */
#define PAD	 10
#define FRAME_H	 16
#define TOP	 40   /* title and subtitle */
#define MIN_PX	 0.1  /* narrower frames are left out */
#define CHAR_PX	 7.0  /* 12 px Verdana, about */
#define MAX_PATH 1024 /* frames of one line kept */

struct box {
	uint32_t depth;
	size_t name; /* offset in the folded arena: the text up to the ';' */
	uint32_t len;
	uint64_t start, end;
};

struct svg {
	const struct evprof__folded *f;
	struct box *v;
	size_t n, cap;
	uint32_t max_depth;
};

static int add_box(struct svg *g, uint32_t depth, size_t name, uint32_t len,
		   uint64_t start, uint64_t end)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 1024;
		struct box *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = (struct box){depth, name, len, start, end};
	if (depth > g->max_depth)
		g->max_depth = depth;
	return 0;
}

/* The boxes of every frame, depth 1 being the thread names (0: all). */
static int layout(struct svg *g, uint64_t *total)
{
	const struct evprof__folded *f = g->f;
	size_t off[MAX_PATH];
	uint32_t len[MAX_PATH];
	uint64_t start[MAX_PATH], x = 0;
	size_t open = 0;

	for (size_t i = 0; i < f->nr_lines; i++) {
		const char *text = f->arena + f->lines[i].off, *p = text;
		size_t k = 0;

		/* Frames of this line shared with the open ones stay open. */
		while (*p && k < MAX_PATH) {
			const char *e = strchr(p, ';');
			uint32_t n =
			    (uint32_t)(e ? (size_t)(e - p) : strlen(p));

			if (k < open &&
			    (len[k] != n || memcmp(f->arena + off[k], p, n))) {
				while (open > k) {
					open--;
					if (add_box(g, (uint32_t)open + 1,
						    off[open], len[open],
						    start[open], x))
						return -ENOMEM;
				}
			}
			if (k == open) {
				off[k] = (size_t)(p - f->arena);
				len[k] = n;
				start[k] = x;
				open++;
			}
			k++;
			p = e ? e + 1 : p + n;
		}
		while (open > k) { /* a line that ends above the open frames */
			open--;
			if (add_box(g, (uint32_t)open + 1, off[open], len[open],
				    start[open], x))
				return -ENOMEM;
		}
		x += f->lines[i].sum;
	}
	while (open--)
		if (add_box(g, (uint32_t)open + 1, off[open], len[open],
			    start[open], x))
			return -ENOMEM;
	*total = x;
	return 0;
}

/* flamegraph.pl's "hot" palette from the name; kernel frames orange. */
static void colour(const char *name, size_t n, char *buf, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	if (n > 4 && !memcmp(name + n - 4, "_[k]", 4))
		snprintf(buf, len, "rgb(%u,%u,%u)", 230u, 140u + h % 60u,
			 40u + (h >> 8) % 40u);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205u + h % 50u,
			 (h >> 8) % 230u, (h >> 16) % 55u);
}

static void put_box(struct evprof__sink *out, const struct svg *g,
		    const struct box *b, const char *name, size_t n,
		    uint64_t total, double scale, uint32_t height)
{
	double x = PAD + (double)b->start * scale;
	double w = (double)(b->end - b->start) * scale;
	double y = height - PAD - (double)(b->depth + 1) * FRAME_H;
	char buf[160], fill[32];
	size_t chars;

	(void)g;
	colour(name, n, fill, sizeof(fill));
	evprof__sink_puts(out, "<g><title>");
	evprof__sink_markup(out, name, n);
	snprintf(buf, sizeof(buf), " (%" PRIu64 ", %.2f%%)</title>",
		 b->end - b->start,
		 100.0 * (double)(b->end - b->start) / (double)total);
	evprof__sink_puts(out, buf);
	snprintf(buf, sizeof(buf),
		 "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		 "fill=\"%s\" rx=\"2\"/>",
		 x, y, w, FRAME_H - 1, fill);
	evprof__sink_puts(out, buf);
	chars = w > 3 * CHAR_PX ? (size_t)((w - 6) / CHAR_PX) : 0;
	if (chars) {
		snprintf(buf, sizeof(buf), "<text x=\"%.1f\" y=\"%.1f\">",
			 x + 3, y + FRAME_H - 5);
		evprof__sink_puts(out, buf);
		if (chars >= n) {
			evprof__sink_markup(out, name, n);
		} else {
			evprof__sink_markup(out, name, chars - 2);
			evprof__sink_puts(out, "..");
		}
		evprof__sink_puts(out, "</text>");
	}
	evprof__sink_puts(out, "</g>\n");
}

static int write_svg(const struct evprof_profile *p, struct evprof__sink *out,
		     const struct evprof_svg_opts *opts)
{
	const char *wname = EVPROF_OPTS_GET(opts, weight_counter, NULL);
	const char *title = EVPROF_OPTS_GET(opts, title, NULL);
	struct evprof__folded f = {.p = p, .col = COL_SAMPLES};
	struct svg g = {.f = &f};
	uint64_t total = 0;
	uint32_t height;
	double scale;
	char buf[256];
	int err;

	if (wname) {
		f.col = evprof__profile_column(p, wname);
		if (f.col < 0)
			return -ENOENT;
	}
	err = evprof__fold(&f);
	if (!err)
		err = layout(&g, &total);
	if (err)
		goto out;
	height = TOP + (g.max_depth + 1) * FRAME_H + 2 * PAD;
	scale = total ? (double)(WIDTH - 2 * PAD) / (double)total : 0;
	snprintf(
	    buf, sizeof(buf),
	    "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" width=\"%d\" height=\"%u\" "
	    "viewBox=\"0 0 %d %u\" xmlns=\"http://www.w3.org/2000/svg\">\n",
	    WIDTH, height, WIDTH, height);
	evprof__sink_puts(out, buf);
	evprof__sink_puts(out,
			  "<style>text { font-family: Verdana, sans-serif; "
			  "font-size: 12px; fill: #000; } "
			  "g:hover rect { stroke: #000; stroke-width: 0.5; }"
			  "</style>\n<rect width=\"100%\" height=\"100%\" "
			  "fill=\"#f8f8f8\"/>\n");
	snprintf(buf, sizeof(buf),
		 "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" "
		 "style=\"font-size: 16px\">",
		 WIDTH / 2);
	evprof__sink_puts(out, buf);
	evprof__sink_markup(out, title ? title : "Flame graph",
			    strlen(title ? title : "Flame graph"));
	snprintf(buf, sizeof(buf),
		 "</text>\n<text x=\"%d\" y=\"36\" text-anchor=\"middle\" "
		 "style=\"fill: #555\">weight: ",
		 WIDTH / 2);
	evprof__sink_puts(out, buf);
	evprof__sink_markup(out, wname ? wname : "samples",
			    strlen(wname ? wname : "samples"));
	snprintf(buf, sizeof(buf), ", %" PRIu64 " in all</text>\n", total);
	evprof__sink_puts(out, buf);
	if (total) {
		struct box all = {0, 0, 3, 0, total};

		put_box(out, &g, &all, "all", 3, total, scale, height);
	}
	for (size_t i = 0; i < g.n; i++) {
		const struct box *b = &g.v[i];

		if ((double)(b->end - b->start) * scale >= MIN_PX)
			put_box(out, &g, b, f.arena + b->name, b->len, total,
				scale, height);
	}
	evprof__sink_puts(out, "</svg>\n");
	err = out->err;
out:
	free(g.v);
	evprof__fold_fini(&f);
	return err;
}

int evprof_profile__write_svg(const struct evprof_profile *p, const char *path,
			      const struct evprof_svg_opts *opts)
{
	struct evprof__sink out;
	int err, cerr;

	if (!p || !path || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	if (EVPROF_OPTS_GET(opts, weight_counter, NULL) &&
	    evprof__profile_column(p, opts->weight_counter) < 0)
		return -ENOENT;
	err = evprof__sink_open(&out, path);
	if (err)
		return err;
	err = write_svg(p, &out, opts);
	cerr = evprof__sink_close(&out, !err);
	return err ? err : cerr;
}
