// SPDX-License-Identifier: MIT
/*
 * Switch-heavy fixed work: switch_work [THREADS] [PASSES] [RATE]. THREADS
 * threads (4) in a ring pass a one-byte token through pipes PASSES times
 * (200000): every pass blocks one thread and wakes the next, tens of
 * thousands of context switches a second; with RATE, at most RATE passes a
 * second (the main thread sleeps when ahead). Prints "work_s=<wall seconds>",
 * "switches_per_s=<passes per second>" and "sys_s=<its threads' kernel
 * time>" (getrusage: where a profiler's work in the switch path lands) on
 * stderr.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int (*pipes)[2];
static long nthreads = 4, passes = 200000, rate;

static void *pass(void *arg)
{
	long i = (long)arg;
	char c;

	/* Thread i reads from pipe i and writes to pipe i + 1. */
	for (;;) {
		if (read(pipes[i][0], &c, 1) != 1)
			return NULL;
		if (c == 'q') {
			if (write(pipes[(i + 1) % nthreads][1], &c, 1) != 1)
				abort();
			return NULL;
		}
		if (write(pipes[(i + 1) % nthreads][1], &c, 1) != 1)
			abort();
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pthread_t *t;
	struct rusage ru;
	double t0, t1;
	char c;

	if (argc > 1)
		nthreads = atol(argv[1]);
	if (argc > 2)
		passes = atol(argv[2]);
	if (argc > 3)
		rate = atol(argv[3]);
	if (nthreads < 2 || passes < 1)
		return 2;
	pipes = calloc((size_t)nthreads, sizeof(*pipes));
	t = calloc((size_t)nthreads, sizeof(*t));
	if (!pipes || !t)
		return 1;
	for (long i = 0; i < nthreads; i++)
		if (pipe(pipes[i]))
			return 1;
	/* Thread 0's input is the last pipe's output: the main thread
	 * counts the passes that come round to it. */
	for (long i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, pass, (void *)i);
	t0 = now();
	for (long n = 0; n < passes; n += nthreads) {
		if (write(pipes[1 % nthreads][1], "x", 1) != 1 ||
		    read(pipes[0][0], &c, 1) != 1)
			return 1;
		if (rate && n % 1000 < (long)nthreads) {
			double ahead = t0 + (double)n / (double)rate - now();

			if (ahead > 0)
				usleep((useconds_t)(ahead * 1e6));
		}
	}
	t1 = now();
	if (write(pipes[1 % nthreads][1], "q", 1) != 1)
		return 1;
	for (long i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "work_s=%.3f\nswitches_per_s=%.0f\n", t1 - t0,
		(double)passes / (t1 - t0));
	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(stderr, "sys_s=%.3f\n",
			(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return 0;
}
