// SPDX-License-Identifier: MIT
/* Session aggregates: see session_aggr.h. */
#include <errno.h>

#include "aggr.h"
#include "internal.h"

int evprof__session_aggregate(struct evprof_session *s,
			      const struct evprof_session_aggr *a)
{
	static const uint64_t unsampled = EVPROF__CHAIN_UNSAMPLED;
	struct sess_store *st;
	uint32_t chain;
	int err;

	/* The sampler_counter's slot too. */
	if (!s || !a || (s->nr_slots < 64 && a->has >> s->nr_slots))
		return -EINVAL;
	st = &s->store;
	err = a->unsampled ? evprof__sstore_chain(st, &unsampled, 1, &chain)
			   : evprof__sstore_chain(st, a->ips, a->nr, &chain);
	if (!err)
		err = evprof__session_note_cgroup(s, a->time, a->pid, a->tid,
						  a->cgroup);
	if (!err)
		err = evprof__sstore_sample_reserve(st);
	/* One word more than a sample: the count. */
	if (!err &&
	    (EVPROF_VEC_RESERVE(&st->deltas, st->deltas.n + st->nr_slots + 1) ||
	     st->deltas.n + st->nr_slots + 1 > UINT32_MAX))
		err = -ENOMEM;
	if (err)
		return err;
	evprof__sstore_sample(st,
			      &(struct ssample){
				  .time = a->time,
				  .cpu_delta = a->cpu_ns,
				  .has = a->has,
				  .pid = a->pid,
				  .tid = a->tid,
				  .chain = chain,
				  .flags = SS_HAS_CPU | SS_AGGR |
					   (a->unsampled ? SS_UNSAMPLED : 0),
			      },
			      a->counters);
	st->deltas.a[st->deltas.n++] = a->samples;
	return 0;
}
