/* SPDX-License-Identifier: MIT */
/*
 * How every cmocka program runs its cases:
 *
 *   prog            all cases, in order, in one process (cmocka's output)
 *   prog --list     each case's name, one a line (CTest makes a test of each)
 *   prog CASE       that case alone: 0 passed, 77 skipped, else failed
 *
 * A CASE that names no case fails: a typo or a renamed function never
 * runs zero cases and passes (cmocka's own filter would).
 */
#ifndef EVPROF_CASES_H
#define EVPROF_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* Skips the case, saying why on a line CI lists with the skip. */
#define skip_because(why)                                                      \
	do {                                                                   \
		print_message("SKIP: %s\n", why);                              \
		skip();                                                        \
	} while (0)

#define run_cases(argc, argv, tests, setup, teardown)                          \
	evprof__run_cases(argc, argv, tests,                                   \
			  sizeof(tests) / sizeof((tests)[0]), setup, teardown)

static const struct CMUnitTest *evprof__case;
static int evprof__case_ended;

/*
 * skip() and a failed assertion both leave the case by a longjmp: a case
 * that cmocka counts as no failure and that did not reach its end skipped.
 */
static void evprof__one_case(void **state)
{
	evprof__case->test_func(state);
	evprof__case_ended = 1;
}

static inline int evprof__run_cases(int argc, char **argv,
				    const struct CMUnitTest *tests, size_t n,
				    CMFixtureFunction setup,
				    CMFixtureFunction teardown)
{
	struct CMUnitTest one;
	size_t i, j;
	int rc;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(tests[i].name, tests[j].name)) {
				fprintf(stderr, "%s: two cases named %s\n",
					argv[0], tests[i].name);
				return 2;
			}
	if (argc == 1)
		return _cmocka_run_group_tests(argv[0], tests, n, setup,
					       teardown);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < n; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s [--list | CASE]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(tests[i].name, argv[1]))
			break;
	if (i == n) {
		fprintf(stderr, "%s: no case named %s\n", argv[0], argv[1]);
		return 2;
	}
	evprof__case = &tests[i];
	one = tests[i];
	one.test_func = evprof__one_case;
	rc = _cmocka_run_group_tests(tests[i].name, &one, 1, setup, teardown);
	if (rc)
		return rc;
	return evprof__case_ended ? 0 : 77;
}

#endif
