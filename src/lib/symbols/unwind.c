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
#define STACK_MAX  (8u << 20) /* RLIMIT_STACK's usual default */

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
	/* or NULL: each frame's SP (the CFA of the one below) and FP, 0 unknown */
	uint64_t *sps, *fps;
	int nr, max;
	/*
	 * A read above the copy failed: the CFI placed a saved value in the
	 * part of the stack the copy lacks (a complete stack ends at a frame
	 * whose return address is undefined, reading nothing beyond).
	 */
	bool past_end;
	uint64_t past_need; /* bytes from SP the furthest such read needed */
	bool returned;	    /* next_thread gave the thread already */
};

struct evprof__unwinder {
	struct evprof__dso_finder finder;
	struct cached cache[CACHE_SIZE];
	unsigned next; /* round-robin victim */
	struct uw_ctx ctx;
};

#if defined(__x86_64__)

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

#define PR_MASK	     (0x1ffULL | 0xffULL << PR_R8)
#define PR_LEAF_MASK (1ULL << PR_IP | 1ULL << PR_SP | 1ULL << PR_BP)
#define DW_FP	     6
#define DW_SP	     7

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

/*
 * The frame BP stands for: pushed BP, then the return address, so its CFA
 * (its caller's SP) is BP + 16.
 */
static int fp_owner(const uint64_t *sps, const uint64_t *fps, int n,
		    uint64_t bp)
{
	(void)fps;
	for (int k = 0; k + 1 < n; k++)
		if (sps[k + 1] == bp + 16)
			return k;
	return -1;
}

#elif defined(__aarch64__)

/*
 * perf_regs.h (arm64): X0..X28, X29 (the frame pointer), LR, SP, PC; the
 * DWARF numbers of X0..X30 and SP are the same, PC has none.
 */
enum { PR_BP = 29, PR_LR = 30, PR_SP = 31, PR_IP = 32 };

#define PR_MASK ((1ULL << 33) - 1)
#define PR_LEAF_MASK                                                           \
	(1ULL << PR_IP | 1ULL << PR_SP | 1ULL << PR_BP | 1ULL << PR_LR)
#define DW_FP 29
#define DW_SP 31

static const int dwarf_to_perf[32] = {
    0,	1,  2,	3,  4,	5,  6,	7,  8,	9,  10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};

/*
 * The frame X29 stands for: its frame record {X29, LR} may lie anywhere in
 * it, so not its CFA but its registers tell it. The frames below it leave
 * X29 alone (a leaf without a record returns through LR); its caller gets
 * the X29 the record saved.
 */
static int fp_owner(const uint64_t *sps, const uint64_t *fps, int n,
		    uint64_t bp)
{
	(void)sps;
	for (int k = 0; k + 1 < n && fps[k] == bp; k++)
		if (fps[k + 1] != bp)
			return k;
	return -1;
}

#else

#define PR_MASK	     0
#define PR_LEAF_MASK 0
#define PR_BP	     0
#define PR_SP	     0
#define PR_IP	     0
#define DW_FP	     0
#define DW_SP	     0

static const int dwarf_to_perf[1] = {0};

static int fp_owner(const uint64_t *sps, const uint64_t *fps, int n,
		    uint64_t bp)
{
	(void)sps, (void)fps, (void)n, (void)bp;
	return -1;
}

#endif

/* A frame record (saved frame pointer and return address) is 16 bytes. */
#define FP_RECORD 16

uint64_t evprof__unwind_regs_mask(void)
{
	return PR_MASK;
}

uint64_t evprof__unwind_leaf_regs_mask(void)
{
	return PR_LEAF_MASK;
}

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

