// SPDX-License-Identifier: MIT
/*
 * Workloads of known instruction counts for the emulated arm64 PMU
 * (tests/hw/vm.sh). fa and fb are written in assembly, so the compiler
 * cannot change them, and give their callers no frame record, as GCC does
 * for leaf functions on arm64. vm.sh reads each one's length and its
 * loop's from the disassembly: a call fa(n) retires n * loop + (length -
 * loop) instructions.
 *
 * wl_hw loops N: main -> run -> fa(3N), then fb(N).
 * wl_hw threads N: thread "ta" runs fa(2N), thread "tb" fb(N), each from
 *   work(); main waits.
 * wl_hw mux R N S: R rounds of fa(N) then S getppid() system calls.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void fa(uint64_t n);
void fb(uint64_t n);

__asm__(".text\n"
	".globl fa\n"
	".type fa, %function\n"
	"fa:\n"
	"	.cfi_startproc\n"
	"	mov x9, #0\n"
	"1:	add x9, x9, #1\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size fa, .-fa\n"
	".globl fb\n"
	".type fb, %function\n"
	"fb:\n"
	"	.cfi_startproc\n"
	"	mov x9, #0\n"
	"	mov x10, #0\n"
	"1:	add x9, x9, #1\n"
	"	eor x10, x10, x9\n"
	"	add x10, x10, #3\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size fb, .-fb\n");

static __attribute__((noinline)) void run(uint64_t n)
{
	fa(3 * n);
	fb(n);
	__asm__ volatile("" ::: "memory"); /* no tail call: run stays a frame */
}

struct job {
	const char *name;
	void (*fn)(uint64_t);
	uint64_t n;
};

static __attribute__((noinline)) void work(const struct job *j)
{
	j->fn(j->n);
}

static void *thread_main(void *arg)
{
	const struct job *j = arg;

	prctl(PR_SET_NAME, j->name);
	work(j);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000;

	if (argc > 1 && !strcmp(argv[1], "loops")) {
		run(n);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		struct job jobs[2] = {{"ta", fa, 2 * n}, {"tb", fb, n}};
		pthread_t t[2];

		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, thread_main, &jobs[i]))
				return 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (argc > 4 && !strcmp(argv[1], "mux")) {
		long rounds = atol(argv[2]), calls = atol(argv[4]);

		n = strtoull(argv[3], NULL, 0);
		for (long r = 0; r < rounds; r++) {
			fa(n);
			for (long c = 0; c < calls; c++)
				syscall(SYS_getppid);
		}
		return 0;
	}
	fprintf(stderr, "usage: wl_hw loops N | threads N | mux R N S\n");
	return 2;
}
