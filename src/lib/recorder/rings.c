// SPDX-License-Identifier: MIT
/* Rings per CPU for the engines: see rings.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include <evprof/proc.h>

#include "rings.h"
#include "symbols/symbols.h"

static int map_rings(struct evprof__rings *rs, struct evprof__engine_setup *s)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct evprof_group *g = evprof_group_set__group(rs->set, i);

		rs->v[i] =
		    evprof_ring__open(evprof_group__fd(g, 0), s->ring_pages);
		if (!rs->v[i] && errno == EPERM && !s->ring_pages_asked &&
		    s->ring_pages > RING_PAGES_SMALL) {
			for (size_t k = 0; k < i; k++) {
				evprof_ring__free(rs->v[k]);
				rs->v[k] = NULL;
			}
			evprof__note(
			    s->notes,
			    "%zu KiB rings are over the locked-memory limit: "
			    "%d KiB per CPU",
			    s->ring_pages * 4, RING_PAGES_SMALL * 4);
			s->ring_pages = RING_PAGES_SMALL;
			return map_rings(rs, s);
		}
		if (!rs->v[i]) {
			int err = errno;

			pr_warn(
			    "cannot map the ring buffer of CPU %d: %s%s\n",
			    evprof_group_set__cpu(rs->set, i), strerror(err),
			    err == EPERM ? " (raise kernel.perf_event_mlock_kb)"
					 : "");
			return -err;
		}
	}
	return 0;
}

int evprof__rings_map(struct evprof__rings *rs,
		      const struct evprof_group_set *set,
		      struct evprof__engine_setup *s)
{
	rs->set = set;
	rs->n = evprof_group_set__nr(set);
	rs->v = calloc(rs->n, sizeof(*rs->v));
	if (!rs->v) {
		rs->n = 0;
		return -ENOMEM;
	}
	return map_rings(rs, s);
}

struct evprof_ring *evprof__rings_of_cpu(const struct evprof__rings *rs,
					 int cpu)
{
	for (size_t i = 0; i < rs->n; i++)
		if (evprof_group_set__cpu(rs->set, i) == cpu)
			return rs->v[i];
	return NULL;
}

/*
 * What a record's task has that only /proc tells, read while it lives:
 * for a code mapping, its file kept (a copy in the image cache, or open)
 * when only the process's mount namespace has the path (a container's
 * binary), so that it can be read after the process exits
 * (evprof__dso_pin()); for a new task, its ids in its own pid namespace (a
 * container's).
 */
static void live_facts(const void *rec, size_t size,
		       struct evprof_session *session)
{
	/* The record's own fields, not its sample_id trailer. */
	static const struct evprof_record_fmt body;
	const struct perf_event_header *h = rec;
	struct evprof_record r;
	int ns_pid, ns_tid;

	if ((h->type != PERF_RECORD_MMAP2 && h->type != PERF_RECORD_FORK) ||
	    evprof_record__parse(&r, rec, size, &body))
		return;
	if (h->type == PERF_RECORD_FORK) {
		if (evprof_proc__ns_ids((int)r.task.pid, (int)r.task.tid,
					&ns_pid, &ns_tid) == 1)
			evprof_session__name_ns_ids(
			    session, r.task.time, (pid_t)r.task.pid,
			    (pid_t)r.task.tid, ns_pid, ns_tid);
		return;
	}
	if (r.mmap.prot & PROT_EXEC && r.mmap.filename[0] == '/')
		evprof__dso_pin(
		    (int)r.mmap.pid, r.mmap.filename,
		    r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID ? 0 : r.mmap.ino);
}

int evprof__rings_feed(struct evprof__rings *rs, struct evprof_session *session)
{
	int n = 0;

	for (size_t i = 0; i < rs->n; i++) {
		const void *rec;
		size_t size;

		while (evprof_ring__next(rs->v[i], &rec, &size) == 1) {
			evprof_session__feed(session, rec, size);
			live_facts(rec, size, session);
			n++;
		}
	}
	return n;
}

size_t evprof__rings_fds(const struct evprof__rings *rs, int *fds, size_t max)
{
	for (size_t i = 0; i < rs->n && i < max; i++)
		fds[i] = evprof_ring__fd(rs->v[i]);
	return rs->n;
}

void evprof__rings_stats(const struct evprof__rings *rs,
			 struct evprof_recorder_stats *st)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct evprof_ring_stats r = {.sz = sizeof(r)};

		evprof_ring__stats(rs->v[i], &r);
		st->ring_lost_events += r.lost_events;
		st->ring_lost_records += r.lost_records;
		st->ring_lost_samples += r.lost_samples;
		st->ring_malformed += r.malformed;
	}
}

void evprof__rings_close(struct evprof__rings *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		evprof_ring__free(rs->v[i]);
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}
