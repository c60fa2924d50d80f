// SPDX-License-Identifier: MIT
/*
 * The Firefox writer's columns made ahead: the document is written in
 * order on the caller's thread, while one more thread makes the columns
 * of the pieces after the one being written (a pass over a thread's rows
 * per track, a merge over a process's threads per counter). Either thread
 * makes the next piece no one has taken; the writer, waiting for a piece
 * the other thread makes, makes a later one meanwhile. At most AHEAD
 * pieces are made and not yet written, so memory stays that of AHEAD
 * pieces' columns, whatever the profile's size.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "out_firefox.h"

#define AHEAD 3

struct fx_ahead {
	const struct fx_ctx *c;
	fx_make_fn make;
	struct fx_made slot[AHEAD]; /* piece i in slot i % AHEAD */
	bool done[AHEAD];
	size_t next_take;  /* the next piece no one makes yet */
	size_t next_write; /* the piece the writer waits for or writes */
	bool stop, threaded;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static bool can_take(const struct fx_ahead *a)
{
	return a->next_take < a->c->nr_jobs &&
	       a->next_take < a->next_write + AHEAD;
}

/* Takes the next piece, makes it unlocked, marks it done. Called locked. */
static void make_next(struct fx_ahead *a)
{
	size_t i = a->next_take++;
	struct fx_made *m = &a->slot[i % AHEAD];

	pthread_mutex_unlock(&a->lock);
	*m = (struct fx_made){0};
	m->err = a->make(a->c, &a->c->jobs[i], m);
	pthread_mutex_lock(&a->lock);
	a->done[i % AHEAD] = true;
	pthread_cond_broadcast(&a->cond);
}

static void *ahead_main(void *arg)
{
	struct fx_ahead *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->stop && !can_take(a))
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stop)
			break;
		make_next(a);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct fx_ahead *evprof__fx_ahead_start(const struct fx_ctx *c, fx_make_fn make)
{
	struct fx_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->c = c;
	a->make = make;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	/* Without the thread, the writer makes every piece itself. */
	a->threaded =
	    c->nr_jobs > 1 && !pthread_create(&a->th, NULL, ahead_main, a);
	return a;
}

struct fx_made *evprof__fx_ahead_take(struct fx_ahead *a, size_t i)
{
	pthread_mutex_lock(&a->lock);
	while (!a->done[i % AHEAD]) {
		if (can_take(a))
			make_next(a);
		else
			pthread_cond_wait(&a->cond, &a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return &a->slot[i % AHEAD];
}

static void release(struct fx_made *m)
{
	for (size_t k = 0; k < m->n; k++)
		evprof__fx_col_close(&m->o[k]);
	m->n = 0;
}

void evprof__fx_ahead_release(struct fx_ahead *a, size_t i)
{
	release(&a->slot[i % AHEAD]);
	pthread_mutex_lock(&a->lock);
	a->done[i % AHEAD] = false;
	a->next_write = i + 1;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

void evprof__fx_ahead_stop(struct fx_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (a->threaded)
		pthread_join(a->th, NULL);
	/* Pieces made and never written (the writer stopped on an error). */
	for (size_t k = 0; k < AHEAD; k++)
		if (a->done[k])
			release(&a->slot[k]);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a);
}
