// SPDX-License-Identifier: MIT
/* Session stacks: chains to profile stacks (see session_stacks.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/session.h>

#include "session.h"
#include "stacks.h"
#include "symbols/symbols.h"

/* x86-64 and arm64 user space ends below the top bit. */
#define USER_ADDR_END (1ull << 63)

#define KEY_KERNEL   UINT64_MAX	      /* frame cache: kernel address */
#define KEY_UNMAPPED (UINT64_MAX - 1) /* frame cache: outside every map */

/* Longest chain we compose: kernel part, a marker, unwound user part. */
#define CHAIN_MAX 1024

struct chain_frame {
	uint64_t addr;
	bool kernel, first;
	/* a frame of no address (evprof_stack_end_frame()) or NULL */
	const char *marker;
};

/* Synthetic frames, at index 1 + enum evprof_stack_end (0: unsampled). */
static const char *const synthetic[EVPROF_STACK_ENDS + 1] = {
    [0] = "[unsampled]",
    [1 + EVPROF_STACK_DEPTH] = "[truncated:depth-limit]",
    [1 + EVPROF_STACK_COPY] = "[truncated:stack-copy]",
    [1 + EVPROF_STACK_NO_CFI] = "[truncated:no-cfi]",
    [1 + EVPROF_STACK_BAD_REGISTER] = "[truncated:bad-register]",
};

const char *evprof_stack_end_frame(int e)
{
	return e >= -1 && e < EVPROF_STACK_ENDS ? synthetic[e + 1] : NULL;
}

bool evprof__stack_ends_note(const struct evprof_session_stats *st, char *buf,
			     size_t len)
{
	static const char *const cause[EVPROF_STACK_ENDS] = {
	    [EVPROF_STACK_FRAME_POINTERS] = "frame pointers",
	    [EVPROF_STACK_DEPTH] = "depth limit",
	    [EVPROF_STACK_COPY] = "stack copy",
	    [EVPROF_STACK_NO_CFI] = "no CFI",
	    [EVPROF_STACK_BAD_REGISTER] = "bad register",
	};
	uint64_t all = 0, cut;
	size_t n;

	for (int i = 0; i < EVPROF_STACK_ENDS; i++)
		all += st->stack_ends[i];
	cut = all - st->stack_ends[EVPROF_STACK_WHOLE];
	if (!cut || !len)
		return false;
	n = (size_t)snprintf(buf, len,
			     "stacks: %" PRIu64 " of %" PRIu64
			     " (%.1f%%) end before their thread's first frame:",
			     cut, all, 100.0 * (double)cut / (double)all);
	for (int i = EVPROF_STACK_WHOLE + 1; i < EVPROF_STACK_ENDS && n < len;
	     i++)
		if (st->stack_ends[i])
			n += (size_t)snprintf(
			    buf + n, len - n, " %s %.1f%%%s", cause[i],
			    100.0 * (double)st->stack_ends[i] / (double)all,
			    i == EVPROF_STACK_COPY ? "" : ",");
	if (n < len && st->stack_ends[EVPROF_STACK_COPY])
		n +=
		    (size_t)snprintf(buf + n, len - n,
				     " (the deepest needed %" PRIu64 " bytes),",
				     st->stack_copy_needed);
	if (n < len && n && buf[n - 1] == ',')
		buf[n - 1] = '\0';
	return true;
}

/* How a chain ends, as chain_frames() reads it. */
struct chain_end {
	bool cut;     /* its user part read garbage */
	bool unwound; /* its user part came from the CFI */
	int end;      /* with unwound: EVPROF__CHAIN_UNWOUND's */
	size_t user;  /* scratch index of the outermost user frame, or -1 */
	uint64_t nr;  /* addresses in the chain, as the kernel kept them */
};

static int push_frame(struct sess_stacks *b, struct evprof_profile_frame *f)
{
	int idx = evprof_profile__frame(b->p, f), err;

	if (idx < 0)
		return idx;
	err = EVPROF_VEC_PUSH(&b->fidx, idx);
	return err ? -ENOMEM : 0;
}

