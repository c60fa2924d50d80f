// SPDX-License-Identifier: MIT
/* Comma separated lists of event specs, with {..} groups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "spec_text.h"

void evprof_event_list__free(struct evprof_event_list *list)
{
	if (!list)
		return;
	free(list->events);
	free(list->groups);
	free(list);
}

struct list_builder {
	struct evprof_event_list *list;
	size_t cap_events, cap_groups;
};

static int add_event(struct list_builder *b, const char *s, size_t len,
		     const char *full, size_t at)
{
	struct evprof_event_list *l = b->list;
	char item[EVPROF_EVENT_NAME_MAX];
	int err;

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len) {
		pr_warn("empty event at offset %zu of '%.*s'\n", at, SHOW_MAX,
			full);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (len >= sizeof(item)) {
		pr_warn("event '%.*s...' is longer than %d bytes\n",
			SHOW_MAX / 4, s, EVPROF_EVENT_NAME_MAX - 1);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (l->nr_events == b->cap_events) {
		size_t cap = b->cap_events ? b->cap_events * 2 : 8;
		void *p = realloc(l->events, cap * sizeof(*l->events));

		if (!p)
			return -ENOMEM;
		l->events = p;
		b->cap_events = cap;
	}
	memcpy(item, s, len);
	item[len] = '\0';
	err = evprof__spec_parse(&l->events[l->nr_events], item);
	if (err)
		return err;
	l->nr_events++;
	return 0;
}

static int add_group(struct list_builder *b, size_t first)
{
	struct evprof_event_list *l = b->list;

	if (l->nr_groups == b->cap_groups) {
		size_t cap = b->cap_groups ? b->cap_groups * 2 : 8;
		void *p = realloc(l->groups, cap * sizeof(*l->groups));

		if (!p)
			return -ENOMEM;
		l->groups = p;
		b->cap_groups = cap;
	}
	l->groups[l->nr_groups].first = first;
	l->groups[l->nr_groups].nr = l->nr_events - first;
	l->nr_groups++;
	return 0;
}

/*
 * Length of the item at s: up to a ',', '{' or '}' that is not between the
 * two slashes of pmu/.../, or to the end.
 */
static size_t item_len(const char *s)
{
	bool in_pmu = false;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (s[i] == '/')
			in_pmu = !in_pmu;
		else if (!in_pmu && strchr(",{}", s[i]))
			break;
	}
	return i;
}

/* {a,b}:mods applies mods to every member, after the member's own. */
static int apply_group_mods(struct evprof_event_list *l, size_t first,
			    const char *mods, size_t len, const char *full)
{
	struct spec_mods m;

	if (evprof__spec_parse_mods(mods, len, &m)) {
		pr_warn("bad group modifiers ':%.*s' in '%.*s': want :u, :k, "
			":h, :p, :pp or :ppp\n",
			SHOWN(len), mods, SHOW_MAX, full);
		return -EVPROF_ERR_BAD_SPEC;
	}
	for (size_t i = first; i < l->nr_events; i++) {
		struct evprof_event_spec *e = &l->events[i];
		size_t nlen = strlen(e->name);

		if (nlen + 1 + len >= sizeof(e->name)) {
			pr_warn("event '%s:%.*s' is longer than %d bytes\n",
				e->name, SHOWN(len), mods,
				EVPROF_EVENT_NAME_MAX - 1);
			return -EVPROF_ERR_BAD_SPEC;
		}
		/* Named as perf names them: "{cycles,...}:u" has "cycles:u". */
		e->name[nlen] = ':';
		memcpy(e->name + nlen + 1, mods, len);
		e->name[nlen + 1 + len] = '\0';
		evprof__spec_apply_mods(&e->attr, &m);
	}
	return 0;
}

static int parse_group(struct list_builder *b, const char *str, size_t *pos)
{
	size_t i = *pos + 1, first = b->list->nr_events;
	int err;

	for (;;) {
		size_t n;

		while (str[i] == ' ' || str[i] == '\t')
			i++;
		n = item_len(str + i);
		if (str[i + n] == '{') {
			pr_warn("nested '{' at offset %zu of '%.*s': groups do "
				"not nest\n",
				i + n, SHOW_MAX, str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		if (!str[i + n]) {
			pr_warn("'{' at offset %zu of '%.*s' has no '}'\n",
				*pos, SHOW_MAX, str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		err = add_event(b, str + i, n, str, i);
		if (err)
			return err;
		i += n + 1;
		if (str[i - 1] == '}')
			break;
	}
	if (str[i] == ':') {
		size_t n = strcspn(str + i + 1, ", \t");

		err = apply_group_mods(b->list, first, str + i + 1, n, str);
		if (err)
			return err;
		i += n + 1;
	}
	*pos = i;
	return add_group(b, first);
}

int evprof_event_list__parse(struct evprof_event_list **listp, const char *str)
{
	struct list_builder b = {.list = NULL};
	size_t i = 0;
	int err = 0;

	if (!listp || !str)
		return -EINVAL;
	*listp = NULL;
	b.list = calloc(1, sizeof(*b.list));
	if (!b.list)
		return -ENOMEM;
	for (;;) {
		while (str[i] == ' ' || str[i] == '\t')
			i++;
		if (str[i] == '{') {
			err = parse_group(&b, str, &i);
		} else {
			size_t n = item_len(str + i);

			if (str[i + n] == '{' || str[i + n] == '}') {
				pr_warn(
				    "unexpected '%c' at offset %zu of '%.*s'\n",
				    str[i + n], i + n, SHOW_MAX, str);
				err = -EVPROF_ERR_BAD_SPEC;
				break;
			}
			err = add_event(&b, str + i, n, str, i);
			if (!err)
				err = add_group(&b, b.list->nr_events - 1);
			i += n;
		}
		if (err)
			break;
		while (str[i] == ' ' || str[i] == '\t')
			i++;
		if (!str[i])
			break;
		if (str[i] != ',') {
			pr_warn("unexpected '%c' at offset %zu of '%.*s'\n",
				str[i], i, SHOW_MAX, str);
			err = -EVPROF_ERR_BAD_SPEC;
			break;
		}
		i++;
	}
	if (err) {
		evprof_event_list__free(b.list);
		return err;
	}
	*listp = b.list;
	return 0;
}
