// SPDX-License-Identifier: MIT
/*
 * Symbolizer benchmark: for every function of FUNCS (lines "START SIZE",
 * hex link-time values of BIN, as `nm -S` prints them), its first and its
 * middle byte are symbolized through evprof's symbolizer, cold then warm,
 * and through one `addr2line -a -f -i -C -e BIN` run over the same address
 * list (written to FUNCS.addrs), in the same run.
 * Prints both times and how often the two agree: the function (outermost
 * name), the whole inline chain of names, and the innermost line.
 *
 * Usage: bench_symbolize BIN FUNCS [MAX_ADDRESSES]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>

#include <evprof/symbols.h>

#define MAX_FRAMES 16

struct load {
	uint64_t vaddr, memsz, offset;
};

/* addr2line's answer for one address, innermost first. */
struct truth {
	char *names[MAX_FRAMES];
	unsigned lines[MAX_FRAMES];
	int nr;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t read_loads(const char *bin, struct load *out, size_t max)
{
	size_t phnum, i, n = 0;
	GElf_Phdr ph;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(bin, O_RDONLY);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &phnum))
		for (i = 0; i < phnum && n < max; i++)
			if (gelf_getphdr(elf, (int)i, &ph) &&
			    ph.p_type == PT_LOAD)
				out[n++] = (struct load){ph.p_vaddr, ph.p_memsz,
							 ph.p_offset};
	elf_end(elf);
	close(fd);
	return n;
}

/* The mapping the loader makes for the PT_LOAD holding svma, at bias 0. */
static bool mapping_for(const char *bin, const struct load *loads, size_t nr,
			uint64_t svma, struct evprof_sym_mapping *m)
{
	for (size_t i = 0; i < nr; i++) {
		const struct load *l = &loads[i];

		if (svma - l->vaddr < l->memsz) {
			*m = (struct evprof_sym_mapping){
			    .path = bin,
			    .start = l->vaddr & ~0xfffull,
			    .end = l->vaddr + l->memsz,
			    .pgoff = l->offset & ~0xfffull,
			};
			return true;
		}
	}
	return false;
}

/* Parses addr2line -a output: "0x..." then (name, file:line) pairs. */
static void read_truth(FILE *p, struct truth *t, size_t n)
{
	char *line = NULL, *name = NULL;
	size_t cap = 0;
	ssize_t l;
	long i = -1;

	while ((l = getline(&line, &cap, p)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0x", 2) && !name) {
			i++;
			continue;
		}
		if (i < 0 || (size_t)i >= n)
			continue;
		if (!name) {
			name = strdup(line);
			continue;
		}
		if (t[i].nr < MAX_FRAMES) {
			char *colon = strrchr(line, ':');

			t[i].names[t[i].nr] = name;
			t[i].lines[t[i].nr] =
			    colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
			t[i].nr++;
		} else {
			free(name);
		}
		name = NULL;
	}
	free(name);
	free(line);
}

