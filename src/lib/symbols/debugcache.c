// SPDX-License-Identifier: MIT
/* Debug files kept with their DWARF sections inflated; see debugcache.h. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "debugcache.h"

/* An entry's file name ends in ext: ".debug" or ".elf" (an image). */
static int entry_path(char *buf, size_t n, const char *dir, const uint8_t *id,
		      size_t len, const char *ext)
{
	char hex[2 * EVPROF__MAX_BUILD_ID + 1];

	if (!len || len > EVPROF__MAX_BUILD_ID)
		return -ENOENT;
	evprof__hex(hex, id, len, false);
	if ((size_t)snprintf(buf, n, "%s/%s%s", dir, hex, ext) >= n)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Whether elf (size bytes) has compressed sections (*compressed: all of
 * them zlib, the one kind libelf inflates everywhere; -1 when another
 * kind is there) and whether every section and the section table lie
 * inside the file.
 */
static bool scan(Elf *elf, uint64_t size, int *compressed)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shnum;

	*compressed = 0;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) ||
	    eh.e_shoff > size ||
	    (uint64_t)shnum * eh.e_shentsize > size - eh.e_shoff)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			return false;
		if (sh.sh_flags & SHF_COMPRESSED && *compressed >= 0) {
			GElf_Chdr ch;

			*compressed = gelf_getchdr(scn, &ch) &&
					      ch.ch_type == ELFCOMPRESS_ZLIB
					  ? 1
					  : -1;
		}
	}
	return true;
}

/* Whether elf holds build id id. */
static bool has_id(Elf *elf, const uint8_t *id, size_t len)
{
	const void *bid;

	return dwelf_elf_gnu_build_id(elf, &bid) == (ssize_t)len &&
	       !memcmp(bid, id, len);
}

/* The entry id.ext of dir; a debug file's (inflated) has no compressed section. */
static int open_entry(const char *dir, const uint8_t *id, size_t len,
		      const char *ext, bool inflated)
{
	char path[PATH_MAX];
	int compressed = 0;
	bool ok = false;
	struct stat st;
	Elf *elf;
	int fd;

	if (entry_path(path, sizeof(path), dir, id, len, ext))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -ENOENT;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && has_id(elf, id, len))
		ok = scan(elf, (uint64_t)st.st_size, &compressed) &&
		     (!inflated || !compressed);
	elf_end(elf);
	if (!ok) {
		/* Cut short or foreign: out of the way of the next store. */
		close(fd);
		unlink(path);
		return -ENOENT;
	}
	/* Its mtime says when it was last used: pruning goes oldest first. */
	utimensat(AT_FDCWD, path, NULL, 0);
	return fd;
}

int evprof__debugcache_open(const char *dir, const uint8_t *id, size_t len)
{
	return open_entry(dir, id, len, ".debug", true);
}

int evprof__debugcache_open_image(const char *dir, const uint8_t *id,
				  size_t len)
{
	return open_entry(dir, id, len, ".elf", false);
}

static int copy_all(int to, int from, uint64_t size)
{
	off_t off = 0;

	while ((uint64_t)off < size) {
		ssize_t n =
		    sendfile(to, from, &off, (size_t)(size - (uint64_t)off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
	}
	return 0;
}

/* Inflates every compressed section of the ELF file open at fd in place. */
static int inflate(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	Elf_Scn *scn = NULL;
	int64_t size;
	int err = 0;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EVPROF_ERR_BAD_ELF;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			err = -EVPROF_ERR_BAD_ELF;
		else if (sh.sh_flags & SHF_COMPRESSED &&
			 elf_compress(scn, 0, 0) != 1)
			err = -EVPROF_ERR_BAD_ELF;
	}
	/* libelf lays the grown sections out anew (no ELF_F_LAYOUT). */
	size = err ? -1 : elf_update(elf, ELF_C_WRITE);
	elf_end(elf);
	if (err)
		return err;
	if (size < 0)
		return -EVPROF_ERR_BAD_ELF;
	if (ftruncate(fd, size) || fdatasync(fd))
		return -errno;
	return 0;
}

struct entry {
	time_t mtime;
	uint64_t size;
	char name[NAME_MAX + 1];
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Removes the least recently used entries while dir holds more than max. */
static void prune(const char *dir, uint64_t max)
{
	struct entry *e = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		/* Debug files, images and the answers saved (symcache.h). */
		if ((strncmp(de->d_name, "answers-", 8) &&
		     (len < 7 || strcmp(de->d_name + len - 6, ".debug")) &&
		     (len < 5 || strcmp(de->d_name + len - 4, ".elf"))) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) ||
		    evprof__vec_grow((void **)&e, &cap, sizeof(*e), n + 1,
				     SIZE_MAX))
			continue;
		e[n].mtime = st.st_mtime;
		e[n].size = (uint64_t)st.st_size;
		memcpy(e[n].name, de->d_name, len + 1);
		total += e[n++].size;
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 0; i < n && total > max; i++)
		if (!unlinkat(dirfd(d), e[i].name, 0))
			total -= e[i].size;
	closedir(d);
	free(e);
}

/*
 * Stores a copy of the ELF file open at fd, which holds build id id, in
 * dir as id.ext: inflated (a debug file; only one with zlib-compressed
 * sections is worth it) or as it is (an image).
 */
static int store_entry(const char *dir, const uint8_t *id, size_t len, int fd,
		       const char *ext, bool inflated)
{
	char path[PATH_MAX], link[64];
	int compressed = 0;
	struct stat st;
	int tmp, err;
	Elf *elf;

	err = entry_path(path, sizeof(path), dir, id, len, ext);
	if (err)
		return err;
	if (fstat(fd, &st))
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf && elf_kind(elf) == ELF_K_ELF &&
		      scan(elf, (uint64_t)st.st_size, &compressed)
		  ? 0
		  : -EVPROF_ERR_BAD_ELF;
	/* Another build id: not this module's debug file (a dwz file). */
	if (!err && ((inflated && compressed <= 0) || !has_id(elf, id, len)))
		err = -ENOENT;
	elf_end(elf);
	if (err)
		return err;
	err = evprof__mkdirs(dir);
	if (err)
		return err;
	/* Unnamed until whole: a reader never meets a partial entry. */
	tmp = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (tmp < 0)
		return -errno;
	err = copy_all(tmp, fd, (uint64_t)st.st_size);
	if (!err && inflated)
		err = inflate(tmp);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", tmp);
	/* EEXIST: another run stored the same bytes first. */
	if (!err && linkat(AT_FDCWD, link, AT_FDCWD, path, AT_SYMLINK_FOLLOW) &&
	    errno != EEXIST)
		err = -errno;
	close(tmp);
	if (!err)
		prune(dir, EVPROF__DEBUGCACHE_MAX);
	return err;
}

int evprof__debugcache_store(const char *dir, const uint8_t *id, size_t len,
			     int fd)
{
	return store_entry(dir, id, len, fd, ".debug", true);
}

int evprof__debugcache_store_image(const char *dir, const uint8_t *id,
				   size_t len, int fd)
{
	int cached = evprof__debugcache_open_image(dir, id, len);

	if (cached >= 0) {
		close(cached);
		return 0;
	}
	return store_entry(dir, id, len, fd, ".elf", false);
}

void evprof__debugcache_prune(const char *dir)
{
	prune(dir, EVPROF__DEBUGCACHE_MAX);
}
