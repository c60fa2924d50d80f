// SPDX-License-Identifier: MIT
/*
 * Symbolizer against binutils: fixtures are compiled at test time from
 * tests/fixtures/src with pinned flags (PIE, non-PIE, shared library,
 * stripped + debuglink, stripped + build-id directory, MiniDebugInfo, C++,
 * Rust-mangled names), run once to print return addresses taken in known
 * functions and their own maps, and every address is looked up both
 * through evprof and `addr2line -f -i -C`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/bpf.h>

#include <evprof/proc.h>
#include <evprof/symbols.h>

#include "cases.h"
#include "symbols/kallsyms.h"

static char dir[] = "/tmp/evprof-symtest-XXXXXX";
static char src[PATH_MAX];
static bool have_cxx;

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		print_message("command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* The first line of file name in dir (at most 255 bytes), "" if none. */
static const char *slurp(const char *name)
{
	static char buf[256];
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Finds the fixture sources: next to this file in the source tree. */
static int find_src(void)
{
	const char *cands[] = {getenv("SRCDIR"), __FILE__};
	size_t i;

	for (i = 0; i < 2; i++) {
		char *slash;

		if (!cands[i])
			continue;
		snprintf(src, sizeof(src), "%s", cands[i]);
		if (i == 0) {
			strncat(src, "/tests/fixtures/src",
				sizeof(src) - strlen(src) - 1);
		} else {
			slash = strrchr(src, '/');
			if (!slash)
				continue;
			snprintf(slash, sizeof(src) - (size_t)(slash - src),
				 "/../fixtures/src");
		}
		if (access(src, R_OK) == 0)
			return 0;
	}
	return -1;
}

static int setup(void **state)
{
	(void)state;
	if (system("command -v cc >/dev/null && command -v addr2line "
		   ">/dev/null && command -v objcopy >/dev/null && command -v "
		   "readelf >/dev/null")) {
		print_message(
		    "SKIP: cc, addr2line, objcopy or readelf missing\n");
		exit(77);
	}
	if (find_src()) {
		print_message("fixture sources not found\n");
		return -1;
	}
	if (!mkdtemp(dir))
		return -1;
		/* Pinned flags: -O2 with DWARF, frame pointers, GNU build ids.
		 */
#define CFLAGS "-g -O2 -fno-omit-frame-pointer -Wl,--build-id"
	if (sh("cd %s && cc " CFLAGS
	       " -fPIC -shared -o libsymfix.so %s/symfix_lib.c",
	       dir, src) ||
	    sh("cd %s && cc " CFLAGS
	       " -fPIE -pie -o pie %s/symfix_main.c -L. -lsymfix -Wl,-rpath,%s",
	       dir, src, dir) ||
	    sh("cd %s && cc " CFLAGS
	       " -fno-pie -no-pie -o nopie %s/symfix_main.c -L. -lsymfix "
	       "-Wl,-rpath,%s",
	       dir, src, dir) ||
	    /* Stripped, with a debuglink to a debug file in the same folder. */
	    sh("cd %s && objcopy --only-keep-debug pie stripped.debug && "
	       "objcopy --strip-all pie stripped && objcopy "
	       "--add-gnu-debuglink=stripped.debug stripped",
	       dir) ||
	    /* Stripped, debug file only in a build-id folder. */
	    sh("cd %s && objcopy --strip-all pie bidonly && id=$(readelf -n "
	       "pie | sed -n 's/.*Build ID: *//p') && mkdir -p "
	       "dbg/.build-id/${id%%${id#??}} && cp stripped.debug "
	       "dbg/.build-id/${id%%${id#??}}/${id#??}.debug",
	       dir) ||
	    /* The same with its DWARF compressed, as distributions ship it. */
	    sh("cd %s && id=$(readelf -n pie | sed -n 's/.*Build ID: *//p') "
	       "&& mkdir -p zdbg/.build-id/${id%%${id#??}} && objcopy "
	       "--compress-debug-sections=zlib stripped.debug "
	       "zdbg/.build-id/${id%%${id#??}}/${id#??}.debug && echo $id > "
	       "pie.id",
	       dir))
		return -1;
	/*
	 * MiniDebugInfo the way Fedora makes it (gdb manual, "MiniDebugInfo"):
	 * function symbols not in .dynsym, in an xz-compressed ELF put into
	 * .gnu_debugdata of the fully stripped binary.
	 */
	if (sh("cd %s && cp pie mini && nm -D mini --format=posix "
	       "--defined-only | awk '{print $1}' | sort > mini.dyn && nm mini "
	       "--format=posix --defined-only | awk '$2 == \"T\" || $2 == "
	       "\"t\" || $2 == \"D\" {print $1}' | sort > mini.fn && comm -13 "
	       "mini.dyn mini.fn > mini.keep && objcopy --only-keep-debug mini "
	       "mini.full && objcopy -S --remove-section .gdb_index "
	       "--remove-section .comment --keep-symbols=mini.keep mini.full "
	       "mini.dd && strip --strip-all -R .comment mini && xz mini.dd && "
	       "objcopy --add-section .gnu_debugdata=mini.dd.xz mini",
	       dir) ||
	    /* Rust-mangled names, symbol table only (no DWARF). */
	    sh("cd %s && cc -O2 -fPIE -pie -Wl,--build-id -o rs "
	       "%s/symfix_rust.c",
	       dir, src))
		return -1;
	have_cxx = system("command -v c++ >/dev/null") == 0 &&
		   sh("cd %s && c++ " CFLAGS " -o cxx %s/symfix_cxx.cc", dir,
		      src) == 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (strchr(dir, 'X') == NULL)
		sh("rm -rf %s", dir);
	return 0;
}

/* ---- fixture output --------------------------------------------------- */

struct point {
	char kind[8]; /* "ra": a return address; "fn": a function's address */
	char what[64];
	uint64_t addr;
};

struct run {
	struct point pts[10];
	int nr;
	char *maps;
	size_t maps_len;
};

/* Runs exe (with args) and reads its report; *pp keeps it open if set. */
static void start_fixture(const char *exe, struct run *r, FILE **pp)
{
	char cmd[PATH_MAX + 32], line[8192];
	size_t cap = 0;
	bool in_maps = false;
	FILE *p;

	memset(r, 0, sizeof(*r));
	snprintf(cmd, sizeof(cmd), "%s/%s", dir, exe);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		size_t l = strlen(line);

		if (in_maps && !strcmp(line, "end\n"))
			break;
		if (in_maps) {
			if (r->maps_len + l + 1 > cap) {
				cap = (cap + l + 1) * 2;
				r->maps = realloc(r->maps, cap);
				assert_non_null(r->maps);
			}
			memcpy(r->maps + r->maps_len, line, l + 1);
			r->maps_len += l;
		} else if (!strcmp(line, "maps\n")) {
			in_maps = true;
		} else {
			struct point *pt = &r->pts[r->nr];

			assert_true(r->nr < 10);
			assert_int_equal(sscanf(line, "%7s %63s %" SCNx64,
						pt->kind, pt->what, &pt->addr),
					 3);
			r->nr++;
		}
	}
	assert_true(in_maps);
	if (pp)
		*pp = p;
	else
		assert_int_equal(pclose(p), 0);
}

