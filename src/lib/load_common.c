// SPDX-License-Identifier: MIT
/* Helpers both profile readers share; they sit below the readers and load.c. */
#include <errno.h>
#include <string.h>

#include "load_common.h"
#include "profile_model.h"

int evprof__load_process(struct evprof_profile *p, int pid, const char *name)
{
	size_t i;

	for (i = 0; i < p->nr_procs; i++)
		if (p->procs[i].pid == pid)
			return (int)i;
	return evprof_profile__add_process(p, pid, name, 0);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int evprof__unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex), i;

	if (n % 2 || n / 2 > max)
		return -1;
	for (i = 0; i < n; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}