/* Profile frames for one symbolized address: the real function first. */
static int frames_from(struct sess_stacks *b, const struct evprof_sym_result *r,
		       uint64_t addr, bool kernel)
{
	struct evprof_profile_frame f = {.lib = -1, .kernel = kernel};
	char unnamed[256];
	int err;

	if (r->lib_path && *r->lib_path) {
		struct evprof_profile_lib lib = {
		    .path = r->lib_path,
		    .name = r->lib_name,
		    .build_id = r->build_id,
		    .build_id_len = r->build_id_len,
		};

		f.lib = evprof_profile__add_lib(b->p, &lib);
		if (f.lib < 0)
			return f.lib;
	}
	f.address = f.lib >= 0 ? r->rel_addr : addr;
	f.function = r->name;
	if (!r->name && r->lib_path && *r->lib_path) {
		/*
		 * Named as addr2line -e LIB takes it: the linked address when
		 * the image was read, else the file offset.
		 */
		snprintf(unnamed, sizeof(unnamed), "%s+0x%" PRIx64,
			 r->lib_name ? r->lib_name : r->lib_path,
			 r->image_found ? r->elf_addr : r->rel_addr);
		f.function = unnamed;
	}
	if (r->name) {
		f.symbol_address = r->sym_start;
		f.symbol_size = r->sym_size;
	}
	if (!r->nr_frames)
		return push_frame(b, &f);
	for (uint32_t k = r->nr_frames; k-- > 0;) {
		const struct evprof_sym_frame *sf = &r->frames[k];

		f.function = sf->name
				 ? sf->name
				 : (k == r->nr_frames - 1 ? r->name : NULL);
		f.file = sf->file;
		f.line = sf->line;
		f.function_line = sf->decl_line;
		f.inline_depth = (uint16_t)(r->nr_frames - 1 - k);
		err = push_frame(b, &f);
		if (err)
			return err;
	}
	return 0;
}

/* The symbolizer's description of mapping map of pr. */
static struct evprof_sym_mapping
mapping_of(const struct sess_stacks *b, const struct bproc *pr, uint32_t map)
{
	const struct bmap *m = evprof__tasks_map(b->t, map);

	return (struct evprof_sym_mapping){
	    .path = evprof__sstore_strp(b->st, m->path),
	    .start = m->start,
	    .end = m->end,
	    .pgoff = m->pgoff,
	    .build_id = m->build_id_len ? (const uint8_t *)evprof__sstore_strp(
					      b->st, m->build_id)
					: NULL,
	    .build_id_len = m->build_id_len,
	    .inode = m->ino,
	    .pid = (int)pr->pid,
	};
}

static int symbolize(struct sess_stacks *b, const struct bproc *pr,
		     uint32_t map, uint64_t look, bool kernel)
{
	struct evprof_sym_result r = {0};
	int err = -EINVAL;

	if (kernel) {
		if (b->sym)
			err = evprof_symbolizer__kernel(b->sym, look, &r);
	} else if (map != NO_INDEX) {
		struct evprof_sym_mapping sm = mapping_of(b, pr, map);

		if (b->sym)
			err = evprof_symbolizer__user(b->sym, &sm, look, &r);
		if (err == -EINVAL) {
			/* No symbolizer: the mapping names the frame. */
			const char *base = strrchr(sm.path, '/');

			r = (struct evprof_sym_result){
			    .lib_path = sm.path,
			    .lib_name = base ? base + 1 : sm.path,
			    .rel_addr = look - sm.start + sm.pgoff,
			};
			err = 0;
		}
	} else if (b->sym) {
		/* In no file mapping: JIT code, named by perf-PID.map. */
		err = evprof_symbolizer__jit(b->sym, (int)pr->pid, look, &r);
	}
	if (err == -ENOMEM)
		return err;
	if (err)
		r = (struct evprof_sym_result){0};
	return frames_from(b, &r, look, kernel);
}

/* The frame cache's keys index frame_keys, hashed by what is there. */
static size_t frame_hash(long key, void *ctx)
{
	const struct sess_stacks *b = ctx;

	const struct frame_key *k = &b->frame_keys.a[key];
	const uint64_t w[2] = {k->map, k->addr};

	return (size_t)evprof__hash_words(EVPROF_HASH_INIT, w, 2);
}

static bool frame_equal(long x, long y, void *ctx)
{
	const struct sess_stacks *b = ctx;
	const struct frame_key *p = &b->frame_keys.a[x];
	const struct frame_key *q = &b->frame_keys.a[y];

	return p->map == q->map && p->addr == q->addr;
}

/*
 * Looks (map, addr) up; the key is written past the end of frame_keys,
 * where adding it after a miss finds it. Returns false on a miss, and
 * also without memory (*v then -1, which frames_for() reports).
 */
