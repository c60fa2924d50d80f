/* SPDX-License-Identifier: MIT */
/*
 * perf.data import: a file written by `perf record` (file mode, or pipe
 * mode from `perf record -o -`) read once, streaming, into a profile.
 *
 * The records go through the same session code as evprof's own recordings
 * (evprof_session__feed()), so every writer and `evprof report` read the
 * result like a recorded profile. What the file can say about counters
 * depends on how perf recorded it; the import reads that from the attrs
 * and says it in the profile's notes:
 *
 * - events sampled on their own (`-e a,b`): one weight per event, the sum
 *   of its sample periods, per thread and stack;
 * - group reads (PERF_SAMPLE_READ, `-e '{a,b}:S'`) of per-task events:
 *   per-thread deltas of every member, as evprof's task mode. Without
 *   inherit (perf before 6.13) only the threads perf opened were recorded,
 *   which a note says;
 * - group reads of per-CPU events (`-a`): values between two samples
 *   straddle context switches, so they are not charged to threads; their
 *   per-CPU totals go to a note.
 *
 * Records are replayed in time order per round (PERF_RECORD_FINISHED_ROUND:
 * perf's own two-round rule; without rounds, the older half of what waits
 * goes on past 64 MiB), compressed records (`perf record -z`, zstd) are
 * decompressed in one stream as they are read, and record types this
 * reader does not know are skipped by their size and counted. A file
 * whose header says its data is empty (perf killed before it finished) is
 * read up to its last whole record, with a note.
 *
 * Binaries are looked for under opts.symfs, at their recorded paths, then
 * in perf's build-id cache; the build id perf recorded (its build-id
 * section, or the MMAP2 records' own with --buildid-mmap) must match, else
 * the frames stay unnamed and a note says which binary. Kernel frames are
 * named from the running kernel's kallsyms only when the recorded kernel
 * build id and the kernel's _text address match this boot; else they are
 * "[kernel.kallsyms]+offset" from _text, with a note.
 */
#ifndef EVPROF_PERFDATA_H
#define EVPROF_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/common.h>
#include <evprof/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_perfdata;

struct evprof_perfdata_opts {
	size_t sz; /* sizeof(struct evprof_perfdata_opts) */
	/* A root directory binaries are looked for under first; NULL: none. */
	const char *symfs;
	/* perf's build-id cache; NULL: $HOME/.debug. */
	const char *buildid_dir;
	/* The running kernel's symbols; NULL: /proc/kallsyms. */
	const char *kallsyms_path;
	/* The running kernel's ELF notes (build id); NULL: /sys/kernel/notes. */
	const char *kernel_notes_path;
	/* Open no file at all: every frame named by its address (fuzzing). */
	bool no_symbols;
	/* Passed to evprof_profile_opts.no_timeline. */
	bool no_timeline;
	/*
	 * Names from symbol tables only: no inline frames, no source lines
	 * (evprof_symbolizer_opts.no_dwarf). Faster where debug info is big.
	 */
	bool no_dwarf;
	/*
	 * A directory for the timeline's temporary file
	 * (evprof_profile_opts.spill_dir); NULL: rows stay in memory.
	 */
	const char *spill_dir;
	/* Passed to evprof_symbolizer_opts.debug_cache_dir. */
	const char *debug_cache_dir;
};

/*
 * Opens path for import ("-": standard input; a pipe holds pipe-mode data,
 * or file-mode data that is then read into memory whole). Nothing is
 * parsed yet. opts may be NULL; its strings are copied. Returns the reader,
 * freed with evprof_perfdata__free(), or NULL with errno set (open(2)'s
 * errors, EINVAL, ENOMEM).
 */
EVPROF_API struct evprof_perfdata *
evprof_perfdata__open(const char *path,
		      const struct evprof_perfdata_opts *opts);

/*
 * The same for len bytes at buf, which must stay valid until
 * evprof_perfdata__free(). Returns NULL with errno set (EINVAL, ENOMEM).
 */
EVPROF_API struct evprof_perfdata *
evprof_perfdata__open_mem(const void *buf, size_t len,
			  const struct evprof_perfdata_opts *opts);

/*
 * Closes and frees pd, once the thread evprof_perfdata__import() left
 * freeing its symbol tables is done. Accepts NULL.
 */
EVPROF_API void evprof_perfdata__free(struct evprof_perfdata *pd);

/*
 * Reads the whole input once and returns the profile it makes (freed with
 * evprof_profile__free(); it does not depend on pd). Call it once per pd.
 * Returns NULL with errno set: EVPROF_ERR_BAD_PERFDATA for a malformed
 * input (evprof_perfdata__error() says what, at which offset), EINVAL
 * (called twice), ENOMEM, or a read error. The symbol tables are freed on
 * a thread of their own meanwhile (libelf and libdw objects of pd's only).
 */
EVPROF_API struct evprof_profile *
evprof_perfdata__import(struct evprof_perfdata *pd);

/*
 * The message of the last failure of evprof_perfdata__import(), e.g.
 * "record at offset 0x1a8 has size 4", or "" when none. Lives as long as
 * pd.
 */
EVPROF_API const char *evprof_perfdata__error(const struct evprof_perfdata *pd);

struct evprof_perfdata_stats {
	size_t sz;		  /* sizeof(struct evprof_perfdata_stats) */
	uint64_t records;	  /* kernel records replayed to the session */
	uint64_t samples;	  /* of them, samples */
	uint64_t unknown_records; /* types this reader does not know */
	uint64_t compressed;	  /* PERF_RECORD_COMPRESSED(2) records */
	uint64_t rounds;	  /* PERF_RECORD_FINISHED_ROUND records */
	uint64_t lost_events;	  /* sum of PERF_RECORD_LOST counts */
	uint32_t nr_attrs;	  /* events in the file */
	bool pipe;		  /* pipe-mode data */
	bool truncated;		  /* data size 0 in the header, or cut */
	bool kernel_symbols;	  /* kallsyms of this boot used */
};

/*
 * Copies what the last import did into *st (up to st->sz bytes, set by the
 * caller) and sets st->sz to the bytes filled. Returns 0, or -EINVAL for a
 * NULL argument or an st->sz below sizeof(size_t).
 */
EVPROF_API int evprof_perfdata__stats(const struct evprof_perfdata *pd,
				      struct evprof_perfdata_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_PERFDATA_H */
