/*
 * kjudge/validate.h - static degradation checks of kernel candidates.
 *
 * `kjudge validate` answers the first of kjudge's three questions, "is the
 * candidate really a kernel?", without running it: no GPU, no torch, no
 * Python.  It is triton-op-verifier's validate_triton_impl.py (Step 0 of the
 * spec) on a real parser (tree-sitter, compiled in), with its whole rule set
 * and more:
 *
 *   type 1  no kernel: no @triton.jit function that uses triton.language
 *           (or, for CUDA candidates, no __global__ function), or the file
 *           does not parse;
 *   type 2  ModelNew.forward launches no kernel, through any depth of
 *           wrappers, methods, aliases and extension modules, in live code;
 *   type 3  PyTorch or library computation where the kernel should do the
 *           work: on the path forward reaches, anywhere in the file for the
 *           module-wide bans, in CUDA host code, or hidden behind getattr,
 *           exec, eval or __import__;
 *   type 4  every kernel forward launches is a placeholder that only loads,
 *           stores or fills.
 *
 * What counts as forbidden is data (`struct kj_vrules`, from a JSON rule
 * file; docs/validate.md), not code.  The analysis and its limits are
 * described in lib/validate.c.
 *
 * Ownership: kj_vrules_new() and kj_validator_new() return objects the
 * caller frees with kj_vrules_free() / kj_validator_free().  A validator
 * borrows its rules, which must outlive it.  A struct kj_vresult is
 * caller-owned; kj_validate_*() fill it and kj_vresult_release() frees what
 * they allocated inside it.  A validator holds parsers and is not
 * thread-safe: use one per thread.
 */
#ifndef KJUDGE_VALIDATE_H
#define KJUDGE_VALIDATE_H

#include <jansson.h>
#include <stddef.h>

#include "kjudge/error.h"

/* Largest candidate file kj_validate_file() reads (8 MiB). */
#define KJ_VALIDATE_MAX_FILE (8u << 20)

/* The regression types of the spec; 0 is a valid candidate. */
enum kj_vtype {
	KJ_VTYPE_VALID = 0,
	KJ_VTYPE_NO_KERNEL = 1,
	KJ_VTYPE_NOT_LAUNCHED = 2,
	KJ_VTYPE_TORCH_COMPUTE = 3,
	KJ_VTYPE_PLACEHOLDER = 4,
};

/*
 * The checks, in the order that decides the regression type: the first one
 * that fails names it.  Every check runs, so a record lists everything
 * found, not only the first failure.
 */
enum kj_vcheck {
	KJ_VCHECK_KERNEL_EXISTS,  /* type 1 */
	KJ_VCHECK_CALLED,         /* type 2 */
	KJ_VCHECK_MODULE_WIDE,    /* type 3 */
	KJ_VCHECK_HOST_LIBRARY,   /* type 3, CUDA host code */
	KJ_VCHECK_PLACEHOLDER,    /* type 4 */
	KJ_VCHECK_DYNAMIC,        /* type 3 */
	KJ_VCHECK_HOST_MATH,      /* type 3 */
	KJ_VCHECK_HOST_SYNC,      /* type 3 */
	KJ_VCHECK_TORCH_OPS,      /* type 3 */
	KJ_VCHECK_COUNT_
};

/* Which kernels the candidate is judged by. */
enum kj_vkind {
	KJ_VKIND_TRITON, /* a Python file without C++ extensions */
	KJ_VKIND_CUDA,   /* a .cu file, or Python that builds an extension */
};

/* The language of a source given to kj_validate_source(). */
enum kj_vlang {
	KJ_VLANG_PYTHON,
	KJ_VLANG_CUDA, /* CUDA C++ or plain C++ */
};

/* One finding.  Strings are NUL-terminated and owned by the result. */
struct kj_vviolation {
	enum kj_vcheck check;
	int line;        /* 1-based line in the file */
	int warning;     /* 1: reported but does not fail the check */
	const char *severity; /* "high" or "medium" for host sync, else NULL */
	const char *call;     /* the code as written, whitespace folded, <= 120 bytes */
	const char *resolved; /* what it resolves to ("torch.nn.functional.relu"), or NULL */
	const char *reason;   /* one sentence */
};

