// SPDX-License-Identifier: MIT
/* Finding, checking and opening the ELF file of a mapping; its image. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include <evprof/proc.h>

#include "debugcache.h"
#include "dso.h"

void evprof__dso_file_close(struct evprof__dso_file *f)
{
	elf_end(f->elf);
	f->elf = NULL;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

bool evprof__build_id_equal(const uint8_t *a, size_t alen, const uint8_t *b,
			    size_t blen)
{
	return alen && alen == blen && !memcmp(a, b, alen);
}

int evprof__dso_path_build_id(const char *path, uint8_t *id, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	const void *bid;
	ssize_t len;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		len = dwelf_elf_gnu_build_id(elf, &bid);
		if (len > 0 && (size_t)len <= max) {
			memcpy(id, bid, (size_t)len);
			n = (int)len;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

/*
 * Takes fd (consumed) as f when it holds an ELF file that passes w's
 * identity checks. Returns 0 or -ENOENT.
 */
static int take_fd(const struct evprof__dso_want *w, int fd, const char *what,
		   const char *file_name, struct evprof__dso_file *f)
{
	const void *bid;
	ssize_t bid_len;
	struct stat st;

	f->fd = fd;
	f->elf = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (w->inode && st.st_ino != w->inode))
		goto skip;
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		pr_debug("symbols: %s: not an ELF file\n", what);
		goto skip;
	}
	bid_len = dwelf_elf_gnu_build_id(f->elf, &bid);
	if (bid_len < 0 || bid_len > EVPROF__MAX_BUILD_ID)
		bid_len = 0;
	if (w->build_id_len &&
	    !evprof__build_id_equal(bid, (size_t)bid_len, w->build_id,
				    w->build_id_len)) {
		pr_debug("symbols: %s: build id differs from the mapping's\n",
			 what);
		goto skip;
	}
	f->build_id_len = (size_t)bid_len;
	if (bid_len > 0) {
		memcpy(f->build_id, bid, (size_t)bid_len);
		memcpy(f->key, "b:", 2);
		evprof__hex(f->key + 2, f->build_id, f->build_id_len, false);
	} else {
		snprintf(f->key, sizeof(f->key), "f:%llx:%llx:%lld.%09ld:%lld",
			 (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			 (long long)st.st_size);
	}
	snprintf(f->file_name, sizeof(f->file_name), "%s", file_name);
	return 0;
skip:
	evprof__dso_file_close(f);
	return -ENOENT;
}

static int try_path(const struct evprof__dso_want *w, const char *cand,
		    const char *file_name, struct evprof__dso_file *f)
{
	int fd = open(cand, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ENOENT;
	return take_fd(w, fd, cand, file_name, f);
}

static int find_vdso_cb(const struct evprof_map *m, void *ctx)
{
	struct evprof_map *out = ctx;

	if (m->flags & EVPROF_MAP_SPECIAL && !strcmp(m->path, "[vdso]")) {
		*out = *m;
		out->path = NULL;
	}
	return 0;
}

/*
 * Our own vdso, copied into a memfd so that libelf and libdwfl read it
 * like a file. Reading the target's copy through /proc/PID/mem would need
 * it alive when it is read.
 */
static int open_vdso(const struct evprof__dso_want *w,
		     struct evprof__dso_file *f)
{
	struct evprof_map m = {0};
	unsigned long base;
	int fd;

	base = getauxval(AT_SYSINFO_EHDR);
	if (!base || evprof_maps__read(0, find_vdso_cb, &m) < 0 ||
	    m.start != base || m.end <= m.start)
		return -ENOENT;
	fd = memfd_create("evprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (write(fd, (const void *)base, m.end - m.start) !=
	    (ssize_t)(m.end - m.start)) {
		close(fd);
		return -ENOENT;
	}
	return take_fd(w, fd, "[vdso]", "[vdso]", f);
}

/*
 * The images evprof__dso_pin() kept, for the whole process: each in the
 * image cache under its build id, or open (fd) where it could not be.
 */
struct kept {
	char *path;
	uint64_t ino;
	uint8_t id[EVPROF__MAX_BUILD_ID];
	size_t len;
	int fd; /* -1: in image_dir, or lost */
};
static EVPROF_VEC(struct kept) kept;
static size_t nr_open;
static char *image_dir;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void evprof__dso_keep_in(const char *dir)
{
	pthread_mutex_lock(&kept_lock);
	if (!image_dir && dir)
		image_dir = strdup(dir);
	pthread_mutex_unlock(&kept_lock);
}

/* The GNU build id of the ELF file open at fd into k; 0 bytes if none. */
static void read_build_id(int fd, struct kept *k)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bid;
	ssize_t len = elf && elf_kind(elf) == ELF_K_ELF
			  ? dwelf_elf_gnu_build_id(elf, &bid)
			  : 0;

	k->len = len > 0 && len <= EVPROF__MAX_BUILD_ID ? (size_t)len : 0;
	if (k->len)
		memcpy(k->id, bid, k->len);
	elf_end(elf);
}