static bool frame_find(struct sess_stacks *b, uint64_t map, uint64_t addr,
		       long *v)
{
	*v = -1;
	if (!b->frames) {
		b->frames = evprof__hashmap_new(frame_hash, frame_equal, b);
		if (!b->frames)
			return false;
	}
	if (EVPROF_VEC_RESERVE(&b->frame_keys, b->frame_keys.n + 1))
		return false;
	*v = 0;
	b->frame_keys.a[b->frame_keys.n] = (struct frame_key){map, addr};
	return evprof__hashmap_find(b->frames, (long)b->frame_keys.n, v);
}

/*
 * Frame index range (in b->fidx) for addr in proc's current maps; looked
 * up once per (mapping, address).
 */
static int frames_for(struct sess_stacks *b, const struct bproc *pr,
		      const struct chain_frame *cf, uint32_t *off,
		      uint32_t *cnt)
{
	uint64_t look = cf->first ? cf->addr : cf->addr - 1;
	uint32_t map = cf->kernel ? NO_INDEX : evprof__tasks_map_at(pr, look);
	uint64_t key = cf->kernel	 ? KEY_KERNEL
		       : map == NO_INDEX ? KEY_UNMAPPED
					 : map;
	size_t start = b->fidx.n;
	long v;
	int err;

	if (cf->marker) {
		struct evprof_profile_frame f = {.lib = -1,
						 .function = cf->marker};

		*off = (uint32_t)start;
		*cnt = 1;
		return push_frame(b, &f);
	}
	if (frame_find(b, key, look, &v)) {
		*off = (uint32_t)((uint64_t)v >> 32);
		*cnt = (uint32_t)v;
		return 0;
	}
	if (v < 0)
		return -ENOMEM;
	err = symbolize(b, pr, map, look, cf->kernel);
	if (err)
		return err;
	if (b->fidx.n > UINT32_MAX)
		return -ENOMEM;
	*off = (uint32_t)start;
	*cnt = (uint32_t)(b->fidx.n - start);
	/* frame_find() left the key past the end of frame_keys. */
	if (evprof__hashmap_add(b->frames, (long)b->frame_keys.n,
				(long)((uint64_t)*off << 32 | *cnt)))
		return -ENOMEM;
	b->frame_keys.n++;
	return 0;
}

/*
 * A user return address that no executable mapping of its process holds
 * (or in the kernel half): what a frame-pointer walk reads once it leaves
 * code built with frame pointers (ASCII, stack slots, -1), never a caller.
 * The sampled instruction itself (first) may be JIT code without a map.
 */
static bool garbage(const struct bproc *pr, uint64_t ip)
{
	if (ip >= USER_ADDR_END)
		return true;
	/* A process whose maps we never learnt: nothing to judge by. */
	return pr->nr_segs && evprof__tasks_map_at(pr, ip - 1) == NO_INDEX;
}

/*
 * Splits a raw callchain into frames, leaf first, markers removed; a user
 * part is cut at its first garbage return address (ce->cut set).
 */
static int chain_frames(struct sess_stacks *b, const struct bproc *pr,
			const uint64_t *ips, uint64_t nr, struct chain_end *ce)
{
	bool kernel = false, first = true, skip = false;

	*ce = (struct chain_end){.user = SIZE_MAX};
	b->scratch.n = 0;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];

		if (ip == EVPROF__CHAIN_UNSAMPLED) {
			if (EVPROF_VEC_PUSH(
				&b->scratch,
				((struct chain_frame){.marker = synthetic[0]})))
				return -ENOMEM;
			continue;
		}
		if (ip <= EVPROF__CHAIN_UNWOUND(0) &&
		    ip > EVPROF__CHAIN_UNWOUND(EVPROF_STACK_ENDS)) {
			ce->unwound = true;
			ce->end = (int)(EVPROF__CHAIN_UNWOUND(0) - ip);
			continue;
		}
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			/* Guest and hypervisor frames are not ours. */
			skip = ip != (uint64_t)PERF_CONTEXT_KERNEL &&
			       ip != (uint64_t)PERF_CONTEXT_USER;
			first = true;
			/* Linux 6.19: the marker is followed by a cookie. */
			if (ip == EVPROF_CONTEXT_USER_DEFERRED)
				i++;
			continue;
		}
		ce->nr++;
		if (skip)
			continue;
		if (!kernel && !first && garbage(pr, ip)) {
			ce->cut = true;
			skip = true; /* the rest of this user part */
			continue;
		}
		if (!kernel)
			ce->user = b->scratch.n;
		if (EVPROF_VEC_PUSH(&b->scratch, ((struct chain_frame){
						     ip, kernel, first, NULL})))
			return -ENOMEM;
		first = false;
	}
	return 0;
}

