// SPDX-License-Identifier: MIT
/*
 * Records a workload with software events through the public group and
 * ring API and writes what the rings handed out as a fuzz_session input
 * (fuzz/session_input.h):
 *   seed_session task|cpu|dwarf[-off] MAX_BYTES OUT CMD [ARG...]
 *
 * Groups on every CPU: leader cpu-clock sampling every 100 us (the
 * sampler), task-clock (CPU time), page-faults (counter 0) and
 * context-switches sampling every switch (the cut). task: the workload and
 * its descendants (inherit); cpu: every task on the CPU, the workload's
 * tree kept by the session; dwarf: as task, with 256-byte user stack
 * copies and the registers DWARF unwinding needs. -off: as record
 * --off-cpu, the cut opens off-CPU intervals (EVPROF_SESSION_SWITCH_OUT)
 * and the leader adds switch records. Records past MAX_BYTES are dropped
 * whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <evprof/event.h>
#include <evprof/ring.h>
#include <evprof/session.h>

#include "../session_input.h"

#define NR_MEMBERS 4
#define RING_PAGES 64

static int roles[NR_MEMBERS] = {EVPROF_SESSION_SAMPLER, EVPROF_SESSION_CPU_TIME,
				0, EVPROF_SESSION_CUT};

static uint8_t *out;
static size_t out_len, out_max;

static void put(const void *p, size_t n)
{
	memcpy(out + out_len, p, n);
	out_len += n;
}

/* Moves every record the rings hold into out, round robin as a recorder. */
static void drain(struct evprof_ring **rings, size_t nr)
{
	bool more = true;

	while (more) {
		more = false;
		for (size_t i = 0; i < nr; i++) {
			const void *rec;
			size_t size;

			if (evprof_ring__next(rings[i], &rec, &size) != 1)
				continue;
			more = true;
			if (out_len + size <= out_max)
				put(rec, size);
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
		      PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		      PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |
		      PERF_SAMPLE_CALLCHAIN;
	struct perf_event_attr attrs[NR_MEMBERS] = {0};
	struct evprof_ring *rings[256];
	struct evprof_group_set *set;
	bool per_cpu, dwarf, off;
	size_t mode_len;
	uint64_t regs = 0;
	size_t nr_rings = 0, nr_ids = 0;
	uint8_t hdr[SESSION_INPUT_HDR] = {0};
	int go[2], status;
	pid_t child;
	FILE *f;

	mode_len = argc < 5 ? 0 : strlen(argv[1]);
	off = mode_len > 4 && !strcmp(argv[1] + mode_len - 4, "-off");
	if (off)
		argv[1][mode_len - 4] = '\0';
	if (argc < 5 || (strcmp(argv[1], "task") && strcmp(argv[1], "cpu") &&
			 strcmp(argv[1], "dwarf"))) {
		fprintf(stderr, "usage: seed_session task|cpu|dwarf[-off] "
				"MAX_BYTES OUT CMD...\n");
		return 2;
	}
	per_cpu = !strcmp(argv[1], "cpu");
	dwarf = !strcmp(argv[1], "dwarf");
	if (off)
		roles[3] = EVPROF_SESSION_SWITCH_OUT;
	if (dwarf) {
		regs = evprof_session__unwind_regs();
		st |= PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER;
	}
	out_max = strtoul(argv[2], NULL, 0);
	out = malloc(out_max + 4096);
	if (!out || pipe(go))
		return 1;
	child = fork();
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execv(argv[4], argv + 4);
		_exit(127);
	}
	close(go[0]);

	for (int i = 0; i < NR_MEMBERS; i++) {
		struct perf_event_attr *a = &attrs[i];

		a->size = sizeof(*a);
		a->type = PERF_TYPE_SOFTWARE;
		a->sample_type = st;
		a->sample_id_all = 1;
		a->sample_regs_user = regs;
		a->sample_stack_user = dwarf ? 256 : 0;
		a->inherit = !per_cpu;
		a->exclude_hv = 1;
	}
	attrs[0].config = PERF_COUNT_SW_CPU_CLOCK;
	attrs[0].sample_period = 100000;
	attrs[0].comm = attrs[0].task = attrs[0].mmap = 1;
	attrs[0].mmap2 = 1;
	attrs[0].context_switch = off;
	attrs[1].config = PERF_COUNT_SW_TASK_CLOCK;
	attrs[2].config = PERF_COUNT_SW_PAGE_FAULTS;
	attrs[3].config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attrs[3].sample_period = 1;
	set = evprof_group_set__open(
	    attrs, NR_MEMBERS, per_cpu ? -1 : child,
	    &(struct evprof_group_set_opts){
		.sz = sizeof(struct evprof_group_set_opts),
		.deferred_enable = true});
	if (!set) {
		perror("seed_session: open");
		kill(child, SIGKILL);
		return 1;
	}

	hdr[0] = per_cpu ? SESSION_INPUT_PER_CPU | SESSION_INPUT_TREE : 0;
	hdr[2] = 1;
	memcpy(hdr + 4, &child, 4);
	memcpy(hdr + 8, &st, 8);
	memcpy(hdr + 24, &regs, 8);
	out_len = SESSION_INPUT_HDR;
	for (size_t g = 0; g < evprof_group_set__nr(set); g++) {
		struct evprof_group *grp = evprof_group_set__group(set, g);
		uint64_t rf = evprof_group__read_format(grp);

		memcpy(hdr + 16, &rf, 8);
		rings[nr_rings] =
		    evprof_ring__open(evprof_group__fd(grp, 0), RING_PAGES);
		if (!rings[nr_rings] ||
		    evprof_ring__add_fd(rings[nr_rings],
					evprof_group__fd(grp, 3))) {
			fprintf(stderr, "seed_session: ring: %s\n",
				strerror(errno));
			return 1;
		}
		nr_rings++;
		for (int i = 0; i < NR_MEMBERS; i++) {
			uint64_t id = evprof_group__id(grp, (size_t)i);
			int8_t role = (int8_t)roles[i];

			if (nr_ids == SESSION_INPUT_MAX_IDS)
				break;
			put(&id, 8);
			put(&role, 1);
			nr_ids++;
		}
		if (nr_rings == 256)
			break;
	}
	hdr[1] = (uint8_t)nr_ids;
	memcpy(out, hdr, sizeof(hdr));

	if (evprof_group_set__enable(set) || write(go[1], "g", 1) != 1)
		return 1;
	while (waitpid(child, &status, WNOHANG) == 0) {
		drain(rings, nr_rings);
		usleep(1000);
	}
	evprof_group_set__disable(set);
	drain(rings, nr_rings);

	f = fopen(argv[3], "wb");
	if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f)) {
		perror(argv[3]);
		return 1;
	}
	fprintf(stderr, "seed_session: %zu bytes, %zu ids\n", out_len, nr_ids);
	for (size_t i = 0; i < nr_rings; i++)
		evprof_ring__free(rings[i]);
	evprof_group_set__free(set);
	free(out);
	return 0;
}
