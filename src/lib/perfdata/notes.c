// SPDX-License-Identifier: MIT
/*
 * What an imported profile says about itself: where the file comes from,
 * what its counters can mean (from the attrs, see perfdata.h), what was
 * cut, skipped or not found. Notes end up in the profile's metadata.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <evprof/profile.h>

#include "internal.h"
#include "session/session.h"

#define NOTE_MAX 2048

static void note(struct evprof_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void note(struct evprof_profile *p, const char *fmt, ...)
{
	char buf[NOTE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	evprof_profile__add_note(p, buf);
}

/* Appends to buf (of NOTE_MAX bytes) what fits. */
static void cat(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void cat(char *buf, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n >= NOTE_MAX - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, NOTE_MAX - n, fmt, ap);
	va_end(ap);
}

uint64_t evprof__pd_interval(const struct evprof_perfdata *pd)
{
	for (uint32_t i = 0; i < pd->h.nr_attrs; i++) {
		const struct perf_event_attr *a = &pd->h.attrs[i].attr;

		if (a->freq && a->sample_freq)
			return 1000000000ULL / a->sample_freq;
		if (!a->freq && a->sample_period &&
		    a->type == PERF_TYPE_SOFTWARE &&
		    (a->config == PERF_COUNT_SW_CPU_CLOCK ||
		     a->config == PERF_COUNT_SW_TASK_CLOCK))
			return a->sample_period;
	}
	return 0;
}

static void note_source(const struct evprof_perfdata *pd,
			struct evprof_profile *p)
{
	const struct pd_header *h = &pd->h;
	char buf[NOTE_MAX] = "";

	cat(buf, "imported from a perf.data file (%s mode)",
	    h->pipe ? "pipe" : "file");
	if (h->version)
		cat(buf, " written by perf %s", h->version);
	if (h->hostname)
		cat(buf, " on %s", h->hostname);
	if (h->osrelease)
		cat(buf, " (Linux %s%s%s%s%s)", h->osrelease,
		    h->arch ? ", " : "", h->arch ? h->arch : "",
		    h->cpudesc ? ", " : "", h->cpudesc ? h->cpudesc : "");
	if (h->cmdline)
		cat(buf, "; recorded with: %s", h->cmdline);
	note(p, "%s", buf);
}

/* Per-CPU group reads: each member's total per CPU, never per thread. */
static void note_per_cpu(const struct evprof_perfdata *pd,
			 struct evprof_profile *p)
{
	char buf[NOTE_MAX] = "";

	cat(buf, "counters: group reads of per-CPU events (system-wide): "
		 "counts between two samples straddle context switches, so "
		 "they are not charged to threads; per-CPU totals:");
	for (uint32_t i = 0; i < pd->h.nr_attrs; i++) {
		int32_t max_cpu = -1;

		for (size_t k = 0; k < pd->cpu.n; k++)
			if (pd->cpu.a[k].attr == i &&
			    pd->cpu.a[k].cpu > max_cpu)
				max_cpu = pd->cpu.a[k].cpu;
		if (max_cpu < 0)
			continue;
		cat(buf, " %s", pd->h.attrs[i].name);
		for (int32_t c = 0; c <= max_cpu; c++) {
			uint64_t sum = 0;
			bool any = false;

			for (size_t k = 0; k < pd->cpu.n; k++) {
				if (pd->cpu.a[k].attr != i ||
				    pd->cpu.a[k].cpu != c)
					continue;
				sum += pd->cpu.a[k].last;
				any = true;
			}
			if (any)
				cat(buf, " cpu%d=%" PRIu64, c, sum);
		}
		cat(buf, ";");
	}
	note(p, "%s", buf);
}

static void note_counters(const struct evprof_perfdata *pd,
			  struct evprof_profile *p)
{
	bool read_inherit = false, read_plain = false;
	char plain[NOTE_MAX] = "";
	uint32_t nr_plain = 0;

	for (uint32_t i = 0; i < pd->h.nr_attrs; i++) {
		const struct pd_attr *a = &pd->h.attrs[i];

		if (a->role == PD_ROLE_NONE || !a->samples)
			continue;
		if (a->attr.sample_type & PERF_SAMPLE_READ) {
			read_inherit |= a->attr.inherit;
			read_plain |= !a->attr.inherit;
			continue;
		}
		cat(plain, "%s%s", nr_plain ? ", " : "", a->name);
		nr_plain++;
	}
	if (pd->per_cpu_reads)
		note_per_cpu(pd, p);
	else if (read_inherit)
		note(p, "counters: per-thread deltas of group reads of "
			"inherited events (PERF_SAMPLE_READ with inherit), as "
			"evprof's own task mode");
	if (!pd->per_cpu_reads && read_plain)
		note(p, "counters: group reads without inherit (perf before "
			"6.13 turns inherit off for PERF_SAMPLE_READ): deltas "
			"of the threads perf opened only; child threads were "
			"not recorded");
	if (nr_plain)
		note(p,
		     "events sampled on their own (%s): each one's weight is "
		     "the sum of its sample periods, one sample type per event",
		     plain);
}