static void run_fixture(const char *exe, struct run *r)
{
	start_fixture(exe, r, NULL);
}

struct map_find {
	uint64_t addr;
	struct evprof_map m;
	char path[PATH_MAX];
	uint64_t base; /* start of the same file's pgoff-0 mapping */
	bool found;
};

static int map_find_cb(const struct evprof_map *m, void *ctx)
{
	struct map_find *f = ctx;

	if (f->addr >= m->start && f->addr < m->end) {
		f->m = *m;
		snprintf(f->path, sizeof(f->path), "%s", m->path);
		f->m.path = f->path;
		f->found = true;
	}
	return 0;
}

static int base_cb(const struct evprof_map *m, void *ctx)
{
	struct map_find *f = ctx;

	if (m->pgoff == 0 && !strcmp(m->path, f->path) && !f->base)
		f->base = m->start;
	return 0;
}

static void find_map(const struct run *r, uint64_t addr, struct map_find *f)
{
	memset(f, 0, sizeof(*f));
	f->addr = addr;
	assert_true(evprof_maps__parse(r->maps, r->maps_len, map_find_cb, f) >
		    0);
	assert_true(f->found);
	assert_true(evprof_maps__parse(r->maps, r->maps_len, base_cb, f) > 0);
	assert_true(f->base != 0);
}

/* find_map(), and the mapping as the symbolizer takes it (no inode). */
static void sym_map(const struct run *r, uint64_t addr, struct map_find *f,
		    struct evprof_sym_mapping *map)
{
	find_map(r, addr, f);
	*map = (struct evprof_sym_mapping){.path = f->path,
					   .start = f->m.start,
					   .end = f->m.end,
					   .pgoff = f->m.pgoff};
}

/* First PT_LOAD's p_vaddr, read by binutils. */
static uint64_t first_vaddr(const char *path)
{
	char cmd[PATH_MAX + 64], line[512];
	uint64_t off, vaddr;
	FILE *p;
	bool found = false;

	snprintf(cmd, sizeof(cmd), "readelf -lW %s", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (!found && sscanf(line, " LOAD 0x%" SCNx64 " 0x%" SCNx64,
				     &off, &vaddr) == 2)
			found = true;
	pclose(p);
	assert_true(found);
	return vaddr;
}

struct a2l_frame {
	char name[256];
	char file[PATH_MAX];
	unsigned line;
};

/* addr2line -f -i -C: (name, file:line) pairs, innermost first. */
static int addr2line(const char *path, uint64_t svma, struct a2l_frame *fr,
		     int max)
{
	char cmd[PATH_MAX + 64], name[256], loc[PATH_MAX];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "addr2line -f -i -C -e %s 0x%" PRIx64, path,
		 svma);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n < max && fgets(name, sizeof(name), p) &&
	       fgets(loc, sizeof(loc), p)) {
		char *colon, *sp;

		name[strcspn(name, "\n")] = '\0';
		loc[strcspn(loc, "\n")] = '\0';
		sp = strstr(loc, " (discriminator");
		if (sp)
			*sp = '\0';
		colon = strrchr(loc, ':');
		assert_non_null(colon);
		*colon = '\0';
		snprintf(fr[n].name, sizeof(fr[n].name), "%s", name);
		snprintf(fr[n].file, sizeof(fr[n].file), "%s", loc);
		fr[n].line = (unsigned)strtoul(colon + 1, NULL, 10);
		n++;
	}
	pclose(p);
	return n;
}

/*
 * Looks addr up in the mapping of a fixture run and compares with
 * addr2line on truth_file (the binary that has the symbols).
 */
static void check_point(struct evprof_symbolizer *s, const struct run *r,
			const struct point *pt, const char *truth_file,
			bool expect_dwarf)
{
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct a2l_frame fr[8];
	struct map_find f;
	uint64_t addr = pt->addr, fv, svma;
	char truth[PATH_MAX];
	int n, i;

	if (!strcmp(pt->kind, "ra"))
		addr -= 1; /* the call instruction, as profilers look it up */
	sym_map(r, addr, &f, &map);
	map.inode = f.m.inode;
	assert_int_equal(evprof_symbolizer__user(s, &map, addr, &res), 0);

	if (truth_file[0] == '/')
		snprintf(truth, sizeof(truth), "%s", truth_file);
	else
		snprintf(truth, sizeof(truth), "%s/%s", dir, truth_file);
	fv = first_vaddr(f.path);
	svma = addr - f.base + fv;
	assert_true(res.image_found);
	assert_string_equal(res.lib_path, f.path);
	assert_string_equal(res.lib_name, strrchr(f.path, '/') + 1);
	assert_true(res.build_id_len == 20);
	if (res.rel_addr != addr - f.base)
		fail_msg("%s: rel 0x%" PRIx64 " want 0x%" PRIx64, pt->what,
			 res.rel_addr, addr - f.base);

	n = addr2line(truth, svma, fr, 8);
	assert_true(n >= 1);
	assert_non_null(res.name);
	/* The symbol is the outermost function addr2line names. */
	if (strcmp(res.name, fr[n - 1].name))
		fail_msg("%s: symbol \"%s\", addr2line \"%s\"", pt->what,
			 res.name, fr[n - 1].name);
	assert_true(res.sym_start <= res.rel_addr &&
		    res.rel_addr < res.sym_start + res.sym_size);
	if (!expect_dwarf) {
		assert_int_equal(res.nr_frames, 1);
		assert_null(res.frames[0].file);
		return;
	}
	if ((int)res.nr_frames != n)
		fail_msg("%s: %u frames, addr2line %d", pt->what, res.nr_frames,
			 n);
	for (i = 0; i < n; i++) {
		assert_non_null(res.frames[i].name);
		assert_string_equal(res.frames[i].name, fr[i].name);
		assert_non_null(res.frames[i].file);
		assert_string_equal(res.frames[i].file, fr[i].file);
		if (res.frames[i].line != fr[i].line)
			fail_msg("%s frame %d: line %u, addr2line %u", pt->what,
				 i, res.frames[i].line, fr[i].line);
	}
}

