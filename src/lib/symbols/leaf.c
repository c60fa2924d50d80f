// SPDX-License-Identifier: MIT
/*
 * Leaf recovery for frame-pointer stacks (leaf.h). The kernel's user chain
 * is the sampled ip, then the return address of each frame record from the
 * one the frame pointer points at. Frame k of the CFI unwinding is the
 * function that owns that record (evprof__unwind_fp_owner()): the chain's
 * second entry is its return address, so the CFI frames 0..k followed by
 * the chain from its second entry on make the whole stack. k = 0 is a leaf
 * with its own frame: nothing gained.
 */
#include <errno.h>
#include <string.h>

#include "leaf.h"

int evprof__leaf_splice(struct evprof__unwinder *u, uint64_t maps_key,
			const struct evprof__unwind_map *maps, size_t nr_maps,
			const struct evprof__unwind_input *in,
			const uint64_t *user, size_t nr, uint64_t *out,
			enum evprof__leaf_result *res)
{
	uint64_t pcs[EVPROF__UNWIND_LEAF_FRAMES + 1];
	int n = 0, k = -1;

	*res = EVPROF__LEAF_LOST;
	if (nr)
		n = evprof__unwind_fp_owner(u, maps_key, maps, nr_maps, in, pcs,
					    &k);
	if (n == -ENOMEM)
		return n;
	/*
	 * The CFI's leaf must be the kernel's, and the return address it
	 * finds for frame k the one the kernel read from the record.
	 */
	if (k < 0 || k + 1 >= n || pcs[0] != user[0] ||
	    (nr > 1 && pcs[k + 1] != user[1])) {
		memcpy(out, user, nr * sizeof(*out));
		return (int)nr;
	}
	*res = k ? EVPROF__LEAF_GAINED : EVPROF__LEAF_COMPLETE;
	memcpy(out, pcs, (size_t)(k + 1) * sizeof(*out));
	memcpy(out + k + 1, user + 1, (nr - 1) * sizeof(*out));
	return (int)(k + nr);
}
