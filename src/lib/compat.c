// SPDX-License-Identifier: MIT
/*
 * What programs linked against EVPROF_0.1 call and 0.2 changed. Each is
 * defined here under a private name and exported by ".symver" as
 * name@EVPROF_0.1 alone: a single "@", a non-default version, so the
 * dynamic linker hands it to a binary that asked for EVPROF_0.1 while a
 * program linked now gets the EVPROF_0.2 function of the same name, or,
 * for a name 0.2 removed, nothing (no header declares these). Linked
 * statically, nothing references them and they stay out.
 *
 * The stats getters kept their names in 0.2 and gained a size_t sz in
 * front of their structs; ".symver" rather than new names (a
 * evprof_ring__stats2) because a caller rebuilt against 0.2 then only adds
 * .sz = sizeof(st), and each binary keeps the layout it was compiled with.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include <evprof/event.h>
#include <evprof/profile.h>
#include <evprof/recorder.h>
#include <evprof/ring.h>
#include <evprof/session.h>

#include "os/os.h"

/* impl is exported as name@EVPROF_0.1 only; the map keeps impl local. */
#define EVPROF_V0_1(impl, name)                                                \
	__asm__(".symver " #impl ", " #name "@EVPROF_0.1")
#define V0_1_API __attribute__((visibility("default")))

/* ---- names 0.2 removed or renamed --------------------------------------- */

V0_1_API int evprof_pidfd_open_v0_1(pid_t pid);
V0_1_API int evprof_exit_code_v0_1(int status);
V0_1_API void evprof_ring__close_v0_1(struct evprof_ring *ring);
V0_1_API void evprof_group__close_v0_1(struct evprof_group *g);
V0_1_API void evprof_group_set__close_v0_1(struct evprof_group_set *set);

EVPROF_V0_1(evprof_pidfd_open_v0_1, evprof_pidfd_open);
int evprof_pidfd_open_v0_1(pid_t pid)
{
	return evprof__pidfd_open(pid);
}

/* The CLI's cli_exit_code() now; its 0.1 copy, frozen. */
EVPROF_V0_1(evprof_exit_code_v0_1, evprof_exit_code);
int evprof_exit_code_v0_1(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

EVPROF_V0_1(evprof_ring__close_v0_1, evprof_ring__close);
void evprof_ring__close_v0_1(struct evprof_ring *ring)
{
	evprof_ring__free(ring);
}

EVPROF_V0_1(evprof_group__close_v0_1, evprof_group__close);
void evprof_group__close_v0_1(struct evprof_group *g)
{
	evprof_group__free(g);
}

EVPROF_V0_1(evprof_group_set__close_v0_1, evprof_group_set__close);
void evprof_group_set__close_v0_1(struct evprof_group_set *set)
{
	evprof_group_set__free(set);
}

/* ---- stats structs as 0.1 laid them out --------------------------------- */

/*
 * Each 0.1 struct is its 0.2 successor less sz: the same fields in the
 * same order, all at most 8-byte aligned and the first 8-byte aligned, so
 * its bytes are the 0.2 ones from the first field on. The asserts hold
 * that true while 0.2 structs grow at their end.
 */
struct ring_stats_v0_1 {
	uint64_t records, lost_events, lost_records, lost_samples, malformed;
};

struct session_stats_v0_1 {
	uint64_t records, samples, samples_filtered, lost_records, lost_events,
	    lost_samples, throttled, malformed, unknown_ids, counter_resets,
	    stacks_unwound, stacks_truncated, stacks_dropped, deferred_samples,
	    deferred_unstitched;
	uint32_t processes, threads;
	uint64_t first_time, last_time, reads_rejected, stacks_cut,
	    offcpu_voluntary, offcpu_preempted, offcpu_unmatched,
	    offcpu_unstarted;
};

struct profile_stats_v0_1 {
	uint64_t samples;
	uint32_t processes, threads, libs, frames, stacks, counters, weights;
	uint64_t entries, store_bytes, timeline_rows, timeline_bytes,
	    spilled_bytes;
};

struct recorder_stats_v0_1 {
	struct session_stats_v0_1 session;
	uint64_t ring_lost_events, ring_lost_records, ring_lost_samples,
	    start_mono_ns, start_wall_ns;
	uint32_t stack_size;
	bool deferred;
};

/*
 * The bytes of struct old from field first on are those of struct new from
 * its field first on; last is the last field of old.
 */
#define SAME_LAYOUT(old, new, first, last)                                     \
	_Static_assert(                                                        \
	    offsetof(struct old, last) - offsetof(struct old, first) ==        \
		offsetof(struct new, last) - offsetof(struct new, first),      \
	    #old " is " #new " less sz");                                      \
	_Static_assert(sizeof(struct old) - offsetof(struct old, first) <=     \
			   sizeof(struct new) - offsetof(struct new, first),   \
		       #old " fits in " #new)

SAME_LAYOUT(ring_stats_v0_1, evprof_ring_stats, records, malformed);
SAME_LAYOUT(session_stats_v0_1, evprof_session_stats, records,
	    offcpu_unstarted);
SAME_LAYOUT(profile_stats_v0_1, evprof_profile_stats, samples, spilled_bytes);
SAME_LAYOUT(recorder_stats_v0_1, evprof_recorder_stats, ring_lost_events,
	    deferred);

/* *old from field first on, out of the 0.2 struct *full. */
#define FROM_V0_2(old, full, first)                                            \
	memcpy(&(old)->first, &(full)->first,                                  \
	       sizeof(*(old)) - offsetof(__typeof__(*(old)), first))

V0_1_API void evprof_ring__stats_v0_1(const struct evprof_ring *ring,
				      struct ring_stats_v0_1 *old);
V0_1_API void evprof_session__stats_v0_1(const struct evprof_session *s,
					 struct session_stats_v0_1 *old);
V0_1_API void evprof_profile__stats_v0_1(const struct evprof_profile *p,
					 struct profile_stats_v0_1 *old);
V0_1_API void evprof_recorder__stats_v0_1(const struct evprof_recorder *r,
					  struct recorder_stats_v0_1 *old);

EVPROF_V0_1(evprof_ring__stats_v0_1, evprof_ring__stats);
void evprof_ring__stats_v0_1(const struct evprof_ring *ring,
			     struct ring_stats_v0_1 *old)
{
	struct evprof_ring_stats st = {.sz = sizeof(st)};

	/* 0.1 left *old alone for a NULL ring. */
	if (old && !evprof_ring__stats(ring, &st))
		FROM_V0_2(old, &st, records);
}

EVPROF_V0_1(evprof_session__stats_v0_1, evprof_session__stats);
void evprof_session__stats_v0_1(const struct evprof_session *s,
				struct session_stats_v0_1 *old)
{
	struct evprof_session_stats st = {.sz = sizeof(st)};

	if (old && !evprof_session__stats(s, &st))
		FROM_V0_2(old, &st, records);
}

EVPROF_V0_1(evprof_profile__stats_v0_1, evprof_profile__stats);
void evprof_profile__stats_v0_1(const struct evprof_profile *p,
				struct profile_stats_v0_1 *old)
{
	struct evprof_profile_stats st = {.sz = sizeof(st)};

	if (old && !evprof_profile__stats(p, &st))
		FROM_V0_2(old, &st, samples);
}

/* 0.1 embedded the session's stats: the recorder's own follow them. */
EVPROF_V0_1(evprof_recorder__stats_v0_1, evprof_recorder__stats);
void evprof_recorder__stats_v0_1(const struct evprof_recorder *r,
				 struct recorder_stats_v0_1 *old)
{
	struct evprof_recorder_stats st = {.sz = sizeof(st)};
	struct evprof_session_stats ss = {.sz = sizeof(ss)};

	if (!old)
		return;
	memset(old, 0, sizeof(*old));
	if (!r || evprof_recorder__stats(r, &st))
		return;
	/* The getter only reads r: 0.1 took it const, as this does. */
	evprof_session__stats(
	    evprof_recorder__session((struct evprof_recorder *)r), &ss);
	FROM_V0_2(&old->session, &ss, records);
	FROM_V0_2(old, &st, ring_lost_events);
}