static const struct point *get_point(const struct run *r, const char *what)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (!strcmp(r->pts[i].what, what))
			return &r->pts[i];
	fail_msg("fixture printed no %s", what);
	return NULL;
}

/* Every point of exe, checked against addr2line on truth (or itself). */
static void check_exe(const char *exe, const char *truth,
		      const struct evprof_symbolizer_opts *opts)
{
	struct evprof_symbolizer *s;
	const struct point *pt;
	struct run r;
	char lib[PATH_MAX];

	s = evprof_symbolizer__new(opts);
	assert_non_null(s);
	run_fixture(exe, &r);
	check_point(s, &r, get_point(&r, "helper"), truth, true);
	check_point(s, &r, get_point(&r, "leaf_a"), truth, true);
	check_point(s, &r, get_point(&r, "main"), truth, true);
	snprintf(lib, sizeof(lib), "%s/libsymfix.so", dir);
	check_point(s, &r, get_point(&r, "lib_func"), lib, true);

	/* The inline chain is the point of the fixture: check it by name. */
	pt = get_point(&r, "helper");
	{
		struct evprof_sym_mapping map = {0};
		struct evprof_sym_result res;
		struct map_find f;

		sym_map(&r, pt->addr - 1, &f, &map);
		assert_int_equal(
		    evprof_symbolizer__user(s, &map, pt->addr - 1, &res), 0);
		assert_int_equal(res.nr_frames, 2);
		assert_string_equal(res.frames[0].name, "helper");
		assert_string_equal(res.frames[1].name, "inl_caller");
		assert_string_equal(res.name, "inl_caller");
		assert_true(res.frames[0].line > 0 && res.frames[1].line > 0);
	}
	free(r.maps);
	evprof_symbolizer__free(s);
}

static void test_pie(void **state)
{
	(void)state;
	check_exe("pie", "pie", NULL);
}

static void test_nopie(void **state)
{
	(void)state;
	check_exe("nopie", "nopie", NULL);
}

static void test_debuglink(void **state)
{
	(void)state;
	check_exe("stripped", "pie", NULL);
}

static void test_build_id_dir(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	char path[PATH_MAX + 16];

	(void)state;
	snprintf(path, sizeof(path), ":.debug:%s/dbg", dir);
	opts.debuginfo_path = path;
	check_exe("bidonly", "pie", &opts);
}

/*
 * A stripped binary named through a symlinked directory (as paths from
 * another mount namespace or a perf.data file may be): its debug file is
 * under an absolute debug folder by the resolved directory only, which
 * libdwfl finds from the realpath() of the name: found, inline chain and
 * lines, with no debuginfod server set.
 */
static void test_debuglink_via_link(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	char path[PATH_MAX + 16], via[PATH_MAX + 16];
	const struct point *pt;
	struct map_find f;
	struct run r;

	(void)state;
	assert_int_equal(sh("cd %s && mkdir -p real2 gdbg%s/real2 && "
			    "cp stripped real2/ && ln -sfn real2 lnk2 && "
			    "cp stripped.debug gdbg%s/real2/",
			    dir, dir, dir),
			 0);
	snprintf(path, sizeof(path), ":.debug:%s/gdbg", dir);
	opts.debuginfo_path = path;
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	run_fixture("real2/stripped", &r);
	pt = get_point(&r, "helper");
	sym_map(&r, pt->addr - 1, &f, &map);
	snprintf(via, sizeof(via), "%s/lnk2/stripped", dir);
	map.path = via;
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	assert_int_equal(res.nr_frames, 2);
	assert_string_equal(res.frames[0].name, "helper");
	assert_true(res.frames[0].line > 0 && res.frames[1].line > 0);
	free(r.maps);
	evprof_symbolizer__free(s);
}

/* How many compressed DWARF sections path has, as binutils' readelf says. */
static int compressed_sections(const char *path)
{
	char cmd[PATH_MAX + 128];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -S -W %s | grep -c '\\] \\.debug_[a-z_]* .* C '",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

/*
 * A compressed debug file is stored inflated in the debug cache; later
 * symbolizers read the copy (checked by removing the original), and a
 * damaged copy is passed over and stored anew.
 */
/* The build id of pie (hex), as the fixture setup wrote it. */
static void pie_id(char id[130])
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pie.id", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%129s", id), 1);
	fclose(f);
}

static void test_debug_cache(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	char dbg[PATH_MAX], cache[PATH_MAX], entry[PATH_MAX * 2];
	char orig[PATH_MAX + 200], id[130];
	struct stat st;
	off_t whole;

	(void)state;
	snprintf(cache, sizeof(cache), "%s/cache/evprof", dir);
	snprintf(dbg, sizeof(dbg), ":.debug:%s/zdbg", dir);
	pie_id(id);
	snprintf(entry, sizeof(entry), "%s/%s.debug", cache, id);
	snprintf(orig, sizeof(orig), "%s/zdbg/.build-id/%.2s/%s.debug", dir, id,
		 id + 2);
	assert_true(compressed_sections(orig) > 0);
	opts.debuginfo_path = dbg;
	opts.debug_cache_dir = cache;

	check_exe("bidonly", "pie", &opts);
	assert_int_equal(stat(entry, &st), 0);
	assert_int_equal(compressed_sections(entry), 0);
	whole = st.st_size;

	/* Cut short (a full disk, a crash): not used, stored again. Saved
	 * answers would spare the DWARF: none, to read it each time. */
	assert_int_equal(sh("rm -f %s/answers-*", cache), 0);
	assert_int_equal(truncate(entry, whole / 2), 0);
	check_exe("bidonly", "pie", &opts);
	assert_int_equal(stat(entry, &st), 0);
	assert_int_equal(st.st_size, whole);

	/* Without the original only the copy can name the frames. */
	assert_int_equal(sh("rm -f %s/answers-*", cache), 0);
	assert_int_equal(unlink(orig), 0);
	check_exe("bidonly", "pie", &opts);
}

