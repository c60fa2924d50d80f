// SPDX-License-Identifier: MIT
/*
 * Waits on the Firefox Profiler's time axis: each wait a thread spent off
 * the CPU (evprof_profile__add_wait()) becomes an interval marker on the
 * thread's own track, named after its weight type ("off-cpu", voluntary;
 * "preempted"), from when it left the CPU until it ran again, its cause
 * the stack it left on. The schema shows them in the track's timeline
 * overview (with the thread's showMarkersInTimeline), the marker chart and
 * the marker table; the tooltip gives the duration and the stack. Their
 * call trees are the "<thread> <weight>" tracks, whose samples sit at each
 * wait's start (out_firefox_rows.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "out_firefox.h"

#define WAIT_SCHEMA "OffCPU"

void evprof__fx_write_marker_schema(struct fx_ctx *c)
{
	struct evprof__json *j = &c->j;

	evprof__json_key(j, "markerSchema");
	evprof__json_arr(j);
	if (c->p->nr_weights) {
		evprof__json_obj(j);
		evprof__json_key(j, "name");
		evprof__json_str(j, WAIT_SCHEMA);
		evprof__json_key(j, "tooltipLabel");
		evprof__json_str(j, "{marker.name}");
		evprof__json_key(j, "tableLabel");
		evprof__json_str(j, "{marker.name}");
		evprof__json_key(j, "chartLabel");
		evprof__json_str(j, "{marker.name}");
		evprof__json_key(j, "display");
		evprof__json_raw(j, "[\"marker-chart\",\"marker-table\","
				    "\"timeline-overview\"]");
		evprof__json_key(j, "fields");
		evprof__json_raw(j, "[]");
		evprof__json_key(j, "description");
		evprof__json_str(
		    j, "The thread was off the CPU: off-cpu (it waited: "
		       "sleep, I/O, a lock) or preempted (it could have run), "
		       "from its switch-out until it ran again, on the stack "
		       "it left on.");
		evprof__json_obj_end(j);
	}
	evprof__json_arr_end(j);
}

void evprof__fx_write_wait_names(struct fx_ctx *c)
{
	uint32_t i;

	for (i = 0; i < c->p->nr_weights; i++)
		evprof__json_str(&c->j, c->p->weights[i]);
}

/* "key": [...] of column k (0 name, 1 start, 2 end) over n waits of t. */
static void wait_col(struct fx_ctx *c, const struct evprof__thread *t,
		     const char *key, int k, const uint32_t *order, size_t n)
{
	size_t i;

	evprof__json_key(&c->j, key);
	evprof__json_arr(&c->j);
	for (i = 0; i < n; i++) {
		const struct evprof__wait *w = &t->waits[order[i]];

		if (k == 0)
			evprof__json_u64(&c->j, c->p->nr_strs + w->wtype);
		else
			evprof__fx_ms(c,
				      w->start_ns + (k == 2 ? w->dur_ns : 0));
	}
	evprof__json_arr_end(&c->j);
}

int evprof__fx_write_markers(struct fx_ctx *c, int thr, bool own)
{
	const struct evprof__thread *t = &c->p->threads[thr];
	struct evprof__json *j = &c->j;
	uint32_t *order = NULL;
	size_t i, n = 0;
	char num[21];
	int err = own ? evprof__fx_wait_order(c->p, thr, -1, &order, &n) : 0;

	if (err)
		return err;
	evprof__json_key(j, "markers");
	evprof__json_obj(j);
	evprof__json_key(j, "length");
	evprof__json_u64(j, n);
	wait_col(c, t, "name", 0, order, n);
	wait_col(c, t, "startTime", 1, order, n);
	wait_col(c, t, "endTime", 2, order, n);
	evprof__json_key(j, "phase");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, 1); /* interval */
	evprof__json_arr_end(j);
	evprof__json_key(j, "category");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, FX_CAT_WAIT);
	evprof__json_arr_end(j);
	evprof__json_key(j, "data");
	evprof__json_arr(j);
	snprintf(num, sizeof(num), "%d", t->tid);
	for (i = 0; i < n; i++) {
		const struct evprof__wait *w = &t->waits[order[i]];

		evprof__json_obj(j);
		evprof__json_key(j, "type");
		evprof__json_str(j, WAIT_SCHEMA);
		evprof__json_key(j, "cause");
		evprof__json_obj(j);
		evprof__json_key(j, "tid");
		evprof__json_raw(j, num);
		evprof__json_key(j, "time");
		evprof__fx_ms(c, w->start_ns);
		evprof__json_key(j, "stack");
		if (w->stack >= 0)
			evprof__json_u64(j, (uint64_t)w->stack);
		else
			evprof__json_null(j);
		evprof__json_obj_end(j);
		evprof__json_obj_end(j);
	}
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
	free(order);
	return j->out->err;
}
