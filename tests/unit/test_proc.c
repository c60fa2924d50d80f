// SPDX-License-Identifier: MIT
/* /proc readers: maps parser on crafted text, live reads of ourselves. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/proc.h>

#include "cases.h"

#define MAX_MAPS 16

struct saved {
	int n;
	struct evprof_map m[MAX_MAPS];
	char path[MAX_MAPS][6000];
};

static int save_cb(const struct evprof_map *m, void *ctx)
{
	struct saved *s = ctx;

	assert_true(s->n < MAX_MAPS);
	s->m[s->n] = *m;
	assert_true(strlen(m->path) < sizeof(s->path[0]));
	strcpy(s->path[s->n], m->path);
	s->m[s->n].path = s->path[s->n];
	s->n++;
	return 0;
}

static void test_parse_crafted(void **state)
{
	static struct saved s;
	char longname[5001];
	char *text;
	int n;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	text = malloc(8192);
	assert_non_null(text);
	snprintf(text, 8192,
		 "55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234567  "
		 "                 /usr/bin/true\n"
		 "55d0c0a01000-55d0c0a05000 r-xp 00001000 fe:01 1234567  "
		 "                 /usr/bin/true\n"
		 "7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0 \n"
		 "7ffd1c100000-7ffd1c102000 r-xp 00000000 00:00 0      "
		 "                    [vdso]\n"
		 "7f0000000000-7f0000001000 rwxs 0000a000 103:0f 42 /tmp/my "
		 "lib.so (deleted)\n"
		 "\n"
		 "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 "
		 "[vsyscall]\n"
		 "1000-2000 r--p 00000000 00:00 18446744073709551615 %s",
		 longname);
	n = evprof_maps__parse(text, strlen(text), save_cb, &s);
	assert_int_equal(n, 7);
	assert_int_equal(s.n, 7);

	assert_true(s.m[0].start == 0x55d0c0a00000ull);
	assert_true(s.m[0].end == 0x55d0c0a01000ull);
	assert_int_equal(s.m[0].prot, EVPROF_MAP_READ);
	assert_int_equal(s.m[0].dev_major, 0xfe);
	assert_int_equal(s.m[0].dev_minor, 1);
	assert_true(s.m[0].inode == 1234567);
	assert_string_equal(s.m[0].path, "/usr/bin/true");
	assert_int_equal(s.m[0].flags, 0);

	assert_true(s.m[1].pgoff == 0x1000);
	assert_int_equal(s.m[1].prot, EVPROF_MAP_READ | EVPROF_MAP_EXEC);

	assert_string_equal(s.m[2].path, "");
	assert_int_equal(s.m[2].flags, EVPROF_MAP_ANON);
	assert_int_equal(s.m[2].prot, EVPROF_MAP_READ | EVPROF_MAP_WRITE);

	assert_string_equal(s.m[3].path, "[vdso]");
	assert_int_equal(s.m[3].flags, EVPROF_MAP_SPECIAL);

	assert_string_equal(s.m[4].path, "/tmp/my lib.so");
	assert_int_equal(s.m[4].flags, EVPROF_MAP_DELETED);
	assert_int_equal(s.m[4].prot, EVPROF_MAP_READ | EVPROF_MAP_WRITE |
					  EVPROF_MAP_EXEC | EVPROF_MAP_SHARED);
	assert_int_equal(s.m[4].dev_major, 0x103);
	assert_int_equal(s.m[4].dev_minor, 0xf);
	assert_true(s.m[4].pgoff == 0xa000);

	assert_true(s.m[5].start == 0xffffffffff600000ull);
	assert_int_equal(s.m[5].prot, EVPROF_MAP_EXEC);

	/* Last line: no newline, max inode, a 5000-byte path. */
	assert_true(s.m[6].inode == UINT64_MAX);
	assert_string_equal(s.m[6].path, longname);
	free(text);
}

static void expect_malformed(const char *line, int want_before)
{
	static struct saved s;
	char text[512];
	int n;

	memset(&s, 0, sizeof(s));
	snprintf(text, sizeof(text),
		 "1000-2000 r-xp 00000000 08:01 5 /bin/x\n%s\n"
		 "3000-4000 r-xp 00000000 08:01 5 /bin/y\n",
		 line);
	n = evprof_maps__parse(text, strlen(text), save_cb, &s);
	if (n != -EVPROF_ERR_MALFORMED)
		fail_msg("line \"%s\": got %d", line, n);
	assert_int_equal(s.n, want_before);
}

static void test_parse_malformed(void **state)
{
	(void)state;
	expect_malformed("7f00-7f01 r-xp", 1);
	expect_malformed("7f00-7f01 r-xp 0 08:01", 1);
	expect_malformed("7f00-7f01 r-xp 0 08:01 ", 1);
	expect_malformed("7f00-7f01 rzxp 0 08:01 1 /x", 1);
	expect_malformed("7f00-7f01 r-x 0 08:01 1 /x", 1);
	expect_malformed("17f000000000000000-7f01 r-xp 0 08:01 1 /x", 1);
	expect_malformed("2000-1000 r-xp 0 08:01 1 /x", 1);
	expect_malformed("7f00 7f01 r-xp 0 08:01 1 /x", 1);
	expect_malformed("7f00-7f01 r-xp 0 0801 1 /x", 1);
	expect_malformed("7f00-7f01 r-xp 0 08:01 1/x", 1);
	expect_malformed("7f00-7f01 r-xp 0 08:01 99999999999999999999 /x", 1);
	expect_malformed("garbage", 1);
}

