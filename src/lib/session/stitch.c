// SPDX-License-Identifier: MIT
/*
 * Sessions, complete user stacks: the stack copies kept for DWARF
 * unwinding at build (session_stacks.c unwinds them), and the stitching of
 * deferred user callchains (Linux 6.19, "perf: Support deferred user
 * unwind").
 *
 * A deferred sample's callchain ends with PERF_CONTEXT_USER_DEFERRED and a
 * cookie instead of the user ips; the kernel writes one
 * PERF_RECORD_CALLCHAIN_DEFERRED (cookie, user ips) when the task returns
 * to user space, for every sample that kernel entry took. It may reach us
 * from another CPU's ring, so records are put in time order first; then,
 * per thread, the samples waiting when a record comes are stitched when
 * their cookie is its cookie and released unstitched otherwise (their own
 * record was lost), as perf does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stitch.h"
#include "symbols/symbols.h"

static bool is_deferred(const uint64_t *ips, uint64_t nr)
{
	return nr >= 2 && ips[nr - 2] == EVPROF_CONTEXT_USER_DEFERRED;
}

/* ---- feeding ------------------------------------------------------------ */

void evprof__stitch_free(struct sess_stitch *k)
{
	EVPROF_VEC_FREE(&k->ustacks);
	EVPROF_VEC_FREE(&k->deferred);
	evprof__hashmap_free(k->tops);
}

uint64_t evprof__stitch_top(const struct sess_stitch *k, uint32_t tid)
{
	long v;

	return k->tops && evprof__hashmap_find(k->tops, (long)tid, &v)
		   ? (uint64_t)v
		   : 0;
}

/*
 * Asks once per thread (pid, tid: the sample's task as the session took
 * it) where the stack a full copy was cut from ends.
 */
static void ask_top(struct sess_stitch *k, const struct evprof_sample *smp,
		    uint32_t pid, uint32_t tid)
{
	const struct evprof__unwind_input in = {.regs_mask = k->regs_mask,
						.regs = smp->regs_user,
						.nr_regs = smp->regs_user_nr};
	uint64_t sp;
	long v;

	if (!k->stack_top || !(k->sample_type & PERF_SAMPLE_TID) ||
	    (k->tops && evprof__hashmap_find(k->tops, (long)tid, &v)) ||
	    !evprof__unwind_sp(&in, &sp))
		return;
	if (!k->tops &&
	    !(k->tops = evprof__hashmap_new(evprof__hashmap_u64_hash,
					    evprof__hashmap_u64_equal, NULL)))
		return;
	/* Without memory it is asked again at the thread's next copy. */
	(void)evprof__hashmap_add(
	    k->tops, (long)tid,
	    (long)k->stack_top(k->stack_top_ctx, (pid_t)pid, (pid_t)tid, sp));
}

void evprof__stitch_sample(struct sess_stitch *k,
			   const struct evprof_sample *smp, struct ssample *ss)
{
	const uint64_t need = PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
	uint64_t dyn = smp->stack_user_dyn_size, words, *w;

	if ((k->sample_type & PERF_SAMPLE_CALLCHAIN) &&
	    is_deferred(smp->callchain, smp->callchain_nr))
		k->deferred_samples++;
	/* A kernel thread has no user registers nor stack (abi 0). */
	if ((k->sample_type & need) != need ||
	    smp->regs_user_abi != PERF_SAMPLE_REGS_ABI_64 ||
	    !smp->stack_user_size)
		return;
	words = 3 + smp->regs_user_nr + (dyn + 7) / 8;
	if ((k->ustacks.n + words) * sizeof(uint64_t) > k->max_stack_bytes ||
	    k->ustacks.n + words >= UINT32_MAX ||
	    EVPROF_VEC_RESERVE(&k->ustacks, k->ustacks.n + words)) {
		k->stacks_dropped++;
		return;
	}
	w = k->ustacks.a + k->ustacks.n;
	w[0] = dyn;
	w[1] = smp->stack_user_size;
	w[2] = smp->regs_user_nr;
	memcpy(w + 3, smp->regs_user, smp->regs_user_nr * sizeof(uint64_t));
	w[words - 1] = 0; /* the padding of a dyn_size not a multiple of 8 */
	memcpy(w + 3 + smp->regs_user_nr, smp->stack_user, dyn);
	ss->ustack = (uint32_t)k->ustacks.n + 1;
	k->ustacks.n += words;
	if (dyn == smp->stack_user_size)
		ask_top(k, smp, ss->pid, ss->tid);
}

