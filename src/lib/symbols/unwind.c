// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding with libdwfl. One Dwfl per set of maps (a process's maps
 * at some time), with the mapped files reported at their load bias and a
 * thread whose registers come from the sample and whose memory is the
 * sample's stack copy. libdwfl reads the CFI from the files (and their
 * debug files: .debug_frame) and, where a function has none, falls back to
 * the frame pointer (x86-64 backend). Files are found and opened by dso,
 * as for the symbolizer: [vdso] too, /proc/PID/root and map_files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>

#include "dso.h"
#include "unwind.h"

#define CACHE_SIZE 8 /* Dwfl handles kept: open files per set of maps */

struct cached {
	Dwfl *dwfl;
	uint64_t key;
	bool attached; /* dwfl_attach_state succeeded */
};

/* The sample being unwound, seen by the callbacks through dwfl_arg. */
struct uw_ctx {
	const struct evprof__unwind_input *in;
	uint64_t sp;
	uint64_t *pcs;
	uint64_t *sps; /* or NULL: each frame's SP, the CFA of the one below */
	int nr, max;
	/*
	 * A read above the copy failed: the CFI placed a saved value in the
	 * part of the stack the copy lacks (a complete stack ends at a frame
	 * whose return address is undefined, reading nothing beyond).
	 */
	bool past_end;
	bool returned; /* next_thread gave the thread already */
};

struct evprof__unwinder {
	struct evprof__dso_finder finder;
	struct cached cache[CACHE_SIZE];
	unsigned next; /* round-robin victim */
	struct uw_ctx ctx;
};

/* perf_regs.h (x86): AX BX CX DX SI DI BP SP IP ... R8 = 16 .. R15 = 23. */
enum {
	PR_AX,
	PR_BX,
	PR_CX,
	PR_DX,
	PR_SI,
	PR_DI,
	PR_BP,
	PR_SP,
	PR_IP,
	PR_R8 = 16
};

#if defined(__x86_64__)

#define PR_MASK	     (0x1ffULL | 0xffULL << PR_R8)
#define PR_LEAF_MASK (1ULL << PR_IP | 1ULL << PR_SP | 1ULL << PR_BP)
#define DW_SP	     7
/* A frame-pointer frame: saved BP at BP, return address above. */
#define FP_CFA_OFFSET 16

/*
 * DWARF register numbers of x86-64 (psABI): rax rdx rcx rbx rsi rdi rbp
 * rsp r8..r15, then 16 the return address (rip). Index: DWARF number,
 * value: perf register.
 */
static const int dwarf_to_perf[17] = {
    PR_AX,     PR_DX,	  PR_CX,     PR_BX,	PR_SI,	   PR_DI,
    PR_BP,     PR_SP,	  PR_R8,     PR_R8 + 1, PR_R8 + 2, PR_R8 + 3,
    PR_R8 + 4, PR_R8 + 5, PR_R8 + 6, PR_R8 + 7, PR_IP,
};

uint64_t evprof__unwind_regs_mask(void)
{
	return PR_MASK;
}

uint64_t evprof__unwind_leaf_regs_mask(void)
{
	return PR_LEAF_MASK;
}

#else

#define DW_SP	      0
#define FP_CFA_OFFSET 0

static const int dwarf_to_perf[1] = {0};

uint64_t evprof__unwind_regs_mask(void)
{
	return 0;
}

uint64_t evprof__unwind_leaf_regs_mask(void)
{
	return 0;
}

#endif