static int stop_cb(const struct evprof_map *m, void *ctx)
{
	int *calls = ctx;

	(void)m;
	return ++*calls == 2 ? -ECANCELED : 0;
}

static void test_parse_stop_and_empty(void **state)
{
	const char text[] = "1000-2000 r-xp 0 08:01 5 /a\n"
			    "2000-3000 r-xp 0 08:01 5 /b\n"
			    "3000-4000 r-xp 0 08:01 5 /c\n";
	int calls = 0;

	(void)state;
	assert_int_equal(
	    evprof_maps__parse(text, strlen(text), stop_cb, &calls),
	    -ECANCELED);
	assert_int_equal(calls, 2);
	assert_int_equal(evprof_maps__parse(text, 0, stop_cb, &calls), 0);
	/* Truncated in the middle of the second line's address. */
	assert_int_equal(evprof_maps__parse(text, 30, NULL, NULL),
			 -EVPROF_ERR_MALFORMED);
}

struct find_ctx {
	uint64_t addr;
	int found;
	struct evprof_map m;
	char path[PATH_MAX];
};

static int find_cb(const struct evprof_map *m, void *ctx)
{
	struct find_ctx *f = ctx;

	if (f->addr >= m->start && f->addr < m->end) {
		f->found++;
		f->m = *m;
		snprintf(f->path, sizeof(f->path), "%s", m->path);
	}
	return 0;
}

static void test_live_self_maps(void **state)
{
	struct find_ctx f;
	char exe[PATH_MAX];
	int n;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.addr = (uint64_t)(uintptr_t)&test_live_self_maps;
	n = evprof_maps__read(0, find_cb, &f);
	assert_true(n > 3);
	assert_int_equal(f.found, 1);
	assert_int_equal(f.m.prot, EVPROF_MAP_READ | EVPROF_MAP_EXEC);
	assert_non_null(realpath("/proc/self/exe", exe));
	assert_string_equal(f.path, exe);
	assert_true(f.m.inode != 0);

	/* The same through our pid, and a stack variable in a rw mapping. */
	memset(&f, 0, sizeof(f));
	f.addr = (uint64_t)(uintptr_t)&n;
	assert_true(evprof_maps__read(getpid(), find_cb, &f) > 3);
	assert_int_equal(f.found, 1);
	assert_true(f.m.prot & EVPROF_MAP_WRITE);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int thread_state; /* 1: named and waiting, 2: may exit */
static pid_t thread_tid;

static void *named_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "evp-worker");
	pthread_mutex_lock(&lock);
	thread_tid = gettid();
	thread_state = 1;
	pthread_cond_broadcast(&cond);
	while (thread_state != 2)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void test_live_tids_comm(void **state)
{
	char name[32], small[4];
	pthread_t t;
	int *tids, n, i, seen_main = 0, seen_thread = 0;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, named_thread, NULL), 0);
	pthread_mutex_lock(&lock);
	while (thread_state != 1)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	n = evprof_proc__read_tids(getpid(), &tids);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		seen_main += tids[i] == getpid();
		seen_thread += tids[i] == thread_tid;
	}
	free(tids);
	assert_int_equal(seen_main, 1);
	assert_int_equal(seen_thread, 1);

	assert_int_equal(
	    evprof_proc__read_comm(getpid(), thread_tid, name, sizeof(name)),
	    10);
	assert_string_equal(name, "evp-worker");
	assert_int_equal(
	    evprof_proc__read_comm(0, thread_tid, small, sizeof(small)), 3);
	assert_string_equal(small, "evp");
	assert_int_equal(
	    evprof_proc__read_comm(getpid(), 0, name, sizeof(name)),
	    (int)strlen("unit_test_proc"));
	assert_string_equal(name, "unit_test_proc");

	pthread_mutex_lock(&lock);
	thread_state = 2;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);

	/*
	 * The thread is gone: its comm reads as ESRCH. pthread_join() returns
	 * when the kernel clears the tid, a little before /proc lets go of
	 * the task (seen once in ~160 runs): until then, still its name.
	 */
	for (i = 0; i < 2000; i++) {
		n = evprof_proc__read_comm(getpid(), thread_tid, name,
					   sizeof(name));
		if (n != 10)
			break;
		assert_string_equal(name, "evp-worker");
		usleep(1000);
	}
	assert_int_equal(n, -ESRCH);
}

static void test_vanished_process(void **state)
{
	char name[32];
	int *tids = (int *)&tids;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* Reaped: nothing of it is left in /proc. */
	assert_int_equal(evprof_maps__read(pid, NULL, NULL), -ESRCH);
	assert_int_equal(evprof_proc__read_tids(pid, &tids), -ESRCH);
	assert_null(tids);
	assert_int_equal(evprof_proc__read_comm(pid, 0, name, sizeof(name)),
			 -ESRCH);
	assert_int_equal(evprof_proc__read_comm(pid, pid, name, sizeof(name)),
			 -ESRCH);
}

static void test_zombie_process(void **state)
{
	siginfo_t si;
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* Exited but not reaped: a zombie has no mappings. */
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(evprof_maps__read(pid, NULL, NULL), -ESRCH);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_crafted),
	    cmocka_unit_test(test_parse_malformed),
	    cmocka_unit_test(test_parse_stop_and_empty),
	    cmocka_unit_test(test_live_self_maps),
	    cmocka_unit_test(test_live_tids_comm),
	    cmocka_unit_test(test_vanished_process),
	    cmocka_unit_test(test_zombie_process),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