int evprof__stitch_deferred(struct sess_stitch *k, struct sess_store *st,
			    const struct evprof_record *r)
{
	const uint64_t need = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	uint32_t chain;
	int err;

	/* Without the thread and time of the record it matches nothing. */
	if (!r->sid.present || (k->sample_type & need) != need)
		return 0;
	err = evprof__sstore_chain(st, r->deferred.ips, r->deferred.nr, &chain);
	if (err)
		return err;
	return EVPROF_VEC_PUSH(&k->deferred,
			       ((struct sdeferred){.time = r->sid.time,
						   .cookie = r->deferred.cookie,
						   .tid = r->sid.tid,
						   .chain = chain}))
		   ? -ENOMEM
		   : 0;
}

/* ---- stitching ---------------------------------------------------------- */

struct sev { /* a waiting sample or a deferred record */
	uint64_t time;
	uint32_t tid;
	uint32_t idx;
	uint8_t record;
};

/* Per thread, in time order; at one time a sample comes before a record. */
static int cmp_sev(const void *pa, const void *pb)
{
	const struct sev *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->record != b->record)
		return a->record < b->record ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Kernel part of x's chain, PERF_CONTEXT_USER, then d's user ips. */
static int stitch(struct sess_store *st, struct ssample *x,
		  const struct sdeferred *d)
{
	const uint64_t *w = st->chains.a;
	uint64_t nr = w[x->chain] - 2, unr = w[d->chain], *buf;
	int err;

	buf = malloc((nr + 1 + unr) * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, w + x->chain + 1, nr * sizeof(*buf));
	buf[nr] = PERF_CONTEXT_USER;
	memcpy(buf + nr + 1, w + d->chain + 1, unr * sizeof(*buf));
	err = evprof__sstore_chain(st, buf, nr + 1 + unr, &x->chain);
	free(buf);
	return err;
}

int evprof__stitch_resolve(struct sess_stitch *k, struct sess_store *st)
{
	struct ssample *ss = st->samples.a;
	const struct sdeferred *dr = k->deferred.a;
	struct sev *ev;
	size_t n = 0, run, last;
	int err = 0;

	k->deferred_unstitched = 0;
	ev = malloc((st->samples.n + k->deferred.n + 1) * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < st->samples.n; i++) {
		const uint64_t *w = st->chains.a + ss[i].chain;

		if (is_deferred(w + 1, w[0]))
			ev[n++] =
			    (struct sev){ss[i].time, ss[i].tid, (uint32_t)i, 0};
	}
	for (size_t i = 0; i < k->deferred.n; i++)
		ev[n++] = (struct sev){dr[i].time, dr[i].tid, (uint32_t)i, 1};
	qsort(ev, n, sizeof(*ev), cmp_sev);

	for (run = 0; run < n && !err; run = last) {
		size_t waiting = run;

		for (last = run; last < n && ev[last].tid == ev[run].tid;
		     last++) {
			const struct sdeferred *d;

			/* Samples only: dr may be NULL, no offset from it. */
			if (!ev[last].record)
				continue;
			d = &dr[ev[last].idx];
			/*
			 * Every sample waiting now (all of ev[waiting..last):
			 * the previous record ended the previous wait) is
			 * resolved by d.
			 */
			for (; waiting < last && !err; waiting++) {
				struct ssample *x = &ss[ev[waiting].idx];
				const uint64_t *w = st->chains.a + x->chain;

				if (w[w[0]] == d->cookie)
					err = stitch(st, x, d);
				else
					k->deferred_unstitched++;
			}
			waiting = last + 1;
		}
		/* Still waiting at the end: their record never came. */
		k->deferred_unstitched += last - waiting;
	}
	free(ev);
	return err;
}
