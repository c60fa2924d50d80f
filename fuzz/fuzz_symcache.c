// SPDX-License-Identifier: MIT
/*
 * Fuzzes the saved answers' reader (symcache.c): the input is an answers
 * file. It is opened; every offset its words name is looked up, and each
 * answer found must hold what a lookup answers (frames within the inline
 * limit, strings readable). Then a new answer is added and saved, and the
 * file read again must give it back, with the old ones.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/srcline.h"
#include "symbols/symcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t bid[] = {0xfe, 0xed};
static char dir[] = "/tmp/evprof-fuzz-symcache-XXXXXX";
static bool made; /* dir, once per process */

static void clean(void)
{
	char path[sizeof(dir) + 32];

	snprintf(path, sizeof(path), "%s/answers-feed", dir);
	unlink(path);
	rmdir(dir);
}

static void put(const uint8_t *data, size_t size)
{
	char path[sizeof(dir) + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/answers-feed", dir);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

/* Read to their ends: a string out of bounds is the sanitizer's to catch. */
static volatile size_t string_bytes;

/*
 * Looks up off; an answer found must be whole: its offset, frames within
 * the inline limit, strings readable to their end. Returns whether found.
 */
static bool check(struct evprof__symcache *c, struct evprof__names *n,
		  uint64_t off)
{
	struct evprof__symcache_ent e;
	int ret = evprof__symcache_find(c, off, n, &e);

	if (ret < 0)
		abort();
	if (!ret)
		return false;
	if (e.fileoff != off || e.nr_frames > EVPROF__MAX_INLINE ||
	    (e.nr_frames && !e.frames))
		abort();
	string_bytes += e.name ? strlen(e.name) : 0;
	for (uint32_t i = 0; i < e.nr_frames; i++)
		string_bytes +=
		    (e.frames[i].name ? strlen(e.frames[i].name) : 0) +
		    (e.frames[i].file ? strlen(e.frames[i].file) : 0);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct evprof_sym_frame frame = {"fuzz_fn", "fuzz.c", 7, 3,
						      5};
	struct evprof__symcache_ent e = {.fileoff = UINT64_MAX - 1,
					 .name = "fuzz_fn",
					 .frames = &frame,
					 .nr_frames = 1};
	struct evprof__names *n = evprof__names_new(false);
	struct evprof__symcache *c;
	size_t found = 0, again = 0;

	if (!n)
		abort();
	if (!made) {
		if (!mkdtemp(dir))
			abort();
		made = true;
		atexit(clean);
	}
	put(data, size);
	c = evprof__symcache_open(dir, bid, sizeof(bid), false);
	if (!c)
		abort();
	/* Every aligned word as an offset: those the file holds among them. */
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t off;

		memcpy(&off, data + i, sizeof(off));
		found += off != e.fileoff && check(c, n, off);
	}
	if (evprof__symcache_add(c, &e))
		abort();
	evprof__symcache_save(c);
	evprof__symcache_free(c);
	/* Read again: the new answer, and the old ones still there. */
	c = evprof__symcache_open(dir, bid, sizeof(bid), false);
	if (!c || !check(c, n, e.fileoff))
		abort();
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t off;

		memcpy(&off, data + i, sizeof(off));
		again += off != e.fileoff && check(c, n, off);
	}
	if (again < found)
		abort();
	evprof__symcache_free(c);
	evprof__names_free(n);
	return 0;
}
