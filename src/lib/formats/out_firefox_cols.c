// SPDX-License-Identifier: MIT
/*
 * The Firefox writer's columns made apart from the document (struct
 * fx_col): the pieces made ahead write their values into them, the writer
 * copies them into the document in order.
 */
#include <errno.h>
#include <stdio.h>

#include "out_firefox.h"
#include "profile/profile.h"

int evprof__fx_col_open(const struct fx_ctx *c, struct fx_col *o, size_t n)
{
	int err;

	*o = (struct fx_col){0};
	o->f = evprof__timeline_scratch(c->p, FX_COLS_MEM / n);
	if (!o->f)
		return -errno;
	err = evprof__sink_open_file(&o->s, o->f);
	if (err)
		return err;
	o->open = true;
	evprof__json_init(&o->j, &o->s);
	evprof__json_arr(&o->j);
	return 0;
}

int evprof__fx_col_end(struct fx_col *o)
{
	evprof__json_arr_end(&o->j);
	o->open = false;
	return evprof__sink_close(&o->s, true);
}

void evprof__fx_col_close(struct fx_col *o)
{
	if (o->open)
		evprof__sink_close(&o->s, false);
	if (o->f)
		fclose(o->f);
	o->open = false;
	o->f = NULL;
}