/* Keeps fd (consumed) as k's: in the image cache, else open. */
static void keep(struct kept *k, int fd)
{
	int err = -ENOENT;

	elf_version(EV_CURRENT);
	read_build_id(fd, k);
	if (image_dir && k->len)
		err = evprof__debugcache_store_image(image_dir, k->id, k->len,
						     fd);
	if (!err) {
		close(fd);
		return;
	}
	if (err != -ENOENT)
		pr_debug("symbols: image cache %s: %s: %s\n", image_dir,
			 k->path, evprof_strerror(err));
	if (nr_open < EVPROF__DSO_PINS) {
		k->fd = fd;
		nr_open++;
		return;
	}
	close(fd);
	if (nr_open++ == EVPROF__DSO_PINS)
		pr_warn("symbols: %d container images kept open and no image "
			"cache to copy more to (EVPROF_DEBUG_CACHE): those "
			"that exit before their profile is built stay "
			"unnamed, %s the first\n",
			EVPROF__DSO_PINS, k->path);
}

void evprof__dso_pin(int pid, const char *path, uint64_t ino)
{
	char cand[PATH_MAX + 64];
	struct kept k = {.fd = -1};
	struct stat st;
	int fd;

	/* The host's file at path is the mapped one (or cannot be told). */
	if (pid <= 0 || path[0] != '/' ||
	    (!stat(path, &st) && (!ino || st.st_ino == ino)) ||
	    snprintf(cand, sizeof(cand), "/proc/%d/root%s", pid, path) >=
		(int)sizeof(cand))
		return;
	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < kept.n; i++)
		if ((!ino || kept.a[i].ino == ino) &&
		    !strcmp(kept.a[i].path, path))
			goto out;
	fd = open(cand, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	k.path = strdup(path);
	if (!k.path || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (ino && st.st_ino != ino)) {
		free(k.path);
		close(fd);
		goto out;
	}
	k.ino = st.st_ino;
	keep(&k, fd);
	if (EVPROF_VEC_PUSH(&kept, k)) {
		if (k.fd >= 0)
			close(k.fd);
		free(k.path);
	}
out:
	pthread_mutex_unlock(&kept_lock);
}

/*
 * The image cache's copy of build id id, as f when it passes w's checks
 * but for the inode: a copy has its own, and its build id stands for the
 * file's (read from the mapped file itself, or given by the mapping).
 */
static int try_cached(const struct evprof__dso_want *w, const char *dir,
		      const uint8_t *id, size_t len, struct evprof__dso_file *f)
{
	struct evprof__dso_want by_id = *w;
	int fd;

	if (!dir || !len ||
	    (w->build_id_len &&
	     !evprof__build_id_equal(w->build_id, w->build_id_len, id, len)))
		return -ENOENT;
	fd = evprof__debugcache_open_image(dir, id, len);
	if (fd < 0)
		return -ENOENT;
	by_id.inode = 0;
	by_id.build_id = id;
	by_id.build_id_len = len;
	/* Debuglink files are looked for next to the mapping's own path. */
	return take_fd(&by_id, fd, w->path, w->path, f);
}

