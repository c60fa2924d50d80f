// SPDX-License-Identifier: MIT
/* -p PID[,PID...] of record and stat. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli.h"

int cli_parse_pids(const char *list, pid_t **pids)
{
	const char *p = list;
	size_t n = 0;

	*pids = NULL;
	while (*p) {
		char *end;
		long pid = strtol(p, &end, 10);
		pid_t *t;

		if (end == p || pid <= 0 || pid > INT32_MAX ||
		    (*end && *end != ',')) {
			cli_err("bad pid list '%s'", list);
			goto fail;
		}
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			cli_err("no process %ld", pid);
			goto fail;
		}
		t = realloc(*pids, (n + 1) * sizeof(*t));
		if (!t) {
			cli_err("out of memory");
			goto fail;
		}
		*pids = t;
		(*pids)[n++] = (pid_t)pid;
		p = *end ? end + 1 : end;
	}
	if (!n) {
		cli_err("bad pid list '%s'", list);
		goto fail;
	}
	return (int)n;
fail:
	free(*pids);
	*pids = NULL;
	return -1;
}
