// SPDX-License-Identifier: MIT
/*
 * Fixed work for benchmarks: THREADS threads each run ITER spin
 * iterations split 2:1 between two functions, and touch PAGES fresh pages.
 * Prints its own wall time in seconds on stderr ("work_s=...").
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static long iter = 400000000, pages = 20000;

static __attribute__((noinline)) unsigned long spin(long n)
{
	volatile unsigned long x = 0;

	for (long i = 0; i < n; i++)
		x += (unsigned long)i;
	return x;
}

static __attribute__((noinline)) unsigned long heavy(long n)
{
	return spin(n);
}

static __attribute__((noinline)) unsigned long light(long n)
{
	return spin(n);
}

static void *work(void *arg)
{
	char *p = mmap(NULL, (size_t)pages * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	for (int k = 0; k < 100; k++) {
		heavy(iter / 150);
		light(iter / 300);
		for (long i = k * pages / 100; i < (k + 1) * pages / 100; i++)
			p[i * 4096] = 1;
	}
	munmap(p, (size_t)pages * 4096);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[16];
	struct timespec a, b;

	if (argc > 2)
		iter = atol(argv[2]);
	if (threads < 1 || threads > 16)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "work_s=%.3f\n",
		(double)(b.tv_sec - a.tv_sec) +
		    (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