/*
 * Whether a user frame is its thread's first (1), has a caller by its CFI
 * (0), or has no CFI (-ENOENT); or -ENOMEM.
 */
static int outermost(struct sess_stacks *b, const struct bproc *pr,
		     const struct chain_frame *cf)
{
	uint64_t look = cf->first ? cf->addr : cf->addr - 1;
	uint32_t map = evprof__tasks_map_at(pr, look);
	struct evprof_sym_mapping sm;
	int r;

	if (map == NO_INDEX)
		return -ENOENT;
	sm = mapping_of(b, pr, map);
	r = evprof_symbolizer__user_outermost(b->sym, &sm, look);
	return r == -EINVAL ? -ENOENT : r;
}

/* How a chain read as ce ends (enum evprof_stack_end), or -ENOMEM. */
static int stack_end(struct sess_stacks *b, const struct bproc *pr,
		     const struct chain_end *ce)
{
	int r;

	if (ce->unwound && ce->end != EVPROF_STACK_WHOLE)
		return ce->end;
	/*
	 * Garbage first: a walk through it may also fill the chain; where
	 * the CFI unwound it, a rule gave a return address in no code.
	 */
	if (ce->cut)
		return ce->unwound ? EVPROF_STACK_BAD_REGISTER
				   : EVPROF_STACK_FRAME_POINTERS;
	if (!ce->unwound && ce->nr >= b->max_stack)
		return EVPROF_STACK_DEPTH;
	/*
	 * No user part: a kernel thread, or a task past the release of its
	 * memory (exit): the kernel walks all there is.
	 */
	if (ce->user == SIZE_MAX)
		return EVPROF_STACK_WHOLE;
	/* Without a symbolizer no CFI can be read: nothing to judge by. */
	if (!b->sym)
		return EVPROF_STACK_WHOLE;
	r = outermost(b, pr, &b->scratch.a[ce->user]);
	if (r == -ENOMEM)
		return r;
	if (r == 1)
		return EVPROF_STACK_WHOLE;
	if (!ce->unwound)
		return EVPROF_STACK_FRAME_POINTERS;
	return r == -ENOENT ? EVPROF_STACK_NO_CFI : EVPROF_STACK_BAD_REGISTER;
}

/* The stack cache's value: the stack, whether its chain was cut, its end. */
#define STACK_CUT	(1ull << 32)
#define STACK_END_SHIFT 33

static int stack_for(struct sess_stacks *b, const struct bproc *pr,
		     uint32_t chain, int *stack, bool *was_cut, int *end)
{
	const uint64_t *words = b->st->chains.a;
	long key = (long)((uint64_t)pr->epoch << 32 | chain), v;
	struct chain_end ce;
	int st = -1, err;

	if (!b->stacks) {
		b->stacks = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
		if (!b->stacks)
			return -ENOMEM;
	}
	if (evprof__hashmap_find(b->stacks, key, &v)) {
		*stack = (int)(uint32_t)v;
		*was_cut = ((uint64_t)v & STACK_CUT) != 0;
		*end = (int)((uint64_t)v >> STACK_END_SHIFT);
		return 0;
	}
	err = chain_frames(b, pr, words + chain + 1, words[chain], &ce);
	if (err)
		return err;
	*end = stack_end(b, pr, &ce);
	if (*end < 0)
		return *end;
	/* Its synthetic frame at the root end. */
	if (synthetic[1 + *end] &&
	    EVPROF_VEC_PUSH(&b->scratch, ((struct chain_frame){
					     .marker = synthetic[1 + *end]})))
		return -ENOMEM;
	/* Leaf first in the chain: walk it backwards to go root first. */
	for (size_t i = b->scratch.n; i-- > 0;) {
		const struct chain_frame *cf = &b->scratch.a[i];
		uint32_t off, cnt;

		err = frames_for(b, pr, cf, &off, &cnt);
		if (err)
			return err;
		for (uint32_t k = 0; k < cnt; k++) {
			st =
			    evprof_profile__stack(b->p, st, b->fidx.a[off + k]);
			if (st < 0)
				return st;
		}
	}
	*stack = st;
	*was_cut = ce.cut;
	v = (long)((uint32_t)st | (ce.cut ? STACK_CUT : 0) |
		   (uint64_t)*end << STACK_END_SHIFT);
	return evprof__hashmap_add(b->stacks, key, v) ? -ENOMEM : 0;
}

