// SPDX-License-Identifier: MIT
/*
 * Kernel symbols from a kallsyms text written here: what each address
 * resolves to is known by construction (sizes, module bases, the alias
 * chosen), whether the file is mapped (a regular file) or read (a pipe,
 * as /proc/kallsyms reads).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cases.h"
#include "symbols/kallsyms.h"
#include "symbols/ksymcache.h"

/*
 * Modules after the image, as the kernel lists them; lines out of address
 * order (the last module), aliases (b_alias and a_alias at 0x...1100),
 * data symbols (not text: ignored) and a malformed line.
 */
static const char text[] = "ffffffff81000000 T _stext\n"
			   "ffffffff81000000 T _text\n"
			   "ffffffff81001000 t first\n"
			   "ffffffff81001100 T b_alias\n"
			   "ffffffff81001100 T a_alias\n"
			   "ffffffff81002000 D some_data\n"
			   "ffffffff81003000 T last_core\n"
			   "not a line\n"
			   "ffffffffc0002000 t mod_b_fn\t[modb]\n"
			   "ffffffffc0002400 t mod_b_fn2\t[modb]\n"
			   "ffffffffc0001000 t mod_a_fn\t[moda]\n"
			   "ffffffffc0001800 T mod_a_fn2\t[moda]";

struct want {
	uint64_t addr;
	const char *name, *module; /* name NULL: none */
	uint64_t start, size, base;
};

static const struct want wants[] = {
    {0xffffffff80ffffffULL, NULL, NULL, 0, 0, 0},
    /* _stext and _text alias: the first by name */
    {0xffffffff81000000ULL, "_stext", NULL, 0xffffffff81000000ULL, 0x1000,
     0xffffffff81000000ULL},
    {0xffffffff81001050ULL, "first", NULL, 0xffffffff81001000ULL, 0x100,
     0xffffffff81000000ULL},
    {0xffffffff81001100ULL, "a_alias", NULL, 0xffffffff81001100ULL, 0x1f00,
     0xffffffff81000000ULL},
    /* data symbols do not end a function */
    {0xffffffff81002fffULL, "a_alias", NULL, 0xffffffff81001100ULL, 0x1f00,
     0xffffffff81000000ULL},
    {0xffffffff81003000ULL, "last_core", NULL, 0xffffffff81003000ULL,
     0xffffffffc0001000ULL - 0xffffffff81003000ULL, 0xffffffff81000000ULL},
    {0xffffffffc0001004ULL, "mod_a_fn", "moda", 0xffffffffc0001000ULL, 0x800,
     0xffffffffc0001000ULL},
    {0xffffffffc0001900ULL, "mod_a_fn2", "moda", 0xffffffffc0001800ULL, 0x800,
     0xffffffffc0001000ULL},
    {0xffffffffc0002010ULL, "mod_b_fn", "modb", 0xffffffffc0002000ULL, 0x400,
     0xffffffffc0002000ULL},
    /* the last symbol has no size */
    {0xffffffffc0002500ULL, "mod_b_fn2", "modb", 0xffffffffc0002400ULL, 0,
     0xffffffffc0002000ULL},
};

static void check_table(struct evprof__kallsyms *ks)
{
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		struct evprof__ksym k;
		int n = evprof__kallsyms_find(ks, w->addr, &k);

		if (!w->name) {
			assert_int_equal(n, 0);
			continue;
		}
		assert_int_equal(n, 1);
		assert_string_equal(k.name, w->name);
		if (w->module)
			assert_string_equal(k.module, w->module);
		else
			assert_null(k.module);
		assert_true(k.addr == w->start);
		assert_true(k.size == w->size);
		assert_true(k.base == w->base);
	}
}

static void test_regular_file(void **state)
{
	char path[] = "/tmp/evprof-kallsyms-XXXXXX";
	struct evprof__kallsyms *ks;
	bool hidden = true;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ks = evprof__kallsyms_load(path, &hidden);
	unlink(path);
	assert_non_null(ks);
	assert_false(hidden);
	check_table(ks);
	/* a second lookup returns the same copy of the name */
	{
		struct evprof__ksym a, b;

		assert_int_equal(
		    evprof__kallsyms_find(ks, 0xffffffff81001000ULL, &a), 1);
		assert_int_equal(
		    evprof__kallsyms_find(ks, 0xffffffff81001001ULL, &b), 1);
		assert_ptr_equal(a.name, b.name);
	}
	evprof__kallsyms_free(ks);
}

