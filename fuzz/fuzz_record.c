// SPDX-License-Identifier: MIT
/*
 * Fuzzes evprof_record__parse. The first 8 input bytes choose the event
 * format the record is decoded with, the rest is the record:
 *   [0..3] sample_type (low 26 bits: every known bit and one unknown)
 *   [4]    read_format (low 6 bits: every known bit and one unknown)
 *   [5]    sample_regs_user
 *   [6]    sample_regs_intr (low 6 bits), 0x40 BRANCH_HW_INDEX,
 *          0x80 BRANCH_COUNTERS
 *   [7]    0x01 sample_id_all
 * Every view a successful parse returns must lie inside the record; each
 * byte it exposes is read so ASan sees an overread.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/read.h>
#include <evprof/record.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *rec_start, *rec_end;
static volatile uint8_t sink;

/* Aborts unless [p, p + n) lies in the record; then reads every byte. */
static void touch(const void *p, uint64_t n)
{
	const uint8_t *b = p;

	if (n == 0)
		return;
	if (!b || b < rec_start || b > rec_end || n > (uint64_t)(rec_end - b))
		abort();
	for (uint64_t i = 0; i < n; i++)
		sink ^= b[i];
}

static void touch_string(const char *s)
{
	const uint8_t *nul;

	if (!s || (const uint8_t *)s < rec_start)
		abort();
	nul = memchr(s, '\0', (size_t)(rec_end - (const uint8_t *)s));
	if (!nul)
		abort();
	touch(s, (uint64_t)(nul - (const uint8_t *)s) + 1);
}

static void check_read(const void *p, size_t n, uint64_t read_format)
{
	struct evprof_snapshot snap;
	int ret;

	touch(p, n);
	ret = evprof_snapshot__parse(&snap, p, n, read_format);
	/* The record sized the read part exactly; a parse consumes all. */
	if (ret >= 0 && (size_t)ret != n)
		abort();
}

static void check_sample(const struct evprof_sample *s,
			 const struct evprof_record_fmt *fmt)
{
	if (s->read_size)
		check_read(s->read, s->read_size, fmt->read_format);
	touch(s->callchain, s->callchain_nr * 8);
	touch(s->raw, s->raw_size);
	touch(s->branches, s->branch_nr * 24);
	if (s->branch_counters)
		touch(s->branch_counters, s->branch_nr * 8);
	touch(s->regs_user, (uint64_t)s->regs_user_nr * 8);
	touch(s->regs_intr, (uint64_t)s->regs_intr_nr * 8);
	touch(s->stack_user, s->stack_user_size);
	if (s->stack_user_dyn_size > s->stack_user_size)
		abort();
	touch(s->aux, s->aux_size);
}

static void check_record(const struct evprof_record *rec,
			 const struct evprof_record_fmt *fmt)
{
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		check_sample(&rec->sample, fmt);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		touch_string(rec->mmap.filename);
		if (rec->mmap.build_id_size > 20)
			abort();
		touch(rec->mmap.build_id, rec->mmap.build_id_size);
		break;
	case PERF_RECORD_COMM:
		touch_string(rec->comm.comm);
		break;
	case PERF_RECORD_READ:
		check_read(rec->read.read, rec->read.read_size,
			   fmt->read_format);
		break;
	case PERF_RECORD_KSYMBOL:
		touch_string(rec->ksymbol.name);
		break;
	case PERF_RECORD_CGROUP:
		touch_string(rec->cgroup.path);
		break;
	case PERF_RECORD_NAMESPACES:
		touch(rec->namespaces.link_info, rec->namespaces.nr * 16);
		break;
	case PERF_RECORD_BPF_EVENT:
		touch(rec->bpf_event.tag, 8);
		break;
	case PERF_RECORD_TEXT_POKE:
		touch(rec->text_poke.bytes, (uint64_t)rec->text_poke.old_len +
						rec->text_poke.new_len);
		break;
	case EVPROF_RECORD_CALLCHAIN_DEFERRED:
		touch(rec->deferred.ips, rec->deferred.nr * 8);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evprof_record_fmt fmt = {0};
	struct evprof_record rec;
	uint32_t st;
	uint64_t id;
	uint8_t *buf;
	size_t len;
	int ret;

	if (size < 8)
		return 0;
	memcpy(&st, data, sizeof(st));
	fmt.sample_type = st & ((1U << 26) - 1);
	fmt.read_format = data[4] & 0x3f;
	fmt.sample_regs_user = data[5];
	fmt.sample_regs_intr = data[6] & 0x3f;
	fmt.branch_sample_type = (data[6] & 0x40 ? 1ULL << 17 : 0) |
				 (data[6] & 0x80 ? 1ULL << 19 : 0);
	fmt.sample_id_all = data[7] & 1;

	/* An exact-size heap copy: malloc aligns it, ASan bounds it. */
	len = size - 8;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 8, len);

	ret = evprof_record__parse(&rec, buf, len, &fmt);
	if (ret != 0 && ret != -ENOTSUP && ret != -EVPROF_ERR_TRUNCATED &&
	    ret != -EVPROF_ERR_MALFORMED)
		abort();
	if (ret == 0) {
		rec_start = buf;
		rec_end = buf + rec.size;
		if (rec.size > len)
			abort();
		check_record(&rec, &fmt);
	}
	if (!evprof_record_type_name(rec.type))
		abort();
	if (evprof_record__identifier(buf, len, &id) == 0)
		sink ^= (uint8_t)id;
	free(buf);
	return 0;
}
