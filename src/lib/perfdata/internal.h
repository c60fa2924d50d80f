/* SPDX-License-Identifier: MIT */
/*
 * perf.data import, shared by its modules (each includes only those below
 * it):
 *
 *   perfdata.c ------> classify, xcode, order, header, src, dso, notes
 *   perfdata_classify.c  the attrs -> counters, roles, the session
 *   perfdata_notes.c   what the profile says about the file
 *   perfdata_xcode.c   records of the file -> the session's one format
 *   perfdata_order.c   finished-round ordering
 *   perfdata_header.c  file header, attrs, feature sections, user records
 *   perfdata_src.c     bytes in (fd, memory), record framing, zstd
 *   perfdata_dso.c     binaries by build id, the kernel of this boot
 */
#ifndef EVPROF_LIB_PERFDATA_INTERNAL_H
#define EVPROF_LIB_PERFDATA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include <evprof/perfdata.h>
#include <evprof/record.h>
#include <evprof/session.h>

#include "base/base.h"

/* perf's user record types (tools/perf/util/event.h, perf.data docs). */
enum {
	PD_HEADER_ATTR = 64,
	PD_HEADER_EVENT_TYPE = 65,
	PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67,
	PD_FINISHED_ROUND = 68,
	PD_ID_INDEX = 69,
	PD_AUXTRACE_INFO = 70,
	PD_AUXTRACE = 71,
	PD_AUXTRACE_ERROR = 72,
	PD_THREAD_MAP = 73,
	PD_CPU_MAP = 74,
	PD_STAT_CONFIG = 75,
	PD_STAT = 76,
	PD_STAT_ROUND = 77,
	PD_EVENT_UPDATE = 78,
	PD_TIME_CONV = 79,
	PD_HEADER_FEATURE = 80,
	PD_COMPRESSED = 81,
	PD_FINISHED_INIT = 82,
	PD_COMPRESSED2 = 83, /* perf 6.16: u64 data_size, 8-byte padded */
};

/* Feature bits (tools/perf/util/header.h). */
enum {
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_BITS = 256,
};

#define PD_MAX_ATTRS  256
#define PD_MAX_RECORD 65536

struct pd_attr {
	struct perf_event_attr attr; /* zero-extended or cut to our size */
	struct evprof_record_fmt fmt;
	char *name; /* NULL until a name is known */
	EVPROF_VEC(uint64_t) ids;
	int role;	  /* session role, or PD_ROLE_NONE */
	uint64_t synth;	  /* id of the period entries made for it */
	uint64_t samples; /* seen */
};
#define PD_ROLE_NONE INT32_MIN

struct pd_buildid {
	char *path;
	uint8_t id[20];
	uint8_t len;
	bool kernel;
};

struct pd_idx { /* ID_INDEX: where an id was opened */
	uint64_t id;
	int32_t cpu, tid;
};

/* Header, attrs and features, as far as they are known. */
struct pd_header {
	bool pipe;
	uint64_t data_off, data_size, feat_off;
	uint64_t features[PD_FEAT_BITS / 64];
	struct pd_attr attrs[PD_MAX_ATTRS];
	uint32_t nr_attrs;
	struct evprof_hashmap *by_id; /* id -> attr index */
	/* The last id found (samples come in runs of one event). */
	uint64_t last_id;
	struct pd_attr *last_attr; /* NULL: none yet */
	EVPROF_VEC(struct pd_buildid) bids;
	EVPROF_VEC(struct pd_idx) idx;
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cmdline;
	uint64_t first_time, last_time; /* SAMPLE_TIME, 0: unknown */
	int32_t thread_map_pid;		/* THREAD_MAP's first pid, 0: none */
	bool past_end; /* a section lies past the end of the input */
	char err[256];
};

/* ---- perfdata_src.c ----------------------------------------------------- */

struct pd_src {
	int fd; /* -1: memory */
	bool own_fd;
	const uint8_t *mem; /* memory input, or the slurped pipe */
	size_t mem_len;
	uint8_t *slurp; /* owned copy of a non-seekable file-mode input */
	uint64_t pos;	/* input offset of buf[start] */
	uint8_t *buf;
	size_t cap, start, end;
	bool eof;
};

/*
 * A stream of records: input bytes, or the output of zstd frames that
 * COMPRESSED records carry (one decompression stream per file, records
 * straddle chunks).
 */