/* The inline chain at pie's helper call: frames[1]'s name into out. */
static void helper_caller(const struct evprof_symbolizer_opts *opts, char *out,
			  size_t n)
{
	struct evprof_symbolizer *s = evprof_symbolizer__new(opts);
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	const struct point *pt;
	struct map_find f;
	struct run r;

	assert_non_null(s);
	run_fixture("pie", &r);
	pt = get_point(&r, "helper");
	sym_map(&r, pt->addr - 1, &f, &map);
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	assert_true(res.nr_frames >= 1);
	snprintf(out, n, "%s",
		 res.frames[res.nr_frames > 1 ? 1 : 0].name ?: "(null)");
	free(r.maps);
	evprof_symbolizer__free(s);
}

/*
 * Answers saved by build id: the second symbolizer over pie reads them
 * (a name changed in the file shows through), they equal addr2line's, and
 * a file cut short or another choice (no DWARF) is not used.
 */
static void test_saved_answers(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	char cache[PATH_MAX], file[PATH_MAX * 2], id[130], name[64];
	struct stat st;
	off_t whole;

	(void)state;
	snprintf(cache, sizeof(cache), "%s/answers", dir);
	pie_id(id);
	snprintf(file, sizeof(file), "%s/answers-%s", cache, id);
	opts.debug_cache_dir = cache;

	check_exe("pie", "pie", &opts);
	assert_int_equal(stat(file, &st), 0);
	whole = st.st_size;
	/* Read back: still addr2line's answers. */
	check_exe("pie", "pie", &opts);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, whole);

	/* Read, not found again: a name changed in the file is the answer. */
	assert_int_equal(sh("sed -i 's/inl_caller/inl_CALLER/g' '%s'", file),
			 0);
	helper_caller(&opts, name, sizeof(name));
	assert_string_equal(name, "inl_CALLER");
	/* Another choice reads its own (no DWARF: the symbol table's). */
	opts.no_dwarf = true;
	helper_caller(&opts, name, sizeof(name));
	assert_string_equal(name, "inl_caller");
	opts.no_dwarf = false;

	/* Cut short: not used, written again whole. */
	assert_int_equal(truncate(file, whole / 2), 0);
	check_exe("pie", "pie", &opts);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, whole);
	helper_caller(&opts, name, sizeof(name));
	assert_string_equal(name, "inl_caller");
}

/* No symbols at all: unknown name, but a usable lib + offset. */
static void test_stripped_no_debug(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	const struct point *pt;
	struct map_find f;
	struct run r;

	(void)state;
	opts.debuginfo_path = "/nonexistent";
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	run_fixture("bidonly", &r);
	pt = get_point(&r, "leaf_a");
	sym_map(&r, pt->addr - 1, &f, &map);
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	assert_true(res.image_found);
	/*
	 * No symbol: named by the CFI, the FDE of leaf_a beginning where
	 * its symbol does in the unstripped build (nm).
	 */
	assert_int_equal(
	    sh("cd %s && printf 'bidonly+0x%%x' 0x$(nm pie | "
	       "awk '$3 == \"leaf_a\" { print $1 }') > leaf_a.name",
	       dir),
	    0);
	assert_non_null(res.name);
	assert_string_equal(res.name, slurp("leaf_a.name"));
	assert_int_equal(res.nr_frames, 1); /* as for a symbol without DWARF */
	assert_string_equal(res.frames[0].name, res.name);
	assert_string_equal(res.lib_name, "bidonly");
	assert_true(res.rel_addr == pt->addr - 1 - f.base);
	free(r.maps);
	evprof_symbolizer__free(s);
}

extern char _start[];

/* The dynamic loader's first mapping (pgoff 0): its path and start. */
static int ld_find_cb(const struct evprof_map *m, void *ctx)
{
	struct map_find *f = ctx;

	if (!f->base && m->pgoff == 0 && strstr(m->path, "/ld-linux")) {
		snprintf(f->path, sizeof(f->path), "%s", m->path);
		f->base = m->start;
	}
	return 0;
}

/* The mapping of this process that holds addr, as the symbolizer takes it. */
static struct evprof_sym_mapping own_map(uint64_t addr, struct map_find *f)
{
	*f = (struct map_find){.addr = addr};
	assert_true(evprof_maps__read(getpid(), map_find_cb, f) >= 0);
	assert_true(f->found);
	return (struct evprof_sym_mapping){.path = f->path,
					   .start = f->m.start,
					   .end = f->m.end,
					   .pgoff = f->m.pgoff};
}

/*
 * A thread's outermost frame by the CFI: this program's _start marks its
 * return address undefined (glibc's start code), a function of ours not;
 * a file that cannot be read has no CFI to tell.
 */
static void test_outermost(void **state)
{
	struct evprof_symbolizer *s = evprof_symbolizer__new(NULL);
	uint64_t start = (uint64_t)(uintptr_t)_start + 4;
	uint64_t fn = (uint64_t)(uintptr_t)test_outermost;
	struct evprof_sym_mapping map;
	struct map_find f, ld = {0};

	(void)state;
	assert_non_null(s);
	map = own_map(start, &f);
	assert_int_equal(evprof_symbolizer__user_outermost(s, &map, start), 1);
	map = own_map(fn, &f);
	assert_int_equal(evprof_symbolizer__user_outermost(s, &map, fn), 0);
	map.path = "/nonexistent/evprof";
	assert_int_equal(evprof_symbolizer__user_outermost(s, &map, fn),
			 -ENOENT);
	assert_int_equal(evprof_symbolizer__user_outermost(s, &map, map.end),
			 -EINVAL);
	/*
	 * The dynamic loader's entry code has no CFI: its entry point (by
	 * readelf) and the call to _dl_start after it are first frames.
	 */
	assert_true(evprof_maps__read(getpid(), ld_find_cb, &ld) >= 0);
	if (ld.base) {
		uint64_t at;

		assert_int_equal(
		    sh("readelf -hW %s | awk '/Entry point/ { print $4 }' > "
		       "%s/ld.entry",
		       ld.path, dir),
		    0);
		at = ld.base + strtoull(slurp("ld.entry"), NULL, 16) -
		     first_vaddr(ld.path) + 7;
		map = own_map(at, &f);
		assert_int_equal(evprof_symbolizer__user_outermost(s, &map, at),
				 1);
	}
	evprof_symbolizer__free(s);
}

