// SPDX-License-Identifier: MIT
/*
 * perf.data import: reads the input once, in order (header, then records
 * as they come), puts kernel records through finished-round ordering,
 * rewrites them into the session's format and feeds the session, which
 * makes the profile as for evprof's own recordings. How the counters can
 * be read is decided once, from the attrs, when the first record leaves
 * the ordering (perf writes every attr, feature and id index before).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <evprof/read.h>
#include <evprof/session.h>
#include <evprof/symbols.h>

#include "internal.h"
#include "session/session.h"

#ifndef PERF_RECORD_MISC_MMAP_DATA
#define PERF_RECORD_MISC_MMAP_DATA (1 << 13)
#endif

/* ---- lifecycle ---------------------------------------------------------- */

static struct evprof_perfdata *pd_new(const struct evprof_perfdata_opts *opts)
{
	struct evprof_perfdata *pd;
	const char *home = getenv("HOME");
	char dbg[4096];

	if (!EVPROF_OPTS_VALID(opts, true)) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->src.fd = -1;
	snprintf(dbg, sizeof(dbg), "%s/.debug", home ? home : "/root");
	pd->buildid_dir = strdup(
	    EVPROF_OPTS_GET(opts, buildid_dir, NULL) ? opts->buildid_dir : dbg);
	pd->kallsyms = strdup(EVPROF_OPTS_GET(opts, kallsyms_path, NULL)
				  ? opts->kallsyms_path
				  : "/proc/kallsyms");
	pd->notes = strdup(EVPROF_OPTS_GET(opts, kernel_notes_path, NULL)
			       ? opts->kernel_notes_path
			       : "/sys/kernel/notes");
	if (EVPROF_OPTS_GET(opts, symfs, NULL))
		pd->symfs = strdup(opts->symfs);
	pd->no_symbols = EVPROF_OPTS_GET(opts, no_symbols, false);
	pd->no_timeline = EVPROF_OPTS_GET(opts, no_timeline, false);
	if (EVPROF_OPTS_GET(opts, spill_dir, NULL))
		pd->spill_dir = strdup(opts->spill_dir);
	pd->no_dwarf = EVPROF_OPTS_GET(opts, no_dwarf, false);
	if (EVPROF_OPTS_GET(opts, debug_cache_dir, NULL))
		pd->debug_cache = strdup(opts->debug_cache_dir);
	pd->x = malloc(sizeof(*pd->x));
	pd->unzip = evprof__pd_unzip_new();
	if (!pd->buildid_dir || !pd->kallsyms || !pd->notes || !pd->x ||
	    !pd->unzip || (EVPROF_OPTS_GET(opts, symfs, NULL) && !pd->symfs) ||
	    (EVPROF_OPTS_GET(opts, spill_dir, NULL) && !pd->spill_dir) ||
	    (EVPROF_OPTS_GET(opts, debug_cache_dir, NULL) &&
	     !pd->debug_cache)) {
		evprof_perfdata__free(pd);
		errno = ENOMEM;
		return NULL;
	}
	pd->dsos.symfs = pd->symfs;
	pd->dsos.buildid_dir = pd->buildid_dir;
	pd->st.sz = sizeof(pd->st);
	return pd;
}

struct evprof_perfdata *
evprof_perfdata__open(const char *path, const struct evprof_perfdata_opts *opts)
{
	struct evprof_perfdata *pd;
	int fd, err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	pd = pd_new(opts);
	if (!pd)
		return NULL;
	fd =
	    strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		err = errno;
		evprof_perfdata__free(pd);
		errno = err;
		return NULL;
	}
	err = evprof__pd_src_fd(&pd->src, fd, fd != STDIN_FILENO);
	if (err) {
		evprof_perfdata__free(pd);
		errno = -err;
		return NULL;
	}
	return pd;
}

struct evprof_perfdata *
evprof_perfdata__open_mem(const void *buf, size_t len,
			  const struct evprof_perfdata_opts *opts)
{
	struct evprof_perfdata *pd;

	if (!buf && len) {
		errno = EINVAL;
		return NULL;
	}
	pd = pd_new(opts);
	if (pd)
		evprof__pd_src_mem(&pd->src, buf ? buf : "", len);
	return pd;
}

