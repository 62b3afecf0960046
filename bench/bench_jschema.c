/*
 * bench_jschema.c - how long schema checks of a suite's specs take
 * (lib/spec/jsonx.c and jschema*.c): what `kjudge spec validate --all`
 * spends on reading and schema conformance, without its own checks.
 *
 *   bench_jschema [--rounds N] SCHEMA SPEC...
 *
 * The schema is read and compiled once (timed apart); then each round reads
 * every SPEC strictly from its file and validates it, collecting all
 * errors.  It prints the compile time, and the round's wall time as the
 * median, minimum and maximum over the rounds, with the machine's CPU
 * model, the count of specs, how many were valid and the library
 * versions, so that a figure carries its environment (STYLE.md, 11).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <jansson.h>

#include "kjudge/jschema.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void cpu_model(char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(out, size, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(out, size, "%s", c + 2);
			out[strcspn(out, "\n")] = 0;
			break;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	int rounds = 20, first = 1, r, i, valid = 0;
	struct kj_error err;
	struct kj_jschema *s;
	json_t *doc;
	double t0, compile_s, *times;
	char cpu[256], pcre[64];

	if (argc > 2 && !strcmp(argv[1], "--rounds")) {
		rounds = (int)strtol(argv[2], NULL, 10);
		first = 3;
	}
	if (argc - first < 2 || rounds < 1) {
		fprintf(stderr, "usage: bench_jschema [--rounds N] SCHEMA SPEC...\n");
		return 2;
	}
	t0 = now();
	if (kj_jsonx_load_file(argv[first], KJ_JSONX_OBJECT, &doc, &err) ||
	    kj_jschema_compile(doc, argv[first], &s, &err)) {
		fprintf(stderr, "bench_jschema: %s\n", err.msg);
		return 2;
	}
	compile_s = now() - t0;
	times = calloc((size_t)rounds, sizeof(*times));
	if (!times)
		return 2;
	for (r = 0; r < rounds; r++) {
		valid = 0;
		t0 = now();
		for (i = first + 1; i < argc; i++) {
			struct kj_jschema_result res;
			json_t *spec;

			if (kj_jsonx_load_file(argv[i], KJ_JSONX_OBJECT, &spec, &err)) {
				fprintf(stderr, "bench_jschema: %s\n", err.msg);
				return 2;
			}
			if (kj_jschema_validate(s, spec, 0, &res, &err)) {
				fprintf(stderr, "bench_jschema: %s\n", err.msg);
				return 2;
			}
			valid += res.n == 0;
			if (r == 0 && res.n)
				printf("%s: %s: %s (and %zu more)\n", argv[i], res.errors[0].path,
				       res.errors[0].message, res.n - 1);
			kj_jschema_result_release(&res);
			json_decref(spec);
		}
		times[r] = now() - t0;
	}
	qsort(times, (size_t)rounds, sizeof(*times), by_value);
	cpu_model(cpu, sizeof(cpu));
	pcre2_config(PCRE2_CONFIG_VERSION, pcre);
	printf("machine: %s; jansson %s, PCRE2 %s\n", cpu, JANSSON_VERSION, pcre);
	printf("schema %s compiled in %.3f ms\n", argv[first], compile_s * 1e3);
	printf("%d specs (%d valid) read and validated: median %.2f ms, min %.2f ms, "
	       "max %.2f ms over %d rounds (%.1f us a spec at the median)\n",
	       argc - first - 1, valid, times[rounds / 2] * 1e3, times[0] * 1e3,
	       times[rounds - 1] * 1e3, rounds, times[rounds / 2] * 1e6 / (argc - first - 1));
	free(times);
	kj_jschema_free(s);
	json_decref(doc);
	return 0;
}