struct pd_rec {
	const uint64_t *data; /* 8-byte aligned copy */
	uint32_t type;
	uint16_t misc, size;
	uint64_t off;	   /* input offset (of the COMPRESSED record) */
	bool decompressed; /* came out of a COMPRESSED record */
};

struct pd_unzip;

EVPROF_HIDDEN int evprof__pd_src_fd(struct pd_src *s, int fd, bool own);
EVPROF_HIDDEN void evprof__pd_src_mem(struct pd_src *s, const void *buf,
				      size_t len);
EVPROF_HIDDEN void evprof__pd_src_free(struct pd_src *s);
/*
 * Makes n bytes at input offset off available (off >= the last one asked).
 * Returns a pointer to them, or NULL with *got the bytes that exist (end of
 * input) or -errno in *err.
 */
EVPROF_HIDDEN const uint8_t *evprof__pd_src_at(struct pd_src *s, uint64_t off,
					       size_t n, size_t *got, int *err);
/*
 * Reads len bytes at input offset off of a seekable input (pread, not the
 * window). Returns 0, -EVPROF_ERR_TRUNCATED past the end, or -errno.
 */
EVPROF_HIDDEN int evprof__pd_src_pread(struct pd_src *s, uint64_t off,
				       void *buf, size_t len);
EVPROF_HIDDEN bool evprof__pd_src_seekable(const struct pd_src *s);
/* Reads the whole input into memory (a pipe holding a file-mode file). */
EVPROF_HIDDEN int evprof__pd_src_slurp(struct pd_src *s);

EVPROF_HIDDEN struct pd_unzip *evprof__pd_unzip_new(void);
EVPROF_HIDDEN void evprof__pd_unzip_free(struct pd_unzip *z);
/*
 * Takes the payload of a COMPRESSED record (buf must stay valid until
 * evprof__pd_unzip_next() returned 0): it is decompressed as its records
 * are asked for.
 */
EVPROF_HIDDEN void evprof__pd_unzip_feed(struct pd_unzip *z, const void *buf,
					 size_t len);
/*
 * The next whole decompressed record, copied 8-byte aligned: 1, 0 when
 * the payload holds no more whole one, or -EVPROF_ERR_BAD_PERFDATA for a
 * bad size (err "") or bad zstd data (err says what).
 */
EVPROF_HIDDEN int evprof__pd_unzip_next(struct pd_unzip *z, struct pd_rec *r,
					char *err, size_t errlen);
/* Bytes of an incomplete record left over. */
EVPROF_HIDDEN size_t evprof__pd_unzip_left(const struct pd_unzip *z);

/* ---- perfdata_header.c -------------------------------------------------- */

EVPROF_HIDDEN void evprof__pd_header_free(struct pd_header *h);
/*
 * Reads the file header (file mode: attrs, ids and features too) at the
 * start of s. Returns 0 or -EVPROF_ERR_BAD_PERFDATA / -errno with h->err.
 */
EVPROF_HIDDEN int evprof__pd_header_read(struct pd_header *h, struct pd_src *s);
/*
 * Takes a user record (type >= 64) that describes the file: HEADER_ATTR,
 * HEADER_FEATURE, HEADER_BUILD_ID, ID_INDEX, EVENT_UPDATE, THREAD_MAP.
 * Returns 1 when it was one of them, 0 for another type, or a negative
 * error with h->err.
 */
EVPROF_HIDDEN int evprof__pd_header_record(struct pd_header *h,
					   const struct pd_rec *r);
/* The attr that wrote id, or NULL. */
EVPROF_HIDDEN struct pd_attr *evprof__pd_attr_of(struct pd_header *h,
						 uint64_t id);
/* The build id perf recorded for path (kernel: "[kernel.kallsyms]"). */
EVPROF_HIDDEN const struct pd_buildid *
evprof__pd_buildid(const struct pd_header *h, const char *path, bool kernel);
/* Name of the attr's event as perf writes it ("page-faults"). */
EVPROF_HIDDEN const char *evprof__pd_attr_name(struct pd_attr *a);

/* ---- perfdata_order.c --------------------------------------------------- */

/* Records waiting for their round; see perfdata_order.c. */
struct pd_order {
	EVPROF_VEC(uint64_t) arena, spare;
	struct pd_qent {
		uint64_t time, seq;
		size_t word;
		uint32_t size;
		uint64_t off;
	} * q, *tmp; /* tmp: the merge's other buffer, cap entries */
	size_t nr, cap, tmp_cap;
	uint64_t seq, max_time, limit;
	size_t max_bytes; /* 0: PD_ORDER_MAX_BYTES (tests set less) */
};