void evprof_perfdata__free(struct evprof_perfdata *pd)
{
	if (!pd)
		return;
	/* First: a build behind the feeding may still read the rest. */
	evprof_session__free(pd->s);
	if (pd->sym_freeing)
		pthread_join(pd->sym_th, NULL);
	evprof__pd_src_free(&pd->src);
	evprof__pd_header_free(&pd->h);
	evprof__pd_order_free(&pd->order);
	evprof__pd_unzip_free(pd->unzip);
	evprof__pd_dsos_free(&pd->dsos);
	evprof__hashmap_free(pd->cum);
	EVPROF_VEC_FREE(&pd->cumv);
	evprof__hashmap_free(pd->cpu_by_id);
	EVPROF_VEC_FREE(&pd->cpu);
	EVPROF_VEC_FREE(&pd->unknown_types);
	for (size_t i = 0; i < pd->counters.n; i++)
		free(pd->counters.a[i]);
	EVPROF_VEC_FREE(&pd->counters);
	free(pd->x);
	free(pd->symfs);
	free(pd->buildid_dir);
	free(pd->kallsyms);
	free(pd->notes);
	free(pd->spill_dir);
	free(pd->debug_cache);
	evprof_profile__free(pd->p);
	evprof_symbolizer__free(pd->sym);
	free(pd);
}

const char *evprof_perfdata__error(const struct evprof_perfdata *pd)
{
	return pd ? pd->err : "";
}

int evprof_perfdata__stats(const struct evprof_perfdata *pd,
			   struct evprof_perfdata_stats *st)
{
	if (!pd)
		return -EINVAL;
	return EVPROF_STATS_COPY(st, &pd->st);
}

static int fail(struct evprof_perfdata *pd, uint64_t off, const char *what)
{
	snprintf(pd->err, sizeof(pd->err), "%s at offset 0x%" PRIx64, what,
		 off);
	return -EVPROF_ERR_BAD_PERFDATA;
}

/* ---- which attr wrote a record ------------------------------------------ */

/*
 * perf gives every event the same id position when their sample types
 * differ only elsewhere, and PERF_SAMPLE_IDENTIFIER otherwise; so decoding
 * with the first attr finds the id, and the id finds the attr.
 */
static int decode(struct evprof_perfdata *pd, const uint64_t *rec,
		  uint32_t size, struct evprof_record *r, struct pd_attr **pa)
{
	struct pd_attr *a = &pd->h.attrs[0], *b;
	uint64_t id;
	int err;

	if (pd->h.nr_attrs > 1 &&
	    (a->attr.sample_type & PERF_SAMPLE_IDENTIFIER) &&
	    !evprof_record__identifier(rec, size, &id) &&
	    (b = evprof__pd_attr_of(&pd->h, id)))
		a = b;
	err = evprof_record__parse(r, rec, size, &a->fmt);
	if (!err && pd->h.nr_attrs > 1) {
		id = r->type == PERF_RECORD_SAMPLE ? r->sample.id : r->sid.id;
		b = evprof__pd_attr_of(&pd->h, id);
		if (b && b != a && memcmp(&b->fmt, &a->fmt, sizeof(a->fmt))) {
			a = b;
			err = evprof_record__parse(r, rec, size, &a->fmt);
		} else if (b) {
			a = b;
		}
	}
	*pa = a;
	return err;
}

/* ---- replay ------------------------------------------------------------- */

static uint64_t *cum_slot(struct evprof_perfdata *pd, uint32_t attr,
			  uint32_t tid)
{
	long key = (long)((uint64_t)attr << 32 | tid), v;

	if (!pd->cum) {
		pd->cum = evprof__hashmap_new(evprof__hashmap_u64_hash,
					      evprof__hashmap_u64_equal, NULL);
		if (!pd->cum)
			return NULL;
	}
	if (!evprof__hashmap_find(pd->cum, key, &v)) {
		if (EVPROF_VEC_PUSH(&pd->cumv, 0) ||
		    evprof__hashmap_add(pd->cum, key, (long)pd->cumv.n - 1))
			return NULL;
		v = (long)pd->cumv.n - 1;
	}
	return &pd->cumv.a[v];
}

/* A new thread with this tid: its sums restart, as the session's do. */
static void forget_tid(struct evprof_perfdata *pd, uint32_t tid)
{
	long v;

	for (uint32_t a = 0; pd->cum && a < pd->h.nr_attrs; a++)
		if (evprof__hashmap_find(pd->cum,
					 (long)((uint64_t)a << 32 | tid), &v))
			pd->cumv.a[v] = 0;
}

