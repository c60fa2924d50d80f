// SPDX-License-Identifier: MIT
/*
 * Record decoding: one perf record's bytes into a typed view. Every field
 * is taken through a cursor bounded by min(header.size, len), so nothing is
 * read past the record whatever its counts say.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <evprof/record.h>

#include "base/base.h"

/* PERF_SAMPLE_BRANCH_COUNTERS (Linux 6.8) is newer than our 6.1 header. */
#define BRANCH_COUNTERS (1ULL << 19)
/* The layouts this decoder knows: a newer bit means an unknown layout. */
#define SAMPLE_TYPE_KNOWN ((1ULL << 25) - 1) /* to WEIGHT_STRUCT, 5.12 */
#define READ_FORMAT_KNOWN ((1ULL << 5) - 1)  /* to LOST, 6.0 */
#define BUILD_ID_MAX	  20

/* Fields that sample_id_all appends to non-sample records, in order. */
#define SAMPLE_ID_BITS                                                         \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |                 \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct cursor {
	const uint8_t *p;
	const uint8_t *end;
};

static size_t cur_left(const struct cursor *c)
{
	return (size_t)(c->end - c->p);
}

/* Takes n bytes; the count is compared, never added to a pointer first. */
static int cur_take(struct cursor *c, uint64_t n, const uint8_t **out)
{
	if (n > cur_left(c))
		return -EVPROF_ERR_TRUNCATED;
	*out = c->p;
	c->p += n;
	return 0;
}

static int cur_u64(struct cursor *c, uint64_t *v)
{
	const uint8_t *p;
	int err = cur_take(c, sizeof(*v), &p);

	if (!err)
		*v = evprof__load_u64(p);
	return err;
}

/* A u32 pair such as {pid, tid} or {cpu, res}. */
static int cur_u32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	const uint8_t *p;
	int err = cur_take(c, 2 * sizeof(uint32_t), &p);

	if (err)
		return err;
	*a = evprof__load_u32(p);
	if (b)
		*b = evprof__load_u32(p + sizeof(uint32_t));
	return 0;
}

/* nr elements of elem bytes; nr * elem must not wrap, so divide instead. */
static int cur_array(struct cursor *c, uint64_t nr, size_t elem,
		     const void **out)
{
	const uint8_t *p;
	int err;

	if (nr > cur_left(c) / elem)
		return -EVPROF_ERR_TRUNCATED;
	err = cur_take(c, nr * elem, &p);
	if (!err)
		*out = p;
	return err;
}

static int cur_u64s(struct cursor *c, uint64_t nr, const uint64_t **out)
{
	const void *p;
	int err = cur_array(c, nr, sizeof(uint64_t), &p);

	if (!err)
		*out = p;
	return err;
}

/* A NUL-terminated string that fills the rest of the body (plus padding). */
static int cur_string(struct cursor *c, const char **out)
{
	size_t left = cur_left(c);

	if (left == 0)
		return -EVPROF_ERR_TRUNCATED;
	if (!memchr(c->p, '\0', left))
		return -EVPROF_ERR_MALFORMED;
	*out = (const char *)c->p;
	c->p = c->end;
	return 0;
}

void evprof_record_fmt__from_attr(struct evprof_record_fmt *fmt,
				  const struct perf_event_attr *attr)
{
	memset(fmt, 0, sizeof(*fmt));
	fmt->sample_type = attr->sample_type;
	fmt->read_format = attr->read_format;
	fmt->sample_regs_user = attr->sample_regs_user;
	fmt->sample_regs_intr = attr->sample_regs_intr;
	fmt->branch_sample_type = attr->branch_sample_type;
	fmt->sample_id_all = attr->sample_id_all;
}

/*
 * The read_format part of a sample or READ record. Its size follows from
 * read_format and, with PERF_FORMAT_GROUP, from the nr at its start.
 */