/* Value of perf register r in the sample, false when not recorded. */
static bool perf_reg(const struct evprof__unwind_input *in, int r,
		     uint64_t *val)
{
	uint64_t bit = 1ULL << r;
	uint32_t idx;

	if (!(in->regs_mask & bit))
		return false;
	idx = (uint32_t)evprof__popcount64(in->regs_mask & (bit - 1));
	if (idx >= in->nr_regs)
		return false;
	*val = in->regs[idx];
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	struct uw_ctx *c = arg;

	(void)dwfl;
	if (c->returned)
		return 0;
	c->returned = true;
	*thread_arg = c;
	/* libdwfl wants a positive tid; 0 (a made-up one) would end it. */
	return c->in->tid ? (pid_t)c->in->tid : 1;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct uw_ctx *c = arg;
	uint64_t len = c->in->stack_len;

	(void)dwfl;
	if (addr >= c->sp && addr - c->sp <= len &&
	    len - (addr - c->sp) >= sizeof(*result)) {
		memcpy(result, (const char *)c->in->stack + (addr - c->sp),
		       sizeof(*result));
		return true;
	}
	if (addr >= c->sp)
		c->past_end = true;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct uw_ctx *c = thread_arg;
	Dwarf_Word w;

	for (int d = 0; d < (int)ARRAY_SIZE(dwarf_to_perf); d++) {
		uint64_t v;

		if (!perf_reg(c->in, dwarf_to_perf[d], &v))
			continue;
		w = v;
		if (!dwfl_thread_state_registers(thread, d, 1, &w))
			return false;
	}
	if (!perf_reg(c->in, PR_IP, &w))
		return false;
	dwfl_thread_state_register_pc(thread, w);
	return true;
}

