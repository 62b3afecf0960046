/*
 * ps_util.h - what every program of the parsuite example suite shares: its
 * arguments, its inputs, its clock and its verdict line.
 *
 * The inputs come from a xorshift generator seeded from the command line, so
 * a run needs no data file and every API sees the same numbers.  Each
 * program checks its own result against a plain serial computation and ends
 * with one line, "PASS <kernel>" (exit 0) or "FAIL <kernel>: <why>" (exit 1);
 * an unusable argument or a failed allocation is exit 2.  The header is C99
 * and C++ both, since the CUDA variants include it too.
 *
 * The ps_<kernel>.h headers beside it hold each kernel's inputs and the
 * serial computation it is checked against, shared by its variants of every
 * API: a variant's own file holds only its parallel part.
 */
#ifndef PS_UTIL_H
#define PS_UTIL_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Reads a whole number from 1 to max, or stops the program: a run with a
 * mistyped size must not look like a run that computed the wrong thing. */
static inline long ps_arg(const char *what, const char *text, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "%s: expected a whole number from 1 to %ld, got '%s'\n", what, max, text);
		exit(2);
	}
	return v;
}

/* The generator's state never becomes zero (xorshift would stay there). */
static inline uint32_t ps_seed(long seed)
{
	uint32_t s = (uint32_t)seed * 2654435761u;

	return s != 0 ? s : 1u;
}

static inline uint32_t ps_next(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* A float in [0, 1) made of 24 random bits, so it is exact in binary32. */
static inline float ps_unit(uint32_t *state)
{
	return (float)(ps_next(state) >> 8) * (1.0f / 16777216.0f);
}

static inline void *ps_alloc(size_t count, size_t size)
{
	void *p = calloc(count, size);

	if (p == NULL) {
		fprintf(stderr, "out of memory (%zu x %zu bytes)\n", count, size);
		exit(2);
	}
	return p;
}

/* Milliseconds on a monotonic clock, for the "time_ms" line that the specs'
 * performance metric reads. */
static inline double ps_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Writes one unsigned number a line: the output file the strong oracles
 * hash or compare, so its format is part of the suite's contract. */
static inline int ps_write_lines(const char *path, const uint32_t *v, size_t count)
{
	FILE *out = fopen(path, "w");

	if (out == NULL) {
		fprintf(stderr, "cannot write %s\n", path);
		return -1;
	}
	for (size_t i = 0; i < count; i++)
		fprintf(out, "%u\n", v[i]);
	return fclose(out) == 0 ? 0 : -1;
}

/* The largest |got[i] - want[i]|; a NaN anywhere makes it infinite. */
static inline double ps_max_diff(const float *got, const float *want, size_t count)
{
	double worst = 0.0;

	for (size_t i = 0; i < count; i++) {
		double d = fabs((double)got[i] - (double)want[i]);
		if (d != d)
			return INFINITY;
		if (d > worst)
			worst = d;
	}
	return worst;
}

/* The sum of count floats in double: the checksum the programs print. */
static inline double ps_sum(const float *v, size_t count)
{
	double s = 0.0;

	for (size_t i = 0; i < count; i++)
		s += v[i];
	return s;
}

/* Prints the verdict line and returns the exit status that goes with it. */
static inline int ps_verdict(int ok, const char *kernel, const char *why)
{
	if (ok) {
		printf("PASS %s\n", kernel);
		return 0;
	}
	printf("FAIL %s: %s\n", kernel, why);
	return 1;
}

#endif
