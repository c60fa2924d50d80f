// SPDX-License-Identifier: MIT
/*
 * The page (include/evprof/page.h): web/index.html with its CSS, scripts
 * and the profile's data inline.
 *
 * The data is one JSON object that web/app.js reads:
 *
 *   {"format": "evprof-page", "version": 1, "title": ..., "weight": ...,
 *    "columns": [{"name": "samples", "unit": "count"},
 *                {"name": "cpu", "unit": "ns"}, {counters: "count"}...,
 *                {weight types: "ns"}...],
 *    "libs": [lib name...],
 *    "funcs": {"name": [...], "lib": [lib or -1...], "kernel": [0|1...]},
 *    "nodes": {"parent": [node or -1...], "func": [func...]},
 *    "threads": [{"name", "tid", "pid", "who" (its cgroup: "container
 *                 0123456789ab", "pod UID" or "cgroup /a/b"; optional)}...],
 *    "entries": [per thread: {"node": [node or -1...],
 *                             "values": [per column: [sum...]]}],
 *    "base": {the same without "base"}}
 *
 * Nodes are the call tree by function (the profile's stacks are by frame,
 * i.e. by address: many stacks make one node), a parent always before its
 * children. Entries are the store's (thread, stack) sums added up per
 * (thread, node), column by column, so every weight and every ratio the
 * page shows comes from the same numbers and nothing is per sample.
 */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/page.h>

#include "json.h"
#include "page_assets.h"
#include "profile/profile.h"

struct page_data {
	const struct evprof_profile *p;
	uint32_t ncols;
	int32_t *fmap;	 /* profile func -> page func, -1: unused */
	int32_t *funcs;	 /* page func -> profile func */
	uint8_t *kernel; /* page func -> kernel frame */
	size_t nr_funcs;
	int32_t *stack_node; /* profile stack -> node */
	int32_t *parent;     /* node -> parent node or -1 */
	int32_t *func;	     /* node -> page func */
	size_t nr_nodes, cap_nodes;
	struct evprof_hashmap *node_map; /* parent + 1 << 32 | func -> node */
};

static void page_data_free(struct page_data *d)
{
	free(d->fmap);
	free(d->funcs);
	free(d->kernel);
	free(d->stack_node);
	free(d->parent);
	free(d->func);
	evprof__hashmap_free(d->node_map);
}

static int node_of(struct page_data *d, int32_t parent, int32_t func)
{
	long key =
	    (long)((uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)func);
	long found;
	size_t cap = d->cap_nodes;

	if (evprof__hashmap_find(d->node_map, key, &found))
		return (int)found;
	if (d->nr_nodes >= INT32_MAX)
		return -E2BIG;
	if (evprof__vec_grow((void **)&d->parent, &cap, sizeof(*d->parent),
			     d->nr_nodes + 1, SIZE_MAX))
		return -ENOMEM;
	cap = d->cap_nodes;
	if (evprof__vec_grow((void **)&d->func, &cap, sizeof(*d->func),
			     d->nr_nodes + 1, SIZE_MAX))
		return -ENOMEM;
	d->cap_nodes = cap;
	if (evprof__hashmap_add(d->node_map, key, (long)d->nr_nodes))
		return -ENOMEM;
	d->parent[d->nr_nodes] = parent;
	d->func[d->nr_nodes] = func;
	return (int)d->nr_nodes++;
}

