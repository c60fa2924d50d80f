// SPDX-License-Identifier: MIT
/*
 * What an imported file's counters can mean, decided once from its attrs
 * (see perfdata.h): the session's counters and id roles, whether group
 * reads are per CPU, whether stack copies are kept, and whether kernel
 * frames can be named from this boot's kallsyms. Then the session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/session.h>

#include "internal.h"

static bool is_dummy(const struct pd_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE &&
	       a->attr.config == PERF_COUNT_SW_DUMMY;
}

static bool is_cpu_time(const struct pd_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		a->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

static bool samples(const struct pd_attr *a)
{
	return a->attr.freq || a->attr.sample_period;
}

/*
 * Events opened per CPU for every task (-a, -C): ID_INDEX says so (tid
 * -1), else THREAD_MAP (pid -1), else (perf before 4.3 wrote neither) the
 * command line.
 */
static bool opened_per_cpu(const struct pd_header *h)
{
	static const char *const opts[] = {" -a", " --all-cpus", " -C",
					   " --cpu"};
	const char *c = h->cmdline;

	for (size_t i = 0; i < h->idx.n; i++)
		if (h->idx.a[i].tid == -1)
			return true;
	if (h->idx.n || h->thread_map_pid)
		return h->thread_map_pid == -1;
	for (size_t i = 0; c && i < sizeof(opts) / sizeof(opts[0]); i++) {
		const char *hit = strstr(c, opts[i]);
		const char *end = strstr(c, " -- ");
		size_t n = strlen(opts[i]);

		/* An option of perf's, not of the command it ran. */
		if (hit && (!end || hit < end) &&
		    (hit[n] == ' ' || hit[n] == '=' || !hit[n] ||
		     (opts[i][2] != '-' && hit[n] >= '0' && hit[n] <= '9')))
			return true;
	}
	return false;
}

static int counter_index(struct evprof_perfdata *pd, const char *name)
{
	char *copy;

	for (size_t i = 0; i < pd->counters.n; i++)
		if (!strcmp(pd->counters.a[i], name))
			return (int)i;
	if (pd->counters.n >= EVPROF_PROFILE_MAX_COUNTERS)
		return PD_ROLE_NONE;
	copy = strdup(name);
	if (!copy || EVPROF_VEC_PUSH(&pd->counters, copy)) {
		free(copy);
		return -ENOMEM;
	}
	return (int)pd->counters.n - 1;
}

static int assign_roles(struct evprof_perfdata *pd)
{
	bool cpu_taken = false;

	for (uint32_t i = 0; i < pd->h.nr_attrs; i++) {
		struct pd_attr *a = &pd->h.attrs[i];
		const char *name = evprof__pd_attr_name(a);

		a->synth = SYNTH_ID | i;
		if (is_dummy(a) || (pd->per_cpu_reads && !samples(a)))
			continue;
		if (is_cpu_time(a) && !cpu_taken) {
			a->role = EVPROF_SESSION_CPU_TIME;
			cpu_taken = true;
			continue;
		}
		a->role = counter_index(pd, name);
		if (a->role == -ENOMEM)
			return -ENOMEM;
	}
	return 0;
}

static int set_ids(struct evprof_perfdata *pd)
{
	int err = 0;

	for (uint32_t i = 0; !err && i < pd->h.nr_attrs; i++) {
		struct pd_attr *a = &pd->h.attrs[i];

		if (a->role == PD_ROLE_NONE)
			continue;
		err = evprof_session__set_id(pd->s, a->synth, a->role);
		for (size_t k = 0; !err && k < a->ids.n; k++)
			err =
			    evprof_session__set_id(pd->s, a->ids.a[k], a->role);
	}
	return err;
}

static void decide_kernel(struct evprof_perfdata *pd)
{
	const struct pd_buildid *kb =
	    evprof__pd_buildid(&pd->h, "[kernel.kallsyms]", true);
	/* Else the kernel map's own (perf record --buildid-mmap). */
	const uint8_t *bid = kb ? kb->id : pd->kbid;
	size_t len = kb ? kb->len : pd->kbid_len;

	if (pd->no_symbols) {
		snprintf(pd->kernel_why, sizeof(pd->kernel_why),
			 "symbols are off");
		pd->kernel_ok = false;
	} else {
		pd->kernel_ok = evprof__pd_same_kernel(
		    pd->kallsyms, pd->notes, bid, len, pd->ktext,
		    pd->kernel_why, sizeof(pd->kernel_why));
	}
	/*
	 * perf's copy of this kernel's kallsyms, when it has one for this
	 * boot, is the same table as /proc/kallsyms at the recording, and a
	 * plain file is much cheaper to read than the kernel's formatting
	 * (with a debug cache, its table is saved there and mapped after).
	 * It has the modules and BPF programs of the recording, which the
	 * kernel may no longer have.
	 */
	snprintf(pd->ksyms, sizeof(pd->ksyms), "%s", pd->kallsyms);
	if (pd->kernel_ok) {
		char hex[41], path[sizeof(pd->ksyms)];

		evprof__hex(hex, bid, len, false);
		if (snprintf(path, sizeof(path),
			     "%s/[kernel.kallsyms]/%s/kallsyms",
			     pd->buildid_dir, hex) < (int)sizeof(path) &&
		    evprof__pd_kallsyms_text(path) == pd->ktext)
			snprintf(pd->ksyms, sizeof(pd->ksyms), "%s", path);
	}
	pd->x->rebase_kernel = !pd->kernel_ok && pd->ktext;
	pd->x->ktext = pd->ktext;
}

int evprof__pd_start_session(struct evprof_perfdata *pd)
{
	struct evprof_session_opts so = {.sz = sizeof(so)};
	const struct pd_attr *stack_attr = NULL;
	bool has_read = false;
	int err;

	for (uint32_t i = 0; i < pd->h.nr_attrs; i++) {
		const struct pd_attr *a = &pd->h.attrs[i];
		const uint64_t need =
		    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

		has_read |= (a->attr.sample_type & PERF_SAMPLE_READ) != 0;
		/* perf sets it to its --max-stack (the sysctl by default). */
		if (a->attr.sample_max_stack && !so.max_stack)
			so.max_stack = a->attr.sample_max_stack;
		if ((a->attr.sample_type & need) == need && !stack_attr)
			stack_attr = a;
	}
	pd->per_cpu = opened_per_cpu(&pd->h);
	pd->per_cpu_reads = pd->per_cpu && has_read;
	err = assign_roles(pd);
	if (err)
		return err;
	evprof__pd_xcode_init(pd->x, stack_attr,
			      stack_attr ? stack_attr->attr.sample_regs_user
					 : 0);
	decide_kernel(pd);
	so.fmt = pd->x->out;
	so.counters = (const char *const *)pd->counters.a;
	so.nr_counters = pd->counters.n;
	/*
	 * Unwinding opens the binaries the stack copies ran in: with symbols
	 * off no copy is kept (1 byte holds none), their kernel part stays.
	 */
	if (pd->no_symbols)
		so.max_stack_bytes = 1;
	pd->s = evprof_session__new(&so);
	if (!pd->s)
		return -errno;
	return set_ids(pd);
}
