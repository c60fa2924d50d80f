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

/*
 * The deltas of counter ci that process proc's threads carry, merged in
 * time order as they are read (each thread's rows come sorted), deltas at
 * one time summed: memory for one head per thread, not per sample.
 */
struct merge {
	struct fx_rows *r; /* per thread of the process */
	struct point *head;
	size_t *heap; /* sources by head time */
	size_t nr, nr_heap;
	int ci;
};

static bool earlier(const struct merge *m, size_t a, size_t b)
{
	return m->head[m->heap[a]].time < m->head[m->heap[b]].time;
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i, t;

		if (l < m->nr_heap && earlier(m, l, min))
			min = l;
		if (r < m->nr_heap && earlier(m, r, min))
			min = r;
		if (min == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[min];
		m->heap[min] = t;
		i = min;
	}
}

/* Source k's next row with the counter: 1, 0 at its end, or -errno. */
static int advance(struct merge *m, size_t k)
{
	struct evprof_profile_sample s;
	int ret;

	while ((ret = evprof__fx_rows_next(&m->r[k], &s)) > 0) {
		if (s.has_counters >> m->ci & 1) {
			m->head[k] =
			    (struct point){s.time_ns, s.counters[m->ci]};
			return 1;
		}
	}
	return ret;
}

static void merge_close(struct merge *m)
{
	for (size_t k = 0; k < m->nr; k++)
		evprof__fx_rows_close(&m->r[k]);
	free(m->r);
	free(m->head);
	free(m->heap);
}

static int merge_open(struct merge *m, const struct evprof_profile *p, int proc,
		      int ci)
{
	size_t n = 0;
	int ret = 0;

	*m = (struct merge){.ci = ci};
	for (size_t i = 0; i < p->nr_threads; i++)
		n += p->threads[i].proc == proc;
	m->r = calloc(n ? n : 1, sizeof(*m->r));
	m->head = calloc(n ? n : 1, sizeof(*m->head));
	m->heap = calloc(n ? n : 1, sizeof(*m->heap));
	if (!m->r || !m->head || !m->heap) {
		merge_close(m);
		return -ENOMEM;
	}
	for (size_t i = 0; !ret && i < p->nr_threads; i++) {
		if (p->threads[i].proc != proc)
			continue;
		ret = evprof__fx_rows_open(&m->r[m->nr], p, (int)i, -1, -1);
		if (ret)
			break;
		ret = advance(m, m->nr);
		if (ret > 0)
			m->heap[m->nr_heap++] = m->nr;
		m->nr++;
		ret = ret < 0 ? ret : 0;
	}
	for (size_t i = m->nr_heap / 2; i-- > 0;)
		sift_down(m, i);
	if (ret)
		merge_close(m);
	return ret;
}

/*
 * The next time and the sum of its deltas (a rate graph divides by the
 * time between samples: none is 0): 1, 0 at the end, or -errno.
 */
static int merge_next(struct merge *m, struct point *out)
{
	bool any = false;

	while (m->nr_heap) {
		size_t k = m->heap[0];
		int ret;

		if (any && m->head[k].time != out->time)
			break;
		if (!any)
			*out = (struct point){m->head[k].time, 0};
		out->count += m->head[k].count;
		any = true;
		ret = advance(m, k);
		if (ret < 0)
			return ret;
		if (!ret)
			m->heap[0] = m->heap[--m->nr_heap];
		sift_down(m, 0);
	}
	return any;
}

/* The merge's points in one pass: their times (ms), their counts. */
int evprof__fx_make_points(const struct fx_ctx *c, const struct fx_job *job,
			   struct fx_made *m)
{
	struct merge mg;
	struct point pt;
	int ret, e1, e2;

	m->n = 2;
	ret = evprof__fx_col_open(c, &m->o[0], 2);
	if (!ret)
		ret = evprof__fx_col_open(c, &m->o[1], 2);
	if (!ret)
		ret = merge_open(&mg, c->p, job->proc, job->ci);
	if (ret)
		return ret;
	while ((ret = merge_next(&mg, &pt)) > 0) {
		/*
		 * The profiler reads a counter sample's count as what came
		 * since the one before, so it shows the first one's as 0: a
		 * zero at the process's start (or just before the first)
		 * keeps what the process counted before its first sample.
		 */
		if (!m->rows) {
			uint64_t start = c->p->procs[job->proc].start_ns;
			uint64_t t0 =
			    start && start < pt.time ? start : pt.time - 1000;

			evprof__json_fixed(
			    &m->o[0].j, (int64_t)(t0 - c->p->start_mono_ns), 6);
			evprof__json_u64(&m->o[1].j, 0);
			m->rows++;
		}
		evprof__json_fixed(&m->o[0].j,
				   (int64_t)(pt.time - c->p->start_mono_ns), 6);
		evprof__json_u64(&m->o[1].j, pt.count);
		m->rows++;
	}
	merge_close(&mg);
	e1 = evprof__fx_col_end(&m->o[0]);
	e2 = evprof__fx_col_end(&m->o[1]);
	return ret ?: e1 ?: e2;
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

/* Counter job's track, its points made in m; none without points. */
static int write_counter(struct fx_ctx *c, const struct fx_job *job,
			 const struct fx_made *m)
{
	const struct evprof__process *pr = &c->p->procs[job->proc];
	struct evprof__json *j = &c->j;
	char text[320];
	int err;

	if (!m->rows)
		return 0;
	evprof__json_obj(j);
	evprof__json_key(j, "name");
	evprof__json_str(j, c->p->counters[job->ci]);
	evprof__json_key(j, "category");
	evprof__json_str(j, "evprof");
	evprof__json_key(j, "description");
	snprintf(text, sizeof(text), "%s of %s, per sample of its threads",
		 c->p->counters[job->ci], pr->name);
	evprof__json_str(j, text);
	/* A string, as the threads' pid: the track is matched to them. */
	evprof__json_key(j, "pid");
	snprintf(text, sizeof(text), "%d", pr->pid);
	evprof__json_str(j, text);
	evprof__json_key(j, "mainThreadIndex");
	evprof__json_u64(j, (uint64_t)c->proc_main[job->proc]);
	evprof__json_key(j, "samples");
	evprof__json_obj(j);
	evprof__json_key(j, "length");
	evprof__json_u64(j, m->rows);
	evprof__json_key(j, "time");
	err = evprof__json_copy(j, m->o[0].f);
	evprof__json_key(j, "count");
	err = err ?: evprof__json_copy(j, m->o[1].f);
	evprof__json_obj_end(j);
	write_display(c, job->ci);
	evprof__json_obj_end(j);
	return err ?: c->j.out->err;
}

int evprof__fx_write_counters(struct fx_ctx *c, struct fx_ahead *a,
			      size_t first)
{
	size_t i;
	int err = 0;

	evprof__json_key(&c->j, "counters");
	evprof__json_arr(&c->j);
	for (i = first; !err && i < c->nr_jobs; i++) {
		const struct fx_made *m = evprof__fx_ahead_take(a, i);

		err = m->err ?: write_counter(c, &c->jobs[i], m);
		if (!err)
			evprof__fx_ahead_release(a, i);
	}
	evprof__json_arr_end(&c->j);
	return err;
}
