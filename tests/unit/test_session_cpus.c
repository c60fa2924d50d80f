// SPDX-License-Identifier: MIT
/*
 * Sessions on many CPUs (tests/cpusim.h): a churning tree of short tasks
 * spread over 16 to 48 CPUs, per-CPU groups, the rings fed in every order
 * the recorder can produce, built whole and in parts. Every task's page
 * faults, CPU time and leader count must be its truth exactly, and what
 * the session leaves unattributed exactly what ran outside the tree (other
 * processes, the unread part of an idle stretch): nothing lost. Without
 * a tree filter, the other processes' counts are checked as well.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#include "cases.h"
#include "cpusim.h"

#define RUNS 40

static const char *const order_name[CS_ORDERS] = {"by time", "polls",
						  "polls reversed", "random"};

static void check(const struct cs_sim *sim, const struct evprof_session *s,
		  const struct evprof_profile *p, bool tree, bool whole,
		  const char *how)
{
	assert_int_equal(cs_check(sim, s, p, tree, whole, how, stderr), 0);
}

/* What the runs went through: the test's cases, not left to chance. */
struct seen {
	uint64_t dead_pid, rejected, tasks, cpus;
};

static void note_run(const struct cs_sim *sim, const struct evprof_session *s,
		     struct seen *seen)
{
	struct evprof_session_stats st = {.sz = sizeof(st)};

	evprof_session__stats(s, &st);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.unknown_ids, 0);
	seen->rejected += st.reads_rejected;
	seen->tasks += sim->nr_tasks;
	seen->cpus += sim->nr_cpus;
	for (uint32_t i = 0; i < sim->nr_tasks; i++)
		seen->dead_pid += sim->task[i].dead && sim->task[i].leader;
}

static void make(struct cs_sim *sim, int run)
{
	uint8_t seed[4] = {(uint8_t)run, (uint8_t)(run >> 8), 0x5a, 0xc3};

	assert_int_equal(cs_make(sim, seed, sizeof(seed)), 0);
}

static void test_cpus_whole(void **state)
{
	struct cs_sim *sim = malloc(sizeof(*sim));
	struct seen seen = {0};
	char how[64];

	(void)state;
	assert_non_null(sim);
	for (int run = 0; run < RUNS; run++) {
		for (int o = 0; o < CS_ORDERS; o++) {
			struct evprof_session *s;
			struct evprof_profile *p = evprof_profile__new(NULL);
			/* Some without a tree filter (-a): all attributed. */
			bool tree = run % 4 != 3;

			make(sim, run);
			s = cs_session(sim, tree);
			assert_non_null(s);
			assert_non_null(p);
			assert_int_equal(cs_feed(sim, s, o, NULL, NULL), 0);
			assert_int_equal(evprof_session__build(s, p, NULL), 0);
			snprintf(how, sizeof(how), "run %d, %s", run,
				 order_name[o]);
			check(sim, s, p, tree, true, how);
			note_run(sim, s, &seen);
			evprof_profile__free(p);
			evprof_session__free(s);
			cs_free(sim);
		}
	}
	print_message("%llu tasks on %llu CPUs, %llu processes exited, %llu "
		      "reads rejected\n",
		      (unsigned long long)seen.tasks,
		      (unsigned long long)seen.cpus,
		      (unsigned long long)seen.dead_pid,
		      (unsigned long long)seen.rejected);
	/* The nested outputs and reaped processes happened. */
	assert_true(seen.dead_pid > RUNS);
	assert_true(seen.rejected > 0);
	free(sim);
}

struct parts {
	struct evprof_session *s;
	struct evprof_profile *p;
};

static int build_part(uint64_t until, void *ctx)
{
	struct parts *pt = ctx;

	return evprof_session__build_until(pt->s, pt->p, NULL, until);
}

/* The same built in parts while feeding (as every recording is). */
static void test_cpus_parts(void **state)
{
	struct cs_sim *sim = malloc(sizeof(*sim));
	char how[64];

	(void)state;
	assert_non_null(sim);
	for (int run = 0; run < RUNS; run++) {
		for (int o = 0; o < CS_ORDERS; o++) {
			struct parts pt;

			make(sim, run);
			pt.s = cs_session(sim, true);
			pt.p = evprof_profile__new(NULL);
			assert_non_null(pt.s);
			assert_non_null(pt.p);
			assert_int_equal(cs_feed(sim, pt.s, o, build_part, &pt),
					 0);
			assert_int_equal(evprof_session__build_until(
					     pt.s, pt.p, NULL, UINT64_MAX),
					 0);
			snprintf(how, sizeof(how), "run %d, %s, in parts", run,
				 order_name[o]);
			check(sim, pt.s, pt.p, true, false, how);
			evprof_profile__free(pt.p);
			evprof_session__free(pt.s);
			cs_free(sim);
		}
	}
	free(sim);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpus_whole),
	    cmocka_unit_test(test_cpus_parts),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