/* What may wait for its round before the older half is handed on. */
#define PD_ORDER_MAX_BYTES ((size_t)64 << 20)

typedef int (*pd_emit_fn)(void *ctx, const uint64_t *rec, uint32_t size,
			  uint64_t off);

EVPROF_HIDDEN void evprof__pd_order_free(struct pd_order *o);
/*
 * Queues a record; when the queue would pass its byte cap, first emits
 * its older half through fn. Returns 0, -ENOMEM or fn's error.
 */
EVPROF_HIDDEN int evprof__pd_order_add(struct pd_order *o, const uint64_t *rec,
				       uint32_t size, uint64_t time,
				       uint64_t off, pd_emit_fn fn, void *ctx);
/* Bytes the waiting records take (arena and queue). */
EVPROF_HIDDEN size_t evprof__pd_order_bytes(const struct pd_order *o);
/* A FINISHED_ROUND: emits what no later record can precede. */
EVPROF_HIDDEN int evprof__pd_order_round(struct pd_order *o, pd_emit_fn fn,
					 void *ctx);
/* The end: emits everything. */
EVPROF_HIDDEN int evprof__pd_order_flush(struct pd_order *o, pd_emit_fn fn,
					 void *ctx);

/* ---- perfdata_dso.c ----------------------------------------------------- */

enum pd_dso_status {
	PD_DSO_FOUND,	  /* build id matches (or none recorded) */
	PD_DSO_MISSING,	  /* no file anywhere */
	PD_DSO_DIFFERENT, /* a file, with another build id */
	PD_DSO_UNCHECKED, /* found, no build id recorded to check */
};

struct pd_dso {
	char *path;	/* as recorded */
	char *resolved; /* the file to read */
	enum pd_dso_status status;
	uint64_t frames; /* mmaps seen */
	uint8_t bid[20]; /* the build id it was checked against */
	uint8_t bid_len; /* 0: none recorded */
};

struct pd_dsos {
	const char *symfs, *buildid_dir;
	struct evprof_hashmap *by_path; /* recorded path -> index */
	EVPROF_VEC(struct pd_dso) a;
};

EVPROF_HIDDEN void evprof__pd_dsos_free(struct pd_dsos *d);
/*
 * Where the binary recorded as path (build id bid, len 0: unknown) is
 * found; NULL for names that are no files ("[vdso]", "//anon"). The
 * answer lives as long as d.
 */
EVPROF_HIDDEN const struct pd_dso *evprof__pd_dso(struct pd_dsos *d,
						  const char *path,
						  const uint8_t *bid,
						  size_t len);
/* _text in a kallsyms file, 0 when it has none. */
EVPROF_HIDDEN uint64_t evprof__pd_kallsyms_text(const char *path);
/*
 * Whether the kernel that recorded (build id bid/len, _text at text) is
 * the running one: its build id from notes_path equals bid and kallsyms
 * puts _text at text. why receives the reason when not.
 */
EVPROF_HIDDEN bool evprof__pd_same_kernel(const char *kallsyms_path,
					  const char *notes_path,
					  const uint8_t *bid, size_t len,
					  uint64_t text, char *why,
					  size_t whylen);

/* ---- perfdata_xcode.c --------------------------------------------------- */

/*
 * The one record format the session is fed (evprof_session_opts.fmt):
 * every record of the file is rewritten into it, so that events with
 * different sample types, and period weights, go through one decoder.
 */
#define PD_SID_TYPES                                                           \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU)
#define PD_SAMPLE_TYPES                                                        \
	(PERF_SAMPLE_IP | PD_SID_TYPES | PERF_SAMPLE_PERIOD |                  \
	 PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN)
#define PD_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID)

/* A counter entry of a rewritten sample. */
struct pd_value {
	uint64_t id, value;
};

struct pd_xcode {
	struct evprof_record_fmt out; /* the session's format */
	/* Kernel addresses rebased to _text (another boot's kernel). */
	bool rebase_kernel;
	uint64_t ktext;
	uint64_t buf[PD_MAX_RECORD / 8];
};

EVPROF_HIDDEN void evprof__pd_xcode_init(struct pd_xcode *x, bool stacks,
					 uint64_t regs_mask);
/*
 * Rewrites sample r (decoded with its attr's format) with the counter
 * entries vals[nr]. Returns the new record's size, or a negative error.
 */
