// SPDX-License-Identifier: MIT
/*
 * Group reads: the read_format layout shared by read(2), PERF_SAMPLE_READ
 * and PERF_RECORD_READ, decoded into one snapshot type, and scaling of
 * multiplexed counts.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include <evprof/read.h>

#include "base/base.h"

#define READ_FORMAT_KNOWN                                                      \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |     \
	 PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

static size_t times_words(uint64_t read_format)
{
	return !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
	       !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
}

/* u64 words per member: value, then id and lost when requested. */
static size_t entry_words(uint64_t read_format)
{
	return 1 + !!(read_format & PERF_FORMAT_ID) +
	       !!(read_format & PERF_FORMAT_LOST);
}

size_t evprof_read_size(uint64_t read_format, uint32_t nr)
{
	size_t words = times_words(read_format);

	if (read_format & PERF_FORMAT_GROUP)
		words += 1 + (size_t)nr * entry_words(read_format);
	else
		words += entry_words(read_format);
	return words * sizeof(uint64_t);
}

int evprof_scale(uint64_t raw, uint64_t enabled, uint64_t running,
		 uint64_t *out)
{
	unsigned __int128 v;

	if (running == 0) {
		*out = 0;
		return -EVPROF_ERR_NOT_COUNTED;
	}
	if (running >= enabled) {
		*out = raw;
		return 0;
	}
	/* raw * enabled overflows 64 bits for long multiplexed runs. */
	v = (unsigned __int128)raw * enabled / running;
	*out = v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
	return 0;
}

/*
 * Scaling needs both times. RUNNING alone still tells whether the event
 * ran at all; without it a value can only be taken as it is.
 */
static void scale_value(struct evprof_counter_value *v,
			const struct evprof_snapshot *snap)
{
	const uint64_t both =
	    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

	if ((snap->read_format & both) == both) {
		v->counted = evprof_scale(v->raw, snap->time_enabled,
					  snap->time_running, &v->scaled) == 0;
	} else if (snap->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) {
		v->counted = snap->time_running != 0;
		v->scaled = v->counted ? v->raw : 0;
	} else {
		v->counted = true;
		v->scaled = v->raw;
	}
}

int evprof_snapshot__parse(struct evprof_snapshot *snap, const void *buf,
			   size_t len, uint64_t read_format)
{
	const uint8_t *p = buf;
	bool group = read_format & PERF_FORMAT_GROUP;
	uint64_t nr = 1;
	size_t need;

	/*
	 * Not the whole struct: 64 members are 2.5 KB, and this runs once per
	 * sample. Members past nr stay as they were.
	 */
	memset(snap, 0, offsetof(struct evprof_snapshot, values));
	if (read_format & ~(uint64_t)READ_FORMAT_KNOWN)
		return -EVPROF_ERR_MALFORMED;
	if (group) {
		if (len < sizeof(uint64_t))
			return -EVPROF_ERR_TRUNCATED;
		nr = evprof__load_u64(p);
		p += sizeof(uint64_t);
		if (nr == 0)
			return -EVPROF_ERR_MALFORMED;
		if (nr > EVPROF_SNAPSHOT_MAX)
			return -E2BIG;
	}
	need = evprof_read_size(read_format, (uint32_t)nr);
	if (len < need)
		return -EVPROF_ERR_TRUNCATED;

	snap->read_format = read_format;
	snap->nr = (uint32_t)nr;
	memset(snap->values, 0, (size_t)nr * sizeof(snap->values[0]));
	/* Without GROUP the value comes before the times. */
	if (!group) {
		snap->values[0].raw = evprof__load_u64(p);
		p += sizeof(uint64_t);
	}
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) {
		snap->time_enabled = evprof__load_u64(p);
		p += sizeof(uint64_t);
	}
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) {
		snap->time_running = evprof__load_u64(p);
		p += sizeof(uint64_t);
	}
	for (uint32_t i = 0; i < snap->nr; i++) {
		struct evprof_counter_value *v = &snap->values[i];

		if (group) {
			v->raw = evprof__load_u64(p);
			p += sizeof(uint64_t);
		}
		if (read_format & PERF_FORMAT_ID) {
			v->id = evprof__load_u64(p);
			p += sizeof(uint64_t);
		}
		if (read_format & PERF_FORMAT_LOST) {
			v->lost = evprof__load_u64(p);
			p += sizeof(uint64_t);
		}
		scale_value(v, snap);
	}
	return (int)need;
}

const struct evprof_counter_value *
evprof_snapshot__find(const struct evprof_snapshot *snap, uint64_t id)
{
	uint32_t nr = snap->nr;

	/* Without PERF_FORMAT_ID every id reads 0: nothing can match. */
	if (!(snap->read_format & PERF_FORMAT_ID))
		return NULL;
	if (nr > EVPROF_SNAPSHOT_MAX)
		nr = EVPROF_SNAPSHOT_MAX;
	for (uint32_t i = 0; i < nr; i++) {
		if (snap->values[i].id == id)
			return &snap->values[i];
	}
	return NULL;
}

int evprof_snapshot__value(const struct evprof_snapshot *snap, uint64_t id,
			   uint64_t *value)
{
	const struct evprof_counter_value *v = evprof_snapshot__find(snap, id);

	if (!v)
		return -ENOENT;
	if (!v->counted)
		return -EVPROF_ERR_NOT_COUNTED;
	*value = v->scaled;
	return 0;
}
