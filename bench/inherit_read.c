// SPDX-License-Identifier: MIT
/*
 * inherit_read READ CMD [ARGS...]: runs CMD with one inherited cpu-clock
 * event sampling every millisecond on it (no ring: the samples go
 * nowhere), with PERF_SAMPLE_READ in its sample type when READ is 1. The
 * kernel (6.12+, "perf: Support PERF_SAMPLE_READ with inherit") then keeps
 * per-thread counts, which turns off the swap of a task's event context
 * for the next one's at a context switch between threads of a process:
 * every switch schedules the events out and in, and a clock event cancels
 * and restarts its hrtimer. evprof's task mode needs that sample type (its
 * group reads are per thread): this isolates what it costs a switch.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	int go[2], fd, status;
	pid_t pid;
	char c;

	if (argc < 3) {
		fprintf(stderr, "usage: %s 0|1 CMD [ARGS...]\n", argv[0]);
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	a.inherit = 1;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.read_format = PERF_FORMAT_GROUP;
	/* inherit with PERF_SAMPLE_READ needs PERF_SAMPLE_TID */
	a.sample_type = PERF_SAMPLE_TID;
	if (atoi(argv[1]))
		a.sample_type |= PERF_SAMPLE_READ;
	if (pipe(go))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		/* waits for the event, then execs (enable_on_exec) */
		close(go[1]);
		if (read(go[0], &c, 1) != 0)
			_exit(1);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	close(go[0]);
	fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	close(go[1]);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
