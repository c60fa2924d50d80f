// SPDX-License-Identifier: MIT
/*
 * Sized stats structs (include/evprof/common.h): a getter writes no byte
 * past the caller's sz, fills every byte up to it, and sets sz to what it
 * filled. Each struct is read into a buffer poisoned with a canary pattern,
 * as a caller compiled with an older (shorter), the same, or a newer
 * (longer) struct would pass it. Then the versions EVPROF_0.1 keeps, looked
 * up in libevprof.so as a program linked against 0.1 finds them, with that
 * program's struct layouts.
 */
#define _GNU_SOURCE /* dlvsym */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/event.h>
#include <evprof/profile.h>
#include <evprof/recorder.h>
#include <evprof/ring.h>
#include <evprof/session.h>

#include "cases.h"
#include "perf/ring.h"

#define CANARY 0xa5
#define BUF    4096

typedef int (*get_fn)(const void *obj, void *st);

static size_t sz_of(const unsigned char *buf)
{
	size_t sz;

	memcpy(&sz, buf, sizeof(sz));
	return sz;
}

/* buf poisoned with CANARY, then sz at its head. */
static void poison(unsigned char *buf, size_t sz)
{
	memset(buf, CANARY, BUF);
	memcpy(buf, &sz, sizeof(sz));
}

static void assert_canary(const unsigned char *buf, size_t from)
{
	for (size_t i = from; i < BUF; i++)
		if (buf[i] != CANARY)
			fail_msg("byte %zu written past sz %zu", i, from);
}

/*
 * The whole check for one getter of a struct of full bytes; cut is the
 * offset of a field past the first, where an older caller's struct ends.
 */
static void check_sized(get_fn get, const void *obj, size_t full, size_t cut)
{
	unsigned char ref[BUF], buf[BUF];

	assert_true(cut > sizeof(size_t) && cut < full && full < BUF);
	/* The reference: the full struct, zeroed first. */
	memset(ref, 0, sizeof(ref));
	memcpy(ref, &full, sizeof(full));
	assert_int_equal(get(obj, ref), 0);
	assert_int_equal(sz_of(ref), full);

	/* Same size: every byte written, none past it. */
	poison(buf, full);
	assert_int_equal(get(obj, buf), 0);
	assert_int_equal(sz_of(buf), full);
	assert_memory_equal(buf, ref, full);
	assert_canary(buf, full);

	/* An older caller: up to cut and no further. */
	poison(buf, cut);
	assert_int_equal(get(obj, buf), 0);
	assert_int_equal(sz_of(buf), cut);
	assert_memory_equal(buf + sizeof(size_t), ref + sizeof(size_t),
			    cut - sizeof(size_t));
	assert_canary(buf, cut);

	/* A newer caller: what this library knows, and sz says so. */
	poison(buf, full + 16);
	assert_int_equal(get(obj, buf), 0);
	assert_int_equal(sz_of(buf), full);
	assert_memory_equal(buf + sizeof(size_t), ref + sizeof(size_t),
			    full - sizeof(size_t));
	assert_canary(buf, full);

	/* An sz that does not cover sz: refused, nothing written. */
	poison(buf, sizeof(size_t) - 1);
	assert_int_equal(get(obj, buf), -EINVAL);
	assert_canary(buf, sizeof(size_t));
	assert_int_equal(get(NULL, ref), -EINVAL);
	assert_int_equal(get(obj, NULL), -EINVAL);
}

static int ring_get(const void *o, void *st)
{
	return evprof_ring__stats(o, st);
}

static int session_get(const void *o, void *st)
{
	return evprof_session__stats(o, st);
}

static int profile_get(const void *o, void *st)
{
	return evprof_profile__stats(o, st);
}

static int recorder_get(const void *o, void *st)
{
	return evprof_recorder__stats(o, st);
}

static void test_ring(void **state)
{
	static struct perf_event_mmap_page page;
	static _Alignas(8) unsigned char data[256];
	struct perf_event_header h = {.type = 9, .size = sizeof(h)};
	struct evprof_ring_stats st = {.sz = sizeof(st)};
	struct evprof_ring *r;
	const void *rec;
	size_t size;

	(void)state;
	memcpy(data, &h, sizeof(h));
	page.data_head = sizeof(h);
	r = evprof__ring_from_mem(&page, data, sizeof(data));
	assert_non_null(r);
	assert_int_equal(evprof_ring__next(r, &rec, &size), 1);
	check_sized(ring_get, r, sizeof(st),
		    offsetof(struct evprof_ring_stats, lost_samples));
	assert_int_equal(evprof_ring__stats(r, &st), 0);
	assert_int_equal(st.records, 1);
	evprof_ring__free(r);
}

