// SPDX-License-Identifier: MIT
/* Session off-CPU intervals: see session_offcpu.h. */
#include <errno.h>
#include <stdlib.h>

#include "offcpu.h"

/* What happened to a thread at a time; the order at equal times. */
enum ev_kind {
	EV_FORK,  /* a new task of this tid: an earlier one's exit is gone */
	EV_OUT,	  /* switch-out cut: opens an interval (idx: its sample) */
	EV_SWOUT, /* its switch-out record: the start; idx 1: preempted */
	EV_IN,	  /* switch-in: closes the interval */
	EV_EXIT,  /* the task exited: closes it, later cuts open none */
};

struct ev {
	uint64_t time;
	uint32_t tid;
	uint32_t kind;
	uint32_t idx;
};

void evprof__offcpu_free(struct sess_offcpu *o)
{
	EVPROF_VEC_FREE(&o->sw);
	EVPROF_VEC_FREE(&o->lost);
}

int evprof__offcpu_switch(struct sess_offcpu *o, uint32_t tid, uint64_t time,
			  bool in, bool preempt)
{
	return EVPROF_VEC_PUSH(
	    &o->sw,
	    ((struct soff_switch){
		.time = time, .tid = tid, .in = in, .preempt = preempt}));
}

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Every event of every thread: switch records, cuts, FORK and EXIT. */
static struct ev *gather(const struct sess_offcpu *o,
			 const struct sess_store *st, size_t *n)
{
	size_t cap = o->sw.n + st->samples.n + st->sb.n, k = 0;
	struct ev *e = malloc((cap ? cap : 1) * sizeof(*e));

	if (!e)
		return NULL;
	for (size_t i = 0; i < o->sw.n; i++)
		e[k++] = (struct ev){.time = o->sw.a[i].time,
				     .tid = o->sw.a[i].tid,
				     .kind = o->sw.a[i].in ? EV_IN : EV_SWOUT,
				     .idx = o->sw.a[i].preempt};
	for (size_t i = 0; i < st->samples.n; i++) {
		const struct ssample *x = &st->samples.a[i];

		if (x->flags & SS_OFFCPU)
			e[k++] = (struct ev){.time = x->time,
					     .tid = x->tid,
					     .kind = EV_OUT,
					     .idx = (uint32_t)i};
	}
	for (size_t i = 0; i < st->sb.n; i++) {
		const struct sb_event *b = &st->sb.a[i];

		if (b->kind == SB_FORK || b->kind == SB_EXIT)
			e[k++] = (struct ev){
			    .time = b->time,
			    .tid = b->tid,
			    .kind = b->kind == SB_FORK ? EV_FORK : EV_EXIT};
	}
	*n = k;
	return e;
}

/* A thread's interval being matched. */
struct open {
	uint32_t idx;	/* its sample, NO_SAMPLE: none open */
	uint64_t start; /* its cut's time, then its out record's */
};

/* Ends the thread's open interval (if any) at time. */
static void close_at(struct sess_store *st, struct open *op, uint64_t time)
{
	struct ssample *x;

	if (op->idx == NO_SAMPLE)
		return;
	x = &st->samples.a[op->idx];
	op->idx = NO_SAMPLE;
	if (time > op->start)
		x->cpu_delta = time - op->start;
}

static int lose(struct sess_offcpu *o, uint32_t idx, uint32_t n)
{
	return EVPROF_VEC_PUSH(&o->lost, ((struct soff_lost){idx, n}));
}

static int cmp_lost(const void *pa, const void *pb)
{
	const struct soff_lost *a = pa, *b = pb;

	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int evprof__offcpu_resolve(struct sess_offcpu *o, struct sess_store *st)
{
	uint64_t end = o->end_time ? o->end_time : o->last_time;
	struct open op = {.idx = NO_SAMPLE};
	uint32_t tid = 0, anchor = NO_SAMPLE, pending = 0;
	bool exited = false;
	size_t n;
	int err = 0;
	struct ev *e = gather(o, st, &n);

	if (!e)
		return -ENOMEM;
	qsort(e, n, sizeof(*e), cmp_ev);
	o->unmatched = 0;
	o->lost.n = 0;
	for (size_t i = 0; i < st->samples.n; i++) {
		struct ssample *x = &st->samples.a[i];

		if (x->flags & SS_OFFCPU) {
			x->cpu_delta = 0;
			x->flags &= ~(uint32_t)SS_PREEMPT;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || e[i].tid != tid || e[i].kind == EV_FORK) {
			/* A task without a cut is none of ours: not counted. */
			if (!err && pending && anchor != NO_SAMPLE)
				err = lose(o, anchor, pending);
			anchor = NO_SAMPLE;
			pending = 0;
		}
		if (i == 0 || e[i].tid != tid) {
			close_at(st, &op, end);
			tid = e[i].tid;
			exited = false;
		}
		switch (e[i].kind) {
		case EV_FORK:
			close_at(st, &op, e[i].time);
			exited = false;
			break;
		case EV_OUT:
			/* The one before never came back: a lost switch-in. */
			o->unmatched += op.idx != NO_SAMPLE;
			if (!err && pending)
				err = lose(
				    o, anchor != NO_SAMPLE ? anchor : e[i].idx,
				    pending);
			pending = 0;
			anchor = e[i].idx;
			op.idx = exited ? NO_SAMPLE : e[i].idx;
			op.start = e[i].time;
			break;
		case EV_SWOUT:
			/*
			 * The cut comes first (perf_event_task_sched_out()):
			 * none is a lost or throttled sample, unless the task
			 * is past its exit.
			 */
			if (op.idx == NO_SAMPLE) {
				pending += !exited;
				break;
			}
			op.start = e[i].time;
			if (e[i].idx)
				st->samples.a[op.idx].flags |= SS_PREEMPT;
			break;
		case EV_IN:
			close_at(st, &op, e[i].time);
			break;
		case EV_EXIT:
			close_at(st, &op, e[i].time);
			exited = true;
			break;
		}
	}
	close_at(st, &op, end);
	if (!err && pending && anchor != NO_SAMPLE)
		err = lose(o, anchor, pending);
	free(e);
	if (!err && o->lost.n)
		qsort(o->lost.a, o->lost.n, sizeof(*o->lost.a), cmp_lost);
	return err;
}

uint32_t evprof__offcpu_lost_at(const struct sess_offcpu *o, uint32_t idx)
{
	size_t lo = 0, hi = o->lost.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->lost.a[mid].idx == idx)
			return o->lost.a[mid].n;
		if (o->lost.a[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}