/*
 * perf records the build ids of the binaries that have samples only: one
 * without is then one no frame needs. With --buildid-mmap every MMAP2
 * carries its file's build id instead. A file with none at all (pipe mode,
 * -z, --no-buildid) cannot say which files are right.
 */
static void note_dsos(const struct evprof_perfdata *pd,
		      struct evprof_profile *p)
{
	bool none = !pd->h.bids.n && !pd->kbid_len;
	size_t said = 0;
	char hex[41];

	for (size_t i = 0; i < pd->dsos.a.n; i++)
		none &= !pd->dsos.a.a[i].bid_len;
	for (size_t i = 0; i < pd->dsos.a.n; i++) {
		const struct pd_dso *d = &pd->dsos.a.a[i];
		bool missing =
		    d->status == PD_DSO_MISSING && (d->bid_len || none);

		if (!missing && d->status != PD_DSO_DIFFERENT)
			continue;
		/* A container's worth of binaries is not a wall of notes. */
		if (said++ >= NOTE_DSOS)
			continue;
		if (d->bid_len)
			evprof__hex(hex, d->bid, d->bid_len, false);
		else
			snprintf(hex, sizeof(hex), "not recorded");
		if (missing)
			note(p,
			     "binary not found: %s (build id %s), under "
			     "--symfs, at its path or in the build-id cache: "
			     "its frames are unnamed",
			     d->path, hex);
		else
			note(p,
			     "binary %s differs from the one recorded (build "
			     "id %s): not used, its frames are unnamed",
			     d->path, hex);
	}
	if (said > NOTE_DSOS)
		note(p,
		     "and %zu more binaries not found or different from the "
		     "ones recorded: their frames are unnamed",
		     said - NOTE_DSOS);
	if (none && pd->dsos.a.n)
		note(p, "the file records no build ids (pipe mode, -z or "
			"--no-buildid): binaries were read from their "
			"recorded paths, unchecked");
}

void evprof__pd_notes(const struct evprof_perfdata *pd,
		      struct evprof_profile *p)
{
	char buf[NOTE_MAX] = "";

	note_source(pd, p);
	note_counters(pd, p);
	if (pd->st.truncated && pd->truncated_at)
		note(p,
		     "the file is truncated (perf did not finish writing "
		     "it): read up to its last whole record, before offset "
		     "0x%" PRIx64,
		     pd->truncated_at);
	else if (pd->st.truncated)
		note(p, "the file is truncated (perf did not finish writing "
			"it: data size 0 in its header): read up to its last "
			"whole record");
	if (pd->st.unknown_records) {
		for (size_t i = 0; i < pd->unknown_types.n; i++)
			cat(buf, "%s%u", i ? ", " : "", pd->unknown_types.a[i]);
		note(p,
		     "%" PRIu64 " records of types this reader does not know "
		     "(%s) were skipped",
		     pd->st.unknown_records, buf);
	}
	if (pd->st.lost_events)
		note(p, "perf lost %" PRIu64 " events (PERF_RECORD_LOST)",
		     pd->st.lost_events);
	if (pd->kernel_samples && pd->kernel_ok)
		note(p,
		     "kernel frames named from %s (the recorded kernel build "
		     "id and _text match this boot)",
		     pd->ksyms);
	else if (pd->kernel_samples)
		note(p, "kernel frames are not named: %s; they show as %s",
		     pd->kernel_why,
		     pd->ktext ? "[kernel.kallsyms]+offset from _text"
			       : "[kernel.kallsyms]+address (no kernel map "
				 "says where _text was)");
	note_dsos(pd, p);
}

void evprof__pd_notes_stacks(const struct evprof_perfdata *pd,
			     struct evprof_profile *p)
{
	struct evprof_session_stats st = {.sz = sizeof(st)};
	char buf[512];

	evprof_session__stats(pd->s, &st);
	if (pd->x->out.sample_type & PERF_SAMPLE_STACK_USER)
		note(p,
		     "call graph: dwarf (user stack copies unwound with "
		     "libdw): %" PRIu64 " stacks unwound, %" PRIu64
		     " truncated, %" PRIu64 " copies dropped",
		     st.stacks_unwound, st.stacks_truncated, st.stacks_dropped);
	else if (st.deferred_samples)
		note(p,
		     "call graph: user part deferred: %" PRIu64 " deferred "
		     "samples, %" PRIu64 " left unstitched",
		     st.deferred_samples, st.deferred_unstitched);
	else
		note(p, "call graph: as recorded");
	if (evprof__stack_ends_note(&st, buf, sizeof(buf)))
		note(p, "%s", buf);
}
