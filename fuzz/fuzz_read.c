// SPDX-License-Identifier: MIT
/*
 * Fuzzes evprof_snapshot__parse and evprof_scale. Byte 0 is the
 * read_format (low 6 bits: every known bit and one unknown); the rest is
 * read(2) data, parsed from an odd offset so loads must be unaligned-safe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <evprof/read.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_snapshot(const struct evprof_snapshot *snap, int ret)
{
	uint64_t v;

	if ((size_t)ret != evprof_read_size(snap->read_format, snap->nr))
		abort();
	if (snap->nr == 0 || snap->nr > EVPROF_SNAPSHOT_MAX)
		abort();
	for (uint32_t i = 0; i < snap->nr; i++) {
		const struct evprof_counter_value *c = &snap->values[i];
		const struct evprof_counter_value *f =
		    evprof_snapshot__find(snap, c->id);
		int err = evprof_snapshot__value(snap, c->id, &v);

		if (!(snap->read_format & PERF_FORMAT_ID)) {
			if (f || err != -ENOENT)
				abort();
			continue;
		}
		/* Duplicate ids resolve to the first; never to a missing one.
		 */
		if (!f || f->id != c->id || f > c)
			abort();
		if (f->counted ? (err != 0 || v != f->scaled)
			       : err != -EVPROF_ERR_NOT_COUNTED)
			abort();
	}
}

/* scaled * running <= raw * enabled < (scaled + 1) * running, unsaturated. */
static void check_scale(uint64_t raw, uint64_t ena, uint64_t run)
{
	unsigned __int128 lhs, rhs;
	uint64_t out = 1;
	int err = evprof_scale(raw, ena, run, &out);

	if (run == 0) {
		if (err != -EVPROF_ERR_NOT_COUNTED || out != 0)
			abort();
		return;
	}
	if (err)
		abort();
	if (run >= ena) {
		if (out != raw)
			abort();
		return;
	}
	if (out == UINT64_MAX)
		return;
	lhs = (unsigned __int128)out * run;
	rhs = (unsigned __int128)raw * ena;
	if (lhs > rhs || rhs - lhs >= run)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evprof_snapshot snap;
	uint64_t w[3];
	int ret;

	if (size < 1)
		return 0;
	ret = evprof_snapshot__parse(&snap, data + 1, size - 1, data[0] & 0x3f);
	if (ret >= 0) {
		if ((size_t)ret > size - 1)
			abort();
		check_snapshot(&snap, ret);
	} else if (ret != -EVPROF_ERR_TRUNCATED &&
		   ret != -EVPROF_ERR_MALFORMED && ret != -E2BIG) {
		abort();
	}
	if (size >= 1 + sizeof(w)) {
		memcpy(w, data + 1, sizeof(w));
		check_scale(w[0], w[1], w[2]);
	}
	return 0;
}