/* A mapping whose build id does not match the file on disk. */
static void test_build_id_mismatch(void **state)
{
	static const uint8_t wrong[20] = {1, 2, 3};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	const struct point *pt;
	struct map_find f;
	struct run r;

	(void)state;
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	run_fixture("pie", &r);
	pt = get_point(&r, "leaf_a");
	sym_map(&r, pt->addr - 1, &f, &map);
	map.build_id = wrong;
	map.build_id_len = sizeof(wrong);
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	assert_false(res.image_found);
	assert_null(res.name);
	assert_true(res.rel_addr == pt->addr - 1 - f.m.start + f.m.pgoff);
	assert_true(res.build_id == wrong);
	/* Outside the mapping. */
	assert_int_equal(evprof_symbolizer__user(s, &map, f.m.end, &res),
			 -EINVAL);
	free(r.maps);
	evprof_symbolizer__free(s);
}

/*
 * A binary deleted while its process lives: readable only through
 * /proc/PID/map_files.
 */
static void test_deleted_binary(void **state)
{
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	const struct point *pt;
	struct map_find f;
	struct run r;
	char cmd[PATH_MAX + 64], path[PATH_MAX + 16];
	FILE *p;

	(void)state;
	assert_int_equal(sh("cp %s/pie %s/deleted", dir, dir), 0);
	snprintf(cmd, sizeof(cmd), "deleted wait");
	start_fixture(cmd, &r, &p);
	snprintf(path, sizeof(path), "%s/deleted", dir);
	assert_int_equal(unlink(path), 0);
	pt = get_point(&r, "leaf_a");
	sym_map(&r, pt->addr - 1, &f, &map);
	map.inode = f.m.inode;

	/* Without the pid, the file is gone: unknown, with its offset. */
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	assert_false(res.image_found);
	assert_null(res.name);
	evprof_symbolizer__free(s);

	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	map.pid = (int)get_point(&r, "self")->addr;
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	kill(map.pid, SIGTERM);
	pclose(p);
	if (!res.image_found && geteuid() != 0) {
		evprof_symbolizer__free(s);
		free(r.maps);
		skip_because("map_files needs CAP_SYS_ADMIN");
	}
	assert_true(res.image_found);
	assert_non_null(res.name);
	assert_string_equal(res.name, "leaf_a");
	assert_true(res.nr_frames == 1);
	assert_string_equal(res.lib_path, path);
	evprof_symbolizer__free(s);
	free(r.maps);
}

static void test_cxx(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct evprof_symbolizer *s;
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	const struct point *pt;
	struct map_find f;
	struct run r;

	(void)state;
	if (!have_cxx)
		skip_because("no c++ compiler");
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	run_fixture("cxx", &r);
	pt = get_point(&r, "evp_twice");
	check_point(s, &r, pt, "cxx", true);
	evprof_symbolizer__free(s);

	/* Mangled on request, and without DWARF: the symbol table's name. */
	opts.no_demangle = true;
	opts.no_dwarf = true;
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	sym_map(&r, pt->addr - 1, &f, &map);
	assert_int_equal(evprof_symbolizer__user(s, &map, pt->addr - 1, &res),
			 0);
	assert_string_equal(res.name, "_ZN3evp5twiceIiEET_S1_");
	assert_int_equal(res.nr_frames, 1);
	free(r.maps);
	evprof_symbolizer__free(s);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* MiniDebugInfo: names that only .gnu_debugdata holds. */
static void test_minidebuginfo(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct evprof_symbolizer *s;
	struct run r;

	(void)state;
	/* Truth first: binutils sees no symbol, and leaf_a is not exported. */
	assert_int_equal(sh("cd %s && test -z \"$(nm mini 2>/dev/null)\" && "
			    "! nm -D mini | grep -qw leaf_a && readelf -SW "
			    "mini | grep -q gnu_debugdata",
			    dir),
			 0);
	opts.debuginfo_path = "/nonexistent";
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	run_fixture("mini", &r);
	check_point(s, &r, get_point(&r, "leaf_a"), "pie", false);
	check_point(s, &r, get_point(&r, "helper"), "pie", false);
	check_point(s, &r, get_point(&r, "main"), "pie", false);
	free(r.maps);
	evprof_symbolizer__free(s);
}

/*
 * Rust legacy and v0 manglings, against addr2line -C and against the
 * names worked out by hand from the mangling rules (hash and crate
 * disambiguators hidden, as binutils does without --verbose).
 */
static void test_rust(void **state)
{
	static const char *const want[][2] = {
	    {"legacy", "mycrate::module::func"},
	    {"legacy_impl", "<mycrate::Foo as core::fmt::Debug>::fmt"},
	    {"v0", "mycrate::module::func"},
	    {"v0_generic", "mycrate::generic::<u32>"},
	};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	struct map_find f;
	struct run r;
	size_t i;

	(void)state;
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	run_fixture("rs", &r);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct point *pt = get_point(&r, want[i][0]);

		check_point(s, &r, pt, "rs", false);
		sym_map(&r, pt->addr, &f, &map);
		assert_int_equal(
		    evprof_symbolizer__user(s, &map, pt->addr, &res), 0);
		assert_non_null(res.name);
		assert_string_equal(res.name, want[i][1]);
		assert_true(res.rel_addr == res.sym_start);
	}
	free(r.maps);
	evprof_symbolizer__free(s);
}

/*
 * One image per build id, one lookup per (image, address): two processes
 * of the same binary, one under another path.
 */
static void test_cache(void **state)
{
	struct evprof_symbolizer_stats st = {.sz = sizeof(st)};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	const char *exes[] = {"pie", "pie_copy", "pie"};
	const char *first = NULL;
	size_t i;

	(void)state;
	assert_int_equal(sh("cp %s/pie %s/pie_copy", dir, dir), 0);
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	for (i = 0; i < 3; i++) {
		const struct point *pt;
		struct map_find f;
		struct run r;

		run_fixture(exes[i], &r);
		pt = get_point(&r, "leaf_a");
		sym_map(&r, pt->addr - 1, &f, &map);
		map.pid = (int)get_point(&r, "self")->addr;
		assert_int_equal(
		    evprof_symbolizer__user(s, &map, pt->addr - 1, &res), 0);
		assert_string_equal(res.name, "leaf_a");
		if (!first)
			first = res.name;
		/* The very answer of the first process. */
		assert_ptr_equal(res.name, first);
		free(r.maps);
	}
	assert_int_equal(evprof_symbolizer__stats(s, &st), 0);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.images, 1);
	assert_int_equal(st.cached, 2);
	st.sz = 1;
	assert_int_equal(evprof_symbolizer__stats(s, &st), -EINVAL);
	evprof_symbolizer__free(s);
}

