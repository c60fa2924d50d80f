// SPDX-License-Identifier: MIT
/*
 * evprof record --continuous: one complete profile per window of
 * --interval seconds (the recorder's windows), written into --output-dir as
 * evprof-<UTC start of the window>.<format's extension>, the last --keep
 * of them kept, and/or queued for --push; the last, partial window when
 * recording ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <evprof/evprof.h>

#include "continuous.h"

static const char *ext_of(enum out_format f)
{
	switch (f) {
	case OUT_FIREFOX:
		return ".json.gz";
	case OUT_FOLDED:
		return ".folded";
	case OUT_SPEEDSCOPE:
		return ".speedscope.json";
	case OUT_PAGE:
		return ".html";
	case OUT_SVG:
		return ".svg";
	case OUT_PPROF:
		break;
	}
	return ".pb.gz";
}

int cont_init(struct cont *c, struct evprof_recorder *r)
{
	struct evprof_recorder_stats st = {.sz = sizeof(st)};

	if (c->dir && mkdir(c->dir, 0777) && errno != EEXIST) {
		cli_err("cannot make %s: %s", c->dir, strerror(errno));
		return -1;
	}
	if (c->dir && access(c->dir, W_OK | X_OK)) {
		cli_err("cannot write into %s: %s", c->dir, strerror(errno));
		return -1;
	}
	if (c->keep) {
		c->kept = calloc((size_t)c->keep, sizeof(*c->kept));
		if (!c->kept) {
			cli_err("out of memory");
			return -1;
		}
	}
	c->r = r;
	evprof_recorder__stats(r, &st);
	c->start_mono = st.start_mono_ns;
	c->start_wall = st.start_wall_ns;
	c->next = cli_now_ns() + (uint64_t)(c->interval * 1e9);
	return 0;
}

/* Forgets the oldest window past --keep, then remembers path. */
static void rotate(struct cont *c, char *path)
{
	size_t k = (size_t)c->keep;
	size_t slot;

	if (!k) {
		free(path);
		return;
	}
	slot = c->written % k;
	if (c->kept[slot]) {
		if (unlink(c->kept[slot]) && errno != ENOENT)
			cli_err("cannot remove %s: %s", c->kept[slot],
				strerror(errno));
		free(c->kept[slot]);
	}
	c->kept[slot] = path;
}

/* Writes one window, named after its start; counts it. */
static void write_window(struct cont *c, struct evprof_profile *p)
{
	uint64_t wall = c->start_wall + (c->win_mono - c->start_mono);
	time_t secs = (time_t)(wall / 1000000000ull);
	char stamp[32], *path;
	struct tm tm;
	int err;

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (asprintf(&path, "%s/evprof-%s.%03uZ%s", c->dir, stamp,
		     (unsigned)(wall / 1000000ull % 1000),
		     ext_of(c->fmt)) < 0) {
		cli_err("out of memory");
		c->failed++;
		return;
	}
	err = out_write(p, path, c->fmt, c->weight);
	if (err) {
		cli_err("cannot write %s: %s", path, evprof_strerror(err));
		free(path);
		c->failed++;
		return;
	}
	c->written++;
	rotate(c, path);
}

/* Takes the recorder's window and writes it. */
static void one_window(struct cont *c)
{
	struct evprof_profile *p = NULL;
	/* The recorder's own symbolizer: its parts and windows share caches. */
	int err = evprof_recorder__window(c->r, NULL, &p);

	if (err) {
		cli_err("cannot build the window: %s", evprof_strerror(err));
		c->failed++;
		return;
	}
	if (c->dir)
		write_window(c, p);
	/* Queued: sending never holds up the recording. */
	if (c->pusher &&
	    cli_push_profile(
		c->pusher, p, c->start_wall + (c->win_mono - c->start_mono),
		c->start_wall + (evprof_profile__end(p) - c->start_mono),
		c->rate, c->labels))
		c->failed++;
	c->win_mono = evprof_profile__end(p);
	evprof_profile__free(p);
}

void cont_tick(void *ctx)
{
	struct cont *c = ctx;
	uint64_t now = cli_now_ns();

	if (now < c->next)
		return;
	/* On a fixed grid: a late tick does not push every later window. */
	c->next += (uint64_t)(c->interval * 1e9);
	if (c->next <= now)
		c->next = now + (uint64_t)(c->interval * 1e9);
	if (!c->win_mono)
		c->win_mono = c->start_mono;
	one_window(c);
}

int cont_finish(struct cont *c)
{
	if (!c->win_mono)
		c->win_mono = c->start_mono;
	one_window(c);
	if (c->dir)
		fprintf(stderr, "evprof: wrote %lu windows of %g s into %s%s\n",
			c->written, c->interval, c->dir,
			c->keep && c->written > (unsigned long)c->keep
			    ? " (older ones removed: --keep)"
			    : "");
	return c->failed ? -1 : 0;
}

void cont_free(struct cont *c)
{
	for (int i = 0; c->kept && i < c->keep; i++)
		free(c->kept[i]);
	free(c->kept);
}
