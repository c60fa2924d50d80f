// SPDX-License-Identifier: MIT
/*
 * Fuzzes event list parsing: any bytes either parse into groups that tile
 * the events exactly, or fail with an error; messages are formatted too.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/event.h>

#include "events/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((format(printf, 2, 0))) static int
format_message(enum evprof_print_level level, const char *fmt, va_list ap)
{
	char buf[2048];

	(void)level;
	return vsnprintf(buf, sizeof(buf), fmt, ap);
}

/* No trial opens: a run stays free of syscalls and the tables decide. */
static enum evprof_trial no_trial(void *ctx, const struct perf_event_attr *a,
				  size_t nr, const char *pmu, int *err)
{
	(void)ctx, (void)a, (void)nr, (void)pmu, (void)err;
	return EVPROF_TRIAL_UNDECIDED;
}

static void use_tables(void)
{
	static struct evprof_host host;

	if (host.trial)
		return;
	host = *evprof__host();
	host.trial = no_trial;
	evprof__host_set(&host);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evprof_event_list *list = NULL;
	char *s;
	size_t next = 0;

	/* Longer lists only repeat what shorter ones exercise. */
	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	evprof_set_print(format_message);
	use_tables();
	if (evprof_event_list__parse(&list, s) == 0) {
		if (!list->nr_events || !list->nr_groups)
			abort();
		for (size_t g = 0; g < list->nr_groups; g++) {
			if (list->groups[g].first != next ||
			    !list->groups[g].nr)
				abort();
			next += list->groups[g].nr;
			evprof_group__validate(list->events +
						   list->groups[g].first,
					       list->groups[g].nr);
		}
		if (next != list->nr_events)
			abort();
		for (size_t i = 0; i < list->nr_events; i++) {
			const struct evprof_event_spec *e = &list->events[i];

			if (!memchr(e->name, '\0', sizeof(e->name)) ||
			    e->attr.size != sizeof(e->attr))
				abort();
			evprof_attr__type_name(e->attr.type);
		}
	}
	evprof_event_list__free(list);
	free(s);
	return 0;
}