int main(int argc, char **argv)
{
	struct evprof_symbolizer_stats st = {.sz = sizeof(st)};
	size_t n = 0, cap = 0, nl, fn_ok = 0, chain_ok = 0, line_ok = 0;
	size_t line_n = 0, named = 0, a2l_named = 0, quirk_n = 0;
	struct evprof_symbolizer *s;
	struct load loads[32];
	struct truth *truth;
	uint64_t *addrs = NULL, a, sz;
	size_t max = 100000;
	char afile[4096];
	double t0, t_cold, t_warm, t_a2l;
	char cmd[8192];
	FILE *f, *p;

	if (argc < 3) {
		fprintf(stderr, "usage: %s BIN FUNCS [MAX]\n", argv[0]);
		return 2;
	}
	if (argc > 3)
		max = strtoul(argv[3], NULL, 10);
	nl = read_loads(argv[1], loads, 32);
	f = fopen(argv[2], "r");
	if (!nl || !f) {
		fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	while (n + 2 <= max &&
	       fscanf(f, "%" SCNx64 " %" SCNx64, &a, &sz) == 2) {
		if (!sz)
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				return 1;
		}
		addrs[n++] = a;
		addrs[n++] = a + sz / 2;
	}
	fclose(f);
	snprintf(afile, sizeof(afile), "%s.addrs", argv[2]);
	f = fopen(afile, "w");
	if (!f)
		return 1;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIx64 "\n", addrs[i]);
	fclose(f);

	s = evprof_symbolizer__new(NULL);
	if (!s)
		return 1;
	struct evprof_sym_result *res = calloc(n ? n : 1, sizeof(*res));

	if (!res)
		return 1;
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		struct evprof_sym_mapping m;

		if (mapping_for(argv[1], loads, nl, addrs[i], &m))
			evprof_symbolizer__user(s, &m, addrs[i], &res[i]);
	}
	t_cold = now() - t0;
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		struct evprof_sym_mapping m;
		struct evprof_sym_result r;

		if (mapping_for(argv[1], loads, nl, addrs[i], &m))
			evprof_symbolizer__user(s, &m, addrs[i], &r);
	}
	t_warm = now() - t0;

	truth = calloc(n ? n : 1, sizeof(*truth));
	if (!truth)
		return 1;
	snprintf(cmd, sizeof(cmd), "addr2line -a -f -i -C -e '%s' < '%s'",
		 argv[1], afile);
	t0 = now();
	p = popen(cmd, "r");
	if (!p)
		return 1;
	read_truth(p, truth, n);
	pclose(p);
	t_a2l = now() - t0;

	for (size_t i = 0; i < n; i++) {
		const struct evprof_sym_result *r = &res[i];
		const struct truth *t = &truth[i];
		bool a2l_known = t->nr && strcmp(t->names[0], "??");
		bool same = true, quirk_ok = true;

		named += r->name != NULL;
		a2l_named += a2l_known;
		if (!t->nr)
			continue;
		if (!strcmp(r->name ? r->name : "??", t->names[t->nr - 1]))
			fn_ok++;
		if (r->nr_frames == (uint32_t)t->nr) {
			for (int k = 0; k < t->nr; k++) {
				const char *ours = r->frames[k].name;

				if (ours && !strcmp(ours, t->names[k]))
					continue;
				same = false;
				/*
				 * binutils names an inlined C++ function that
				 * has no linkage name after the symbol that
				 * holds the address (dwarf2.c); we keep the
				 * DWARF name.
				 */
				if (k == 0 && t->nr > 1 &&
				    !strcmp(t->names[0], t->names[t->nr - 1]))
					continue;
				quirk_ok = false;
			}
		} else {
			same = quirk_ok = !r->nr_frames && !a2l_known;
		}
		quirk_n += quirk_ok;
		chain_ok += same;
		if (!same && getenv("BENCH_SHOW_DIFF") && chain_ok + 5 > i) {
			printf("  chain 0x%" PRIx64 ": evprof", addrs[i]);
			for (uint32_t k = 0; k < r->nr_frames; k++)
				printf(" \"%s\"", r->frames[k].name);
			printf("; addr2line");
			for (int k = 0; k < t->nr; k++)
				printf(" \"%s\"", t->names[k]);
			printf("\n");
		}
		if (t->lines[0]) {
			line_n++;
			line_ok +=
			    r->nr_frames && r->frames[0].line == t->lines[0];
		}
	}
	evprof_symbolizer__stats(s, &st);
	printf("binary      %s\n", argv[1]);
	printf("addresses   %zu (named: evprof %zu, addr2line %zu)\n", n, named,
	       a2l_named);
	printf("evprof      %.3f s cold, %.3f s warm (images %" PRIu64
	       ", cached %" PRIu64 ")\n",
	       t_cold, t_warm, st.images, st.cached);
	printf("addr2line   %.3f s\n", t_a2l);
	printf("agree       function %.4f, inline chain %.4f (%.4f but for "
	       "binutils' inline names), line %.4f (of %zu with a line)\n",
	       n ? (double)fn_ok / (double)n : 0,
	       n ? (double)chain_ok / (double)n : 0,
	       n ? (double)quirk_n / (double)n : 0,
	       line_n ? (double)line_ok / (double)line_n : 0, line_n);
	if (getenv("BENCH_SHOW_DIFF"))
		for (size_t i = 0, shown = 0; i < n && shown < 20; i++) {
			const struct truth *t = &truth[i];
			const char *ours = res[i].name ? res[i].name : "??";

			if (t->nr && strcmp(ours, t->names[t->nr - 1])) {
				printf("  0x%" PRIx64 ": evprof \"%s\", "
				       "addr2line \"%s\"\n",
				       addrs[i], ours, t->names[t->nr - 1]);
				shown++;
			}
		}
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < truth[i].nr; k++)
			free(truth[i].names[k]);
	free(truth);
	free(res);
	free(addrs);
	evprof_symbolizer__free(s);
	return 0;
}