static int cur_read_values(struct cursor *c, uint64_t read_format,
			   const void **out, size_t *size)
{
	uint64_t words, entry, nr = 1;
	const void *p;
	int err;

	if (read_format & ~READ_FORMAT_KNOWN)
		return -EVPROF_ERR_MALFORMED;
	words = !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		!!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	entry = 1 + !!(read_format & PERF_FORMAT_ID) +
		!!(read_format & PERF_FORMAT_LOST);
	if (read_format & PERF_FORMAT_GROUP) {
		if (cur_left(c) < sizeof(uint64_t))
			return -EVPROF_ERR_TRUNCATED;
		nr = evprof__load_u64(c->p);
		words++;
	}
	/* Bound nr before multiplying: words + nr * entry must not wrap. */
	if (nr > cur_left(c) / sizeof(uint64_t) / entry)
		return -EVPROF_ERR_TRUNCATED;
	words += nr * entry;
	err = cur_array(c, words, sizeof(uint64_t), &p);
	if (err)
		return err;
	*out = p;
	*size = words * sizeof(uint64_t);
	return 0;
}

/* {abi; regs[popcount(mask)]}: abi 0 (no user context) means no regs. */
static int cur_regs(struct cursor *c, uint64_t mask, uint64_t *abi,
		    uint32_t *nr, const uint64_t **regs)
{
	int err = cur_u64(c, abi);

	if (err || *abi == 0)
		return err;
	*nr = (uint32_t)evprof__popcount64(mask);
	return cur_u64s(c, *nr, regs);
}

static int parse_sample_branches(struct cursor *c, struct evprof_sample *s,
				 uint64_t branch_sample_type)
{
	int err = cur_u64(c, &s->branch_nr);

	/*
	 * hw_idx follows nr whenever HW_INDEX was requested (Linux 5.7), and
	 * the counters follow the entries with BRANCH_COUNTERS. A kernel
	 * whose PMU saved no stack writes a bare nr = 0 instead; like perf,
	 * assume the attr's layout.
	 */
	if (!err && (branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX))
		err = cur_u64(c, &s->branch_hw_idx);
	if (!err)
		err = cur_array(c, s->branch_nr, 3 * sizeof(uint64_t),
				&s->branches);
	/* One counters word per branch (Linux 6.8). */
	if (!err && (branch_sample_type & BRANCH_COUNTERS))
		err = cur_u64s(c, s->branch_nr, &s->branch_counters);
	return err;
}

static int parse_sample_stack(struct cursor *c, struct evprof_sample *s)
{
	int err = cur_u64(c, &s->stack_user_size);

	/* size 0 (no user stack: kernel thread): no data and no dyn_size. */
	if (err || s->stack_user_size == 0)
		return err;
	/* The kernel rounds the dump to u64; dyn_size must stay aligned. */
	if (s->stack_user_size % sizeof(uint64_t))
		return -EVPROF_ERR_MALFORMED;
	err = cur_array(c, s->stack_user_size, 1, &s->stack_user);
	if (!err)
		err = cur_u64(c, &s->stack_user_dyn_size);
	if (!err && s->stack_user_dyn_size > s->stack_user_size)
		return -EVPROF_ERR_MALFORMED;
	return err;
}