/* ks saved to a file and mapped back; the file is gone (the map stays). */
static struct evprof__kallsyms *saved(const struct evprof__kallsyms *ks,
				      char **bytes, size_t *len)
{
	char path[] = "/tmp/evprof-kallsyms-XXXXXX";
	struct evprof__kallsyms *m;
	int fd = mkstemp(path);
	struct stat st;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(evprof__kallsyms_save(ks, fd), 0);
	m = evprof__kallsyms_map(fd);
	assert_non_null(m);
	if (bytes) {
		assert_int_equal(fstat(fd, &st), 0);
		*len = (size_t)st.st_size;
		*bytes = malloc(*len);
		assert_non_null(*bytes);
		assert_int_equal(pread(fd, *bytes, *len, 0), (ssize_t)*len);
	}
	close(fd);
	return m;
}

/* bytes as a file, mapped. */
static struct evprof__kallsyms *map_bytes(const char *bytes, size_t len)
{
	char path[] = "/tmp/evprof-kallsyms-XXXXXX";
	struct evprof__kallsyms *m;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	m = evprof__kallsyms_map(fd);
	close(fd);
	return m;
}

/*
 * A table saved and mapped answers as the parsed one; a saved file cut
 * anywhere, or another kind of file, is refused; one with any byte changed
 * is refused or answers without reading outside it (ASan would tell).
 */
static void test_saved(void **state)
{
	char *copy = strdup(text), *bytes;
	struct evprof__kallsyms *ks, *m;
	struct evprof__ksym k;
	size_t len;
	bool hidden;

	(void)state;
	assert_non_null(copy);
	ks = evprof__kallsyms_parse(copy, strlen(text), &hidden);
	assert_non_null(ks);
	m = saved(ks, &bytes, &len);
	evprof__kallsyms_free(ks);
	check_table(m);
	evprof__kallsyms_free(m);
	for (size_t cut = 0; cut < len; cut++) {
		errno = 0;
		assert_null(map_bytes(bytes, cut));
		assert_int_equal(errno, EINVAL);
	}
	assert_null(map_bytes(text, strlen(text)));
	for (size_t i = 0; i < len; i++) {
		bytes[i] ^= (char)0x80;
		m = map_bytes(bytes, len);
		for (size_t w = 0; m && w < sizeof(wants) / sizeof(wants[0]);
		     w++)
			assert_true(
			    evprof__kallsyms_find(m, wants[w].addr, &k) >= 0);
		evprof__kallsyms_free(m);
		bytes[i] ^= (char)0x80;
	}
	free(bytes);
}

