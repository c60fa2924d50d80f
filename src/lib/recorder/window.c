// SPDX-License-Identifier: MIT
/*
 * The profiles the recorder makes: at once from the session at the end,
 * or in parts (opts.flat_memory): the polls build what is older than a
 * margin into the profile being made about once a second,
 * so the session holds a second or so of samples however long the
 * recording; a window hands that profile over and starts the next one.
 * The session does the building (evprof_session__build_until()); this
 * module decides when, into which profile, and how far.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "internal.h"
#include "session/session.h"

#define PART_EVERY_NS 1000000000ull
/* Timeline rows held in memory before they spill (about 0.5 MB). */
#define SPILL_ROWS 8192

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The share of each counter that threads counted after their last sample
 * of it, on "[unsampled]", and what changes it.
 */
static void note_unsampled(struct evprof_recorder *r, struct evprof_profile *p,
			   const struct evprof_session_stats *st)
{
	char buf[512];
	int off = snprintf(buf, sizeof(buf),
			   "counted after each thread's last sample, on "
			   "[unsampled]:");
	bool any = false;

	/* The session's counters are the events after the sampler. */
	for (size_t i = 0; i < r->s.nr && i < EVPROF_PROFILE_MAX_COUNTERS;
	     i++) {
		const char *name =
		    r->s.events[i + 1 < r->s.nr ? i + 1 : 0].name;

		if (!st->unsampled[i] || off < 0 || (size_t)off >= sizeof(buf))
			continue;
		off += snprintf(buf + off, sizeof(buf) - (size_t)off,
				"%s %s %.1f%%", any ? "," : "", name,
				100.0 * (double)st->unsampled[i] /
				    (double)st->counted[i]);
		any = true;
	}
	if (!any || off < 0 || (size_t)off >= sizeof(buf))
		return;
	snprintf(buf + off, sizeof(buf) - (size_t)off,
		 " (tasks shorter than a period: a shorter one, "
		 "EVENT/period=N/, samples them)");
	evprof_profile__add_note(p, buf);
}

/*
 * Says which unwinding made the user stacks and how it went, and whether
 * the kernel throttled sampling (the counters then miss some events).
 */
static void note_session(struct evprof_recorder *r, struct evprof_profile *p)
{
	struct evprof_session_stats st = {.sz = sizeof(st)};
	char buf[256];

	evprof_session__stats(r->e->session, &st);
	note_unsampled(r, p, &st);
	if (st.throttled) {
		snprintf(buf, sizeof(buf),
			 "the kernel throttled sampling %llu times: a "
			 "throttled group's counters miss what happened until "
			 "the next tick",
			 (unsigned long long)st.throttled);
		evprof_profile__add_note(p, buf);
	}
	if (!r->s.callchain)
		return;
	if (r->s.dwarf_stack)
		snprintf(buf, sizeof(buf),
			 "call graph: dwarf (%u-byte user stack copies unwound "
			 "with libdw): %llu stacks unwound, %llu truncated, "
			 "%llu copies dropped",
			 r->s.dwarf_stack,
			 (unsigned long long)st.stacks_unwound,
			 (unsigned long long)st.stacks_truncated,
			 (unsigned long long)st.stacks_dropped);
	else if (r->s.defer)
		snprintf(buf, sizeof(buf),
			 "call graph: frame pointers, user part deferred: %llu "
			 "deferred samples, %llu left unstitched",
			 (unsigned long long)st.deferred_samples,
			 (unsigned long long)st.deferred_unstitched);
	else
		snprintf(buf, sizeof(buf), "call graph: frame pointers");
	evprof_profile__add_note(p, buf);
	if (evprof__stack_ends_note(&st, buf, sizeof(buf)))
		evprof_profile__add_note(p, buf);
	if (!st.leaf_checked)
		return;
	snprintf(buf, sizeof(buf),
		 "call graph: leaves mended from %u-byte stack copies: of %llu "
		 "stacks, %llu gained the callers the frame pointers skip, "
		 "%llu leaf not recovered",
		 r->s.leaf_stack, (unsigned long long)st.leaf_checked,
		 (unsigned long long)st.leaf_gained,
		 (unsigned long long)st.leaf_lost);
	evprof_profile__add_note(p, buf);
}

/* A symbolizer of the recorder's own options. NULL with errno set. */
static struct evprof_symbolizer *symbolizer(const struct evprof_recorder *r)
{
	struct evprof_symbolizer_opts so = {.sz = sizeof(so),
					    .debug_cache_dir = r->debug_cache};

	return evprof_symbolizer__new(&so);
}

/*
 * A profile of r's events and notes covering the time from start_mono.
 * Returns NULL with errno set.
 */