/* Functions the stacks use, and the call tree by function. */
static int page_data_build(struct page_data *d, const struct evprof_profile *p)
{
	size_t i;
	int n;

	d->p = p;
	d->ncols = COL_COUNTERS + p->nr_counters + p->nr_weights;
	d->fmap = malloc((p->nr_funcs + 1) * sizeof(*d->fmap));
	d->funcs = malloc((p->nr_funcs + 1) * sizeof(*d->funcs));
	d->kernel = calloc(p->nr_funcs + 1, 1);
	d->stack_node = malloc((p->nr_stacks + 1) * sizeof(*d->stack_node));
	d->node_map = evprof__hashmap_new(evprof__hashmap_u64_hash,
					  evprof__hashmap_u64_equal, NULL);
	if (!d->fmap || !d->funcs || !d->kernel || !d->stack_node ||
	    !d->node_map)
		return -ENOMEM;
	memset(d->fmap, 0xff, (p->nr_funcs + 1) * sizeof(*d->fmap));
	/* A stack's parent is interned before it: one pass in index order. */
	for (i = 0; i < p->nr_stacks; i++) {
		const struct evprof__stack *s = &p->stacks[i];
		const struct evprof__frame *fr = &p->frames[s->frame];
		int32_t parent = s->parent < 0 ? -1 : d->stack_node[s->parent];

		if (d->fmap[fr->func] < 0) {
			d->fmap[fr->func] = (int32_t)d->nr_funcs;
			d->kernel[d->nr_funcs] = fr->kernel;
			d->funcs[d->nr_funcs++] = (int32_t)fr->func;
		}
		n = node_of(d, parent, d->fmap[fr->func]);
		if (n < 0)
			return n;
		d->stack_node[i] = n;
	}
	return 0;
}

static void put_columns(struct evprof__json *j, const struct evprof_profile *p)
{
	uint32_t i;

	evprof__json_key(j, "columns");
	evprof__json_arr(j);
	for (i = 0; i < COL_COUNTERS + p->nr_counters + p->nr_weights; i++) {
		bool ns = i == COL_CPU || i >= COL_COUNTERS + p->nr_counters;

		evprof__json_obj(j);
		evprof__json_key(j, "name");
		evprof__json_str(
		    j, i == COL_SAMPLES ? "samples"
		       : i == COL_CPU	? "cpu"
		       : i < COL_COUNTERS + p->nr_counters
			   ? p->counters[i - COL_COUNTERS]
			   : p->weights[i - COL_COUNTERS - p->nr_counters]);
		evprof__json_key(j, "unit");
		evprof__json_str(j, ns ? "ns" : "count");
		evprof__json_obj_end(j);
	}
	evprof__json_arr_end(j);
}

static void put_tables(struct evprof__json *j, const struct page_data *d)
{
	const struct evprof_profile *p = d->p;
	size_t i;

	evprof__json_key(j, "libs");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_libs; i++)
		evprof__json_str(j, evprof__pstr(p, p->libs[i].name));
	evprof__json_arr_end(j);

	evprof__json_key(j, "funcs");
	evprof__json_obj(j);
	evprof__json_key(j, "name");
	evprof__json_arr(j);
	for (i = 0; i < d->nr_funcs; i++)
		evprof__json_str(j,
				 evprof__pstr(p, p->funcs[d->funcs[i]].name));
	evprof__json_arr_end(j);
	evprof__json_key(j, "lib");
	evprof__json_arr(j);
	for (i = 0; i < d->nr_funcs; i++)
		evprof__json_i64(j, p->funcs[d->funcs[i]].lib);
	evprof__json_arr_end(j);
	evprof__json_key(j, "kernel");
	evprof__json_arr(j);
	for (i = 0; i < d->nr_funcs; i++)
		evprof__json_u64(j, d->kernel[i]);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);

	evprof__json_key(j, "nodes");
	evprof__json_obj(j);
	evprof__json_key(j, "parent");
	evprof__json_arr(j);
	for (i = 0; i < d->nr_nodes; i++)
		evprof__json_i64(j, d->parent[i]);
	evprof__json_arr_end(j);
	evprof__json_key(j, "func");
	evprof__json_arr(j);
	for (i = 0; i < d->nr_nodes; i++)
		evprof__json_i64(j, d->func[i]);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);

	evprof__json_key(j, "threads");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_threads; i++) {
		char who[300];

		evprof__json_obj(j);
		evprof__json_key(j, "name");
		evprof__json_str(j, p->threads[i].name);
		evprof__json_key(j, "tid");
		evprof__json_i64(j, p->threads[i].tid);
		evprof__json_key(j, "pid");
		evprof__json_i64(j, p->procs[p->threads[i].proc].pid);
		if (*evprof__who_show(p->threads[i].cgroup,
				      p->threads[i].ns_pid, who, sizeof(who))) {
			evprof__json_key(j, "who");
			evprof__json_str(j, who);
		}
		evprof__json_obj_end(j);
	}
	evprof__json_arr_end(j);
}