/* Fixed u64 fields after STACK_USER, in the order the kernel writes them. */
static int parse_sample_tail(struct cursor *c, struct evprof_sample *s,
			     const struct evprof_record_fmt *fmt)
{
	uint64_t st = fmt->sample_type;
	int err = 0;

	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		err = cur_u64(c, &s->weight);
	if (!err && (st & PERF_SAMPLE_DATA_SRC))
		err = cur_u64(c, &s->data_src);
	if (!err && (st & PERF_SAMPLE_TRANSACTION))
		err = cur_u64(c, &s->transaction);
	if (!err && (st & PERF_SAMPLE_REGS_INTR))
		err = cur_regs(c, fmt->sample_regs_intr, &s->regs_intr_abi,
			       &s->regs_intr_nr, &s->regs_intr);
	/*
	 * The real order is PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE,
	 * AUX (kernel perf_output_sample since 5.11); the uapi comment lists
	 * AUX earlier and omits CGROUP.
	 */
	if (!err && (st & PERF_SAMPLE_PHYS_ADDR))
		err = cur_u64(c, &s->phys_addr);
	if (!err && (st & PERF_SAMPLE_CGROUP))
		err = cur_u64(c, &s->cgroup);
	if (!err && (st & PERF_SAMPLE_DATA_PAGE_SIZE))
		err = cur_u64(c, &s->data_page_size);
	if (!err && (st & PERF_SAMPLE_CODE_PAGE_SIZE))
		err = cur_u64(c, &s->code_page_size);
	if (!err && (st & PERF_SAMPLE_AUX)) {
		err = cur_u64(c, &s->aux_size);
		if (!err)
			err = cur_array(c, s->aux_size, 1, &s->aux);
	}
	return err;
}

static int parse_sample(struct cursor *c, struct evprof_sample *s,
			const struct evprof_record_fmt *fmt)
{
	uint64_t st = fmt->sample_type;
	int err = 0;

	/* A bit we do not know has a layout we do not know. */
	if (st & ~SAMPLE_TYPE_KNOWN)
		return -ENOTSUP;
	if (st & PERF_SAMPLE_IDENTIFIER)
		err = cur_u64(c, &s->identifier);
	if (!err && (st & PERF_SAMPLE_IP))
		err = cur_u64(c, &s->ip);
	if (!err && (st & PERF_SAMPLE_TID))
		err = cur_u32x2(c, &s->pid, &s->tid);
	if (!err && (st & PERF_SAMPLE_TIME))
		err = cur_u64(c, &s->time);
	if (!err && (st & PERF_SAMPLE_ADDR))
		err = cur_u64(c, &s->addr);
	if (!err && (st & PERF_SAMPLE_ID))
		err = cur_u64(c, &s->id);
	else if (!err && (st & PERF_SAMPLE_IDENTIFIER))
		s->id = s->identifier;
	if (!err && (st & PERF_SAMPLE_STREAM_ID))
		err = cur_u64(c, &s->stream_id);
	if (!err && (st & PERF_SAMPLE_CPU))
		err = cur_u32x2(c, &s->cpu, NULL);
	if (!err && (st & PERF_SAMPLE_PERIOD))
		err = cur_u64(c, &s->period);
	if (!err && (st & PERF_SAMPLE_READ))
		err = cur_read_values(c, fmt->read_format, &s->read,
				      &s->read_size);
	if (!err && (st & PERF_SAMPLE_CALLCHAIN)) {
		err = cur_u64(c, &s->callchain_nr);
		if (!err)
			err = cur_u64s(c, s->callchain_nr, &s->callchain);
	}
	if (!err && (st & PERF_SAMPLE_RAW)) {
		const uint8_t *p;

		err = cur_take(c, sizeof(uint32_t), &p);
		if (!err) {
			s->raw_size = evprof__load_u32(p);
			/* The kernel pads size + data to keep u64 alignment. */
			if ((sizeof(uint32_t) + s->raw_size) % sizeof(uint64_t))
				return -EVPROF_ERR_MALFORMED;
			err = cur_array(c, s->raw_size, 1, &s->raw);
		}
	}
	if (!err && (st & PERF_SAMPLE_BRANCH_STACK))
		err = parse_sample_branches(c, s, fmt->branch_sample_type);
	if (!err && (st & PERF_SAMPLE_REGS_USER))
		err = cur_regs(c, fmt->sample_regs_user, &s->regs_user_abi,
			       &s->regs_user_nr, &s->regs_user);
	if (!err && (st & PERF_SAMPLE_STACK_USER))
		err = parse_sample_stack(c, s);
	if (!err)
		err = parse_sample_tail(c, s, fmt);
	return err;
}