/* The leaf cache's values: offset in leaf_pcs, count, result. */
#define LEAF_RES       0x3
#define LEAF_CNT_SHIFT 2
#define LEAF_CNT       0x3fff
#define LEAF_OFF_SHIFT 16

/*
 * The key of a mended leaf: the sample's maps, the kernel's user chain and
 * what the unwinding reads (evprof__unwind_leaf_key()); 0: not cached.
 */
static uint64_t leaf_key(struct sess_stacks *sk, uint64_t maps_key,
			 const struct evprof__unwind_input *in,
			 const uint64_t *user, uint64_t nr)
{
	uint64_t h = evprof__unwind_leaf_key(in);

	if (!h || (!sk->leaves && !(sk->leaves = evprof__hashmap_new(
					evprof__hashmap_u64_hash,
					evprof__hashmap_u64_equal, NULL))))
		return 0;
	h = evprof__hash_words(h, &maps_key, 1);
	h = evprof__hash_words(h, user, nr);
	return h ? h : 1;
}

/* Keeps the first cnt frames of a leaf mended as res under key. */
static int remember_leaf(struct sess_stacks *sk, uint64_t key,
			 enum evprof__leaf_result res, const uint64_t *pcs,
			 int cnt)
{
	uint64_t off = sk->leaf_pcs.n;

	if (res != EVPROF__LEAF_GAINED)
		cnt = 0;
	if (cnt < 0 || cnt > LEAF_CNT ||
	    EVPROF_VEC_RESERVE(&sk->leaf_pcs, off + (size_t)cnt + 1))
		return -ENOMEM;
	memcpy(sk->leaf_pcs.a + off, pcs, (size_t)cnt * sizeof(*pcs));
	sk->leaf_pcs.n += (size_t)cnt;
	return evprof__hashmap_add(sk->leaves, (long)key,
				   (long)(off << LEAF_OFF_SHIFT |
					  (uint64_t)cnt << LEAF_CNT_SHIFT |
					  (uint64_t)res))
		   ? -ENOMEM
		   : 0;
}

/*
 * x's chain has its kernel part in chain[1..k], then PERF_CONTEXT_USER and
 * the frame-pointer user part: the leaf's missing callers put in from the
 * stack copy where they can be (leaf.h).
 */
static int leaf_chain(struct sess_stacks *sk, uint64_t maps_key,
		      const struct evprof__unwind_map *maps, size_t nr_maps,
		      const struct evprof__unwind_input *in,
		      const uint64_t *chain, uint64_t k, struct ssample *x)
{
	uint64_t buf[CHAIN_MAX + EVPROF__UNWIND_LEAF_FRAMES];
	uint64_t nr = chain[0] - k - 1, *user = buf + k + 1, key;
	enum evprof__leaf_result res;
	int n;
	long v;

	if (nr > CHAIN_MAX - k - 1)
		nr = CHAIN_MAX - k - 1;
	memcpy(buf, chain + 1, (k + 1) * sizeof(*buf));
	key = leaf_key(sk, maps_key, in, chain + k + 2, nr);
	if (key && evprof__hashmap_find(sk->leaves, (long)key, &v)) {
		res = (enum evprof__leaf_result)(v & LEAF_RES);
		n = (int)(((uint64_t)v >> LEAF_CNT_SHIFT) & LEAF_CNT);
		memcpy(user, sk->leaf_pcs.a + ((uint64_t)v >> LEAF_OFF_SHIFT),
		       (size_t)n * sizeof(*buf));
		memcpy(user + n, chain + k + 3, (nr - 1) * sizeof(*buf));
		n += (int)nr - 1;
	} else {
		n = evprof__leaf_splice(sk->uw, maps_key, maps, nr_maps, in,
					chain + k + 2, nr, user, &res);
		if (n < 0)
			return n;
		if (key && remember_leaf(sk, key, res, user, n - (int)nr + 1))
			return -ENOMEM;
	}
	x->flags |= SS_LEAF | (res == EVPROF__LEAF_LOST	    ? SS_LEAF_LOST
			       : res == EVPROF__LEAF_GAINED ? SS_LEAF_GAINED
							    : 0);
	if (res != EVPROF__LEAF_GAINED)
		return 0;
	return evprof__sstore_chain(sk->st, buf, k + 1 + (uint64_t)n,
				    &x->chain);
}