static int cpu_of_id(const struct evprof_perfdata *pd, uint64_t id)
{
	for (size_t i = 0; i < pd->h.idx.n; i++)
		if (pd->h.idx.a[i].id == id)
			return pd->h.idx.a[i].cpu;
	return -1;
}

/* Per-CPU group reads: keep each id's last value for the note. */
static int keep_cpu_value(struct evprof_perfdata *pd, uint64_t id,
			  uint64_t value, uint32_t sample_cpu)
{
	const struct pd_attr *a = evprof__pd_attr_of(&pd->h, id);
	long k;
	int cpu;

	if (!a)
		return 0;
	if (!pd->cpu_by_id) {
		pd->cpu_by_id = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
		if (!pd->cpu_by_id)
			return -ENOMEM;
	}
	if (evprof__hashmap_find(pd->cpu_by_id, (long)id, &k)) {
		pd->cpu.a[k].last = value;
		return 0;
	}
	cpu = cpu_of_id(pd, id);
	if (cpu < 0)
		cpu = (int)sample_cpu;
	if (EVPROF_VEC_PUSH(
		&pd->cpu, ((struct cpu_total){id, value, cpu,
					      (uint32_t)(a - pd->h.attrs)})) ||
	    evprof__hashmap_add(pd->cpu_by_id, (long)id, (long)pd->cpu.n - 1))
		return -ENOMEM;
	return 0;
}