/*
 * The sample_id trailer: read backwards from the record's end so the body
 * before it may have any length (IDENTIFIER is always the last u64). On
 * success c->end is moved to the body's end.
 */
static int parse_sample_id(struct cursor *c, struct evprof_sample_id *sid,
			   const struct evprof_record_fmt *fmt)
{
	uint64_t st = fmt->sample_type;
	size_t size;
	struct cursor t;
	uint64_t v = 0;
	int err = 0;

	if (!fmt->sample_id_all)
		return 0;
	size =
	    (size_t)evprof__popcount64(st & SAMPLE_ID_BITS) * sizeof(uint64_t);
	if (size == 0)
		return 0;
	if (size > cur_left(c))
		return -EVPROF_ERR_TRUNCATED;
	t.p = c->end - size;
	t.end = c->end;
	c->end = t.p;

	if (st & PERF_SAMPLE_TID)
		err = cur_u32x2(&t, &sid->pid, &sid->tid);
	if (!err && (st & PERF_SAMPLE_TIME))
		err = cur_u64(&t, &sid->time);
	if (!err && (st & PERF_SAMPLE_ID))
		err = cur_u64(&t, &sid->id);
	if (!err && (st & PERF_SAMPLE_STREAM_ID))
		err = cur_u64(&t, &sid->stream_id);
	if (!err && (st & PERF_SAMPLE_CPU))
		err = cur_u32x2(&t, &sid->cpu, NULL);
	if (!err && (st & PERF_SAMPLE_IDENTIFIER)) {
		err = cur_u64(&t, &v);
		if (!(st & PERF_SAMPLE_ID))
			sid->id = v;
	}
	sid->present = !err;
	return err;
}

static int parse_mmap(struct cursor *c, struct evprof_record_mmap *m,
		      uint32_t type, uint16_t misc)
{
	const uint8_t *p;
	int err;

	err = cur_u32x2(c, &m->pid, &m->tid);
	if (!err)
		err = cur_u64(c, &m->addr);
	if (!err)
		err = cur_u64(c, &m->len);
	if (!err)
		err = cur_u64(c, &m->pgoff);
	if (!err && type == PERF_RECORD_MMAP2) {
		/* Both variants of the union take 24 bytes. */
		err = cur_take(c, 24, &p);
		if (err)
			return err;
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->build_id_size = p[0];
			m->build_id = p + 4;
			if (m->build_id_size > BUILD_ID_MAX)
				return -EVPROF_ERR_MALFORMED;
		} else {
			m->maj = evprof__load_u32(p);
			m->min = evprof__load_u32(p + 4);
			m->ino = evprof__load_u64(p + 8);
			m->ino_generation = evprof__load_u64(p + 16);
		}
		err = cur_u32x2(c, &m->prot, &m->flags);
	}
	if (!err)
		err = cur_string(c, &m->filename);
	return err;
}

static int parse_task(struct cursor *c, struct evprof_record_task *t)
{
	int err = cur_u32x2(c, &t->pid, &t->ppid);

	if (!err)
		err = cur_u32x2(c, &t->tid, &t->ptid);
	if (!err)
		err = cur_u64(c, &t->time);
	return err;
}

static int parse_namespaces(struct cursor *c,
			    struct evprof_record_namespaces *ns)
{
	int err = cur_u32x2(c, &ns->pid, &ns->tid);

	if (!err)
		err = cur_u64(c, &ns->nr);
	if (err)
		return err;
	/* nr x {dev, inode}; bound nr first so nr * 2 cannot wrap. */
	if (ns->nr > cur_left(c) / (2 * sizeof(uint64_t)))
		return -EVPROF_ERR_TRUNCATED;
	return cur_u64s(c, ns->nr * 2, &ns->link_info);
}