/*
 * Mappings of one binary in four processes (each at its own address, PIE
 * and ASLR), two known by their inode, two by their build id too: one
 * entry for each kind, each address taken relative to its own process's
 * mapping.
 */
static void test_cache_shared(void **state)
{
	struct evprof_symbolizer_stats st = {.sz = sizeof(st)};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	uint8_t id[20];

	(void)state;
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	for (int i = 0; i < 4; i++) {
		const struct point *pt;
		struct map_find f;
		struct run r;

		run_fixture("pie", &r);
		pt = get_point(&r, "leaf_a");
		sym_map(&r, pt->addr - 1, &f, &map);
		map.inode = f.m.inode;
		map.pid = (int)get_point(&r, "self")->addr;
		map.build_id = i >= 2 ? id : NULL;
		map.build_id_len = i >= 2 ? sizeof(id) : 0;
		assert_int_equal(
		    evprof_symbolizer__user(s, &map, pt->addr - 1, &res), 0);
		assert_string_equal(res.name, "leaf_a");
		assert_int_equal(res.rel_addr, pt->addr - 1 - f.base);
		if (i == 0) { /* the image tells its build id */
			assert_int_equal(res.build_id_len, sizeof(id));
			memcpy(id, res.build_id, sizeof(id));
		}
		free(r.maps);
	}
	assert_int_equal(evprof_symbolizer__stats(s, &st), 0);
	assert_int_equal(st.mappings, 2);
	assert_int_equal(st.images, 1);
	evprof_symbolizer__free(s);
}

/* JIT code named from a hand-written /tmp/perf-PID.map. */
static void test_jit(void **state)
{
	struct evprof_symbolizer_stats st = {.sz = sizeof(st)};
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	char path[64];
	int pid = (int)getpid();

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	write_file(path, "7f0000001000 40 jit_first\n"
			 "garbage\n"
			 "7f0000001040 20 LazyCompile:*foo bar.js:12\n"
			 "0x7f0000002000 0x100 _ZN3evp3jitEi\n"
			 "7f0000002000 10 replaced_later\n"
			 "7f0000001080 0 zero_size\n");
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	assert_int_equal(
	    evprof_symbolizer__jit(s, pid, 0x7f000000103full, &res), 0);
	assert_string_equal(res.name, "jit_first");
	assert_true(res.image_found && res.sym_start == 0x7f0000001000ull &&
		    res.sym_size == 0x40 && res.rel_addr == 0x7f000000103full);
	assert_string_equal(res.lib_path, path);
	assert_string_equal(res.lib_name, path + 5);
	assert_int_equal(res.nr_frames, 1);
	/* Names keep their spaces. */
	assert_int_equal(
	    evprof_symbolizer__jit(s, pid, 0x7f0000001041ull, &res), 0);
	assert_string_equal(res.name, "LazyCompile:*foo bar.js:12");
	/* Same start: the later line wins while it covers the address. */
	assert_int_equal(
	    evprof_symbolizer__jit(s, pid, 0x7f0000002008ull, &res), 0);
	assert_string_equal(res.name, "replaced_later");
	/* Past the short entry, the long one still covers; demangled. */
	assert_int_equal(
	    evprof_symbolizer__jit(s, pid, 0x7f0000002010ull, &res), 0);
	assert_string_equal(res.name, "evp::jit(int)");
	/* Gaps and zero sizes: unknown, the address kept. */
	assert_int_equal(
	    evprof_symbolizer__jit(s, pid, 0x7f0000001080ull, &res), 0);
	assert_null(res.name);
	assert_null(res.lib_path);
	assert_true(res.rel_addr == 0x7f0000001080ull);
	/* Through an anonymous executable mapping of the process. */
	map.path = "//anon";
	map.start = 0x7f0000000000ull;
	map.end = 0x7f0000010000ull;
	map.pid = pid;
	assert_int_equal(
	    evprof_symbolizer__user(s, &map, 0x7f0000001001ull, &res), 0);
	assert_string_equal(res.name, "jit_first");
	assert_int_equal(
	    evprof_symbolizer__user(s, &map, 0x7f0000003000ull, &res), 0);
	assert_null(res.name);
	assert_string_equal(res.lib_path, "//anon");
	assert_true(res.rel_addr == 0x3000);
	assert_int_equal(evprof_symbolizer__stats(s, &st), 0);
	assert_int_equal(st.jit_maps, 1);
	evprof_symbolizer__free(s);

	/* Owned by a stranger (neither us, root nor the process): refused. */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 54321, 54321), 0);
		s = evprof_symbolizer__new(NULL);
		assert_non_null(s);
		assert_int_equal(
		    evprof_symbolizer__jit(s, pid, 0x7f000000103full, &res), 0);
		assert_null(res.name);
		evprof_symbolizer__free(s);
	} else {
		print_message("not root: the foreign-owner case is not run\n");
	}
	unlink(path);
}

/* ---- kernel ------------------------------------------------------------- */

static void test_kernel_live(void **state)
{
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	char line[512], name[256], type;
	uint64_t addr, sched = 0;
	FILE *f;

	(void)state;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		skip_because("no /proc/kallsyms");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) ==
			3 &&
		    !strcmp(name, "schedule") && (type == 'T' || type == 't'))
			sched = addr;
	fclose(f);
	if (!sched)
		skip_because("kallsyms hides addresses (kptr_restrict)");
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	assert_int_equal(evprof_symbolizer__kernel(s, sched + 4, &res), 0);
	assert_non_null(res.name);
	assert_string_equal(res.name, "schedule");
	assert_string_equal(res.lib_name, "[kernel.kallsyms]");
	assert_true(res.rel_addr == res.sym_start + 4);
	assert_int_equal(res.nr_frames, 1);
	if (access("/sys/kernel/notes", R_OK) == 0)
		assert_true(res.build_id_len == 20);
	evprof_symbolizer__free(s);
}

/*
 * Loads a socket filter that returns 0, named evprof_mod: while its fd is
 * open, the BPF JIT lists it in kallsyms as "bpf_prog_<tag>_evprof_mod
 * [bpf]", a module symbol whatever modules the kernel has (none with
 * CONFIG_MODULES=n). -1 where BPF or its JIT is not allowed here.
 */
static int load_bpf_prog(void)
{
	const struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t) "GPL";
	strcpy(a.prog_name, "evprof_mod");
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

