// SPDX-License-Identifier: MIT
/* Runs a fuzz target over every file of the corpus folders it is given. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			fprintf(stderr, "replay: cannot open %s\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 e->d_name);
			if (run_file(path) < 0) {
				fprintf(stderr, "replay: cannot read %s\n",
					path);
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return files ? 0 : 1;
}