static int parse_ksymbol(struct cursor *c, struct evprof_record_ksymbol *k)
{
	const uint8_t *p;
	int err = cur_u64(c, &k->addr);

	if (!err)
		err = cur_take(c, 8, &p);
	if (err)
		return err;
	k->len = evprof__load_u32(p);
	memcpy(&k->ksym_type, p + 4, sizeof(k->ksym_type));
	memcpy(&k->flags, p + 6, sizeof(k->flags));
	return cur_string(c, &k->name);
}

static int parse_bpf_event(struct cursor *c, struct evprof_record_bpf_event *b)
{
	const uint8_t *p;
	int err = cur_take(c, 16, &p);

	if (err)
		return err;
	memcpy(&b->type, p, sizeof(b->type));
	memcpy(&b->flags, p + 2, sizeof(b->flags));
	b->id = evprof__load_u32(p + 4);
	b->tag = p + 8;
	return 0;
}

static int parse_text_poke(struct cursor *c, struct evprof_record_text_poke *t)
{
	const uint8_t *p;
	int err = cur_u64(c, &t->addr);

	if (!err)
		err = cur_take(c, 4, &p);
	if (err)
		return err;
	memcpy(&t->old_len, p, sizeof(t->old_len));
	memcpy(&t->new_len, p + 2, sizeof(t->new_len));
	return cur_take(c, (uint64_t)t->old_len + t->new_len, &t->bytes);
}

static int parse_other(struct cursor *c, struct evprof_record *rec,
		       const struct evprof_record_fmt *fmt)
{
	uint64_t v;
	int err;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return parse_mmap(c, &rec->mmap, rec->type, rec->misc);
	case PERF_RECORD_LOST:
		err = cur_u64(c, &rec->lost.id);
		return err ? err : cur_u64(c, &rec->lost.lost);
	case PERF_RECORD_COMM:
		rec->comm.exec = rec->misc & PERF_RECORD_MISC_COMM_EXEC;
		err = cur_u32x2(c, &rec->comm.pid, &rec->comm.tid);
		return err ? err : cur_string(c, &rec->comm.comm);
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		return parse_task(c, &rec->task);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		err = cur_u64(c, &rec->throttle.time);
		if (!err)
			err = cur_u64(c, &rec->throttle.id);
		return err ? err : cur_u64(c, &rec->throttle.stream_id);
	case PERF_RECORD_READ:
		err = cur_u32x2(c, &rec->read.pid, &rec->read.tid);
		return err ? err
			   : cur_read_values(c, fmt->read_format,
					     &rec->read.read,
					     &rec->read.read_size);
	case PERF_RECORD_AUX:
		err = cur_u64(c, &rec->aux.aux_offset);
		if (!err)
			err = cur_u64(c, &rec->aux.aux_size);
		return err ? err : cur_u64(c, &rec->aux.flags);
	case PERF_RECORD_ITRACE_START:
		return cur_u32x2(c, &rec->itrace_start.pid,
				 &rec->itrace_start.tid);
	case PERF_RECORD_LOST_SAMPLES:
		return cur_u64(c, &rec->lost_samples);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rec->sw.out = rec->misc & PERF_RECORD_MISC_SWITCH_OUT;
		rec->sw.preempt =
		    rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
		if (rec->type == PERF_RECORD_SWITCH)
			return 0;
		return cur_u32x2(c, &rec->sw.next_prev_pid,
				 &rec->sw.next_prev_tid);
	case PERF_RECORD_NAMESPACES:
		return parse_namespaces(c, &rec->namespaces);
	case PERF_RECORD_KSYMBOL:
		return parse_ksymbol(c, &rec->ksymbol);
	case PERF_RECORD_BPF_EVENT:
		return parse_bpf_event(c, &rec->bpf_event);
	case PERF_RECORD_CGROUP:
		err = cur_u64(c, &rec->cgroup.id);
		return err ? err : cur_string(c, &rec->cgroup.path);
	case PERF_RECORD_TEXT_POKE:
		return parse_text_poke(c, &rec->text_poke);
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		return cur_u64(c, &rec->aux_output_hw_id);
	case EVPROF_RECORD_CALLCHAIN_DEFERRED:
		err = cur_u64(c, &rec->deferred.cookie);
		if (!err)
			err = cur_u64(c, &v);
		if (!err)
			err = cur_u64s(c, v, &rec->deferred.ips);
		if (!err)
			rec->deferred.nr = v;
		return err;
	default:
		return -ENOTSUP;
	}
}