static bool has_kernel_frames(const struct evprof_record *r)
{
	const struct evprof_sample *s = &r->sample;

	for (uint64_t i = 0; s->callchain && i < s->callchain_nr; i++)
		if (s->callchain[i] == (uint64_t)PERF_CONTEXT_KERNEL)
			return true;
	return !s->callchain_nr && (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
				       PERF_RECORD_MISC_KERNEL;
}

/*
 * The transcoded record into the session; first, a part building behind
 * it is waited for when the record could move what the build reads. That
 * build's failure is the import's (pd->part_err), not the record's.
 */
static int feed_session(struct evprof_perfdata *pd, size_t size)
{
	if (!evprof__session_room(pd->s, size)) {
		pd->part_err = evprof__session_settle(pd->s);
		if (pd->part_err)
			return pd->part_err;
	}
	return evprof_session__feed(pd->s, pd->x->buf, size);
}

static int feed_sample(struct evprof_perfdata *pd,
		       const struct evprof_record *r, struct pd_attr *a)
{
	const struct evprof_sample *s = &r->sample;
	struct pd_value vals[EVPROF_SNAPSHOT_MAX + 1];
	uint32_t nr = 0;
	bool reads = (a->fmt.sample_type & PERF_SAMPLE_READ) != 0;
	int size, err;

	a->samples++;
	pd->st.samples++;
	pd->kernel_samples += has_kernel_frames(r);
	if (reads) {
		struct evprof_snapshot snap;

		err = evprof_snapshot__parse(&snap, s->read, s->read_size,
					     a->fmt.read_format);
		if (err < 0)
			return err;
		for (uint32_t i = 0; i < snap.nr; i++) {
			uint64_t id =
			    snap.values[i].id ? snap.values[i].id : s->id;

			if (pd->per_cpu_reads) {
				err = keep_cpu_value(pd, id, snap.values[i].raw,
						     s->cpu);
				if (err)
					return err;
			} else {
				vals[nr++] =
				    (struct pd_value){id, snap.values[i].raw};
			}
		}
	}
	if ((!reads || pd->per_cpu_reads) && a->role != PD_ROLE_NONE) {
		uint64_t *c = cum_slot(pd, (uint32_t)(a - pd->h.attrs), s->tid);
		uint64_t period = (a->fmt.sample_type & PERF_SAMPLE_PERIOD)
				      ? s->period
				      : a->attr.sample_period;

		if (!c)
			return -ENOMEM;
		*c += a->attr.freq || period ? period : 1;
		vals[nr++] = (struct pd_value){a->synth, *c};
	}
	size = evprof__pd_xcode_sample(pd->x, r, &a->fmt, vals, nr);
	if (size < 0)
		return size;
	return feed_session(pd, (size_t)size);
}

static int feed_mmap(struct evprof_perfdata *pd, const uint64_t *rec,
		     const struct evprof_record *r, struct pd_attr *a)
{
	const struct evprof_record_mmap *m = &r->mmap;
	const uint8_t *bid = m->build_id_size ? m->build_id : NULL;
	size_t len = m->build_id_size;
	const struct pd_dso *d = NULL;
	const struct pd_buildid *hb;
	int size;

	/* Only code is symbolized: data maps need no file. */
	bool code = r->type == PERF_RECORD_MMAP2
			? (m->prot & PROT_EXEC)
			: !(r->misc & PERF_RECORD_MISC_MMAP_DATA);

	if (!pd->no_symbols && code && m->pid != UINT32_MAX) {
		if (!bid &&
		    (hb = evprof__pd_buildid(&pd->h, m->filename, false))) {
			bid = hb->id;
			len = hb->len;
		}
		d = evprof__pd_dso(&pd->dsos, m->filename, bid, len);
	}
	size = evprof__pd_xcode_sideband(
	    pd->x, rec, r, &a->fmt,
	    d && d->resolved && strcmp(d->resolved, m->filename) ? d->resolved
								 : NULL,
	    r->type == PERF_RECORD_MMAP2 && !m->build_id_size ? bid : NULL,
	    r->type == PERF_RECORD_MMAP2 && !m->build_id_size && bid ? len : 0);
	if (size < 0)
		return size;
	return feed_session(pd, (size_t)size);
}

static int note_unknown(struct evprof_perfdata *pd, uint32_t type)
{
	pd->st.unknown_records++;
	for (size_t i = 0; i < pd->unknown_types.n; i++)
		if (pd->unknown_types.a[i] == type)
			return 0;
	return EVPROF_VEC_PUSH(&pd->unknown_types, type) ? -ENOMEM : 0;
}

/*
 * A record its attr's layout does not fit. off is where it is in the
 * input (for a compressed one, where its COMPRESSED record is).
 */
static int malformed(struct evprof_perfdata *pd, uint32_t type, uint64_t off)
{
	char what[96];

	snprintf(what, sizeof(what), "malformed %s record",
		 evprof_record_type_name(type));
	return fail(pd, off, what);
}

static int too_long(struct evprof_perfdata *pd, uint32_t type, uint64_t off)
{
	char what[96];

	snprintf(what, sizeof(what), "%s record too long to rewrite",
		 evprof_record_type_name(type));
	return fail(pd, off, what);
}

/*
 * Timeline rows held before they go to the spill file: 12 MiB at 6 words
 * a row. Files up to that many samples never write and read back their
 * rows (3% of a 10 s file's import); longer ones stay flat beyond.
 */
#define SPILL_ROWS 262144

/* The profile and symbolizer samples are built into, made once. */
static int profile_start(struct evprof_perfdata *pd)
{
	struct evprof_session_stats ss = {.sz = sizeof(ss)};
	struct evprof_profile_opts po = {.sz = sizeof(po)};
	struct evprof_symbolizer_opts so = {.sz = sizeof(so)};
	char product[512], os[256];

	if (pd->p)
		return 0;
	evprof_session__stats(pd->s, &ss);
	snprintf(product, sizeof(product), "evprof import: %s",
		 pd->h.cmdline ? pd->h.cmdline : "perf.data");
	snprintf(os, sizeof(os), "Linux %s",
		 pd->h.osrelease ? pd->h.osrelease : "");
	po.product = product;
	po.os = pd->h.osrelease ? os : NULL;
	po.start_mono_ns = ss.first_time;
	po.interval_ns = evprof__pd_interval(pd);
	po.no_timeline = pd->no_timeline;
	po.spill_dir = pd->spill_dir;
	po.spill_rows = SPILL_ROWS;
	pd->p = evprof_profile__new(&po);
	if (!pd->p)
		return -errno;
	if (!pd->no_symbols) {
		so.kallsyms_path = pd->kernel_ok ? pd->ksyms : "/dev/null";
		so.no_dwarf = pd->no_dwarf;
		so.debug_cache_dir = pd->debug_cache;
		pd->sym = evprof_symbolizer__new(&so);
		if (!pd->sym)
			return -errno;
	}
	return 0;
}

/*
 * Memory flat in the file's length: every PART_SAMPLES samples, what is
 * older than the latest sample by PART_MARGIN_NS is built and dropped, as a
 * recording does (rounds give time order; the margin covers what perf
 * orders only by its queue's half flush). The build runs behind the
 * feeding, on its own thread; while it runs, later calls skip, so parts
 * are small enough to keep both threads busy. Files with switch records or
 * deferred callchains (their data comes after the sample) are built whole
 * at the end.
 */
#define PART_SAMPLES   4096
#define PART_MARGIN_NS 100000000ull
/*
 * The first part comes sooner: it loads the symbol tables (milliseconds on
 * the building thread, which builds slower than the feeding when warm).
 */
#define FIRST_PART_SAMPLES 512

static int build_part(struct evprof_perfdata *pd, uint64_t time)
{
	int err;

	if (time > pd->part_time)
		pd->part_time = time;
	if (pd->no_parts || ++pd->part_samples <
				(pd->parts ? PART_SAMPLES : FIRST_PART_SAMPLES))
		return 0;
	pd->part_samples = 0;
	if (pd->part_time <= PART_MARGIN_NS)
		return 0;
	err = profile_start(pd);
	if (!err)
		err = evprof__session_build_behind(
		    pd->s, pd->p, pd->sym, pd->part_time - PART_MARGIN_NS);
	if (err == -EOPNOTSUPP) {
		pd->no_parts = true;
		return 0;
	}
	pd->parts += !err;
	return err;
}

/* A kernel record leaves the ordering: into the session. */
static int emit(void *ctx, const uint64_t *rec, uint32_t size, uint64_t off)
{
	struct evprof_perfdata *pd = ctx;
	struct evprof_record r;
	struct pd_attr *a;
	int err;

	if (!pd->s) {
		err = evprof__pd_start_session(pd);
		if (err)
			return err;
	}
	pd->st.records++;
	err = decode(pd, rec, size, &r, &a);
	if (err == -ENOTSUP)
		return note_unknown(pd, r.type);
	if (err)
		return malformed(pd, r.type, off);
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		err = feed_sample(pd, &r, a);
		/* A failed build (memory, the spill file) ends the import. */
		if (!err && (err = build_part(pd, r.sample.time)))
			return err;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		err = feed_mmap(pd, rec, &r, a);
		break;
	case PERF_RECORD_LOST:
		pd->st.lost_events += r.lost.lost;
		/* fall through */
	default:
		if (r.type == PERF_RECORD_FORK)
			forget_tid(pd, r.task.tid);
		err = evprof__pd_xcode_sideband(pd->x, rec, &r, &a->fmt, NULL,
						NULL, 0);
		if (err >= 0)
			err = feed_session(pd, (size_t)err);
		break;
	}
	/* A failed build (memory, the spill file) ends the import. */
	if (pd->part_err)
		return pd->part_err;
	/* Rewritten, it would pass the u16 size: perf never writes one. */
	if (err == -E2BIG)
		return too_long(pd, r.type, off);
	/* A record the session could not use is counted there, not fatal. */
	return err == -ENOMEM ? err : 0;
}