bool evprof__unwind_sp(const struct evprof__unwind_input *in, uint64_t *sp)
{
	return evprof__unwind_regs_mask() && perf_reg(in, PR_SP, sp);
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
	/* Past a default 8 MiB stack: a garbage address, not a frame. */
	if (addr >= c->sp && addr - c->sp < STACK_MAX) {
		c->past_end = true;
		if (addr - c->sp + sizeof(*result) > c->past_need)
			c->past_need = addr - c->sp + sizeof(*result);
	}
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

	Dwarf_Word sp = 0, fp = 0;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (c->sps) {
		/* unknown: 0, which matches no frame pointer */
		if (dwfl_frame_reg(state, DW_SP, &sp))
			sp = 0;
		if (dwfl_frame_reg(state, DW_FP, &fp))
			fp = 0;
		c->sps[c->nr] = sp;
		c->fps[c->nr] = fp;
	}
	c->pcs[c->nr++] = pc;
	return c->nr < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Unwinds at most max frames, with each one's SP and FP into sps and fps
 * unless they are NULL.
 */
static int unwind(struct evprof__unwinder *u, uint64_t maps_key,
		  const struct evprof__unwind_map *maps, size_t nr_maps,
		  const struct evprof__unwind_input *in, uint64_t *pcs,
		  uint64_t *sps, uint64_t *fps, int max)
{
	struct uw_ctx *c = &u->ctx;
	struct cached *d;
	uint64_t ip;

	if (!evprof__unwind_regs_mask())
		return -ENOTSUP;
	*c = (struct uw_ctx){
	    .in = in, .pcs = pcs, .sps = sps, .fps = fps, .max = max};
	if (!perf_reg(in, PR_SP, &c->sp) || !perf_reg(in, PR_IP, &ip))
		return -EINVAL;
	d = dwfl_for(u, maps_key, maps, nr_maps, in->pid);
	if (!d)
		return -ENOMEM;
	if (d->attached)
		dwfl_getthread_frames(d->dwfl, in->tid ? (pid_t)in->tid : 1,
				      frame_cb, c);
	if (!c->nr) { /* no module there, or nothing attached: the pc alone */
		if (sps) {
			sps[c->nr] = c->sp;
			fps[c->nr] = 0;
		}
		pcs[c->nr++] = ip;
	}
	return c->nr;
}

int evprof__unwind(struct evprof__unwinder *u, uint64_t maps_key,
		   const struct evprof__unwind_map *maps, size_t nr_maps,
		   const struct evprof__unwind_input *in, uint64_t *pcs,
		   struct evprof__unwind_end *end)
{
	int n = unwind(u, maps_key, maps, nr_maps, in, pcs, NULL, NULL,
		       EVPROF__UNWIND_MAX_FRAMES);

	*end = (struct evprof__unwind_end){.depth =
					       n >= EVPROF__UNWIND_MAX_FRAMES};
	if (n > 0 && !end->depth && u->ctx.past_end && in->stack_full)
		end->copy_needed = u->ctx.past_need;
	return n;
}

int evprof__unwind_fp_owner(struct evprof__unwinder *u, uint64_t maps_key,
			    const struct evprof__unwind_map *maps,
			    size_t nr_maps,
			    const struct evprof__unwind_input *in,
			    uint64_t *pcs, int *owner)
{
	uint64_t sps[EVPROF__UNWIND_LEAF_FRAMES + 1];
	uint64_t fps[EVPROF__UNWIND_LEAF_FRAMES + 1], bp;
	int n;

	*owner = -1;
	if (!perf_reg(in, PR_BP, &bp) || !bp)
		return 0;
	n = unwind(u, maps_key, maps, nr_maps, in, pcs, sps, fps,
		   EVPROF__UNWIND_LEAF_FRAMES + 1);
	if (n > 0)
		*owner = fp_owner(sps, fps, n, bp);
	return n;
}

uint64_t evprof__unwind_leaf_key(const struct evprof__unwind_input *in)
{
	uint64_t ip, sp, bp, h;

	if (!PR_LEAF_MASK || !perf_reg(in, PR_IP, &ip) ||
	    !perf_reg(in, PR_SP, &sp) || !perf_reg(in, PR_BP, &bp) || bp < sp)
		return 0;
	h = evprof__hash_words(0xcbf29ce484222325ULL, &ip, 1);
#if defined(__aarch64__)
	{
		uint64_t lr; /* a leaf without a record returns through it */

		if (!perf_reg(in, PR_LR, &lr))
			return 0;
		h = evprof__hash_words(h, &lr, 1);
	}
#endif
	bp -= sp;
	h = evprof__hash_words(h, &bp, 1);
	bp += FP_RECORD;
	return evprof__hash_mem(h, in->stack,
				bp < in->stack_len ? bp : in->stack_len);
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
