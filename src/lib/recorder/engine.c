// SPDX-License-Identifier: MIT
/* What every engine shares: the notes and the session's options. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

void evprof__note(struct evprof__notes *n, const char *fmt, ...)
{
	char buf[512], **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n->fn)
		n->fn(buf, n->ctx);
	v = realloc(n->v, (n->n + 1) * sizeof(*v));
	if (!v)
		return;
	n->v = v;
	n->v[n->n] = strdup(buf);
	if (n->v[n->n])
		n->n++;
}

void evprof__notes_fini(struct evprof__notes *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

void evprof__engine_session_opts(const struct evprof__engine_setup *s,
				 const char **counters,
				 struct evprof_session_opts *so)
{
	bool launched = s->child > 0;

	*so = (struct evprof_session_opts){
	    .sz = sizeof(*so),
	    .counters = counters,
	    .nr_counters = s->nr - 1,
	    /* System-wide keeps everything, else the targets' trees. */
	    .pids = s->system_wide ? NULL
		    : launched	   ? &s->child
				   : s->pids,
	    .nr_pids = s->system_wide ? 0
		       : launched     ? 1
				      : s->nr_pids,
	};
	for (size_t i = 1; i < s->nr; i++)
		counters[i - 1] = s->events[i].name;
}