/*
 * Replaces the user part of x's chain by the one unwound from its stack
 * copy with maps (key: that set of maps); with a user part from the
 * kernel, mends its leaf instead.
 */
static int unwind_chain(struct sess_stacks *sk, uint64_t maps_key,
			const struct evprof__unwind_map *maps, size_t nr_maps,
			struct ssample *x)
{
	const uint64_t *w = evprof__stitch_ustack(sk->k, x);
	const uint64_t *chain = evprof__sstore_chainp(sk->st, x->chain);
	struct evprof__unwind_input in = {
	    .pid = x->pid,
	    .tid = x->tid,
	    .regs_mask = sk->regs_mask,
	    .regs = w + 3,
	    .nr_regs = (uint32_t)w[2],
	    .stack = w + 3 + w[2],
	    .stack_len = w[0],
	    .stack_full = w[0] == w[1],
	};
	uint64_t buf[CHAIN_MAX], pcs[EVPROF__UNWIND_MAX_FRAMES];
	uint64_t k = 0, room = CHAIN_MAX - EVPROF__UNWIND_MAX_FRAMES - 2;
	struct evprof__unwind_end end;
	int n;

	x->flags |= SS_UNWOUND;
	/* The kernel part: everything before the user context, if any. */
	while (k < chain[0] && k < room &&
	       chain[1 + k] != (uint64_t)PERF_CONTEXT_USER)
		k++;
	/*
	 * Copies with only the registers leaf recovery asks for come with a
	 * frame-pointer user part: its leaf to mend, nothing to replace.
	 */
	if (!(sk->regs_mask & ~evprof__unwind_leaf_regs_mask()) &&
	    k + 1 < chain[0] && k < room)
		return leaf_chain(sk, maps_key, maps, nr_maps, &in, chain, k,
				  x);
	n = evprof__unwind(sk->uw, maps_key, maps, nr_maps, &in, pcs, &end);
	if (n == -ENOMEM)
		return n;
	if (n <= 0)
		return 0; /* no registers to start from: keep the chain */
	memcpy(buf, chain + 1, k * sizeof(*buf));
	buf[k++] = PERF_CONTEXT_USER;
	memcpy(buf + k, pcs, (size_t)n * sizeof(*buf));
	k += (uint64_t)n;
	if (end.copy_needed) {
		uint64_t top = evprof__stitch_top(sk->k, x->tid), sp;

		/* The whole stack, when its caller told where it ends. */
		if (top && evprof__unwind_sp(&in, &sp) && top > sp &&
		    top - sp >= end.copy_needed)
			end.copy_needed = top - sp;
		buf[k++] = EVPROF__CHAIN_UNWOUND(EVPROF_STACK_COPY);
		sk->truncated++;
		if (end.copy_needed > sk->copy_needed)
			sk->copy_needed = end.copy_needed;
	} else {
		buf[k++] = EVPROF__CHAIN_UNWOUND(
		    end.depth ? EVPROF_STACK_DEPTH : EVPROF_STACK_WHOLE);
	}
	sk->unwound++;
	return evprof__sstore_chain(sk->st, buf, k, &x->chain);
}

/* Unwinds x's stack copy with the maps pr has now. */
static int unwind_sample(struct sess_stacks *b, const struct bproc *pr,
			 struct ssample *x)
{
	struct evprof__unwind_map *um;

	if (!b->uw) {
		b->uw = evprof__unwinder_new();
		if (!b->uw)
			return errno == ENOMEM ? -ENOMEM : 0;
	}
	b->umaps.n = 0;
	if (EVPROF_VEC_RESERVE(&b->umaps, pr->nr_segs))
		return -ENOMEM;
	um = b->umaps.a;
	for (size_t i = 0; i < pr->nr_segs; i++) {
		const struct bmap *m = evprof__tasks_map(b->t, pr->segs[i].map);

		if (i && pr->segs[i].map == pr->segs[i - 1].map)
			continue;
		um[b->umaps.n++] = (struct evprof__unwind_map){
		    evprof__sstore_strp(b->st, m->path), m->start, m->end,
		    m->pgoff};
	}
	return unwind_chain(b, pr->epoch, um, b->umaps.n, x);
}