EVPROF_HIDDEN int evprof__pd_xcode_sample(struct pd_xcode *x,
					  const struct evprof_record *r,
					  const struct evprof_record_fmt *in,
					  const struct pd_value *vals,
					  uint32_t nr);
/*
 * Rewrites a side-band record (raw bytes rec, decoded as r with format in):
 * its body, then the session's sample_id trailer. MMAP2 records get
 * filename (NULL: theirs) and, when bid_len > 0, the build id. Returns
 * the new size or a negative error.
 */
EVPROF_HIDDEN int evprof__pd_xcode_sideband(struct pd_xcode *x,
					    const uint64_t *rec,
					    const struct evprof_record *r,
					    const struct evprof_record_fmt *in,
					    const char *filename,
					    const uint8_t *bid, size_t bid_len);
/* Bytes of the sample_id trailer of format fmt. */
EVPROF_HIDDEN size_t evprof__pd_sid_size(const struct evprof_record_fmt *fmt);

/* ---- perfdata.c, perfdata_notes.c --------------------------------------- */

/* The sample types of the sample_id trailer. */
#define PD_SID_BITS                                                            \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |                 \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* A synthetic id's top bits: kernel ids are small counters. */
#define SYNTH_ID (1ULL << 63)
/* Binaries given a note each before one "and N more". */
#define NOTE_DSOS 10

struct cpu_total { /* per-CPU group reads (-a): the last value per id */
	uint64_t id, last;
	int32_t cpu;
	uint32_t attr;
};

/* The reader (perfdata.c), read by perfdata_notes.c. */
struct evprof_perfdata {
	char *symfs, *buildid_dir, *kallsyms, *notes, *spill_dir, *debug_cache;
	bool no_symbols, no_timeline, no_dwarf, imported;
	/* Built in parts as it streams (see build_part()). */
	struct evprof_profile *p;
	struct evprof_symbolizer *sym;
	pthread_t sym_th; /* frees the symbolizer once the profile is made */
	bool sym_freeing;
	uint64_t part_time, part_samples, parts;
	bool no_parts;
	int part_err; /* a part's failed build, waited for while feeding */
	/* Every attr puts TIME at the same place (fast_time()). */
	bool same_lead, same_lead_known;
	struct pd_src src;
	struct pd_header h;
	struct pd_order order;
	struct pd_unzip *unzip;
	struct pd_dsos dsos;
	struct pd_xcode *x;
	struct evprof_session *s;
	/* Decided when the session starts. */
	bool per_cpu, per_cpu_reads, kernel_ok;
	char kernel_why[160];
	/* The kallsyms file kernel frames are named from (kernel_ok). */
	char ksyms[4096];
	uint64_t ktext;
	/* The kernel map's build id (MMAP2, --buildid-mmap), len 0: none. */
	uint8_t kbid[20], kbid_len;
	uint64_t kernel_samples;
	/* Sum of periods per (attr, tid): the values of synthetic entries. */
	struct evprof_hashmap *cum;
	EVPROF_VEC(uint64_t) cumv;
	struct evprof_hashmap *cpu_by_id;
	EVPROF_VEC(struct cpu_total) cpu;
	EVPROF_VEC(uint32_t) unknown_types;
	EVPROF_VEC(char *) counters;
	struct evprof_perfdata_stats st;
	uint64_t truncated_at; /* input offset of a cut record, 0: none */
	uint64_t end_off;      /* where the record stream stopped */
	uint64_t rec[PD_MAX_RECORD / 8];
	uint64_t mmap2[PD_MAX_RECORD / 8]; /* an old MMAP2, rewritten */
	char err[320];
};

/*
 * Classifies the attrs and creates the session (perfdata_classify.c).
 * Returns 0 or a negative error.
 */
EVPROF_HIDDEN int evprof__pd_start_session(struct evprof_perfdata *pd);
/* Sampling interval of the first sampling event in ns, 0: unknown. */
EVPROF_HIDDEN uint64_t evprof__pd_interval(const struct evprof_perfdata *pd);
/* What the file is and what it can say, as notes (before the build). */
EVPROF_HIDDEN void evprof__pd_notes(const struct evprof_perfdata *pd,
				    struct evprof_profile *p);
/* How stacks went (after the build). */
EVPROF_HIDDEN void evprof__pd_notes_stacks(const struct evprof_perfdata *pd,
					   struct evprof_profile *p);

#endif /* EVPROF_LIB_PERFDATA_INTERNAL_H */