/*
 * Thread t's store entries summed per node (slot 0: no stack, slot n + 1:
 * node n), in the order the nodes first appear.
 */
static int put_thread(struct evprof__json *j, const struct page_data *d,
		      const struct evprof__thread *t, uint64_t *sum,
		      uint32_t *touched, uint32_t *mark, uint32_t stamp)
{
	const struct evprof_profile *p = d->p;
	size_t nr = 0, k;
	uint32_t c;
	int64_t i;

	for (i = t->first_entry; i >= 0; i = p->store.e[i].next) {
		int32_t st = p->store.e[i].stack;
		uint32_t slot = st < 0 ? 0 : (uint32_t)d->stack_node[st] + 1;
		const uint64_t *v = evprof__entry_vals(p, (size_t)i);
		uint64_t *s = &sum[(size_t)slot * d->ncols];

		if (mark[slot] != stamp) {
			mark[slot] = stamp;
			touched[nr++] = slot;
		}
		for (c = 0; c < d->ncols; c++)
			s[c] += v[c];
	}
	evprof__json_obj(j);
	evprof__json_key(j, "node");
	evprof__json_arr(j);
	for (k = 0; k < nr; k++)
		evprof__json_i64(j, (int64_t)touched[k] - 1);
	evprof__json_arr_end(j);
	evprof__json_key(j, "values");
	evprof__json_arr(j);
	for (c = 0; c < d->ncols; c++) {
		evprof__json_arr(j);
		for (k = 0; k < nr; k++)
			evprof__json_u64(
			    j, sum[(size_t)touched[k] * d->ncols + c]);
		evprof__json_arr_end(j);
	}
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
	for (k = 0; k < nr; k++)
		memset(&sum[(size_t)touched[k] * d->ncols], 0,
		       d->ncols * sizeof(*sum));
	return j->out->err;
}

/* One profile's part of the data: every key but "base". */
static int put_profile(struct evprof__json *j, const struct evprof_profile *p)
{
	struct page_data d = {0};
	uint64_t *sum = NULL;
	uint32_t *touched = NULL, *mark = NULL;
	size_t i;
	int err;

	err = page_data_build(&d, p);
	if (!err) {
		sum = calloc((d.nr_nodes + 1) * d.ncols, sizeof(*sum));
		touched = malloc((d.nr_nodes + 1) * sizeof(*touched));
		mark = calloc(d.nr_nodes + 1, sizeof(*mark));
		if (!sum || !touched || !mark)
			err = -ENOMEM;
	}
	if (!err) {
		put_columns(j, p);
		put_tables(j, &d);
		evprof__json_key(j, "entries");
		evprof__json_arr(j);
		for (i = 0; !err && i < p->nr_threads; i++)
			err = put_thread(j, &d, &p->threads[i], sum, touched,
					 mark, (uint32_t)i + 1);
		evprof__json_arr_end(j);
	}
	free(sum);
	free(touched);
	free(mark);
	page_data_free(&d);
	return err;
}

static int put_data(struct evprof__sink *out, const struct evprof_profile *p,
		    const char *title, const struct evprof_page_opts *opts)
{
	const struct evprof_profile *base = EVPROF_OPTS_GET(opts, base, NULL);
	const char *weight = EVPROF_OPTS_GET(opts, weight, NULL);
	struct evprof__json j;
	int err;

	evprof__json_init(&j, out);
	evprof__json_obj(&j);
	evprof__json_key(&j, "format");
	evprof__json_str(&j, "evprof-page");
	evprof__json_key(&j, "version");
	evprof__json_u64(&j, 1);
	evprof__json_key(&j, "title");
	evprof__json_str(&j, title);
	evprof__json_key(&j, "weight");
	evprof__json_str(&j, weight ? weight : p->has_cpu ? "cpu" : "samples");
	err = put_profile(&j, p);
	if (!err && base) {
		evprof__json_key(&j, "base");
		evprof__json_obj(&j);
		err = put_profile(&j, base);
		evprof__json_obj_end(&j);
	}
	evprof__json_obj_end(&j);
	return err ? err : out->err;
}