int evprof__stacks_sample(struct sess_stacks *sk, const struct bproc *pr,
			  struct ssample *x, int *stack)
{
	bool cut = false;
	int err, end = EVPROF_STACK_WHOLE;

	if (x->ustack && !(x->flags & SS_UNWOUND)) {
		err = unwind_sample(sk, pr, x);
		if (err)
			return err;
	}
	err = stack_for(sk, pr, x->chain, stack, &cut, &end);
	x->flags = (x->flags & ~(uint32_t)(SS_CUT | SS_END_MASK)) |
		   (cut ? SS_CUT : 0) | (uint32_t)end << SS_END_SHIFT;
	return err;
}

void evprof__stacks_maps_moved(struct sess_stacks *sk, const uint32_t *map_to)
{
	EVPROF_VEC(struct frame_key) keys = {0};
	EVPROF_VEC(int) fidx = {0};
	struct evprof_hashmap_entry *cur;
	struct evprof_hashmap *frames;
	size_t bkt, n = sk->frames ? evprof__hashmap_size(sk->frames) : 0;
	long *vals = malloc((n ? n : 1) * sizeof(*vals));

	frames = evprof__hashmap_new(frame_hash, frame_equal, sk);
	if (!vals || !frames || EVPROF_VEC_RESERVE(&keys, n ? n : 1) ||
	    EVPROF_VEC_RESERVE(&fidx, sk->fidx.n ? sk->fidx.n : 1))
		goto fail;
	for (bkt = 0; n && bkt < sk->frames->cap; bkt++) {
		for (cur = sk->frames->buckets[bkt]; cur; cur = cur->next) {
			struct frame_key k = sk->frame_keys.a[cur->key];
			uint32_t off = (uint32_t)((uint64_t)cur->value >> 32);
			uint32_t cnt = (uint32_t)cur->value;

			if (k.map != KEY_KERNEL && k.map != KEY_UNMAPPED) {
				if (map_to[k.map] == NO_INDEX)
					continue;
				k.map = map_to[k.map];
			}
			vals[keys.n] = (long)((uint64_t)fidx.n << 32 | cnt);
			keys.a[keys.n++] = k;
			memcpy(fidx.a + fidx.n, sk->fidx.a + off,
			       cnt * sizeof(int));
			fidx.n += cnt;
		}
	}
	/* The new map hashes the keys where they lie: swapped in first. */
	EVPROF_VEC_FREE(&sk->frame_keys);
	EVPROF_VEC_FREE(&sk->fidx);
	evprof__hashmap_free(sk->frames);
	sk->frames = NULL;
	sk->frame_keys.a = keys.a;
	sk->frame_keys.n = keys.n;
	sk->frame_keys.cap = keys.cap;
	sk->fidx.a = fidx.a;
	sk->fidx.n = fidx.n;
	sk->fidx.cap = fidx.cap;
	keys.a = NULL;
	fidx.a = NULL;
	for (size_t i = 0; i < sk->frame_keys.n; i++)
		if (evprof__hashmap_add(frames, (long)i, vals[i]))
			goto fail;
	sk->frames = frames;
	free(vals);
	return;
fail:
	/* An empty cache is right too: frames are looked up again. */
	evprof__hashmap_free(frames);
	free(vals);
	free(keys.a);
	free(fidx.a);
	evprof__hashmap_free(sk->frames);
	sk->frames = NULL;
	sk->frame_keys.n = 0;
	sk->fidx.n = 0;
}

void evprof__stacks_free(struct sess_stacks *sk)
{
	EVPROF_VEC_FREE(&sk->fidx);
	EVPROF_VEC_FREE(&sk->scratch);
	EVPROF_VEC_FREE(&sk->umaps);
	evprof__hashmap_free(sk->leaves);
	EVPROF_VEC_FREE(&sk->leaf_pcs);
	evprof__unwinder_free(sk->uw);
	evprof__hashmap_free(sk->frames);
	EVPROF_VEC_FREE(&sk->frame_keys);
	evprof__hashmap_free(sk->stacks);
}

uint64_t evprof_session__unwind_regs(void)
{
	return evprof__unwind_regs_mask();
}
