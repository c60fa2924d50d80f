// SPDX-License-Identifier: MIT
/*
 * Firefox Profiler counters: per process, one counter per registered event,
 * its samples the deltas of the process's threads merged in time order
 * (deltas at one time summed: the graph is a rate).
 *
 * Processed format 62 and later carry each counter's `display` config
 * (63 added its `tooltipRows`); a profile that says version 62 or more
 * must write both, the upgraders only derive them for older files. Since
 * the profiler's generic counter track (April 2026, before version 66),
 * every counter of a process with threads gets a track, whatever its
 * category; earlier profilers drew only Memory, Bandwidth, power and
 * process CPU counters, and refuse version 66 anyway.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "out_firefox.h"

/* Colours the profiler draws graphs in, one per counter in turn. */
static const char *const colors[] = {"blue",	"orange", "green", "purple",
				     "magenta", "teal",	  "red",   "yellow"};

struct point {
	uint64_t time;
	uint64_t count;
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* The deltas of counter ci that process proc's threads carry, by time. */
static int gather(const struct evprof_profile *p, int proc, int ci,
		  struct point **out, size_t *n)
{
	struct evprof_profile_sample s;
	struct point *pts = NULL, *grown;
	size_t cap = 0;
	struct fx_rows r;
	size_t i, k;
	int ret = 0;

	*n = 0;
	for (i = 0; !ret && i < p->nr_threads; i++) {
		if (p->threads[i].proc != proc)
			continue;
		ret = evprof__fx_rows_open(&r, p, (int)i, -1, -1);
		if (ret)
			break;
		while ((ret = evprof__fx_rows_next(&r, &s)) > 0) {
			if (!(s.has_counters >> ci & 1))
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 256;
				grown = realloc(pts, cap * sizeof(*pts));
				if (!grown) {
					ret = -ENOMEM;
					break;
				}
				pts = grown;
			}
			pts[(*n)++] = (struct point){s.time_ns, s.counters[ci]};
		}
		evprof__fx_rows_close(&r);
	}
	if (ret < 0) {
		free(pts);
		return ret;
	}
	if (*n)
		qsort(pts, *n, sizeof(*pts), cmp_point);
	/* A rate graph divides by the time between samples: none is 0. */
	for (i = 0, k = 0; i < *n; i++) {
		if (k && pts[k - 1].time == pts[i].time)
			pts[k - 1].count += pts[i].count;
		else
			pts[k++] = pts[i];
	}
	*n = k;
	*out = pts;
	return 0;
}

static void tooltip_row(struct evprof__json *j, const char *source,
			const char *label, bool selection)
{
	evprof__json_obj(j);
	evprof__json_key(j, "type");
	evprof__json_str(j, "value");
	evprof__json_key(j, "source");
	evprof__json_str(j, source);
	evprof__json_key(j, "format");
	evprof__json_raw(j, "{\"unit\":\"number\"}");
	evprof__json_key(j, "label");
	evprof__json_str(j, label);
	if (selection) {
		evprof__json_key(j, "requiresPreviewSelection");
		evprof__json_bool(j, true);
	}
	evprof__json_obj_end(j);
}

/*
 * A rate graph (events per ms between samples); the tooltip gives the
 * sample's delta, the rate, and the totals of the range and selection.
 */
static void write_display(struct fx_ctx *c, int ci)
{
	struct evprof__json *j = &c->j;
	const char *name = c->p->counters[ci];
	char label[192];

	evprof__json_key(j, "display");
	evprof__json_obj(j);
	evprof__json_key(j, "graphType");
	evprof__json_str(j, "line-rate");
	evprof__json_key(j, "unit");
	evprof__json_str(j, "");
	evprof__json_key(j, "color");
	evprof__json_str(j, colors[ci % (sizeof(colors) / sizeof(*colors))]);
	evprof__json_key(j, "markerSchemaLocation");
	evprof__json_null(j);
	/* After the profiler's own counters (10 to 50), in recorded order. */
	evprof__json_key(j, "sortWeight");
	evprof__json_u64(j, 100 + (uint64_t)ci);
	evprof__json_key(j, "label");
	evprof__json_str(j, name);
	evprof__json_key(j, "tooltipRows");
	evprof__json_arr(j);
	snprintf(label, sizeof(label), "%s in this sample", name);
	tooltip_row(j, "count", label, false);
	snprintf(label, sizeof(label), "%s per ms", name);
	tooltip_row(j, "rate", label, false);
	evprof__json_raw(j, "{\"type\":\"separator\"}");
	snprintf(label, sizeof(label), "%s in the visible range", name);
	tooltip_row(j, "committed-range-total", label, false);
	snprintf(label, sizeof(label), "%s in the selection", name);
	tooltip_row(j, "selection-total", label, true);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
}

static int write_counter(struct fx_ctx *c, int proc, int ci)
{
	const struct evprof__process *pr = &c->p->procs[proc];
	struct evprof__json *j = &c->j;
	struct point *pts;
	char text[320];
	size_t i, n;
	int err = gather(c->p, proc, ci, &pts, &n);

	if (err)
		return err;
	if (!n) {
		free(pts);
		return 0;
	}
	evprof__json_obj(j);
	evprof__json_key(j, "name");
	evprof__json_str(j, c->p->counters[ci]);
	evprof__json_key(j, "category");
	evprof__json_str(j, "evprof");
	evprof__json_key(j, "description");
	snprintf(text, sizeof(text), "%s of %s, per sample of its threads",
		 c->p->counters[ci], pr->name);
	evprof__json_str(j, text);
	/* A string, as the threads' pid: the track is matched to them. */
	evprof__json_key(j, "pid");
	snprintf(text, sizeof(text), "%d", pr->pid);
	evprof__json_str(j, text);
	evprof__json_key(j, "mainThreadIndex");
	evprof__json_u64(j, (uint64_t)c->proc_main[proc]);
	evprof__json_key(j, "samples");
	evprof__json_obj(j);
	evprof__json_key(j, "length");
	evprof__json_u64(j, n);
	evprof__json_key(j, "time");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__fx_ms(c, pts[i].time);
	evprof__json_arr_end(j);
	evprof__json_key(j, "count");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, pts[i].count);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
	write_display(c, ci);
	evprof__json_obj_end(j);
	free(pts);
	return c->j.out->err;
}

int evprof__fx_write_counters(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	size_t proc;
	int ci, err = 0;

	evprof__json_key(&c->j, "counters");
	evprof__json_arr(&c->j);
	/*
	 * Without a timeline (a profile read from pprof) samples have no
	 * times: no graph to draw. The per-counter call trees remain.
	 */
	for (proc = 0; !err && p->timeline && proc < p->nr_procs; proc++) {
		/* A process without a thread track has no track to hold it. */
		if (c->proc_main[proc] < 0)
			continue;
		for (ci = 0; !err && ci < (int)p->nr_counters; ci++)
			err = write_counter(c, (int)proc, ci);
	}
	evprof__json_arr_end(&c->j);
	return err;
}
