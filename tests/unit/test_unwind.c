// SPDX-License-Identifier: MIT
/*
 * The DWARF unwinder on this test's own stack: registers from getcontext()
 * and a copy of the stack above them stand for a sample's REGS_USER and
 * STACK_USER; the truth is the return addresses each function reads with
 * __builtin_return_address. x86-64 only (the unwinder's only target).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/proc.h>

#include "cases.h"
#include "symbols/unwind.h"

/*
 * No frame pointers in the captured frames: only their CFI unwinds them,
 * so a result shows the unwinder found and read the file (a frame-pointer
 * walk would skip from capture() to the test function's caller).
 */
#define NOIPA __attribute__((noipa, optimize("omit-frame-pointer")))
#define COPY  8192

struct snap {
	uint64_t regs[17]; /* perf order: AX..IP (0-8), R8..R15 (16-23) */
	uint8_t *stack;
	uint64_t ra[3]; /* return addresses: into level2, level1, the test */
};

static volatile int sink;

/* Not instrumented: the copy reads other frames' redzones on purpose. */
__attribute__((no_sanitize_address)) NOIPA static void
copy_stack(uint8_t *dst, const volatile uint8_t *src)
{
	for (size_t i = 0; i < COPY; i++)
		dst[i] = src[i];
}

NOIPA static void capture(struct snap *sn)
{
	ucontext_t uc;
#if defined(__x86_64__)
	static const int greg[17] = {
	    REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
	    REG_RBP, REG_RSP, REG_RIP, REG_R8,	REG_R9,	 REG_R10,
	    REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
	};

	assert_int_equal(getcontext(&uc), 0);
	for (int i = 0; i < 17; i++)
		sn->regs[i] = (uint64_t)uc.uc_mcontext.gregs[greg[i]];
	copy_stack(sn->stack, (const uint8_t *)(uintptr_t)sn->regs[7]);
#endif
	sn->ra[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

NOIPA static void level2(struct snap *sn)
{
	capture(sn);
	sn->ra[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink++; /* no tail call */
}

NOIPA static void level1(struct snap *sn)
{
	level2(sn);
	sn->ra[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink++;
}

struct maps {
	struct evprof__unwind_map m[256];
	size_t nr;
};

static int add_map(const struct evprof_map *m, void *arg)
{
	struct maps *ms = arg;

	if (!(m->prot & EVPROF_MAP_EXEC) || ms->nr == 256)
		return 0;
	ms->m[ms->nr++] = (struct evprof__unwind_map){strdup(m->path), m->start,
						      m->end, m->pgoff};
	return 0;
}

static void free_maps(struct maps *ms)
{
	for (size_t i = 0; i < ms->nr; i++)
		free((char *)ms->m[i].path);
}

/*
 * A sample of this stack (level1 -> level2 -> capture) as the unwinder's
 * input, with this process's executable mappings in ms.
 */
static void own_sample(struct snap *sn, struct maps *ms,
		       struct evprof__unwind_input *in)
{
	sn->stack = malloc(COPY);
	assert_non_null(sn->stack);
	level1(sn);
	sink++;
	*in = (struct evprof__unwind_input){
	    .pid = (uint32_t)getpid(),
	    .tid = (uint32_t)getpid(),
	    .regs_mask = evprof__unwind_regs_mask(),
	    .regs = sn->regs,
	    .nr_regs = 17,
	    .stack = sn->stack,
	    .stack_len = COPY,
	};
	assert_true(evprof_maps__read(getpid(), add_map, ms) >= 0);
}

/* n frames from own_sample(): the sampled pc, then each return address. */
static void assert_own_frames(const struct snap *sn, const uint64_t *pcs, int n)
{
	assert_true(n >= 4);
	assert_int_equal(pcs[0], sn->regs[8]); /* the sampled pc */
	assert_int_equal(pcs[1], sn->ra[0]);
	assert_int_equal(pcs[2], sn->ra[1]);
	assert_int_equal(pcs[3], sn->ra[2]);
}

static void test_own_stack(void **state)
{
	static struct maps ms;
	struct snap sn;
	struct evprof__unwind_input in;
	uint64_t pcs[EVPROF__UNWIND_MAX_FRAMES];
	struct evprof__unwinder *u;
	struct evprof__unwind_end end;
	int n;

	(void)state;
#if !defined(__x86_64__)
	skip_because("the unwinder is x86-64 only");
#endif
	own_sample(&sn, &ms, &in);
	u = evprof__unwinder_new();
	assert_non_null(u);

	n = evprof__unwind(u, 1, ms.m, ms.nr, &in, pcs, &end);
	assert_own_frames(&sn, pcs, n);

	/* 16 bytes hold no frame: stopped by the copy's end. */
	in.stack_len = 16;
	in.stack_full = true;
	n = evprof__unwind(u, 1, ms.m, ms.nr, &in, pcs, &end);
	assert_true(n >= 1 && n < 4);
	/* It asked for a word past the 16 bytes, not far beyond. */
	assert_true(end.copy_needed > 16 && end.copy_needed <= 4096);
	/* The same bytes when the copy reached the top of the stack. */
	in.stack_full = false;
	n = evprof__unwind(u, 1, ms.m, ms.nr, &in, pcs, &end);
	assert_true(n >= 1 && n < 4);
	assert_int_equal(end.copy_needed, 0);

	/* Without a stack pointer there is nothing to start from. */
	in.regs_mask &= ~(1ULL << 7);
	in.nr_regs = 16;
	assert_int_equal(evprof__unwind(u, 1, ms.m, ms.nr, &in, pcs, &end),
			 -EINVAL);
	evprof__unwinder_free(u);
	free_maps(&ms);
	free(sn.stack);
}

/*
 * A mapped file that is gone from its path (deleted, or in another mount
 * namespace) is still read through /proc/PID/map_files, as the symbolizer
 * reads it: the unwinder opens files through the same module. The truth is
 * the same return addresses; without the pid the file cannot be found and
 * the unwinding stops at the sampled pc.
 */
static void test_gone_file(void **state)
{
	static struct maps ms;
	struct snap sn;
	struct evprof__unwind_input in;
	uint64_t pcs[EVPROF__UNWIND_MAX_FRAMES];
	struct evprof__unwinder *u;
	char self[64], *moved;
	struct evprof__unwind_end end;
	size_t i;
	int n, fd;

	(void)state;
#if !defined(__x86_64__)
	skip_because("the unwinder is x86-64 only");
#endif
	own_sample(&sn, &ms, &in);
	for (i = 0; i < ms.nr; i++)
		if (ms.m[i].start <= sn.ra[2] && sn.ra[2] < ms.m[i].end)
			break;
	assert_true(i < ms.nr); /* the test's own text */
	snprintf(self, sizeof(self), "/proc/self/map_files/%llx-%llx",
		 (unsigned long long)ms.m[i].start,
		 (unsigned long long)ms.m[i].end);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EPERM || errno == EACCES)) {
		free_maps(&ms);
		free(sn.stack);
		skip_because("map_files needs CAP_SYS_ADMIN");
	}
	assert_true(fd >= 0);
	close(fd);
	/* Every mapping of the test's file, renamed to a path not there. */
	moved = strdup(ms.m[i].path);
	assert_non_null(moved);
	for (size_t k = 0; k < ms.nr; k++) {
		char *p;

		if (strcmp(ms.m[k].path, moved))
			continue;
		assert_true(asprintf(&p, "/nonexistent%s", moved) > 0);
		free((char *)ms.m[k].path);
		ms.m[k].path = p;
	}
	u = evprof__unwinder_new();
	assert_non_null(u);

	n = evprof__unwind(u, 1, ms.m, ms.nr, &in, pcs, &end);
	assert_own_frames(&sn, pcs, n);

	in.pid = 0; /* no /proc to look through: no CFI for these frames */
	n = evprof__unwind(u, 2, ms.m, ms.nr, &in, pcs, &end);
	assert_true(n >= 1);
	assert_int_equal(pcs[0], sn.regs[8]);
	assert_true(n == 1 || pcs[1] != sn.ra[0]);

	evprof__unwinder_free(u);
	free_maps(&ms);
	free(moved);
	free(sn.stack);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_own_stack),
	    cmocka_unit_test(test_gone_file),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