/* ---- the record stream -------------------------------------------------- */

/*
 * The time of a sample or side-band record without decoding it, when
 * every attr lays out the fields before TIME (and the sample_id trailer)
 * alike: false when it cannot tell, or for records decode() must see
 * first (the kernel map, types it may not know).
 */
static bool fast_time(struct evprof_perfdata *pd, const struct pd_rec *r,
		      uint64_t *time)
{
	const uint64_t lead = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			      PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	const struct evprof_record_fmt *f = &pd->h.attrs[0].fmt;
	size_t off, sid;

	if (!pd->same_lead) {
		if (pd->same_lead_known)
			return false;
		pd->same_lead_known = true;
		for (uint32_t i = 1; i < pd->h.nr_attrs; i++) {
			const struct evprof_record_fmt *g = &pd->h.attrs[i].fmt;

			if ((g->sample_type ^ f->sample_type) &
				(lead | PD_SID_BITS) ||
			    g->sample_id_all != f->sample_id_all)
				return false;
		}
		pd->same_lead = (f->sample_type & PERF_SAMPLE_TIME) != 0;
		if (!pd->same_lead)
			return false;
	}
	if (r->type == PERF_RECORD_SAMPLE) {
		off = 8 * (1 + !!(f->sample_type & PERF_SAMPLE_IDENTIFIER) +
			   !!(f->sample_type & PERF_SAMPLE_IP) +
			   !!(f->sample_type & PERF_SAMPLE_TID));
	} else if (f->sample_id_all && r->type != PERF_RECORD_MMAP &&
		   r->type != PERF_RECORD_MMAP2 &&
		   r->type <= EVPROF_RECORD_CALLCHAIN_DEFERRED && r->type) {
		sid = evprof__pd_sid_size(f);
		if (r->size < 8 + sid)
			return false;
		off = r->size - sid + 8 * !!(f->sample_type & PERF_SAMPLE_TID);
	} else {
		return false;
	}
	if (off + 8 > r->size || r->size % 8)
		return false;
	*time = r->data[off / 8];
	return true;
}

