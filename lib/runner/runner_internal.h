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

/*
 * The task source src (len bytes) with every top-level definition of the
 * class cls blanked out, newlines kept (task_view.c).  *out is a new
 * NUL-terminated string the caller frees; *removed counts the definitions.
 * Returns 0, or -1 when out of memory.
 */
int kj__task_view(const char *src, size_t len, const char *cls, char **out,
		  int *removed);

#include "base/internal.h"

#endif /* KJ_RUNNER_INTERNAL_H */
