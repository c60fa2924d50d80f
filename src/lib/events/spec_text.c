// SPDX-License-Identifier: MIT
/*
 * The small parsers every part of spec parsing shares: the notes that
 * become the one "unknown event" message, numbers, path-safe names and
 * modifiers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spec_text.h"

void evprof__spec_note(struct spec_notes *n, const char *fmt, ...)
{
	size_t room = sizeof(n->text) - n->len; /* always >= 1 */
	char one[sizeof(n->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	/* A name retried without its modifiers can fail the same way. */
	if (strstr(n->text, one))
		return;
	snprintf(n->text + n->len, room, "%s%s", n->len ? "; " : "", one);
	n->len += strlen(n->text + n->len);
}

/* All of s[0..len) as digits of base 10 or 16, without overflow. */
int evprof__spec_digits(const char *s, size_t len, unsigned int base,
			uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned int)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned int)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned int)(s[i] - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* "0x1f" (hex) or "31" (decimal). */
int evprof__spec_u64(const char *s, size_t len, uint64_t *out)
{
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return evprof__spec_digits(s + 2, len - 2, 16, out);
	return evprof__spec_digits(s, len, 10, out);
}

int evprof__spec_sample_term(struct perf_event_attr *attr, const char *t,
			     size_t klen, uint64_t v)
{
	bool period = klen == 6 && !strncmp(t, "period", 6);

	if (!period && !(klen == 4 && !strncmp(t, "freq", 4)))
		return 0;
	if (!v) {
		pr_warn("%.*s=0: want a positive number (a counter that only "
			"counts is a group member without the term)\n",
			(int)klen, t);
		return -EVPROF_ERR_BAD_SPEC;
	}
	attr->freq = !period;
	if (period)
		attr->sample_period = v;
	else
		attr->sample_freq = v;
	return 1;
}

/*
 * A name we may put in a sysfs or tracefs path: letters, digits, '_' and
 * '-', so that nothing typed can climb out of the directory ("..", "/").
 */
bool evprof__spec_safe_component(const char *s, size_t len)
{
	if (!len || len >= SPEC_COMPONENT_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

int evprof__spec_parse_mods(const char *s, size_t len, struct spec_mods *m)
{
	memset(m, 0, sizeof(*m));
	if (!len)
		return -EVPROF_ERR_BAD_SPEC;
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case 'u':
			m->u = true;
			break;
		case 'k':
			m->k = true;
			break;
		case 'h':
			m->h = true;
			break;
		case 'p':
			if (++m->p > 3) /* precise_ip is 0..3 */
				return -EVPROF_ERR_BAD_SPEC;
			break;
		default:
			return -EVPROF_ERR_BAD_SPEC;
		}
	}
	return 0;
}

/*
 * As perf does: naming any privilege level excludes the ones not named, so
 * :u also excludes the hypervisor, and :uk counts user and kernel only.
 */
void evprof__spec_apply_mods(struct perf_event_attr *attr,
			     const struct spec_mods *m)
{
	if (m->u || m->k || m->h) {
		attr->exclude_user = !m->u;
		attr->exclude_kernel = !m->k;
		attr->exclude_hv = !m->h;
	}
	if (m->p)
		attr->precise_ip = m->p;
}