/*
 * Kernels 3.12 to 3.15 (and RHEL 7's 3.10) wrote MMAP2 without the prot
 * and flags words that 3.16 put before the file name: the name starts at
 * byte 64, not 72. Such a record is rewritten into today's layout in out,
 * prot told by MISC_MMAP_DATA as MMAP's is. False when pr is not one:
 * its name must fill [64, size - sample_id) exactly, padded to 8.
 */
static bool old_mmap2(const struct evprof_perfdata *pd, const struct pd_rec *pr,
		      uint64_t *out)
{
	const size_t name = 64;
	size_t sid = evprof__pd_sid_size(&pd->h.attrs[0].fmt), room, n;
	const uint8_t *b = (const uint8_t *)pr->data;
	uint8_t *o = (uint8_t *)out;
	uint32_t prot;

	if (pr->type != PERF_RECORD_MMAP2 ||
	    (pr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    pr->size < name + 8 + sid || pr->size + 8u > PD_MAX_RECORD - 8)
		return false;
	room = pr->size - sid - name;
	n = strnlen((const char *)b + name, room);
	if (n == room || (n + 8) / 8 * 8 != room)
		return false;
	prot = pr->misc & PERF_RECORD_MISC_MMAP_DATA ? PROT_READ | PROT_WRITE
						     : PROT_READ | PROT_EXEC;
	memcpy(o, b, name);
	memcpy(o + name, &prot, 4);
	memset(o + name + 4, 0, 4);
	memcpy(o + name + 8, b + name, pr->size - name);
	o[6] = (uint8_t)(pr->size + 8);
	o[7] = (uint8_t)((pr->size + 8u) >> 8);
	return true;
}

/* A kernel record: queued for its round. */
static int queue(struct evprof_perfdata *pd, const struct pd_rec *pr)
{
	struct evprof_record r;
	struct pd_rec up;
	struct pd_attr *a;
	uint64_t time;
	int err;

	if (pr->type == 0 || (pr->type > EVPROF_RECORD_CALLCHAIN_DEFERRED))
		return note_unknown(pd, pr->type);
	if (!pd->h.nr_attrs)
		return fail(pd, pr->off, "event record before any attr");
	/* Most records: the time read in place; emit() decodes them. */
	if (fast_time(pd, pr, &time))
		return evprof__pd_order_add(&pd->order, pr->data, pr->size,
					    time, pr->off, emit, pd);
	err = decode(pd, pr->data, pr->size, &r, &a);
	if (err && err != -ENOTSUP && old_mmap2(pd, pr, pd->mmap2)) {
		up = *pr;
		up.data = pd->mmap2;
		up.size = (uint16_t)(pr->size + 8);
		pr = &up;
		err = decode(pd, pr->data, pr->size, &r, &a);
	}
	if (err == -ENOTSUP)
		return note_unknown(pd, pr->type);
	if (err)
		return malformed(pd, pr->type, pr->off);
	time = r.type == PERF_RECORD_SAMPLE ? r.sample.time
	       : r.sid.present		    ? r.sid.time
					    : 0;
	/*
	 * The kernel map: where _text was (KASLR) when this was recorded.
	 * perf record --buildid-mmap (perf 5.12; the default since 6.x)
	 * writes it as an MMAP2 with the kernel's build id, and then no
	 * HEADER_BUILD_ID.
	 */
	if ((r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2) &&
	    r.mmap.pid == UINT32_MAX &&
	    !strncmp(r.mmap.filename, "[kernel.kallsyms]", 17)) {
		pd->ktext = r.mmap.pgoff;
		if (r.mmap.build_id_size) {
			pd->kbid_len = (uint8_t)(r.mmap.build_id_size > 20
						     ? 20
						     : r.mmap.build_id_size);
			memcpy(pd->kbid, r.mmap.build_id, pd->kbid_len);
		}
	}
	return evprof__pd_order_add(&pd->order, pr->data, pr->size, time,
				    pr->off, emit, pd);
}

static int one(struct evprof_perfdata *pd, const struct pd_rec *r);

static int compressed(struct evprof_perfdata *pd, const struct pd_rec *r)
{
	const uint8_t *b = (const uint8_t *)r->data;
	size_t start = 8, len = r->size - 8u;
	struct pd_rec in;
	int err;

	if (r->decompressed)
		return fail(pd, r->off, "compressed record inside one");
	if (r->type == PD_COMPRESSED2) {
		uint64_t n = r->size >= 16 ? evprof__load_u64(b + 8) : ~0ULL;

		if (n > r->size - 16u)
			return fail(pd, r->off, "COMPRESSED2 data size");
		start = 16;
		len = (size_t)n;
	}
	pd->st.compressed++;
	evprof__pd_unzip_feed(pd->unzip, b + start, len);
	while ((err = evprof__pd_unzip_next(pd->unzip, &in, pd->err,
					    sizeof(pd->err))) > 0) {
		in.off = r->off;
		err = one(pd, &in);
		if (err)
			return err;
	}
	if (err == -EVPROF_ERR_BAD_PERFDATA && !pd->err[0])
		return fail(
		    pd, r->off,
		    "record shorter than its header in compressed data");
	if (err == -EVPROF_ERR_BAD_PERFDATA) {
		size_t n = strlen(pd->err);

		snprintf(pd->err + n, sizeof(pd->err) - n,
			 " in the compressed record at offset 0x%" PRIx64,
			 r->off);
	}
	return err;
}

/* One record of the stream (input or decompressed). */
static int one(struct evprof_perfdata *pd, const struct pd_rec *r)
{
	int err;

	if (r->type < PD_HEADER_ATTR)
		return queue(pd, r);
	err = evprof__pd_header_record(&pd->h, r);
	if (err < 0) {
		memcpy(pd->err, pd->h.err, sizeof(pd->h.err));
		return err;
	}
	if (err)
		return 0;
	switch (r->type) {
	case PD_FINISHED_ROUND:
		pd->st.rounds++;
		return evprof__pd_order_round(&pd->order, emit, pd);
	case PD_COMPRESSED:
	case PD_COMPRESSED2:
		return compressed(pd, r);
	case PD_HEADER_EVENT_TYPE:
	case PD_HEADER_TRACING_DATA:
	case PD_AUXTRACE_INFO:
	case PD_AUXTRACE:
	case PD_AUXTRACE_ERROR:
	case PD_CPU_MAP:
	case PD_STAT_CONFIG:
	case PD_STAT:
	case PD_STAT_ROUND:
	case PD_TIME_CONV:
	case PD_FINISHED_INIT:
		return 0; /* nothing a profile takes */
	default:
		return note_unknown(pd, r->type);
	}
}

/*
 * Bytes that follow some pipe-mode records outside their size: the
 * tracing data after HEADER_TRACING_DATA, the AUX data after AUXTRACE.
 */
static uint64_t payload_after(const struct evprof_perfdata *pd,
			      const uint64_t *rec, uint32_t type, uint16_t size)
{
	if (type == PD_HEADER_TRACING_DATA && pd->h.pipe && size >= 12)
		return ((uint64_t)evprof__load_u32(rec + 1) + 7) & ~7ULL;
	if (type == PD_AUXTRACE && size >= 16)
		return evprof__load_u64(rec + 1);
	return 0;
}

/* Reads records up to the end of the data; *cut says where it stopped short. */
static int stream(struct evprof_perfdata *pd, uint64_t *cut)
{
	uint64_t off = pd->h.data_off;
	uint64_t end =
	    pd->h.data_size ? pd->h.data_off + pd->h.data_size : UINT64_MAX;
	const uint8_t *p;
	struct pd_rec r;
	size_t got;
	int err;

	*cut = 0;
	while (off < end) {
		uint16_t size;
		uint64_t extra;

		pd->end_off = off;
		p = evprof__pd_src_at(&pd->src, off, 8, &got, &err);
		if (err)
			return err;
		if (!p) {
			if (got || end != UINT64_MAX)
				*cut = off;
			return 0;
		}
		size = (uint16_t)(p[6] | p[7] << 8);
		/* Zeros where perf never wrote (its size unknown): the end. */
		if (end == UINT64_MAX && !evprof__load_u64(p)) {
			*cut = off;
			return 0;
		}
		if (size < 8) {
			char what[64];

			snprintf(what, sizeof(what), "record of size %u", size);
			return fail(pd, off, what);
		}
		if (end != UINT64_MAX && size > end - off)
			return fail(pd, off,
				    "record runs past the data section");
		p = evprof__pd_src_at(&pd->src, off, size, &got, &err);
		if (err)
			return err;
		if (!p) {
			*cut = off;
			return 0;
		}
		/* Records after a COMPRESSED one need not be aligned. */
		memcpy(pd->rec, p, size);
		r = (struct pd_rec){.data = pd->rec,
				    .type = evprof__load_u32(p),
				    .misc = (uint16_t)(p[4] | p[5] << 8),
				    .size = size,
				    .off = off};
		extra = payload_after(pd, pd->rec, r.type, size);
		err = one(pd, &r);
		if (err)
			return err;
		if (extra > UINT64_MAX - off - size)
			return fail(pd, off, "payload size");
		off += size + extra;
	}
	pd->end_off = off;
	return 0;
}

/* ---- the profile -------------------------------------------------------- */

static void *free_sym(void *sym)
{
	evprof_symbolizer__free(sym);
	return NULL;
}

/*
 * The profile names its frames itself: the symbolizer (its images, DWARF
 * and symbol tables, a millisecond to free) goes on a thread of its own
 * while the caller writes; evprof_perfdata__free() waits for it.
 */
static void free_sym_behind(struct evprof_perfdata *pd)
{
	if (pd->sym && !pthread_create(&pd->sym_th, NULL, free_sym, pd->sym))
		pd->sym_freeing = true;
	else
		evprof_symbolizer__free(pd->sym);
	pd->sym = NULL;
}

static struct evprof_profile *make_profile(struct evprof_perfdata *pd)
{
	struct evprof_profile *p;
	int err = evprof__session_settle(pd->s);

	if (!err)
		err = profile_start(pd);
	if (!err) {
		evprof__pd_notes(pd, pd->p);
		err = pd->parts ? evprof_session__build_until(
				      pd->s, pd->p, pd->sym, UINT64_MAX)
				: evprof_session__build(pd->s, pd->p, pd->sym);
	}
	free_sym_behind(pd);
	if (err) {
		errno = -err;
		return NULL;
	}
	evprof__pd_notes_stacks(pd, pd->p);
	p = pd->p;
	pd->p = NULL;
	return p;
}

struct evprof_profile *evprof_perfdata__import(struct evprof_perfdata *pd)
{
	uint64_t cut;
	int err;

	if (!pd || pd->imported) {
		errno = EINVAL;
		return NULL;
	}
	pd->imported = true;
	pd->err[0] = '\0';
	err = evprof__pd_header_read(&pd->h, &pd->src);
	if (err && pd->h.err[0])
		memcpy(pd->err, pd->h.err, sizeof(pd->h.err));
	if (!err)
		err = stream(pd, &cut);
	if (!err) {
		pd->st.truncated = cut || (!pd->h.pipe && !pd->h.data_size);
		pd->truncated_at = cut;
		/* A whole file's compressed stream ends with a whole record. */
		if (!pd->st.truncated && evprof__pd_unzip_left(pd->unzip))
			err = fail(pd, pd->end_off,
				   "compressed data ending inside a record");
	}
	if (!err)
		err = evprof__pd_order_flush(&pd->order, emit, pd);
	if (!err && !pd->s)
		err = evprof__pd_start_session(pd);
	pd->st.nr_attrs = pd->h.nr_attrs;
	pd->st.pipe = pd->h.pipe;
	pd->st.kernel_symbols = pd->kernel_ok;
	if (err) {
		if (!pd->err[0])
			snprintf(pd->err, sizeof(pd->err), "%s",
				 evprof_strerror(err));
		errno = -err;
		return NULL;
	}
	return make_profile(pd);
}
