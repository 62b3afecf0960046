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

/*
 * Torch extensions built once (extcache.c; its theory of operation and
 * threat model).  The candidate's worker sees its build root at
 * KJ__EXT_INSIDE in every sandbox (the same path every run, so that a
 * build's build.ninja, which names its directory, is the same every run),
 * and asks the judge to build a directory there before torch would run
 * ninja itself.
 */
#define KJ__EXT_INSIDE "/kjudge/ext"
/* A build directory's inputs, at most (count, and bytes in all). */
#define KJ__EXT_INPUTS_MAX 64
#define KJ__EXT_INPUT_BYTES (32 << 20)
/* Builds the judge runs for one run of a task, at most (and together for
 * no longer than the candidate's timeout). */
#define KJ__EXT_BUILDS_MAX 16

struct kj_sandbox;

struct kj__ext_ctx {
	const char *cache_root;         /* <cache>/ext: entries x-KEY, stages */
	const char *host;               /* the candidate's build root, as the
					 * judge sees it */
	const char *identity;           /* the toolchain (kj__ext_identity) */
	const struct kj_sandbox *view;  /* the builder's read-only view (its
					 * writable paths are not taken) */
	const char *root_dir;           /* an empty directory for its root */
	char *const *argv;              /* the worker, to run the build */
	char *const *envp;              /* the builder's environment */
	double timeout_s;               /* one build's limit */
};

struct kj__ext_result {
	int built;          /* the entry's files are in the build directory */
	int cached;         /* from the cache (else built now, or nothing) */
	int ran;            /* a build ran */
	int damaged;        /* the entry found was not whole: removed */
	int failed;         /* the build itself failed (why: its output's
			     * tail): the candidate's build fails */
	char key[65];
	char why[3200];     /* why not built */
};

/* Whether name can be a build directory's or an entry file's: letters,
 * digits, '_', '-', '.', at most 128, not "." or "..". */
int kj__ext_name_ok(const char *name);

/*
 * Serve one build request of the candidate's for the directory `name` of
 * its build root: the entry of its inputs' key from the cache, checked, or
 * built now and sealed; its files copied into the directory.  KJ_OK with
 * res filled (res->built 0 and res->why when the candidate is to build by
 * itself, or res->failed when its build failed where the judge ran it);
 * KJ_ENOMEM, KJ_EINTR or KJ_ESANDBOX for the judge's own failures.
 */
int kj__ext_serve(const struct kj__ext_ctx *c, const char *name, struct kj__ext_result *res,
		  struct kj_error *err);

/*
 * The toolchain's description for the keys: the worker's hello (Python,
 * torch, Triton, CUDA, the device; answered before any code under test
 * ran), and the compiler (c++), ninja and nvcc (in cuda_home/bin, else on
 * path) by real path, size and modification time.  0, or -1 when it does
 * not fit in size.
 */
int kj__ext_identity(const json_t *hello, const char *path, const char *cuda_home, char *out,
		     size_t size);

#include "base/internal.h"

#endif /* KJ_RUNNER_INTERNAL_H */
