/* SPDX-License-Identifier: MIT */
/* evprof record --continuous: a profile per window (continuous.c). */
#ifndef EVPROF_CLI_CONTINUOUS_H
#define EVPROF_CLI_CONTINUOUS_H

#include <stdint.h>

#include "cli.h"

struct evprof_recorder;
struct evprof_pusher;

struct cont {
	/* the options */
	double interval;	      /* seconds */
	const char *dir;	      /* NULL: not written */
	struct evprof_pusher *pusher; /* NULL: not pushed */
	unsigned int rate;	      /* sampling rate pushed, Hz or 0 */
	int labels;		      /* cgroup labels pushed (--push-label) */
	int keep;		      /* windows kept, 0: all */
	enum out_format fmt;
	const char *weight;

	/* the state */
	struct evprof_recorder *r;
	uint64_t start_mono, start_wall;
	uint64_t win_mono; /* CLOCK_MONOTONIC start of the next window */
	uint64_t next;	   /* when the next window is due */
	char **kept;	   /* ring of --keep paths written */
	unsigned long written, failed;
};

/*
 * After evprof_recorder__start(): makes the directory (one level). Returns
 * 0, or -1 after a message.
 */
int cont_init(struct cont *c, struct evprof_recorder *r);
/* In the recording loop: takes and writes a window when one is due. */
void cont_tick(void *ctx);
/*
 * After evprof_recorder__stop(): the last window. Returns 0, or -1 when a
 * window could not be built or written (said).
 */
int cont_finish(struct cont *c);
void cont_free(struct cont *c);

#endif /* EVPROF_CLI_CONTINUOUS_H */