static bool type_known(uint32_t type)
{
	return type >= PERF_RECORD_MMAP &&
	       type <= EVPROF_RECORD_CALLCHAIN_DEFERRED;
}

int evprof_record__parse(struct evprof_record *rec, const void *buf, size_t len,
			 const struct evprof_record_fmt *fmt)
{
	struct perf_event_header hdr;
	struct cursor c;
	int err;

	memset(rec, 0, sizeof(*rec));
	if (len < sizeof(hdr))
		return -EVPROF_ERR_TRUNCATED;
	memcpy(&hdr, buf, sizeof(hdr));
	rec->type = hdr.type;
	rec->misc = hdr.misc;
	rec->size = hdr.size;
	if (hdr.size < sizeof(hdr) || hdr.size % sizeof(uint64_t))
		return -EVPROF_ERR_MALFORMED;
	if (hdr.size > len)
		return -EVPROF_ERR_TRUNCATED;
	if (!type_known(hdr.type))
		return -ENOTSUP;
	/* Views expose u64 arrays in place. */
	if ((uintptr_t)buf % sizeof(uint64_t))
		return -EVPROF_ERR_MALFORMED;

	c.p = (const uint8_t *)buf + sizeof(hdr);
	c.end = (const uint8_t *)buf + hdr.size;
	if (hdr.type == PERF_RECORD_SAMPLE)
		return parse_sample(&c, &rec->sample, fmt);

	err = parse_sample_id(&c, &rec->sid, fmt);
	return err ? err : parse_other(&c, rec, fmt);
}

int evprof_record__identifier(const void *buf, size_t len, uint64_t *id)
{
	struct perf_event_header hdr;
	const uint8_t *p = buf;

	if (len < sizeof(hdr))
		return -EVPROF_ERR_TRUNCATED;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.size < sizeof(hdr) + sizeof(uint64_t) || hdr.size > len)
		return -EVPROF_ERR_TRUNCATED;
	if (hdr.type == PERF_RECORD_SAMPLE)
		*id = evprof__load_u64(p + sizeof(hdr));
	else
		*id = evprof__load_u64(p + hdr.size - sizeof(uint64_t));
	return 0;
}

static const char *const type_names[] = {
    [PERF_RECORD_MMAP] = "MMAP",
    [PERF_RECORD_LOST] = "LOST",
    [PERF_RECORD_COMM] = "COMM",
    [PERF_RECORD_EXIT] = "EXIT",
    [PERF_RECORD_THROTTLE] = "THROTTLE",
    [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
    [PERF_RECORD_FORK] = "FORK",
    [PERF_RECORD_READ] = "READ",
    [PERF_RECORD_SAMPLE] = "SAMPLE",
    [PERF_RECORD_MMAP2] = "MMAP2",
    [PERF_RECORD_AUX] = "AUX",
    [PERF_RECORD_ITRACE_START] = "ITRACE_START",
    [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
    [PERF_RECORD_SWITCH] = "SWITCH",
    [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
    [PERF_RECORD_NAMESPACES] = "NAMESPACES",
    [PERF_RECORD_KSYMBOL] = "KSYMBOL",
    [PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
    [PERF_RECORD_CGROUP] = "CGROUP",
    [PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
    [PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
    [EVPROF_RECORD_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
};

const char *evprof_record_type_name(uint32_t type)
{
	if (type < ARRAY_SIZE(type_names) && type_names[type])
		return type_names[type];
	return "UNKNOWN";
}
