/*
 * kjudge/spec_check.h - a suite checked without running anything: its specs
 * and manifest validated (schema, then the validator's own checks), its
 * translation pairs and pair contracts, and its run arguments against the
 * literal argc checks of its sources (lib/spec/check.c, lib/spec/pairs.c).
 *
 * The three schemas (schema/ files) are compiled into the library and each
 * is compiled as a validator once per process, on first use.
 *
 * Every report is a JSON value the caller owns (json_decref), whose form
 * docs/spec.md gives; a problem found in the suite is data in the report,
 * never a returned error.  The returned codes are the judge's own failures:
 * KJ_ENOENT / KJ_EINVAL for a root that is not a directory or (pairs) a
 * manifest or contract file that cannot be used, KJ_ENOMEM.
 */
#ifndef KJUDGE_SPEC_CHECK_H
#define KJUDGE_SPEC_CHECK_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"

/* Which compiled-in schema. */
enum kj_spec_schema_kind {
	KJ_SCHEMA_SPEC,
	KJ_SCHEMA_MANIFEST,
	KJ_SCHEMA_PAIR_CONTRACT,
};

/* The compiled validator of a compiled-in schema (owned by the library, for
 * the life of the process), or NULL with err filled. */
const struct kj_jschema *kj_spec_schema(enum kj_spec_schema_kind kind, struct kj_error *err);

/* What to validate: spec files, a manifest, or (all) the root's
 * manifest.jsonl, every spec it names, every specs/ (every .json), and the checks
 * across them. */
struct kj_spec_validate_opts {
	const char *root;             /* NULL: the current directory */
	const char *const *specs;     /* spec files, as given */
	size_t n_specs;
	const char *manifest;         /* a manifest file, or NULL */
	int all;
};

/*
 * Validate.  *out gets {"specs": [{"spec", "errors", "warnings"}],
 * "manifest": {"errors", "warnings"}}, each problem {"path", "message"},
 * paths in ParBench's dotted form ("(root)" for the document).
 * *n_errors gets the number of errors in it (warnings do not count).
 */
int kj_spec_validate(const struct kj_spec_validate_opts *o, json_t **out, size_t *n_errors,
		     struct kj_error *err);

/*
 * The translation pairs of root's manifest.jsonl (both directions, specs of
 * one suite and kernel in different APIs), and with contracts (a file in
 * ParBench's pair-contract format, or NULL) whether each is resolved.  A
 * contract file that is not strict JSON, breaks its schema or repeats a
 * pair is refused (KJ_EINVAL, err says where): it fails closed.
 */
int kj_spec_pairs(const char *root, const char *contracts, json_t **out, struct kj_error *err);

/*
 * The argc check of each spec (files: the spec files given; all: every
 * specs/ (every .json) of root).  *out gets {"specs": [{"spec", "unique_id",
 * "outcome", "detail"}], "counts": {...}}; *bad the number of MISMATCH
 * and SPEC-MISSING outcomes.
 */
int kj_spec_argc(const char *root, const char *const *files, size_t n, int all, json_t **out,
		 size_t *bad, struct kj_error *err);

#endif /* KJUDGE_SPEC_CHECK_H */
