/* SPDX-License-Identifier: MIT */
/* Captures libevprof's messages for tests that check what it says. */
#ifndef EVPROF_CAPTURE_H
#define EVPROF_CAPTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <evprof/common.h>

static char msgs[8192];
static int nr_warn;

__attribute__((format(printf, 2, 0))) static int
capture(enum evprof_print_level level, const char *fmt, va_list ap)
{
	size_t off = strlen(msgs);

	if (level == EVPROF_WARN)
		nr_warn++;
	vsnprintf(msgs + off, sizeof(msgs) - off, fmt, ap);
	return 0;
}

/* Empties the capture and routes the library's messages into it. */
static inline void capture_start(void)
{
	msgs[0] = '\0';
	nr_warn = 0;
	evprof_set_print(capture);
}

#endif /* EVPROF_CAPTURE_H */