/* A kept file of w's path that passes w's checks, as f. 0 or -ENOENT. */
static int try_kept(const struct evprof__dso_want *w,
		    struct evprof__dso_file *f)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < kept.n && ret; i++) {
		const struct kept *k = &kept.a[i];
		int fd;

		if (strcmp(k->path, w->path) ||
		    (w->inode && k->ino != w->inode))
			continue;
		if (k->fd < 0) {
			ret = try_cached(w, image_dir, k->id, k->len, f);
			continue;
		}
		fd = fcntl(k->fd, F_DUPFD_CLOEXEC, 0);
		if (fd >= 0)
			ret = take_fd(w, fd, w->path, w->path, f);
	}
	pthread_mutex_unlock(&kept_lock);
	/* A mapping that names its build id (perf.data), kept by another run. */
	if (ret && w->build_id_len)
		ret = try_cached(w, w->cache_dir, w->build_id, w->build_id_len,
				 f);
	return ret;
}

int evprof__dso_open(const struct evprof__dso_want *w,
		     struct evprof__dso_file *f)
{
	char cand[PATH_MAX + 64];

	f->fd = -1;
	f->elf = NULL;
	if (!strcmp(w->path, "[vdso]"))
		return open_vdso(w, f);
	if (w->path[0] != '/')
		return -ENOENT;
	if (!try_path(w, w->path, w->path, f))
		return 0;
	if (w->pid <= 0)
		return try_kept(w, f);
	if (snprintf(cand, sizeof(cand), "/proc/%d/root%s", w->pid, w->path) <
		(int)sizeof(cand) &&
	    !try_path(w, cand, cand, f))
		return 0;
	snprintf(cand, sizeof(cand), "/proc/%d/map_files/%llx-%llx", w->pid,
		 (unsigned long long)w->start, (unsigned long long)w->end);
	/* Debuglink files are looked for next to the mapping's own path. */
	if (!try_path(w, cand, w->path, f))
		return 0;
	return try_kept(w, f);
}

uint64_t evprof__dso_bias(const struct evprof__dso_file *f, uint64_t start,
			  uint64_t pgoff)
{
	uint64_t bias = start - pgoff;
	GElf_Ehdr eh;
	size_t n;

	if (!gelf_getehdr(f->elf, &eh) || eh.e_type != ET_DYN)
		return 0;
	if (elf_getphdrnum(f->elf, &n))
		return bias;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~0xfffULL) <= pgoff &&
		    pgoff < ph.p_offset + ph.p_filesz)
			return start - (pgoff - (ph.p_offset & ~0xfffULL)) -
			       (ph.p_vaddr & ~0xfffULL);
	}
	return bias;
}

/* elfutils' own default: beside the file, .debug there, /usr/lib/debug. */
#define DEFAULT_PATH ":.debug:/usr/lib/debug"

/* Whether dir/sub/name exists (sub may be NULL or empty). */
static bool exists3(const char *dir, const char *sub, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s%s", dir ? dir : ".",
			     sub ? sub : "", sub && *sub ? "/" : "",
			     name) >= sizeof(path))
		return true; /* unknown: let libdwfl look */
	return !access(path, F_OK);
}

/*
 * Whether libdwfl's search along path (elfutils' syntax) could find a
 * separate debug file for file_name, named link (its .gnu_debuglink, else
 * BASENAME.debug) or by build id: a superset of the places it tries (in
 * each entry: the file's directory, a subdirectory of it, or under an
 * absolute one the file's directory and each of its tails; the link's
 * name and the file's own). Elfutils 0.188 asks debuginfod when its search
 * finds nothing, and loads libdebuginfod for that (with libcurl and 30
 * more libraries: 4-6 ms, a fifth of a short recording's CPU) even when
 * no server is set: a search that cannot succeed is not made then.
 */
