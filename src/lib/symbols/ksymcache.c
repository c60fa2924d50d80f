// SPDX-License-Identifier: MIT
/* The kernel's symbols through a copy kept for this boot: see ksymcache.h. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksymcache.h"

#define LIVE	     "/proc/kallsyms"
#define PREFIX	     "kallsyms-"
#define FILE_PREFIX  "kallsyms-file-"
#define MODULES_MAX  (16u << 20)
#define BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

/* Adds the build id note of module name (len bytes), when it has one. */
static uint64_t hash_build_id(uint64_t h, const char *name, size_t len)
{
	char path[PATH_MAX], note[256];
	int n;

	if ((size_t)snprintf(path, sizeof(path),
			     "/sys/module/%.*s/notes/.note.gnu.build-id",
			     (int)len, name) >= sizeof(path))
		return h;
	n = evprof__read_file(path, note, sizeof(note));
	return n > 0 ? evprof__hash_mem(h, note, (size_t)n) : h;
}

/*
 * Hashes each module's name, size and address (fields 1, 2 and 6 of
 * /proc/modules) and build id: a module built anew and loaded again is
 * another key, though it may land at the same address.
 */
static uint64_t hash_modules(const char *p, const char *end)
{
	uint64_t h = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			nl = end;
		for (int f = 1; p < nl; f++) {
			const char *sp = memchr(p, ' ', (size_t)(nl - p));

			if (!sp)
				sp = nl;
			if (f == 1 || f == 2 || f == 6)
				h = evprof__hash_mem(h, p,
						     (size_t)(sp - p + 1));
			if (f == 1)
				h = hash_build_id(h, p, (size_t)(sp - p));
			p = sp + 1;
		}
		p = nl + 1;
	}
	return h;
}

/*
 * The boot's copy's file name (of /proc/kallsyms, path):
 * "kallsyms-BOOTID-MODULES". Returns 0 or -errno.
 */
static int boot_key(const char *path, char *key, size_t n)
{
	char boot[64], *mods = NULL;
	size_t len = 0, i;
	uint64_t h;
	int got = evprof__read_file(BOOT_ID_FILE, boot, sizeof(boot)), err;

	(void)path;
	if (got <= 0)
		return got ? got : -ENOENT;
	boot[strcspn(boot, "\n")] = 0;
	for (i = 0; boot[i]; i++)
		if (!strchr("0123456789abcdef-", boot[i]))
			return -EINVAL;
	/* A kernel built without modules has no /proc/modules. */
	err = evprof__read_all("/proc/modules", MODULES_MAX, &mods, &len);
	if (err && err != -ENOENT)
		return err;
	h = err ? 0 : hash_modules(mods, mods + len);
	free(mods);
	if (!i || (size_t)snprintf(key, n, PREFIX "%s-%016llx", boot,
				   (unsigned long long)h) >= n)
		return -EINVAL;
	return 0;
}

/* The table saved at dir/key when it is a regular file of this user's. */
static struct evprof__kallsyms *map_copy(const char *dir, const char *key)
{
	struct evprof__kallsyms *ks = NULL;
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, key) >=
	    sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		ks = evprof__kallsyms_map(fd);
	close(fd);
	return ks;
}

static bool is_file_key(const char *name)
{
	return !strncmp(name, FILE_PREFIX, strlen(FILE_PREFIX));
}

/*
 * Removes the other copies of key's kind: of other boots or module sets,
 * or of other files (one is kept: files imported in turn from two kernels
 * are parsed anew each time, as they were before the copies).
 */
static void drop_others(const char *dir, const char *key)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, PREFIX, strlen(PREFIX)) &&
		    is_file_key(de->d_name) == is_file_key(key) &&
		    strcmp(de->d_name, key))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

/*
 * Saves ks as dir/key: written whole to an unnamed file, linked in under a
 * name of this process's, renamed over the old copy (never rewritten in
 * place: other runs map it). Not synced: a crash starts a new boot, whose
 * copies have another name.
 */
static void store(const char *dir, const char *key,
		  const struct evprof__kallsyms *ks)
{
	char path[PATH_MAX], tmp[PATH_MAX], link[64];
	int fd, err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, key) >=
		sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, key,
			     (int)getpid()) >= sizeof(tmp) ||
	    evprof__mkdirs(dir))
		return;
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	err = evprof__kallsyms_save(ks, fd);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (!err && !linkat(AT_FDCWD, link, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) &&
	    rename(tmp, path))
		unlink(tmp);
	close(fd);
	if (!err)
		drop_others(dir, key);
}

/* A file's key: its path and what changes when it is written anew. */
static int file_key(const char *path, char *key, size_t n)
{
	struct stat st;
	uint64_t h;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	h = evprof__hash_mem(EVPROF_HASH_INIT, path, strlen(path) + 1);
	h = evprof__hash_mem(h, &st.st_dev, sizeof(st.st_dev));
	h = evprof__hash_mem(h, &st.st_ino, sizeof(st.st_ino));
	h = evprof__hash_mem(h, &st.st_size, sizeof(st.st_size));
	h = evprof__hash_mem(h, &st.st_mtim, sizeof(st.st_mtim));
	return (size_t)snprintf(key, n, FILE_PREFIX "%016llx",
				(unsigned long long)h) >= n
		   ? -1
		   : 0;
}

/*
 * The table of path through its copy in dir, named by key_fn: the saved
 * one unless fresh, else path read and parsed, saved when key_fn gives the
 * same name after the read (nothing changed meanwhile, so the text is the
 * key's). *cached: the table came from the copy.
 */
static struct evprof__kallsyms *
through_copy(const char *dir, const char *path,
	     int (*key_fn)(const char *path, char *key, size_t n), bool fresh,
	     bool *hidden, bool *cached)
{
	char key[128], now[128];
	bool keyed = !key_fn(path, key, sizeof(key));
	struct evprof__kallsyms *ks =
	    keyed && !fresh ? map_copy(dir, key) : NULL;

	*hidden = false;
	*cached = ks != NULL;
	if (ks)
		return ks;
	ks = evprof__kallsyms_load(path, hidden);
	if (ks && !*hidden && keyed && !key_fn(path, now, sizeof(now)) &&
	    !strcmp(key, now))
		store(dir, key, ks);
	return ks;
}

struct evprof__kallsyms *evprof__ksymcache_load(const char *dir, bool fresh,
						bool *hidden, bool *cached)
{
	return through_copy(dir, LIVE, boot_key, fresh, hidden, cached);
}

struct evprof__kallsyms *evprof__ksymcache_file(const char *dir,
						const char *path, bool *hidden)
{
	bool cached;

	return through_copy(dir, path, file_key, false, hidden, &cached);
}