static struct evprof_profile *new_profile(struct evprof_recorder *r,
					  uint64_t start_mono)
{
	struct evprof_profile *p;
	struct utsname u;
	char os[200];

	uname(&u);
	snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	{
		struct evprof_profile_opts po = {
		    .sz = sizeof(po),
		    .product = r->product,
		    .os = os,
		    .start_wall_ns =
			r->start_wall + (start_mono - r->start_mono),
		    .start_mono_ns = start_mono,
		    .interval_ns = r->s.period ? 0 : 1000000000ull / r->s.freq,
		    .no_timeline = r->no_timeline,
		    .spill_dir = r->spill_dir,
		    /* A small budget: memory flat within seconds. */
		    .spill_rows = SPILL_ROWS,
		};

		p = evprof_profile__new(&po);
		if (!p && r->spill_dir && errno != ENOMEM) {
			evprof__note(
			    &r->notes,
			    "cannot spill the timeline to %s (%s): it stays "
			    "in memory",
			    r->spill_dir, strerror(errno));
			free(r->spill_dir);
			r->spill_dir = NULL;
			po.spill_dir = NULL;
			p = evprof_profile__new(&po);
		}
	}
	for (size_t i = 0; p && i < r->notes.n; i++) {
		if (evprof_profile__add_note(p, r->notes.v[i])) {
			evprof_profile__free(p);
			errno = ENOMEM;
			return NULL;
		}
	}
	return p;
}

/*
 * flat_memory: builds what the session holds up to until into the profile
 * being made (sym NULL: the recorder's own). Returns 0 or -errno.
 */
static int part(struct evprof_recorder *r, struct evprof_symbolizer *sym,
		uint64_t until)
{
	if (!r->cur) {
		r->cur = new_profile(r, r->win_start);
		if (!r->cur)
			return -errno;
	}
	if (!sym && !r->sym) {
		r->sym = symbolizer(r);
		if (!r->sym)
			return -errno;
	}
	return evprof_session__build_until(r->e->session, r->cur,
					   sym ? sym : r->sym, until);
}

void evprof__recorder_poll_part(struct evprof_recorder *r)
{
	uint64_t now;
	int err;

	/*
	 * Off-CPU intervals end after their samples: those wait for the end.
	 * An engine whose samples do not stream in (the BPF engine's sums)
	 * gives them at windows and the stop only.
	 */
	if (!r->flat || r->s.off_cpu || !r->ops->caps.streams || !r->started ||
	    r->stopped || r->part_failed)
		return;
	now = mono_ns();
	if (now - r->last_part < PART_EVERY_NS)
		return;
	r->last_part = now;
	err = part(r, NULL, now - EVPROF_RECORDER_MARGIN_NS);
	if (err) {
		/* Samples stay in the session then: memory grows, data is kept. */
		r->part_failed = true;
		evprof__note(&r->notes,
			     "cannot build while recording (%s): "
			     "samples are kept until the end",
			     evprof_strerror(err));
	}
}

int evprof_recorder__window(struct evprof_recorder *r,
			    struct evprof_symbolizer *sym,
			    struct evprof_profile **out)
{
	uint64_t until, end;
	int err;

	if (!r || !out || !r->flat || !r->started)
		return -EINVAL;
	if (r->windows_over)
		return -ENODATA;
	if (r->s.off_cpu && !r->stopped)
		return -EOPNOTSUPP;
	if (r->stopped) {
		until = UINT64_MAX;
		end = r->stop_mono;
	} else {
		until = end = mono_ns() - EVPROF_RECORDER_MARGIN_NS;
	}
	if (end < r->win_start) {
		end = r->win_start;
		if (!r->stopped)
			until = end;
	}
	if (!r->stopped) {
		err = r->e->ops->window(r->e, until);
		if (err)
			return err;
	}
	err = part(r, sym, until);
	if (err)
		return err;
	evprof_profile__set_end(r->cur, end);
	note_session(r, r->cur);
	*out = r->cur;
	r->cur = NULL;
	r->win_start = end;
	r->windows_over = r->stopped;
	return 0;
}

struct evprof_profile *evprof_recorder__profile(struct evprof_recorder *r,
						struct evprof_symbolizer *sym)
{
	struct evprof_symbolizer *own = NULL;
	struct evprof_profile *p;
	int err;

	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	if (r->flat) {
		err = part(r, sym, UINT64_MAX);
		if (err) {
			errno = -err;
			return NULL;
		}
		p = r->cur;
		r->cur = NULL;
		note_session(r, p);
		r->e->ops->notes(r->e, p);
		return p;
	}
	p = new_profile(r, r->start_mono);
	if (!p)
		return NULL;
	if (!sym) {
		own = sym = symbolizer(r);
		if (!own) {
			evprof_profile__free(p);
			return NULL;
		}
	}
	err = evprof_session__build(r->e->session, p, sym);
	evprof_symbolizer__free(own);
	if (err) {
		evprof_profile__free(p);
		errno = -err;
		return NULL;
	}
	note_session(r, p);
	r->e->ops->notes(r->e, p);
	return p;
}