static bool may_find_locally(const char *path, const char *file_name,
			     const char *link, const unsigned char *id,
			     int id_len)
{
	const char *base = file_name ? strrchr(file_name, '/') : NULL;
	char dir[PATH_MAX], own[NAME_MAX + 8];
	char idname[2 * EVPROF__MAX_BUILD_ID + 24];
	char *copy, *rest, *entry;
	bool found = false;

	if (!file_name)
		return false;
	base = base ? base + 1 : file_name;
	/* The file's directory, without its last slash ("" for "/x"). */
	if ((size_t)snprintf(dir, sizeof(dir), "%.*s",
			     (int)(base > file_name ? base - file_name - 1 : 1),
			     base > file_name ? file_name : ".") >=
		sizeof(dir) ||
	    (size_t)snprintf(own, sizeof(own), "%s.debug", base) >= sizeof(own))
		return true;
	if (!link)
		link = own;
	idname[0] = 0;
	if (id_len > 0 && id_len <= EVPROF__MAX_BUILD_ID) {
		char hex[2 * EVPROF__MAX_BUILD_ID + 1];

		evprof__hex(hex, id, (size_t)id_len, false);
		snprintf(idname, sizeof(idname), ".build-id/%.2s/%s.debug", hex,
			 hex + 2);
	}
	copy = strdup(path + (*path == '+' || *path == '-'));
	if (!copy)
		return true;
	/* strsep: an empty entry (the file's own directory) counts. */
	for (rest = copy; !found && (entry = strsep(&rest, ":"));) {
		entry += *entry == '+' || *entry == '-';
		/* "": the file's own directory, where base is the file. */
		if (*entry != '/') {
			found = exists3(dir, entry, link) ||
				(*entry && exists3(dir, entry, base));
			continue;
		}
		found = (idname[0] && exists3(entry, NULL, idname)) ||
			exists3(entry, NULL, link) ||
			exists3(entry, NULL, base);
		/* Under it the file's directory, then each of its tails. */
		for (const char *t = dir; !found && t && *t;
		     t = strchr(t + 1, '/')) {
			const char *tail = t + (*t == '/');

			found = *tail && (exists3(entry, tail, link) ||
					  exists3(entry, tail, base));
		}
	}
	free(copy);
	return found;
}

/* The same from the name given, then (as libdwfl) from its realpath(). */
static bool may_find(const char *path, const char *file_name, const char *link,
		     const unsigned char *id, int id_len)
{
	char *real;
	bool may = may_find_locally(path, file_name, link, id, id_len);

	if (may || !file_name)
		return may;
	real = realpath(file_name, NULL);
	if (real && strcmp(real, file_name))
		may = may_find_locally(path, real, link, id, id_len);
	free(real);
	return may;
}

/*
 * libdwfl's standard search, with the finder's debug cache first (the
 * finder is the module's user data, set by evprof__dso_new(); NULL for
 * the unwinder's modules): a debug file found with compressed sections is
 * stored inflated when the finder is done, and read from the cache by
 * later runs; a search that cannot find anything here is not made while
 * no debuginfod server is set (see may_find_locally()). libdwfl also asks
 * here for a debug file's .gnu_debugaltlink file (dwz), its name as the
 * link and a CRC of 0; that one is not the module's and goes to the
 * standard search alone.
 */
static int find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname,
			  Dwarf_Addr base, const char *file_name,
			  const char *debuglink, GElf_Word crc, char **name)
{
	struct evprof__dso_finder *fi = *ud;
	/* A dwz file (a CRC of 0) is not the module's: found otherwise. */
	bool dwz = debuglink && !crc;
	const char *dir = fi && !dwz ? fi->cache_dir : NULL;
	const char *urls = getenv("DEBUGINFOD_URLS");
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int len = dwz ? 0 : dwfl_module_build_id(mod, &id, &vaddr);
	struct evprof__dso_pending p = {0};
	int fd;

	if (len > EVPROF__MAX_BUILD_ID)
		len = 0;
	if (dir && len > 0) {
		fd = evprof__debugcache_open(dir, id, (size_t)len);
		if (fd >= 0)
			return fd;
	}
	if (!dwz && (!urls || !*urls) &&
	    !may_find(fi ? fi->debuginfo_path : DEFAULT_PATH, file_name,
		      debuglink, id, len))
		return -1;
	fd = dwfl_standard_find_debuginfo(mod, ud, modname, base, file_name,
					  debuglink, crc, name);
	if (fd < 0 || !dir || len <= 0 || !*name)
		return fd;
	memcpy(p.id, id, (size_t)len);
	p.len = (size_t)len;
	p.path = strdup(*name);
	if (p.path && EVPROF_VEC_PUSH(&fi->pending, p))
		free(p.path);
	return fd;
}

int evprof__dso_finder_init(struct evprof__dso_finder *fi,
			    const char *debuginfo_path, const char *cache_dir)
{
	memset(fi, 0, sizeof(*fi));
	fi->debuginfo_path =
	    strdup(debuginfo_path ? debuginfo_path : DEFAULT_PATH);
	fi->cache_dir = cache_dir ? strdup(cache_dir) : NULL;
	if (!fi->debuginfo_path || (cache_dir && !fi->cache_dir))
		return -ENOMEM;
	/* Modules are reported with their fd: find_elf is never asked. */
	fi->cb.find_elf = dwfl_build_id_find_elf;
	fi->cb.find_debuginfo = find_debuginfo;
	fi->cb.section_address = dwfl_offline_section_address;
	fi->cb.debuginfo_path = &fi->debuginfo_path;
	elf_version(EV_CURRENT);
	return 0;
}

