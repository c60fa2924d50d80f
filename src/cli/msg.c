// SPDX-License-Identifier: MIT
/* What every command says the same way. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("evprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_unsupported(int err)
{
	return err == ENOENT || err == ENODEV || err == ENXIO ||
	       err == EOPNOTSUPP || err == EINVAL;
}
