/*
 * runner_internal.h - what the runners' files share (kj__ internals of
 * lib/runner/): the task file as a candidate sees it.
 *
 * Include it after the system headers, as base/internal.h (which it
 * includes last).
 */
#ifndef KJ_RUNNER_INTERNAL_H
#define KJ_RUNNER_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"

/*
 * The task source src (len bytes) with every top-level definition of the
 * class cls blanked out, newlines kept (task_view.c).  *out is a new
 * NUL-terminated string the caller frees; *removed counts the definitions.
 * Returns 0, or -1 when out of memory.
 */
int kj__task_view(const char *src, size_t len, const char *cls, char **out,
		  int *removed);

/* A cases file's limits. */
#define KJ_CASES_MAX 10000
#define KJ_CASES_AXES_MAX 32

/*
 * The task's cases file at path (cases.c): its SHA-256 into sha256 (of the
 * bytes parsed) and, on success, *cases a new array (the caller's
 * reference) of every case, each an object {axis: value} in the file's axis
 * order: the Cartesian product of the axes, the last axis fastest, minus
 * the exclusions.  A file that is not what docs/cli.md says: KJ_EINVAL with
 * err naming the file and why; *cases NULL on every error.
 */
int kj__cases_load(const char *path, json_t **cases, char sha256[65], struct kj_error *err);

#include "base/internal.h"

#endif /* KJ_RUNNER_INTERNAL_H */
