// SPDX-License-Identifier: MIT
/*
 * Which files the symbols of an imported recording come from: binaries by
 * the build id perf recorded (under --symfs, at the recorded path, or in
 * perf's build-id cache), and the kernel's kallsyms only when the recording
 * comes from this boot. A file with another build id is never used:
 * symbols from it would be silently wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"
#include "perfdata_internal.h"

#define EHDR64_SIZE  64
#define PHDR64_SIZE  56
#define PT_NOTE_TYPE 4
#define NOTE_MAX     (64 * 1024)

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

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	ssize_t r = pread(fd, buf, len, off);

	return r == (ssize_t)len ? 0 : -EIO;
}

/*
 * The build id from the PT_NOTE segments of a 64-bit little-endian ELF
 * file (what x86-64 and arm64 Linux run); 0 for any other file.
 */
int evprof__pd_file_build_id(const char *path, uint8_t *id, size_t max)
{
	uint8_t eh[EHDR64_SIZE], ph[PHDR64_SIZE], *notes;
	uint64_t phoff;
	uint16_t phnum, phentsize;
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;

	if (fd < 0)
		return -errno;
	if (pread_all(fd, eh, sizeof(eh), 0) || memcmp(eh, "\177ELF", 4) ||
	    eh[4] != 2 || eh[5] != 1)
		goto out;
	phoff = evprof__load_u64(eh + 32);
	phentsize = (uint16_t)(eh[54] | eh[55] << 8);
	phnum = (uint16_t)(eh[56] | eh[57] << 8);
	if (phentsize < PHDR64_SIZE)
		goto out;
	for (uint16_t i = 0; i < phnum && !n; i++) {
		uint64_t off, len;

		if (pread_all(fd, ph, sizeof(ph),
			      (off_t)(phoff + (uint64_t)i * phentsize)))
			break;
		if (evprof__load_u32(ph) != PT_NOTE_TYPE)
			continue;
		off = evprof__load_u64(ph + 8);
		len = evprof__load_u64(ph + 32);
		if (len > NOTE_MAX)
			continue;
		notes = malloc(len ? len : 1);
		if (!notes)
			break;
		if (!pread_all(fd, notes, len, (off_t)off)) {
			n = evprof__notes_build_id(notes, len, id, max);
			if (n < 0)
				n = 0;
		}
		free(notes);
	}
out:
	close(fd);
	return n;
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
	n = evprof__pd_file_build_id(path, got, sizeof(got));
	/* A short recorded id is a prefix (perf pads to 20 bytes). */
	if (n > 0 && (size_t)n >= len && !memcmp(got, bid, len))
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
	if ((size_t)n < len || memcmp(now, bid, len)) {
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
