// SPDX-License-Identifier: MIT
/*
 * The recorder's builds in parts (opts.flat_memory): the polls build what
 * is older than a margin into the profile being made about once a second,
 * so the session holds a second or so of samples however long the
 * recording; a window hands that profile over and starts the next one.
 * The session does the building (evprof_session__build_until()); this
 * module decides when, into which profile, and how far.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "engine_bpf.h"
#include "open.h"

#define PART_EVERY_NS 1000000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int evprof__recorder_part(struct evprof_recorder *r,
			  struct evprof_symbolizer *sym, uint64_t until)
{
	if (!r->cur) {
		r->cur = evprof__recorder_new_profile(r, r->win_start);
		if (!r->cur)
			return -errno;
	}
	if (!sym && !r->sym) {
		r->sym = evprof__recorder_symbolizer(r);
		if (!r->sym)
			return -errno;
	}
	return evprof_session__build_until(r->session, r->cur,
					   sym ? sym : r->sym, until);
}

void evprof__recorder_poll_part(struct evprof_recorder *r)
{
	uint64_t now;
	int err;

	/*
	 * Off-CPU intervals end after their samples: those wait for the end.
	 * The BPF engine's sums come at windows and the stop only.
	 */
	if (!r->flat || r->off_cpu || r->bpf || !r->started || r->stopped ||
	    r->part_failed)
		return;
	now = mono_ns();
	if (now - r->last_part < PART_EVERY_NS)
		return;
	r->last_part = now;
	err = evprof__recorder_part(r, NULL, now - EVPROF_RECORDER_MARGIN_NS);
	if (err) {
		/* Samples stay in the session then: memory grows, data is kept. */
		r->part_failed = true;
		evprof__recorder_note(r,
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
	if (r->off_cpu && !r->stopped)
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
	if (r->bpf && !r->stopped) {
		err = evprof__bpf_window(r, until);
		if (err)
			return err;
	}
	err = evprof__recorder_part(r, sym, until);
	if (err)
		return err;
	evprof_profile__set_end(r->cur, end);
	evprof__recorder_note_session(r, r->cur);
	*out = r->cur;
	r->cur = NULL;
	r->win_start = end;
	r->windows_over = r->stopped;
	return 0;
}
