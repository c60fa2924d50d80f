/* SPDX-License-Identifier: MIT */
/*
 * The BPF engine, evprof__engine_bpf in engine.h: engine_bpf.c opens its
 * per-CPU events, loads its programs (bpf/engine.bpf.c) and flips its
 * sets of maps; engine_bpf_read.c reads those maps into the session; a
 * side-band ring per CPU brings names, mappings and exits. Built without
 * BPF, engine_bpf_none.c stands in. Only these files include libbpf.
 */
#ifndef EVPROF_LIB_ENGINE_BPF_H
#define EVPROF_LIB_ENGINE_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "events/events.h"
#include "engine.h"
#include "rings.h"

struct evprof_engine; /* the skeleton (engine.skel.h) */
struct bpf_link;

struct evprof_bpf {
	struct evprof__engine e;	/* first: what the recorder holds */
	struct evprof__engine_setup *s; /* the recorder's */
	struct evprof_engine *skel;
	int *cpus; /* online CPUs */
	int nr_cpus;
	int *sampler;	 /* per CPU */
	int *counters;	 /* per CPU x EVPROF_BPF_MAX_COUNTERS */
	size_t nr_slots; /* counts the programs read (load()) */
	struct bpf_link **sample_links;
	struct bpf_link **counter_links; /* per CPU x MAX: own samples */
	struct bpf_link *switch_link, *fork_link;
	bool baselines; /* every CPU's baseline taken at enable */
	uint32_t gen;	/* the set the programs add to (engine.bpf.c) */
	int aggr_fd[2], stack_fd[2]; /* the sets' maps; set 1 is ours */
	uint64_t entries, slices;    /* aggregates and settled threads read */
	struct perf_event_attr side_band; /* the format the session decodes */
	struct evprof_group_set *side;	  /* side_band on every CPU */
	struct evprof__rings rings;	  /* side's, one per CPU */
	struct evprof__pmu_map pmu_map;	  /* each CPU's core PMU */
	/* Cgroup ids that no walk of the mount named (engine_bpf_read.c). */
	struct evprof_hashmap *cg_unnamed;
};

/*
 * What the engine opens on cpu for the user's event e of s: e 0 samples
 * (evprof__engine_sampler_rate(), from the start), the others count from
 * their open, each into the counter array (no inherit; enabled and
 * running times read), those of s->own sampling too at their period
 * (evprof__engine_member_period()). On
 * a hybrid machine a generic hardware or cache event is bound to the core
 * PMU that owns cpu (map), as in the ring engine.
 */
EVPROF_HIDDEN void evprof__bpf_attr(const struct evprof__engine_setup *s,
				    const struct evprof__pmu_map *map, size_t e,
				    int cpu, struct perf_event_attr *a);

/* ---- reading the maps (engine_bpf_read.c) ---- */

/*
 * Moves set gen's aggregates (and with threads every thread's charges
 * after its last sample) into the session, each stamped at most until.
 * Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__bpf_feed_set(struct evprof_bpf *b, uint32_t gen,
				       bool threads, uint64_t until);
/*
 * Copies the stacks of every live thread's latest sample from set idle to
 * the other one.
 */
EVPROF_HIDDEN void evprof__bpf_carry_stacks(struct evprof_bpf *b,
					    uint32_t idle);
/* Returns once no program run that may add to the old set still runs. */
EVPROF_HIDDEN int evprof__bpf_wait_programs(struct evprof_bpf *b);
/* Deletes every entry of an idle map of keys of ksz bytes. */
EVPROF_HIDDEN int evprof__bpf_clear_map(int map, size_t ksz);
/* The programs' counts (EVPROF_BPF_STAT_*) summed over the CPUs into st. */
EVPROF_HIDDEN void evprof__bpf_read_stats(struct evprof_bpf *b, uint64_t *st);
/* Entries of the pid set: processes followed that had not ended. */
EVPROF_HIDDEN uint64_t evprof__bpf_count_pids(struct evprof_bpf *b);

#endif /* EVPROF_LIB_ENGINE_BPF_H */