static void test_session(void **state)
{
	struct evprof_session_opts o = {.sz = sizeof(o)};
	struct evprof_session *s = evprof_session__new(&o);

	(void)state;
	assert_non_null(s);
	check_sized(session_get, s, sizeof(struct evprof_session_stats),
		    offsetof(struct evprof_session_stats, reads_rejected));
	evprof_session__free(s);
}

static void test_profile(void **state)
{
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p = evprof_profile__new(NULL);

	(void)state;
	assert_non_null(p);
	assert_true(evprof_profile__add_process(p, 42, "app", 0) >= 0);
	check_sized(profile_get, p, sizeof(st),
		    offsetof(struct evprof_profile_stats, timeline_rows));
	assert_int_equal(evprof_profile__stats(p, &st), 0);
	assert_int_equal(st.processes, 1);
	evprof_profile__free(p);
}

static void test_recorder(void **state)
{
	char *const argv[] = {"true", NULL};
	struct evprof_recorder_target t = {.sz = sizeof(t), .argv = argv};
	struct evprof_recorder_opts o = {.sz = sizeof(o),
					 .mode = EVPROF_RECORDER_TASK};
	struct evprof_recorder *r;

	(void)state;
	r = evprof_recorder__new(&t, "task-clock", &o);
	if (!r)
		skip_because("no recorder on task-clock here (perf_event_open "
			     "refused)");
	check_sized(recorder_get, r, sizeof(struct evprof_recorder_stats),
		    offsetof(struct evprof_recorder_stats, start_mono_ns));
	evprof_recorder__free(r);
}

/* ---- EVPROF_0.1 as a binary linked against it sees it ------------------- */

/* The stats structs as include/evprof of 0.1 declared them. */
struct ring_stats_01 {
	uint64_t records, lost_events, lost_records, lost_samples, malformed;
};

struct session_stats_01 {
	uint64_t records, samples, samples_filtered, lost_records, lost_events,
	    lost_samples, throttled, malformed, unknown_ids, counter_resets,
	    stacks_unwound, stacks_truncated, stacks_dropped, deferred_samples,
	    deferred_unstitched;
	uint32_t processes, threads;
	uint64_t first_time, last_time, reads_rejected, stacks_cut,
	    offcpu_voluntary, offcpu_preempted, offcpu_unmatched,
	    offcpu_unstarted;
};

struct profile_stats_01 {
	uint64_t samples;
	uint32_t processes, threads, libs, frames, stacks, counters, weights;
	uint64_t entries, store_bytes, timeline_rows, timeline_bytes,
	    spilled_bytes;
};

struct recorder_stats_01 {
	struct session_stats_01 session;
	uint64_t ring_lost_events, ring_lost_records, ring_lost_samples,
	    start_mono_ns, start_wall_ns;
	uint32_t stack_size;
	bool deferred;
};

static void *lib;

static int open_lib(void **state)
{
	(void)state;
	lib = dlopen(EVPROF_SHARED_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("%s", dlerror());
	return 0;
}

static int close_lib(void **state)
{
	(void)state;
	return dlclose(lib);
}

/* name@ver in the library; fails the case when absent. */
static void *sym(const char *name, const char *ver)
{
	void *f = ver ? dlvsym(lib, name, ver) : dlsym(lib, name);

	if (!f)
		fail_msg("no %s@%s in %s", name, ver ? ver : "",
			 EVPROF_SHARED_LIB);
	return f;
}

/* A 0.1 getter and its 0.2 default: two functions of one name. */
static void *old_getter(const char *name)
{
	void *old = sym(name, "EVPROF_0.1");

	assert_ptr_not_equal(old, sym(name, "EVPROF_0.2"));
	assert_ptr_equal(sym(name, NULL), sym(name, "EVPROF_0.2"));
	return old;
}

static void test_v01_ring(void **state)
{
	static struct perf_event_mmap_page page;
	static _Alignas(8) unsigned char data[256];
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
	} lost = {{PERF_RECORD_LOST, 0, sizeof(lost)}, 1, 7};
	void (*old)(const struct evprof_ring *, struct ring_stats_01 *) =
	    old_getter("evprof_ring__stats");
	void (*close01)(struct evprof_ring *) =
	    sym("evprof_ring__close", "EVPROF_0.1");
	struct evprof_ring_stats st = {.sz = sizeof(st)};
	unsigned char buf[sizeof(struct ring_stats_01) + 64];
	struct ring_stats_01 o;
	struct evprof_ring *r;
	const void *rec;
	size_t size;

	(void)state;
	memcpy(data, &lost, sizeof(lost));
	page.data_head = sizeof(lost);
	r = evprof__ring_from_mem(&page, data, sizeof(data));
	assert_non_null(r);
	assert_int_equal(evprof_ring__next(r, &rec, &size), 1);
	assert_int_equal(evprof_ring__stats(r, &st), 0);
	assert_true(st.records == 1 && st.lost_records == 1 &&
		    st.lost_events == 7);
	memset(buf, CANARY, sizeof(buf));
	old(r, (struct ring_stats_01 *)buf);
	for (size_t i = sizeof(o); i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);
	memcpy(&o, buf, sizeof(o));
	assert_int_equal(o.records, st.records);
	assert_int_equal(o.lost_events, st.lost_events);
	assert_int_equal(o.lost_records, st.lost_records);
	assert_int_equal(o.lost_samples, st.lost_samples);
	assert_int_equal(o.malformed, st.malformed);
	close01(r); /* the 0.1 name of evprof_ring__free */
}