static const Dwfl_Thread_Callbacks thread_cbs = {
    .next_thread = next_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/*
 * Reports every file of maps once (same path at the same bias), opened and
 * checked as the symbolizer does (dso.h), so both read the same file.
 */
static void report_maps(Dwfl *dwfl, const struct evprof__unwind_map *maps,
			size_t nr, uint32_t pid)
{
	for (size_t i = 0; i < nr; i++) {
		const struct evprof__unwind_map *m = &maps[i];
		const struct evprof__dso_want want = {
		    .path = m->path,
		    .start = m->start,
		    .end = m->end,
		    .pid = (int)pid,
		};
		struct evprof__dso_file f;
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(maps[k].path, m->path) &&
			       maps[k].start - maps[k].pgoff ==
				   m->start - m->pgoff;
		if (seen || evprof__dso_open(&want, &f))
			continue;
		evprof__dso_report(dwfl, &f, m->path,
				   evprof__dso_bias(&f, m->start, m->pgoff));
	}
}

static struct cached *dwfl_for(struct evprof__unwinder *u, uint64_t key,
			       const struct evprof__unwind_map *maps, size_t nr,
			       uint32_t pid)
{
	struct cached *c;

	for (unsigned i = 0; i < CACHE_SIZE; i++)
		if (u->cache[i].dwfl && u->cache[i].key == key)
			return &u->cache[i];
	c = &u->cache[u->next];
	u->next = (u->next + 1) % CACHE_SIZE;
	if (c->dwfl)
		dwfl_end(c->dwfl);
	*c = (struct cached){.key = key, .dwfl = dwfl_begin(&u->finder.cb)};
	if (!c->dwfl)
		return NULL;
	dwfl_report_begin(c->dwfl);
	report_maps(c->dwfl, maps, nr, pid);
	dwfl_report_end(c->dwfl, NULL, NULL);
	/* The architecture comes from the first module that opens. */
	c->attached = dwfl_attach_state(c->dwfl, NULL, pid ? (pid_t)pid : 1,
					&thread_cbs, &u->ctx);
	return c;
}

/*
 * The CFI of the mapped files themselves is enough to unwind (.eh_frame,
 * or .debug_frame where a file has it): libdw would read a separate debug
 * file whole for it, libc6-dbg's 10 MB of inflated sections in every
 * process unwound, for frames .eh_frame already describes.
 */
static int no_debuginfo(Dwfl_Module *mod, void **ud, const char *modname,
			Dwarf_Addr base, const char *file_name,
			const char *debuglink, GElf_Word crc, char **name)
{
	(void)mod, (void)ud, (void)modname, (void)base, (void)file_name;
	(void)debuglink, (void)crc, (void)name;
	return -1;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct uw_ctx *c = arg;
	Dwarf_Addr pc;
	bool activation;

	Dwarf_Word sp = 0;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (c->sps && dwfl_frame_reg(state, DW_SP, &sp))
		sp = 0; /* unknown: matches no frame pointer */
	if (c->sps)
		c->sps[c->nr] = sp;
	c->pcs[c->nr++] = pc;
	return c->nr < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Unwinds at most max frames, with each one's SP into sps unless NULL. */
static int unwind(struct evprof__unwinder *u, uint64_t maps_key,
		  const struct evprof__unwind_map *maps, size_t nr_maps,
		  const struct evprof__unwind_input *in, uint64_t *pcs,
		  uint64_t *sps, int max)
{
	struct uw_ctx *c = &u->ctx;
	struct cached *d;
	uint64_t ip;

	if (!evprof__unwind_regs_mask())
		return -ENOTSUP;
	*c = (struct uw_ctx){.in = in, .pcs = pcs, .sps = sps, .max = max};
	if (!perf_reg(in, PR_SP, &c->sp) || !perf_reg(in, PR_IP, &ip))
		return -EINVAL;
	d = dwfl_for(u, maps_key, maps, nr_maps, in->pid);
	if (!d)
		return -ENOMEM;
	if (d->attached)
		dwfl_getthread_frames(d->dwfl, in->tid ? (pid_t)in->tid : 1,
				      frame_cb, c);
	if (!c->nr) { /* no module there, or nothing attached: the pc alone */
		if (sps)
			sps[c->nr] = c->sp;
		pcs[c->nr++] = ip;
	}
	return c->nr;
}

int evprof__unwind(struct evprof__unwinder *u, uint64_t maps_key,
		   const struct evprof__unwind_map *maps, size_t nr_maps,
		   const struct evprof__unwind_input *in, uint64_t *pcs,
		   bool *truncated)
{
	int n = unwind(u, maps_key, maps, nr_maps, in, pcs, NULL,
		       EVPROF__UNWIND_MAX_FRAMES);

	*truncated = n > 0 && u->ctx.past_end && in->stack_full &&
		     n < EVPROF__UNWIND_MAX_FRAMES;
	return n;
}

int evprof__unwind_cfas(struct evprof__unwinder *u, uint64_t maps_key,
			const struct evprof__unwind_map *maps, size_t nr_maps,
			const struct evprof__unwind_input *in, uint64_t *pcs,
			uint64_t *cfas, int max)
{
	uint64_t sps[EVPROF__UNWIND_LEAF_FRAMES + 1];
	int n;

	if (max > EVPROF__UNWIND_LEAF_FRAMES)
		max = EVPROF__UNWIND_LEAF_FRAMES;
	n = unwind(u, maps_key, maps, nr_maps, in, pcs, sps, max + 1);
	if (n <= 0)
		return n;
	/* A frame's CFA is its caller's SP: the last one's is unknown. */
	for (int i = 0; i + 1 < n; i++)
		cfas[i] = sps[i + 1];
	return n - 1 > 0 ? n - 1 : 0;
}

uint64_t evprof__unwind_leaf_key(const struct evprof__unwind_input *in)
{
	uint64_t ip, sp, bp, h;

	if (!FP_CFA_OFFSET || !perf_reg(in, PR_IP, &ip) ||
	    !perf_reg(in, PR_SP, &sp) || !perf_reg(in, PR_BP, &bp) || bp < sp)
		return 0;
	h = evprof__hash_words(0xcbf29ce484222325ULL, &ip, 1);
	bp -= sp;
	h = evprof__hash_words(h, &bp, 1);
	bp += FP_CFA_OFFSET;
	return evprof__hash_mem(h, in->stack,
				bp < in->stack_len ? bp : in->stack_len);
}

bool evprof__unwind_fp_cfa(const struct evprof__unwind_input *in, uint64_t *cfa)
{
	uint64_t bp;

	if (!FP_CFA_OFFSET || !perf_reg(in, PR_BP, &bp) || !bp)
		return false;
	*cfa = bp + FP_CFA_OFFSET;
	return true;
}

struct evprof__unwinder *evprof__unwinder_new(void)
{
	struct evprof__unwinder *u;

	if (!evprof__unwind_regs_mask()) {
		errno = ENOTSUP;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u || evprof__dso_finder_init(&u->finder, NULL, NULL)) {
		evprof__unwinder_free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->finder.cb.find_debuginfo = no_debuginfo;
	return u;
}

void evprof__unwinder_free(struct evprof__unwinder *u)
{
	if (!u)
		return;
	for (unsigned i = 0; i < CACHE_SIZE; i++)
		if (u->cache[i].dwfl)
			dwfl_end(u->cache[i].dwfl);
	evprof__dso_finder_fini(&u->finder);
	free(u);
}