/* Writes (mode "w") or appends ("a") str to the file at path. */
static void put_file(const char *path, const char *mode, const char *str)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	assert_true(fputs(str, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The table of the file at path through the cache in dir, checked. */
static void check_file(const char *dir, const char *path)
{
	struct evprof__kallsyms *ks;
	bool hidden;

	ks = evprof__ksymcache_file(dir, path, &hidden);
	assert_non_null(ks);
	check_table(ks);
	evprof__kallsyms_free(ks);
}

/* The one saved table of a file in dir (a "kallsyms-file-*"), by name. */
static void saved_file(const char *dir, char *out, size_t n)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls %s/kallsyms-file-* 2>/dev/null", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	out[0] = 0;
	if (!fgets(out, (int)n, f))
		out[0] = 0;
	pclose(f);
	out[strcspn(out, "\n")] = 0;
}

/*
 * A kallsyms file's table through the cache: parsed and saved the first
 * time, the saved table after (one put there by hand answers), parsed
 * anew once the file is written again (another size and time).
 */
static void test_file_copy(void **state)
{
	char dir[] = "/tmp/evprof-ksymcache-XXXXXX", path[64], copy[256];
	char again[256];
	char *other = strdup(text), *p;
	struct evprof__kallsyms *ks;
	struct evprof__ksym k;
	bool hidden;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	put_file(path, "w", text);
	check_file(dir, path);
	saved_file(dir, copy, sizeof(copy));
	assert_true(copy[0]);

	/* The saved table answers: one of another text, under its name. */
	p = strstr(other, "last_core");
	assert_non_null(p);
	memcpy(p, "LAST_CORE", 9);
	ks = evprof__kallsyms_parse(other, strlen(text), &hidden);
	assert_non_null(ks);
	fd = open(copy, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(evprof__kallsyms_save(ks, fd), 0);
	close(fd);
	evprof__kallsyms_free(ks);
	ks = evprof__ksymcache_file(dir, path, &hidden);
	assert_non_null(ks);
	assert_int_equal(evprof__kallsyms_find(ks, 0xffffffff81003000ULL, &k),
			 1);
	assert_string_equal(k.name, "LAST_CORE");
	evprof__kallsyms_free(ks);

	/* Written anew: parsed again, and the old copy replaced. */
	put_file(path, "a", "\n");
	check_file(dir, path);
	saved_file(dir, again, sizeof(again));
	assert_true(again[0] && strcmp(again, copy));
	assert_int_equal(access(copy, F_OK), -1);
	snprintf(copy, sizeof(copy), "rm -rf %s", dir);
	assert_int_equal(system(copy), 0);
}

/*
 * Where a lookup is inside text that cannot have changed since the table
 * was read: the image's [_stext, _etext), and between two symbols of one
 * module; not past a module's last symbol, nor in [bpf] or
 * [__builtin__ftrace] (programs and trampolines come and go there).
 */
static void test_inside(void **state)
{
	static const char t[] =
	    "ffffffff81000000 T _stext\n"
	    "ffffffff81000100 t fn\n"
	    "ffffffff81200000 T _etext\n"
	    "ffffffff81300000 T _sinittext\n"
	    "ffffffffc0001000 t m1\t[mod]\n"
	    "ffffffffc0001800 t m2\t[mod]\n"
	    "ffffffffc0002000 t bpf_prog_a\t[bpf]\n"
	    "ffffffffc0003000 t bpf_prog_b\t[bpf]\n"
	    "ffffffffc0004000 t tramp_a\t[__builtin__ftrace]\n"
	    "ffffffffc0005000 t tramp_b\t[__builtin__ftrace]\n";
	static const struct {
		uint64_t addr;
		bool inside;
	} w[] = {
	    {0xffffffff81000180ULL, true},  {0xffffffff81200000ULL, false},
	    {0xffffffff81300010ULL, false}, {0xffffffffc0001010ULL, true},
	    {0xffffffffc0001810ULL, false}, {0xffffffffc0002010ULL, false},
	    {0xffffffffc0004010ULL, false},
	};
	char *copy = strdup(t);
	struct evprof__kallsyms *ks;
	struct evprof__ksym k;
	bool hidden;

	(void)state;
	assert_non_null(copy);
	ks = evprof__kallsyms_parse(copy, strlen(t), &hidden);
	assert_non_null(ks);
	/* The parsed table, then the same saved and mapped. */
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
			assert_int_equal(
			    evprof__kallsyms_find(ks, w[i].addr, &k), 1);
			if (k.inside != w[i].inside)
				fail_msg("0x%llx: inside %d (round %d)",
					 (unsigned long long)w[i].addr,
					 k.inside, round);
		}
		if (!round) {
			struct evprof__kallsyms *m = saved(ks, NULL, NULL);

			evprof__kallsyms_free(ks);
			ks = m;
		}
	}
	evprof__kallsyms_free(ks);
}

/* Through a FIFO: read to its end like /proc/kallsyms. */
static void test_not_a_regular_file(void **state)
{
	char dir[] = "/tmp/evprof-kallsyms-XXXXXX", path[64];
	struct evprof__kallsyms *ks;
	bool hidden = true;
	pid_t pid;
	int st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(path, "w");

		_exit(f && fputs(text, f) >= 0 && !fclose(f) ? 0 : 1);
	}
	ks = evprof__kallsyms_load(path, &hidden);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(path);
	rmdir(dir);
	assert_non_null(ks);
	assert_false(hidden);
	check_table(ks);
	evprof__kallsyms_free(ks);
}

static void test_hidden(void **state)
{
	static const char zeros[] = "0000000000000000 T _text\n"
				    "0000000000000000 t first\n";
	char path[] = "/tmp/evprof-kallsyms-XXXXXX";
	struct evprof__kallsyms *ks;
	struct evprof__ksym k;
	bool hidden = false;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, zeros, strlen(zeros)),
			 (ssize_t)strlen(zeros));
	close(fd);
	ks = evprof__kallsyms_load(path, &hidden);
	unlink(path);
	assert_non_null(ks);
	assert_true(hidden);
	assert_int_equal(evprof__kallsyms_find(ks, 0, &k), 0);
	evprof__kallsyms_free(ks);
	errno = 0;
	assert_null(evprof__kallsyms_load("/nonexistent/kallsyms", &hidden));
	assert_int_equal(errno, ENOENT);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regular_file),
	    cmocka_unit_test(test_inside),
	    cmocka_unit_test(test_saved),
	    cmocka_unit_test(test_file_copy),
	    cmocka_unit_test(test_not_a_regular_file),
	    cmocka_unit_test(test_hidden),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