static void test_v01_session(void **state)
{
	struct evprof_session *(*snew)(const struct evprof_session_opts *) =
	    sym("evprof_session__new", NULL);
	int (*feed)(struct evprof_session *, const void *, size_t) =
	    sym("evprof_session__feed", NULL);
	void (*sfree)(struct evprof_session *) =
	    sym("evprof_session__free", NULL);
	int (*now)(const struct evprof_session *,
		   struct evprof_session_stats *) =
	    sym("evprof_session__stats", NULL);
	void (*old)(const struct evprof_session *, struct session_stats_01 *) =
	    old_getter("evprof_session__stats");
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
	} lost = {{PERF_RECORD_LOST, 0, sizeof(lost)}, 1, 5};
	struct evprof_session_opts so = {.sz = sizeof(so)};
	struct evprof_session_stats st = {.sz = sizeof(st)};
	unsigned char buf[sizeof(struct session_stats_01) + 64];
	struct session_stats_01 o;
	struct evprof_session *s;

	(void)state;
	s = snew(&so);
	assert_non_null(s);
	assert_int_equal(feed(s, &lost, sizeof(lost)), 0);
	assert_int_equal(now(s, &st), 0);
	assert_true(st.records == 1 && st.lost_events == 5);
	memset(buf, CANARY, sizeof(buf));
	old(s, (struct session_stats_01 *)buf);
	for (size_t i = sizeof(o); i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);
	memcpy(&o, buf, sizeof(o));
	assert_int_equal(o.records, st.records);
	assert_int_equal(o.lost_records, st.lost_records);
	assert_int_equal(o.lost_events, st.lost_events);
	assert_int_equal(o.samples, st.samples);
	assert_int_equal(o.processes, st.processes);
	assert_int_equal(o.threads, st.threads);
	assert_int_equal(o.first_time, st.first_time);
	assert_int_equal(o.offcpu_unstarted, st.offcpu_unstarted);
	sfree(s);
}

static void test_v01_profile(void **state)
{
	struct evprof_profile *(*pnew)(const struct evprof_profile_opts *) =
	    sym("evprof_profile__new", NULL);
	int (*add_proc)(struct evprof_profile *, int, const char *, uint64_t) =
	    sym("evprof_profile__add_process", NULL);
	int (*add_thr)(struct evprof_profile *, int, int, const char *,
		       uint64_t) = sym("evprof_profile__add_thread", NULL);
	void (*pfree)(struct evprof_profile *) =
	    sym("evprof_profile__free", NULL);
	int (*now)(const struct evprof_profile *,
		   struct evprof_profile_stats *) =
	    sym("evprof_profile__stats", NULL);
	void (*old)(const struct evprof_profile *, struct profile_stats_01 *) =
	    old_getter("evprof_profile__stats");
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	unsigned char buf[sizeof(struct profile_stats_01) + 64];
	struct profile_stats_01 o;
	struct evprof_profile *p;
	int proc;

	(void)state;
	p = pnew(NULL);
	assert_non_null(p);
	assert_true(add_proc(p, 42, "a", 0) >= 0);
	proc = add_proc(p, 43, "b", 0);
	assert_true(proc >= 0);
	assert_true(add_thr(p, proc, 44, "t", 0) >= 0);
	assert_int_equal(now(p, &st), 0);
	assert_true(st.processes == 2 && st.threads == 1);
	memset(buf, CANARY, sizeof(buf));
	old(p, (struct profile_stats_01 *)buf);
	for (size_t i = sizeof(o); i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);
	memcpy(&o, buf, sizeof(o));
	assert_int_equal(o.samples, st.samples);
	assert_int_equal(o.processes, st.processes);
	assert_int_equal(o.threads, st.threads);
	assert_int_equal(o.weights, st.weights);
	assert_int_equal(o.entries, st.entries);
	assert_int_equal(o.store_bytes, st.store_bytes);
	assert_int_equal(o.spilled_bytes, st.spilled_bytes);
	pfree(p);
}