/*
 * The data goes inside <script type="application/json">: a "<" there could
 * end the element ("</script>") or open a comment. JSON has "<" only inside
 * strings, where "\u003c" means the same.
 */
static void put_script_safe(struct evprof__sink *out, const char *s, size_t n)
{
	const char *lt;

	while (n && (lt = memchr(s, '<', n))) {
		evprof__sink_write(out, s, (size_t)(lt - s));
		evprof__sink_write(out, "\\u003c", 6);
		n -= (size_t)(lt - s) + 1;
		s = lt + 1;
	}
	evprof__sink_write(out, s, n);
}

/* The data JSON in memory: it is escaped on its way into the page. */
static int data_json(const struct evprof_profile *p, const char *title,
		     const struct evprof_page_opts *opts, char **buf,
		     size_t *len)
{
	struct evprof__sink s;
	FILE *f = open_memstream(buf, len);
	int err, cerr;

	if (!f)
		return -errno;
	err = evprof__sink_open_file(&s, f);
	if (!err) {
		err = put_data(&s, p, title, opts);
		cerr = evprof__sink_close(&s, !err);
		err = err ? err : cerr;
	}
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

static int write_page(const struct evprof_profile *p, struct evprof__sink *out,
		      const struct evprof_page_opts *opts)
{
	/* The template's markers (web/index.html), in the switch's order. */
	static const char *const markers[] = {"TITLE@", "CSS@", "JS@", "DATA@"};
	const char *title = EVPROF_OPTS_GET(opts, title, NULL);
	const char *t = evprof__page_html, *at;
	char *data = NULL;
	size_t len = 0;
	int err;

	if (!title)
		title = p->product ? p->product : "evprof";
	err = data_json(p, title, opts, &data, &len);
	if (err)
		return err;
	while ((at = strstr(t, "@EVPROF_"))) {
		const char *name = at + strlen("@EVPROF_");
		size_t k;

		evprof__sink_write(out, t, (size_t)(at - t));
		for (k = 0; k < sizeof(markers) / sizeof(markers[0]); k++)
			if (!strncmp(name, markers[k], strlen(markers[k])))
				break;
		switch (k) {
		case 0:
			evprof__sink_markup(out, title, strlen(title));
			break;
		case 1:
			evprof__sink_puts(out, evprof__page_css);
			break;
		case 2:
			evprof__sink_puts(out, evprof__page_js);
			break;
		case 3:
			put_script_safe(out, data, len);
			break;
		default: /* not a marker: copied as it is */
			evprof__sink_putc(out, '@');
			t = at + 1;
			continue;
		}
		t = name + strlen(markers[k]);
	}
	evprof__sink_puts(out, t);
	free(data);
	return out->err;
}

bool evprof_page__available(void)
{
	return evprof__page_html[0] != 0;
}

static int check(const struct evprof_profile *p,
		 const struct evprof_page_opts *opts)
{
	const char *weight = EVPROF_OPTS_GET(opts, weight, NULL);

	if (!p || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	if (!evprof_page__available())
		return -ENOTSUP;
	if (weight && evprof__profile_column(p, weight) < 0)
		return -ENOENT;
	return 0;
}

int evprof_profile__write_page(const struct evprof_profile *p, const char *path,
			       const struct evprof_page_opts *opts)
{
	struct evprof__sink out;
	int err, cerr;

	err = path ? check(p, opts) : -EINVAL;
	if (err)
		return err;
	err = evprof__sink_open(&out, path);
	if (err)
		return err;
	err = write_page(p, &out, opts);
	cerr = evprof__sink_close(&out, !err);
	return err ? err : cerr;
}

int evprof_profile__write_page_file(const struct evprof_profile *p, FILE *f,
				    const struct evprof_page_opts *opts)
{
	struct evprof__sink out;
	int err, cerr;

	err = f ? check(p, opts) : -EINVAL;
	if (err)
		return err;
	err = evprof__sink_open_file(&out, f);
	if (err)
		return err;
	err = write_page(p, &out, opts);
	cerr = evprof__sink_close(&out, !err);
	return err ? err : cerr;
}
