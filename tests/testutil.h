/* SPDX-License-Identifier: MIT */
/* Helpers the integration tests share (include after <cmocka.h>). */
#ifndef EVPROF_TESTUTIL_H
#define EVPROF_TESTUTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <evprof/event.h>

/*
 * Takes exactly n fresh minor faults (no THP: one fault per 4 KiB). Not
 * instrumented: ASan's shadow checks would fault shadow pages too.
 */
__attribute__((no_sanitize_address)) static inline void touch_pages(size_t n)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p;

	p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	madvise((void *)p, n * psz, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		p[i * psz] = 1;
	munmap((void *)p, n * psz);
}

/* Open fds of this process, to prove a failure path closed its own. */
static inline int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* This kernel's release is maj.min or later (uname). */
static inline bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	assert_int_equal(uname(&u), 0);
	assert_true(sscanf(u.release, "%d.%d", &a, &b) == 2);
	return a > maj || (a == maj && b >= min);
}

/* A counting software event of config. */
static inline void sw_attr(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	/* Unprivileged under perf_event_paranoid 2: user space only (the
	 * faults counted here are all taken in user mode). */
	a->exclude_kernel = !evprof_probe(EVPROF_FEAT_KERNEL_SAMPLES)->yes;
	a->exclude_hv = a->exclude_kernel;
}

#endif /* EVPROF_TESTUTIL_H */