void evprof__dso_finder_fini(struct evprof__dso_finder *fi)
{
	for (size_t i = 0; i < fi->pending.n; i++) {
		struct evprof__dso_pending *p = &fi->pending.a[i];
		int fd = open(p->path, O_RDONLY | O_CLOEXEC), err;

		err = fd < 0 ? -errno
			     : evprof__debugcache_store(fi->cache_dir, p->id,
							p->len, fd);
		if (err && err != -ENOENT)
			pr_debug("symbols: debug cache: %s: %s\n", p->path,
				 evprof_strerror(err));
		if (fd >= 0)
			close(fd);
		free(p->path);
	}
	EVPROF_VEC_FREE(&fi->pending);
	free(fi->debuginfo_path);
	free(fi->cache_dir);
	fi->debuginfo_path = fi->cache_dir = NULL;
}

Dwfl_Module *evprof__dso_report(Dwfl *dwfl, struct evprof__dso_file *f,
				const char *name, uint64_t bias)
{
	Dwfl_Module *mod;

	/* add_p_vaddr: bias is the module's bias, not its first address. */
	mod = dwfl_report_elf(dwfl, name, f->file_name, f->fd, bias, true);
	if (!mod)
		pr_debug("symbols: %s: %s\n", f->file_name, dwfl_errmsg(-1));
	else
		f->fd = -1; /* libdwfl's now, with its own Elf handle */
	evprof__dso_file_close(f);
	return mod;
}

static int read_loads(struct evprof__dso *d, Elf *elf)
{
	size_t phnum, i, n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum) || phnum > 65535)
		return -EVPROF_ERR_BAD_ELF;
	d->loads = calloc(phnum ? phnum : 1, sizeof(*d->loads));
	if (!d->loads)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EVPROF_ERR_BAD_ELF;
		if (ph.p_type != PT_LOAD)
			continue;
		if (n == 0)
			d->base_vaddr = ph.p_vaddr;
		d->loads[n].offset = ph.p_offset;
		d->loads[n].filesz = ph.p_filesz;
		d->loads[n].vaddr = ph.p_vaddr;
		n++;
	}
	d->nr_loads = n;
	return n ? 0 : -EVPROF_ERR_BAD_ELF;
}

struct evprof__dso *evprof__dso_new(struct evprof__dso_finder *fi,
				    struct evprof__dso_file *f,
				    const char *name)
{
	struct evprof__dso *d;
	int err = -ENOMEM;
	void **ud;

	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	err = read_loads(d, f->elf);
	if (err)
		goto fail;
	memcpy(d->build_id, f->build_id, f->build_id_len);
	d->build_id_len = f->build_id_len;
	d->dwfl = dwfl_begin(&fi->cb);
	if (!d->dwfl) {
		err = -ENOMEM;
		goto fail;
	}
	dwfl_report_begin(d->dwfl);
	/*
	 * Bias 0: ET_DYN is placed at its link-time addresses, as ET_EXEC
	 * always is.
	 */
	d->mod = evprof__dso_report(d->dwfl, f, name, 0);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		evprof__dso_free(d);
		errno = EINVAL;
		return NULL;
	}
	/* Read by find_debuginfo(), which libdwfl calls only later. */
	dwfl_module_info(d->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = fi;
	return d;
fail:
	evprof__dso_file_close(f);
	evprof__dso_free(d);
	errno = err == -ENOMEM ? ENOMEM : EINVAL;
	return NULL;
}

void evprof__dso_free(struct evprof__dso *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->loads);
	free(d);
}

bool evprof__dso_svma(const struct evprof__dso *d, uint64_t off, uint64_t *svma)
{
	for (size_t i = 0; i < d->nr_loads; i++) {
		const struct evprof__dso_load *l = &d->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*svma = off - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

const char *evprof__dso_elfutils_version(void)
{
	return dwfl_version(NULL);
}
