// SPDX-License-Identifier: MIT
/*
 * Demo workload: the main thread spins in two functions (about 2:1), a
 * thread named "faulter" takes page faults, each for SECONDS of its own CPU
 * time (default 1): as many samples on a busy machine as on an idle one.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double seconds = 1.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) unsigned long spin(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i * i;
	return x;
}

static __attribute__((noinline)) unsigned long heavy(void)
{
	return spin(2000000);
}

static __attribute__((noinline)) unsigned long light(void)
{
	return spin(1000000);
}

static __attribute__((noinline)) void fault_pages(void)
{
	size_t n = 2048;
	char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < n; i++)
		p[i * 4096] = 1;
	munmap(p, n * 4096);
}

static void *faulter(void *arg)
{
	double end = now() + seconds;

	(void)arg;
	pthread_setname_np(pthread_self(), "faulter");
	while (now() < end)
		fault_pages();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	unsigned long sum = 0;
	double end;

	if (argc > 1)
		seconds = atof(argv[1]);
	end = now() + seconds;
	pthread_create(&t, NULL, faulter, NULL);
	while (now() < end)
		sum += heavy() + light();
	pthread_join(t, NULL);
	printf("demo done (%lu)\n", sum & 1);
	return 0;
}
