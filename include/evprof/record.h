/* SPDX-License-Identifier: MIT */
/*
 * Record decoding: bytes of one perf record (from a ring or a perf.data
 * file) into a typed view. Pure: no fd is touched. Every length is checked
 * against the record's size; nothing is read past its end.
 *
 * Views point into the record's bytes and live as long as those bytes.
 * Arrays of u64 are exposed as pointers, so the record must be 8-byte
 * aligned (the kernel writes it so; evprof_record__parse checks it).
 */
#ifndef EVPROF_RECORD_H
#define EVPROF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI values newer than the uapi header we build against. */
#define EVPROF_RECORD_CALLCHAIN_DEFERRED 22		  /* Linux 6.19 */
#define EVPROF_CONTEXT_USER_DEFERRED	 ((uint64_t)-640) /* Linux 6.19 */

/* What decoding needs from the attr that produced the record. */
struct evprof_record_fmt {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t sample_regs_user;
	uint64_t sample_regs_intr;
	uint64_t branch_sample_type;
	bool sample_id_all;
};

EVPROF_API void
evprof_record_fmt__from_attr(struct evprof_record_fmt *fmt,
			     const struct perf_event_attr *attr);

/* The sample_id trailer of non-sample records (sample_id_all). */
struct evprof_sample_id {
	bool present;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
};

struct evprof_sample {
	uint64_t identifier;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id; /* ID, or IDENTIFIER when only that is set */
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	const void *read; /* PERF_SAMPLE_READ bytes: evprof_snapshot__parse */
	size_t read_size;
	uint64_t callchain_nr;
	const uint64_t *callchain; /* with PERF_CONTEXT_* markers */
	uint32_t raw_size;
	const void *raw;
	uint64_t branch_nr;
	uint64_t branch_hw_idx;
	const void *branches;		 /* branch_nr x {from, to, flags} u64 */
	const uint64_t *branch_counters; /* branch_nr u64, or NULL */
	uint64_t regs_user_abi;		 /* 0: no registers follow */
	uint32_t regs_user_nr;
	const uint64_t *regs_user; /* ascending bit order of the mask */
	uint64_t stack_user_size;
	const void *stack_user;
	uint64_t stack_user_dyn_size; /* bytes actually copied */
	uint64_t weight;	      /* WEIGHT, or WEIGHT_STRUCT's u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t regs_intr_abi;
	uint32_t regs_intr_nr;
	const uint64_t *regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const void *aux;
};

struct evprof_record_mmap { /* MMAP and MMAP2 */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min; /* MMAP2 without build id */
	uint64_t ino, ino_generation;
	uint8_t build_id_size; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	const uint8_t *build_id;
	uint32_t prot, flags; /* MMAP2 */
	const char *filename; /* NUL-terminated within the record */
};

struct evprof_record_comm {
	uint32_t pid, tid;
	const char *comm; /* NUL-terminated within the record */
	bool exec;	  /* PERF_RECORD_MISC_COMM_EXEC */
};

struct evprof_record_task { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct evprof_record_lost {
	uint64_t id, lost;
};

struct evprof_record_throttle { /* THROTTLE and UNTHROTTLE */
	uint64_t time, id, stream_id;
};

struct evprof_record_read {
	uint32_t pid, tid;
	const void *read; /* read_format bytes: evprof_snapshot__parse */
	size_t read_size;
};

struct evprof_record_switch { /* SWITCH and SWITCH_CPU_WIDE */
	bool out;	      /* PERF_RECORD_MISC_SWITCH_OUT */
	bool preempt;	      /* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT */
	uint32_t next_prev_pid, next_prev_tid; /* CPU_WIDE only */
};

struct evprof_record_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
};

struct evprof_record_deferred { /* CALLCHAIN_DEFERRED */
	uint64_t cookie;
	uint64_t nr;
	const uint64_t *ips; /* user ips, no context marker */
};

struct evprof_record_aux {
	uint64_t aux_offset, aux_size, flags;
};

struct evprof_record_namespaces {
	uint32_t pid, tid;
	uint64_t nr;
	const uint64_t *link_info; /* nr x {dev, inode} */
};

struct evprof_record_bpf_event {
	uint16_t type, flags;
	uint32_t id;
	const uint8_t *tag; /* 8 bytes */
};

struct evprof_record_cgroup {
	uint64_t id;
	const char *path;
};

struct evprof_record_text_poke {
	uint64_t addr;
	uint16_t old_len, new_len;
	const uint8_t *bytes; /* old_len + new_len bytes */
};

struct evprof_record {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	struct evprof_sample_id sid; /* non-sample records */
	union {
		struct evprof_sample sample;
		struct evprof_record_mmap mmap;
		struct evprof_record_comm comm;
		struct evprof_record_task task;
		struct evprof_record_lost lost;
		uint64_t lost_samples;
		struct evprof_record_throttle throttle;
		struct evprof_record_read read;
		struct evprof_record_switch sw;
		struct evprof_record_ksymbol ksymbol;
		struct evprof_record_deferred deferred;
		struct evprof_record_aux aux;
		struct {
			uint32_t pid, tid;
		} itrace_start;
		struct evprof_record_namespaces namespaces;
		struct evprof_record_bpf_event bpf_event;
		struct evprof_record_cgroup cgroup;
		struct evprof_record_text_poke text_poke;
		uint64_t aux_output_hw_id;
	};
};

/*
 * Decodes the record at buf (len bytes available, at least header.size).
 * fmt describes the attr of the event that wrote it. Returns 0,
 * -EVPROF_ERR_TRUNCATED when a field would lie past header.size or len,
 * -EVPROF_ERR_MALFORMED for impossible values (size not a multiple of 8,
 * unterminated strings, misaligned buf), or -ENOTSUP for a type it does
 * not know (type, misc and size are still filled).
 */
EVPROF_API int evprof_record__parse(struct evprof_record *rec, const void *buf,
				    size_t len,
				    const struct evprof_record_fmt *fmt);

/*
 * Reads the PERF_SAMPLE_IDENTIFIER of a record without decoding it: first
 * u64 of a sample, last u64 of other records (which needs sample_id_all).
 * Use it to pick the fmt of the event that wrote the record when several
 * events share a ring. Returns 0 or -EVPROF_ERR_TRUNCATED.
 */
EVPROF_API int evprof_record__identifier(const void *buf, size_t len,
					 uint64_t *id);

/* Name of a record type ("SAMPLE", "MMAP2", ...), "UNKNOWN" otherwise. */
EVPROF_API const char *evprof_record_type_name(uint32_t type);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_RECORD_H */
