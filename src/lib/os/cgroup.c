// SPDX-License-Identifier: MIT
/*
 * The perf_event cgroup hierarchy and its cgroups (evprof/cgroup.h). A
 * mountinfo line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE
 * SOURCE SUPEROPTS, paths with space, tab, newline and backslash written as
 * octal escapes (proc(5)).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <evprof/cgroup.h>

#include "os.h"

/* Copies the escaped field [p, end) into out (len bytes), unescaped. */
static bool unescape(const char *p, const char *end, char *out, size_t len)
{
	size_t n = 0;

	while (p < end && n + 1 < len) {
		if (*p == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3' &&
		    p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
			out[n++] = (char)((p[1] - '0') << 6 |
					  (p[2] - '0') << 3 | (p[3] - '0'));
			p += 4;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return p == end;
}

/* Field i (0-based) of s: [*b, *e); false past the end. */
static bool field(const char *s, int i, const char **b, const char **e)
{
	const char *p = s;

	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return false;
		*b = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		*e = p;
		if (i-- == 0)
			return true;
	}
}

/* True when the comma-separated options [b, e) hold opt. */
static bool has_opt(const char *b, const char *e, const char *opt)
{
	size_t n = strlen(opt);

	while (b < e) {
		const char *c = memchr(b, ',', (size_t)(e - b));

		if (!c)
			c = e;
		if ((size_t)(c - b) == n && !memcmp(b, opt, n))
			return true;
		b = c + 1;
	}
	return false;
}

/*
 * How far above this process's cgroup namespace root a mount's root (its
 * mountinfo field [b, e)) is: "/" 0, "/.." 1, "/../.." 2, a subtree ("/x",
 * "/../x") -1. A mount made in
 * a container's own namespace (a pod's /sys/fs/cgroup) shows its subtree
 * alone; the node's hierarchy bound in beside it shows the whole.
 */
static int above(const char *b, const char *e)
{
	int n = 0;

	while (e - b >= 3 && !memcmp(b, "/..", 3) &&
	       (e - b == 3 || b[3] == '/')) {
		n++;
		b += 3;
	}
	/* "/../x" or "/x": down into a subtree, below the namespace's root. */
	return b == e || (e - b == 1 && *b == '/') ? n : -1;
}

/*
 * The hierarchy into *fs: the v1 perf_event one unless v2_only, else
 * cgroup2's mount that sees the most (*v2_above: above() of its root).
 */
static int find_above(struct evprof_cgroup_fs *fs, bool v2_only, int *v2_above)
{
	char line[4096], v2[PATH_MAX] = "", path[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool v1 = false;

	if (!fs)
		return -EINVAL;
	if (!f)
		return -errno;
	while (!v1 && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - "), *b, *e, *rb, *re, *tb,
			   *te, *ob, *oe;

		if (!sep || !field(line, 4, &b, &e) ||
		    !field(line, 3, &rb, &re) || !field(sep + 3, 0, &tb, &te) ||
		    !field(sep + 3, 2, &ob, &oe))
			continue;
		/* The cgroup2 mount that sees the most of the hierarchy. */
		if ((size_t)(te - tb) == 7 && !memcmp(tb, "cgroup2", 7)) {
			if (above(rb, re) > *v2_above &&
			    unescape(b, e, path, sizeof(path))) {
				memcpy(v2, path, sizeof(v2));
				*v2_above = above(rb, re);
			}
		} else if (!v2_only && (size_t)(te - tb) == 6 &&
			   !memcmp(tb, "cgroup", 6) &&
			   has_opt(ob, oe, "perf_event")) {
			/* The controller is bound here, not in cgroup2. */
			v1 = unescape(b, e, fs->mount, sizeof(fs->mount));
		}
	}
	fclose(f);
	if (v1) {
		fs->version = 1;
		return 0;
	}
	if (!*v2)
		return -ENOENT;
	memcpy(fs->mount, v2, sizeof(v2));
	fs->version = 2;
	return 0;
}

static int find(struct evprof_cgroup_fs *fs, bool v2_only)
{
	int v2_above = -2;

	return find_above(fs, v2_only, &v2_above);
}

bool evprof__cgroup2_whole(void)
{
	struct evprof_cgroup_fs fs;
	int v2_above = -2;

	return !find_above(&fs, true, &v2_above) && v2_above > 0;
}

int evprof_cgroup_fs__find(struct evprof_cgroup_fs *fs)
{
	return find(fs, false);
}

/* path (len bytes of room, n used) and what is under it, parents first. */
static int walk(char *path, size_t len, size_t n, size_t root,
		int (*cb)(uint64_t id, const char *path, void *ctx), void *ctx,
		int depth)
{
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int ret;

	if (stat(path, &st))
		return -errno;
	ret = cb((uint64_t)st.st_ino, n > root ? path + root : "/", ctx);
	if (ret || depth > 64 || !(dir = opendir(path)))
		return ret;
	while (!ret && (d = readdir(dir))) {
		size_t k = strlen(d->d_name);

		if (d->d_type != DT_DIR || d->d_name[0] == '.' ||
		    n + 1 + k + 1 > len)
			continue;
		path[n] = '/';
		memcpy(path + n + 1, d->d_name, k + 1);
		ret = walk(path, len, n + 1 + k, root, cb, ctx, depth + 1);
		/* A cgroup removed meanwhile is no error. */
		if (ret == -ENOENT)
			ret = 0;
		path[n] = '\0';
	}
	closedir(dir);
	return ret;
}

int evprof__cgroup_walk(bool v2,
			int (*cb)(uint64_t id, const char *path, void *ctx),
			void *ctx)
{
	struct evprof_cgroup_fs fs;
	char path[PATH_MAX];
	size_t n;
	int err = find(&fs, v2);

	if (err)
		return err;
	n = strlen(fs.mount);
	while (n > 1 && fs.mount[n - 1] == '/')
		n--;
	memcpy(path, fs.mount, n);
	path[n] = '\0';
	return walk(path, sizeof(path), n, n, cb, ctx, 0);
}

/* The part of real (a resolved path) under mount, or NULL outside it. */
static const char *under(const char *real, const char *mount)
{
	size_t n = strlen(mount);

	while (n > 1 && mount[n - 1] == '/')
		n--;
	if (strncmp(real, mount, n) || (real[n] && real[n] != '/'))
		return NULL;
	return real + n;
}

int evprof_cgroup__resolve(const struct evprof_cgroup_fs *fs, const char *path,
			   struct evprof_cgroup *cg)
{
	char mount[PATH_MAX], real[PATH_MAX], joined[PATH_MAX * 2];
	const char *rel;
	struct stat st;

	if (!fs || !path || !cg || !*path)
		return -EINVAL;
	if (!realpath(fs->mount, mount))
		return -errno;
	/* An absolute directory elsewhere is a mistake, not a name. */
	if (*path == '/' && realpath(path, real) && !under(real, mount) &&
	    !stat(real, &st) && S_ISDIR(st.st_mode) && strcmp(real, "/"))
		return -EXDEV;
	snprintf(joined, sizeof(joined), "%s/%s", mount, path + (*path == '/'));
	if (*path == '/' && under(path, fs->mount))
		snprintf(joined, sizeof(joined), "%s", path);
	if (!realpath(joined, real))
		return -errno;
	rel = under(real, mount);
	if (!rel)
		return -EXDEV; /* a link out of the hierarchy */
	if (stat(real, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	snprintf(cg->path, sizeof(cg->path), "%s", real);
	snprintf(cg->name, sizeof(cg->name), "%s", *rel ? rel : "/");
	cg->id = (uint64_t)st.st_ino;
	return 0;
}

bool evprof_cgroup__within(const struct evprof_cgroup *a,
			   const struct evprof_cgroup *b)
{
	size_t n = strlen(b->name);

	if (!strcmp(b->name, "/"))
		return true;
	return !strncmp(a->name, b->name, n) &&
	       (a->name[n] == '\0' || a->name[n] == '/');
}

const char *evprof_cgroup__why(int err, const struct evprof_cgroup_fs *fs,
			       char *buf, size_t len)
{
	if (!fs && err == -ENOENT)
		snprintf(buf, len,
			 "this host mounts no cgroup2 and no cgroup v1 "
			 "hierarchy with the perf_event controller");
	else if (fs && err == -ENOENT)
		snprintf(buf, len,
			 "no such cgroup in the perf_event hierarchy (cgroup "
			 "v%d at %s)",
			 fs->version, fs->mount);
	else if (fs && err == -EXDEV)
		snprintf(buf, len,
			 "outside the perf_event hierarchy (cgroup v%d at %s); "
			 "give a path under it or from its root",
			 fs->version, fs->mount);
	else
		snprintf(buf, len, "%s", strerror(-err));
	return buf;
}
