/*
 * check_internal.h - what check.c shares with pairs.c and argc.c (kj__chk_
 * internals): problems appended to a report, fields read defensively, the
 * project's tree, the specs/ directory, and the validator's paths in
 * ParBench's dotted form.
 */
#ifndef KJ_SPEC_CHECK_INTERNAL_H
#define KJ_SPEC_CHECK_INTERNAL_H

#include <limits.h>
#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/jschema.h"

/* Append {"path", "message"} to arr; KJ_OK or KJ_ENOMEM. */
int kj__chk_add(json_t *arr, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* obj[key] as a string ("" when absent or not a string) or as an object
 * (NULL when absent or not one); obj may be NULL. */
const char *kj__chk_str(const json_t *obj, const char *key);
const json_t *kj__chk_obj(const json_t *obj, const char *key);
/* The project root (root, or "." when NULL) and its tree (config/paths.json's
 * downloads_root), both absolute and free of links. */
int kj__chk_tree(const char *root, char out_root[PATH_MAX], char tree[PATH_MAX],
		 struct kj_error *err);
/* "a.b[2].c" as "a.b.2.c". */
void kj__chk_dotted(const char *in, char *out, size_t size);
/* The schema's errors of doc appended to arr, each message after prefix. */
int kj__chk_schema(const struct kj_jschema *s, const json_t *doc, json_t *arr, const char *prefix,
		   struct kj_error *err);
/* "specs/NAME.json" for each file of root/specs, sorted, NULL-terminated;
 * freed by kj__chk_spec_dir_free; NULL when out of memory. */
char **kj__chk_spec_dir(const char *root);
void kj__chk_spec_dir_free(char **v);

#endif /* KJ_SPEC_CHECK_INTERNAL_H */