struct kj_vkernel {
	const char *name;
	int line;
	int cuda;        /* 1: a __global__ function, 0: a @triton.jit one */
	int computes;    /* Triton: uses triton.language; CUDA: always 1 */
	int launched;    /* launched on the path forward reaches */
	int placeholder; /* launched, and only loads, stores or fills */
};

struct kj_vresult {
	enum kj_vkind kind;
	enum kj_vtype regression_type;
	int failed[KJ_VCHECK_COUNT_];            /* 1: that check failed */
	const char *check_error[KJ_VCHECK_COUNT_]; /* why it failed, or NULL */
	struct kj_vkernel *kernels;
	size_t n_kernels;
	const char **called;   /* kernels launched from forward's path */
	size_t n_called;
	struct kj_vviolation *violations; /* sorted by check, then line */
	size_t n_violations;
	const char *suggestion; /* "" when valid */
	void *mem_;             /* private: everything above lives here */
};

/* A rule set: the compiled-in defaults, optionally extended by a file. */
struct kj_vrules;

/*
 * Load the rules.  `path` NULL: the defaults (rules/validate-default.json,
 * compiled in).  Otherwise the file at `path` is merged over the defaults
 * (its lists extend theirs, its settings replace theirs), or used alone if
 * it says "extends": "none".  KJ_ERULES names the key at fault.  On success
 * *out is the caller's, to kj_vrules_free(); on error *out is NULL.
 */
int kj_vrules_new(struct kj_vrules **out, const char *path,
		  struct kj_error *err);
void kj_vrules_free(struct kj_vrules *rules);

/* The effective rules as one JSON document (new reference, NULL on OOM). */
json_t *kj_vrules_json(const struct kj_vrules *rules);

struct kj_validator;

int kj_validator_new(struct kj_validator **out, const struct kj_vrules *rules,
		     struct kj_error *err);
void kj_validator_free(struct kj_validator *v);

void kj_vresult_init(struct kj_vresult *res);
/* Free what a kj_validate_*() call put in res and re-initialise it. */
void kj_vresult_release(struct kj_vresult *res);

/*
 * Judge the candidate at `path`: Python unless its name ends in .cu, .cuh,
 * .cpp, .cc, .cxx, .h or .hpp.  A candidate that is judged, however
 * degraded, returns KJ_OK with the verdict in *res.  A file that cannot be
 * read, is larger than KJ_VALIDATE_MAX_FILE, nests deeper than the analysis
 * goes, or defeats the parser returns a KJ_E* code and nothing in *res.
 * Sources named by torch.utils.cpp_extension.load(sources=[...]) are read
 * relative to the file's directory.  *res must be initialised (or
 * released) before the call.
 */
int kj_validate_file(struct kj_validator *v, const char *path,
		     struct kj_vresult *res, struct kj_error *err);

/*
 * The same for `len` bytes at `src` (no NUL needed).  `name` is used in
 * messages; `dir` is where load(sources=...) files are looked up (NULL:
 * nowhere, such sources count as missing).
 */
int kj_validate_source(struct kj_validator *v, const char *name,
		       const char *src, size_t len, enum kj_vlang lang,
		       const char *dir, struct kj_vresult *res,
		       struct kj_error *err);

/* The JSON record of a result (docs/validate.md); new reference, NULL on
 * OOM.  `filepath` is copied into the record. */
json_t *kj_vresult_json(const struct kj_vresult *res, const char *filepath);

/* The record of a file that could not be judged: {"valid": false,
 * "filepath", "regression_type": null, "error"}.  New reference. */
json_t *kj_vresult_error_json(const char *filepath, const char *message);

/*
 * The static check as an anti-cheat layer (eval's and check's): the file at
 * path judged with the default rules.  Returns 1 valid, 0 degraded or not
 * judged (a file it cannot read or parse is never valid), with msg a line
 * saying which ("valid: 2 kernels launched from forward", "degraded, type
 * 3: ...", "the static check could not judge it: ..."); or KJ_ENOMEM (< 0)
 * when out of memory.  res, when not NULL, gets the result (the kernels'
 * names; the caller releases it; initialised whatever happens).
 */
int kj_validate_layer(const char *path, struct kj_vresult *res, char *msg, size_t size);

/* Names used in records: "triton_kernel_exists", ...  Static storage. */
const char *kj_vcheck_name(enum kj_vcheck check, enum kj_vkind kind);

#endif /* KJUDGE_VALIDATE_H */
