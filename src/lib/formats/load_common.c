// SPDX-License-Identifier: MIT
/* Helpers both profile readers share; they sit below the readers and load.c. */
#include <errno.h>
#include <string.h>

#include "load_common.h"
#include "profile/profile.h"

int evprof__load_process(struct evprof_profile *p, int pid, const char *name)
{
	size_t i;

	for (i = 0; i < p->nr_procs; i++)
		if (p->procs[i].pid == pid)
			return (int)i;
	return evprof_profile__add_process(p, pid, name, 0);
}