/*
 * Module symbols ("[MOD]" after the name in kallsyms), against the file
 * read here: each one's name (or an alias at its address) and "[MOD]".
 * Without modules the bpf pseudo-module lists a program of ours this way
 * (and ftrace's, its trampolines, only while some are in use).
 */
static void test_kernel_modules_live(void **state)
{
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	char line[512], name[256], mod[128], lib[132], type;
	uint64_t addr;
	int checked = 0, prog;
	FILE *f;

	(void)state;
	prog = load_bpf_prog();
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		skip_because("no /proc/kallsyms");
	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	while (fgets(line, sizeof(line), f) && checked < 200) {
		if (sscanf(line, "%" SCNx64 " %c %255s [%127[^]]]", &addr,
			   &type, name, mod) != 4 ||
		    (type != 't' && type != 'T') || !addr)
			continue;
		assert_int_equal(evprof_symbolizer__kernel(s, addr, &res), 0);
		assert_non_null(res.name);
		snprintf(lib, sizeof(lib), "[%s]", mod);
		assert_string_equal(res.lib_name, lib);
		assert_true(res.sym_start == res.rel_addr);
		if (strcmp(res.name, name)) {
			/* An alias: the same address under another name. */
			char cmd[600];

			snprintf(cmd, sizeof(cmd),
				 "grep -q '^%016" PRIx64 " [tT] %s\\b' "
				 "/proc/kallsyms",
				 addr, res.name);
			assert_int_equal(system(cmd), 0);
		}
		checked++;
	}
	fclose(f);
	evprof_symbolizer__free(s);
	if (prog >= 0)
		close(prog);
	if (!checked)
		skip_because("no module text symbols in /proc/kallsyms, and no "
			     "BPF program of ours listed there");
	print_message("%d module symbols checked\n", checked);
}

/* The kernel name a symbolizer gives addr. */
static const char *kname(struct evprof_symbolizer *s, uint64_t addr)
{
	static struct evprof_sym_result res;

	assert_int_equal(evprof_symbolizer__kernel(s, addr, &res), 0);
	assert_non_null(res.name);
	return res.name;
}

/*
 * Replaces the copy of kallsyms at path (a saved table) with the kernel's
 * table plus aliases that sort first by name ("0..." before any real one)
 * at sched and init, and two BPF programs gone since, a page apart at gone.
 */
static void tamper(const char *path, uint64_t sched, uint64_t init,
		   uint64_t gone)
{
	char *text, *more, tmp[PATH_MAX + 8];
	struct evprof__kallsyms *ks;
	size_t len;
	bool hidden;
	int fd, n;

	assert_int_equal(evprof__kallsyms_read("/proc/kallsyms", &text, &len),
			 0);
	more = realloc(text, len + 512);
	assert_non_null(more);
	n = snprintf(more + len, 512,
		     "%016" PRIx64 " T 0evprof_copy\n"
		     "%016" PRIx64 " T 0evprof_stale\n"
		     "%016" PRIx64 " t bpf_prog_0evprof_gone\t[bpf]\n"
		     "%016" PRIx64 " t bpf_prog_1evprof_gone\t[bpf]\n",
		     sched, init, gone, gone + 0x1000);
	ks = evprof__kallsyms_parse(more, len + (size_t)n, &hidden);
	assert_non_null(ks);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(evprof__kallsyms_save(ks, fd), 0);
	close(fd);
	assert_int_equal(rename(tmp, path), 0);
	evprof__kallsyms_free(ks);
}

/*
 * The running kernel's symbols through the boot's copy in the debug cache
 * (a file kallsyms-*, mode 0600): a second symbolizer reads the copy (an
 * alias added to it there names schedule), but an address past the
 * image's text (_sinittext: where a copy may be stale, as for BPF programs
 * loaded since) and one between two [bpf] symbols of the copy are named
 * from /proc/kallsyms as it is, not from the copy.
 */
static void test_kernel_copy(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct evprof_symbolizer *s, *live;
	char line[512], name[256], cache[PATH_MAX], copy[PATH_MAX * 2];
	char type, cmd[PATH_MAX + 64], truth[256];
	uint64_t addr, sched = 0, init = 0, top = 0, gone;
	bool stext = false, etext = false;
	struct stat st;
	FILE *f;

	(void)state;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		skip_because("no /proc/kallsyms");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) ==
			3 &&
		    (type == 'T' || type == 't')) {
			top = addr > top ? addr : top;
			if (strchr(line, '['))
				continue;
			if (!strcmp(name, "schedule"))
				sched = addr;
			else if (!strcmp(name, "_sinittext"))
				init = addr;
			stext |= !strcmp(name, "_stext");
			etext |= !strcmp(name, "_etext");
		}
	fclose(f);
	/* The copy serves the image's text only between these two. */
	if (!sched || !init || !stext || !etext || top > UINT64_MAX - 0x4000)
		skip_because("no schedule, _sinittext, _stext or _etext text "
			     "symbol in kallsyms");
	gone = top + 0x2000;
	snprintf(cache, sizeof(cache), "%s/kcache", dir);
	opts.debug_cache_dir = cache;
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	assert_string_equal(kname(s, sched + 4), "schedule");
	evprof_symbolizer__free(s);
	snprintf(cmd, sizeof(cmd), "ls %s/kallsyms-*", cache);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(copy, sizeof(copy), f));
	pclose(f);
	copy[strcspn(copy, "\n")] = 0;
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	tamper(copy, sched, init, gone);
	live = evprof_symbolizer__new(NULL);
	assert_non_null(live);
	/* [bpf] symbols are no module text: the kernel's answer. */
	snprintf(truth, sizeof(truth), "%s", kname(live, gone + 0x800));
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	assert_string_equal(kname(s, sched + 4), "0evprof_copy");
	assert_string_equal(kname(s, gone + 0x800), truth);
	evprof_symbolizer__free(s);
	snprintf(truth, sizeof(truth), "%s", kname(live, init));
	assert_string_not_equal(truth, "0evprof_stale");
	tamper(copy, sched, init, gone); /* the reload stored it anew */
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	assert_string_equal(kname(s, sched + 4), "0evprof_copy");
	assert_string_equal(kname(s, init), truth);
	/* Read again: the table is the kernel's now. */
	assert_string_equal(kname(s, sched + 4), "schedule");
	evprof_symbolizer__free(s);
	evprof_symbolizer__free(live);
}

