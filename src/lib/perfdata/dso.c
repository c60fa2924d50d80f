// SPDX-License-Identifier: MIT
/*
 * Which files the symbols of an imported recording come from: binaries by
 * the build id perf recorded (under --symfs, at the recorded path, or in
 * perf's build-id cache), and the kernel's kallsyms only when the recording
 * comes from this boot. A file with another build id is never used:
 * symbols from it would be silently wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/symbols.h"
#include "internal.h"

void evprof__pd_dsos_free(struct pd_dsos *d)
{
	for (size_t i = 0; i < d->a.n; i++) {
		free(d->a.a[i].path);
		free(d->a.a[i].resolved);
	}
	EVPROF_VEC_FREE(&d->a);
	evprof__hashmap_free(d->by_path);
	d->by_path = NULL;
}

/* path exists and, when a build id is known, has that build id. */
static enum pd_dso_status check(const char *path, const uint8_t *bid,
				size_t len)
{
	uint8_t got[64];
	struct stat st;
	int n;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return PD_DSO_MISSING;
	if (!len)
		return PD_DSO_UNCHECKED;
	n = evprof__dso_path_build_id(path, got, sizeof(got));
	if (n > 0 && evprof__build_id_equal(got, (size_t)n, bid, len))
		return PD_DSO_FOUND;
	return PD_DSO_DIFFERENT;
}

/* perf's cache: DIR/.build-id/xx/rest, a directory holding "elf". */
static void cache_path(const char *dir, const uint8_t *bid, size_t len,
		       char *out, size_t outlen)
{
	char hex[2 * 20 + 1];
	struct stat st;

	evprof__hex(hex, bid, len, false);
	snprintf(out, outlen, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	if (!stat(out, &st) && S_ISDIR(st.st_mode)) {
		size_t n = strlen(out);

		snprintf(out + n, outlen - n, "/elf");
	}
}

/* Decides where path's binary is; fills e. */
static int resolve(struct pd_dsos *d, struct pd_dso *e, const uint8_t *bid,
		   size_t len)
{
	char buf[4096];
	enum pd_dso_status st, first = PD_DSO_MISSING;
	const char *pick = NULL;

	if (d->symfs) {
		snprintf(buf, sizeof(buf), "%s%s", d->symfs, e->path);
		st = check(buf, bid, len);
		if (st == PD_DSO_FOUND || st == PD_DSO_UNCHECKED)
			pick = buf;
		first = st;
	}
	if (!pick) {
		st = check(e->path, bid, len);
		if (st == PD_DSO_FOUND || st == PD_DSO_UNCHECKED)
			pick = e->path;
		if (first == PD_DSO_MISSING)
			first = st;
	}
	if (!pick && len && d->buildid_dir) {
		cache_path(d->buildid_dir, bid, len, buf, sizeof(buf));
		st = check(buf, bid, len);
		if (st == PD_DSO_FOUND)
			pick = buf;
	}
	if (pick) {
		e->status = len ? PD_DSO_FOUND : PD_DSO_UNCHECKED;
		e->resolved = strdup(pick);
		return e->resolved ? 0 : -ENOMEM;
	}
	e->status = first;
	return 0;
}

/* Names of mappings that are no files: never opened, nothing to say. */
static bool not_a_file(const char *path)
{
	return path[0] != '/' || !strncmp(path, "//anon", 6) ||
	       !strncmp(path, "/memfd:", 7) || !strncmp(path, "/dev/", 5) ||
	       !strncmp(path, "/anon_hugepage", 14) ||
	       !strncmp(path, "/SYSV", 5);
}

const struct pd_dso *evprof__pd_dso(struct pd_dsos *d, const char *path,
				    const uint8_t *bid, size_t len)
{
	struct pd_dso e = {0};
	long k;

	if (not_a_file(path))
		return NULL;
	if (!d->by_path) {
		d->by_path = evprof__hashmap_new(
		    evprof__hashmap_str_hash, evprof__hashmap_str_equal, NULL);
		if (!d->by_path)
			return NULL;
	}
	if (evprof__hashmap_find(d->by_path, (long)path, &k)) {
		d->a.a[k].frames++;
		return &d->a.a[k];
	}
	e.bid_len = (uint8_t)(len < sizeof(e.bid) ? len : sizeof(e.bid));
	if (e.bid_len)
		memcpy(e.bid, bid, e.bid_len);
	e.path = strdup(path);
	if (!e.path || resolve(d, &e, bid, len) || EVPROF_VEC_PUSH(&d->a, e)) {
		free(e.path);
		free(e.resolved);
		return NULL;
	}
	d->a.a[d->a.n - 1].frames = 1;
	/* Keys point into the entries' own strings, which never move. */
	if (evprof__hashmap_add(d->by_path, (long)d->a.a[d->a.n - 1].path,
				(long)(d->a.n - 1)))
		return NULL;
	return &d->a.a[d->a.n - 1];
}

/*
 * The running kernel's _text from kallsyms, scanned line by line: the core
 * kernel's symbols come first, in address order, so it is among the first
 * lines and the rest (expensive for the kernel to format) is not read.
 */
uint64_t evprof__pd_kallsyms_text(const char *path)
{
	char line[512], name[256];
	uint64_t addr = 0, a;
	char type;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) ==
			3 &&
		    !strcmp(name, "_text")) {
			addr = a;
			break;
		}
	}
	fclose(f);
	return addr;
}

bool evprof__pd_same_kernel(const char *kallsyms_path, const char *notes_path,
			    const uint8_t *bid, size_t len, uint64_t text,
			    char *why, size_t whylen)
{
	uint8_t notes[4096], now[64];
	uint64_t now_text;
	int n;

	if (!len) {
		snprintf(why, whylen, "the file records no kernel build id");
		return false;
	}
	n = evprof__read_file(notes_path, (char *)notes, sizeof(notes));
	if (n > 0)
		n = evprof__notes_build_id(notes, (size_t)n, now, sizeof(now));
	if (n <= 0) {
		snprintf(why, whylen,
			 "the running kernel's build id is "
			 "unknown");
		return false;
	}
	if (!evprof__build_id_equal(now, (size_t)n, bid, len)) {
		snprintf(why, whylen,
			 "the file comes from another kernel "
			 "(build id differs)");
		return false;
	}
	if (!text) {
		snprintf(why, whylen, "the file records no kernel map");
		return false;
	}
	now_text = evprof__pd_kallsyms_text(kallsyms_path);
	if (now_text != text) {
		snprintf(why, whylen,
			 "the kernel's _text was at 0x%" PRIx64 " when "
			 "recorded, %s",
			 text,
			 now_text ? "another address in this boot (KASLR)"
				  : "and kallsyms does not show it now");
		return false;
	}
	return true;
}