static void test_v01_recorder(void **state)
{
	struct evprof_recorder *(*rnew)(const struct evprof_recorder_target *,
					const char *,
					const struct evprof_recorder_opts *) =
	    sym("evprof_recorder__new", NULL);
	struct evprof_session *(*rsession)(struct evprof_recorder *) =
	    sym("evprof_recorder__session", NULL);
	int (*start)(struct evprof_recorder *) =
	    sym("evprof_recorder__start", NULL);
	int (*stop)(struct evprof_recorder *) =
	    sym("evprof_recorder__stop", NULL);
	pid_t (*child)(const struct evprof_recorder *) =
	    sym("evprof_recorder__pid", NULL);
	void (*rfree)(struct evprof_recorder *) =
	    sym("evprof_recorder__free", NULL);
	int (*now)(const struct evprof_recorder *,
		   struct evprof_recorder_stats *) =
	    sym("evprof_recorder__stats", NULL);
	int (*snow)(const struct evprof_session *,
		    struct evprof_session_stats *) =
	    sym("evprof_session__stats", NULL);
	void (*old)(const struct evprof_recorder *,
		    struct recorder_stats_01 *) =
	    old_getter("evprof_recorder__stats");
	char *const argv[] = {"true", NULL};
	struct evprof_recorder_target t = {.sz = sizeof(t), .argv = argv};
	struct evprof_recorder_opts ro = {.sz = sizeof(ro),
					  .mode = EVPROF_RECORDER_TASK};
	struct evprof_recorder_stats st = {.sz = sizeof(st)};
	struct evprof_session_stats ss = {.sz = sizeof(ss)};
	unsigned char buf[sizeof(struct recorder_stats_01) + 64];
	struct recorder_stats_01 o;
	struct evprof_recorder *r;

	(void)state;
	r = rnew(&t, "task-clock", &ro);
	if (!r)
		skip_because("no recorder on task-clock here (perf_event_open "
			     "refused)");
	assert_int_equal(start(r), 0); /* the start times: not 0 */
	assert_int_equal(now(r, &st), 0);
	assert_true(st.start_mono_ns && st.start_wall_ns);
	assert_int_equal(snow(rsession(r), &ss), 0);
	memset(buf, CANARY, sizeof(buf));
	old(r, (struct recorder_stats_01 *)buf);
	for (size_t i = sizeof(o); i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);
	memcpy(&o, buf, sizeof(o));
	assert_int_equal(o.session.records, ss.records);
	assert_int_equal(o.session.offcpu_unstarted, ss.offcpu_unstarted);
	assert_int_equal(o.ring_lost_events, st.ring_lost_events);
	assert_int_equal(o.start_mono_ns, st.start_mono_ns);
	assert_int_equal(o.start_wall_ns, st.start_wall_ns);
	assert_int_equal(o.stack_size, st.stack_size);
	assert_int_equal(o.deferred, st.deferred);
	stop(r);
	waitpid(child(r), NULL, 0);
	rfree(r);
}

/* The names 0.2 took out of the headers still answer 0.1 binaries. */
static void test_v01_removed(void **state)
{
	int (*exit_code)(int) = sym("evprof_exit_code", "EVPROF_0.1");
	int (*pidfd_open)(pid_t) = sym("evprof_pidfd_open", "EVPROF_0.1");
	void (*group_close)(struct evprof_group *) =
	    sym("evprof_group__close", "EVPROF_0.1");
	void (*set_close)(struct evprof_group_set *) =
	    sym("evprof_group_set__close", "EVPROF_0.1");
	int fd;

	(void)state;
	assert_int_equal(exit_code(3 << 8), 3); /* exited with 3 */
	assert_int_equal(exit_code(SIGKILL), 128 + SIGKILL);
	fd = pidfd_open(getpid());
	if (fd == -ENOSYS)
		skip_because("no pidfd_open(2) in this kernel");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pidfd_open(-1), -EINVAL);
	group_close(NULL); /* destructors accept NULL */
	set_close(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring),
	    cmocka_unit_test(test_session),
	    cmocka_unit_test(test_profile),
	    cmocka_unit_test(test_recorder),
	    cmocka_unit_test_setup_teardown(test_v01_ring, open_lib, close_lib),
	    cmocka_unit_test_setup_teardown(test_v01_session, open_lib,
					    close_lib),
	    cmocka_unit_test_setup_teardown(test_v01_profile, open_lib,
					    close_lib),
	    cmocka_unit_test_setup_teardown(test_v01_recorder, open_lib,
					    close_lib),
	    cmocka_unit_test_setup_teardown(test_v01_removed, open_lib,
					    close_lib),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