static void test_kernel_crafted(void **state)
{
	struct evprof_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	write_file(path, "ffffffff81000000 T _text\n"
			 "ffffffff81000100 t first_fn\n"
			 "ffffffff81000200 D some_data\n"
			 "ffffffff81000300 T second_fn\n"
			 "garbage line\n"
			 "ffffffffc0001000 t mod_fn_a\t[mymod]\n"
			 "ffffffffc0001080 T mod_fn_b\t[mymod]\n");
	opts.kallsyms_path = path;
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	/* Data symbols are not text: 0x250 is still inside first_fn. */
	assert_int_equal(
	    evprof_symbolizer__kernel(s, 0xffffffff81000250ull, &res), 0);
	assert_string_equal(res.name, "first_fn");
	assert_true(res.sym_start == 0x100 && res.sym_size == 0x200);
	assert_true(res.rel_addr == 0x250);
	assert_int_equal(
	    evprof_symbolizer__kernel(s, 0xffffffffc0001090ull, &res), 0);
	assert_string_equal(res.name, "mod_fn_b");
	assert_string_equal(res.lib_name, "[mymod]");
	assert_true(res.rel_addr == 0x90 && res.sym_start == 0x80);
	assert_null(res.build_id);
	/* Below every symbol: unknown. */
	assert_int_equal(evprof_symbolizer__kernel(s, 0x1000, &res), 0);
	assert_null(res.name);
	assert_false(res.image_found);
	evprof_symbolizer__free(s);

	/* kptr_restrict: all zero addresses mean unknown, not "_text". */
	write_file(path, "0000000000000000 T _text\n"
			 "0000000000000000 T schedule\n");
	s = evprof_symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(
	    evprof_symbolizer__kernel(s, 0xffffffff81000250ull, &res), 0);
	assert_null(res.name);
	assert_int_equal(res.nr_frames, 0);
	evprof_symbolizer__free(s);
}

static void test_notes_build_id(void **state)
{
	/* Two notes: an unrelated "Xen" one, then GNU build id (type 3). */
	static const uint8_t notes[] = {
	    4,	 0, 0, 0, 4,   0,   0,	 0, 6,	  0,	0,    0, 'X', 'e',
	    'n', 0, 9, 9, 9,   9,   4,	 0, 0,	  0,	3,    0, 0,   0,
	    3,	 0, 0, 0, 'G', 'N', 'U', 0, 0xab, 0xcd, 0xef, 0,
	};
	uint8_t id[20];

	(void)state;
	assert_int_equal(
	    evprof__notes_build_id(notes, sizeof(notes), id, sizeof(id)), 3);
	assert_int_equal(id[0], 0xab);
	assert_int_equal(id[2], 0xef);
	/* Truncated in the second note's name; a descsz past the end. */
	assert_int_equal(evprof__notes_build_id(notes, 34, id, sizeof(id)),
			 -EVPROF_ERR_MALFORMED);
	{
		uint8_t bad[sizeof(notes)];

		memcpy(bad, notes, sizeof(bad));
		bad[24] = 0xff;
		assert_int_equal(
		    evprof__notes_build_id(bad, sizeof(bad), id, sizeof(id)),
		    -EVPROF_ERR_MALFORMED);
	}
	assert_int_equal(evprof__notes_build_id(notes, 20, id, sizeof(id)), 0);
}

/* ---- vdso -------------------------------------------------------------- */

static int vdso_cb(const struct evprof_map *m, void *ctx)
{
	struct evprof_map *out = ctx;

	if (!strcmp(m->path, "[vdso]")) {
		*out = *m;
		out->path = NULL;
	}
	return 0;
}

static void test_vdso(void **state)
{
	struct evprof_sym_mapping map = {0};
	struct evprof_sym_result res;
	struct evprof_symbolizer *s;
	struct evprof_map m = {0};
	char path[PATH_MAX], cmd[PATH_MAX + 64], line[256], name[128];
	uint64_t value, want = 0;
	FILE *f;

	(void)state;
	if (!getauxval(AT_SYSINFO_EHDR))
		skip_because("no vDSO in this process");
	assert_true(evprof_maps__read(0, vdso_cb, &m) > 0);
	assert_true(m.start == getauxval(AT_SYSINFO_EHDR));
	/* Truth: binutils' view of a copy of the vdso. */
	snprintf(path, sizeof(path), "%s/vdso.so", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fwrite((void *)(uintptr_t)m.start, 1, m.end - m.start, f) ==
		    m.end - m.start);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %*c %127s", &value, name) == 2 &&
		    !strncmp(name, "__vdso_clock_gettime", 20))
			want = value;
	pclose(f);
	assert_true(want != 0);

	s = evprof_symbolizer__new(NULL);
	assert_non_null(s);
	map.path = "[vdso]";
	map.start = m.start;
	map.end = m.end;
	assert_int_equal(
	    evprof_symbolizer__user(s, &map, m.start + want + 2, &res), 0);
	assert_true(res.image_found);
	assert_non_null(res.name);
	/* clock_gettime is a weak alias of __vdso_clock_gettime. */
	assert_non_null(strstr(res.name, "clock_gettime"));
	assert_true(res.sym_start == want);
	assert_true(res.rel_addr == want + 2);
	evprof_symbolizer__free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pie),
	    cmocka_unit_test(test_nopie),
	    cmocka_unit_test(test_debuglink),
	    cmocka_unit_test(test_debuglink_via_link),
	    cmocka_unit_test(test_debug_cache),
	    cmocka_unit_test(test_saved_answers),
	    cmocka_unit_test(test_build_id_dir),
	    cmocka_unit_test(test_stripped_no_debug),
	    cmocka_unit_test(test_outermost),
	    cmocka_unit_test(test_build_id_mismatch),
	    cmocka_unit_test(test_deleted_binary),
	    cmocka_unit_test(test_cxx),
	    cmocka_unit_test(test_minidebuginfo),
	    cmocka_unit_test(test_rust),
	    cmocka_unit_test(test_cache),
	    cmocka_unit_test(test_cache_shared),
	    cmocka_unit_test(test_jit),
	    cmocka_unit_test(test_kernel_live),
	    cmocka_unit_test(test_kernel_modules_live),
	    cmocka_unit_test(test_kernel_copy),
	    cmocka_unit_test(test_kernel_crafted),
	    cmocka_unit_test(test_notes_build_id),
	    cmocka_unit_test(test_vdso),
	};

	return run_cases(argc, argv, tests, setup, teardown);
}
