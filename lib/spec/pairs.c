/*
 * pairs.c - `kjudge spec pairs`: the translation pairs of a suite (specs of
 * one suite and kernel in different APIs, both directions), and the pair
 * contracts that may resolve them, loaded fail-closed with the rules of
 * ParBench's scripts/evaluation/pair_contracts.py.
 *
 * A contract resolves its pair when: comparability is "eligible"; the
 * baseline witness has status "pass" and an evidence file; the comparator
 * has a type and an evidence file; both evidence files are relative, inside
 * the project root and readable regular files; shared_input declares
 * source_args and target_args, equal to the correctness arguments of the
 * source and target specs; translated_run declares args; and target_oracle
 * lists at least one strategy.  Every unmet condition is listed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/jschema.h"
#include "kjudge/spec.h"
#include "kjudge/spec_check.h"
#include "spec/check_internal.h"
#include "base/fs.h"
#include "base/vec.h"
#include "base/internal.h"

struct ent {
	size_t line;
	const char *suite, *kernel, *api, *spec_file;
	json_t *doc;                  /* the spec, or NULL when it did not parse */
	char uid[256];
};

struct rd {
	const char *root;
	struct ent *v;
	size_t n, cap;
	json_t *ignored, *m;          /* m: the manifest's lines, kept alive */
	int rc;
};

static int line_fn(void *arg, size_t line, json_t *value, const struct kj_error *bad)
{
	struct rd *r = arg;
	char p[PATH_MAX * 2];
	const char *sf;
	struct ent *e;
	struct kj_error je;

	if (!value)
		return (r->rc = json_array_append_new(r->ignored, json_pack("{s:I, s:s}", "line",
						(json_int_t)line, "reason", bad->msg))) ? KJ_ENOMEM : 0;
	if (json_array_append(r->m, value) != 0)
		return r->rc = KJ_ENOMEM;
	sf = json_string_value(json_object_get(value, "spec_file"));
	snprintf(p, sizeof(p), "%s/%s", r->root, sf ? sf : "");
	if (!sf || access(p, F_OK) != 0)
		return (r->rc = json_array_append_new(r->ignored, json_pack("{s:I, s:s?, s:s}", "line",
						(json_int_t)line, "spec_file", sf, "reason",
						"its spec file does not exist"))) ? KJ_ENOMEM : 0;
	if (KJ__GROW(r->v, r->cap, r->n + 1) != KJ_OK)
		return r->rc = KJ_ENOMEM;
	e = &r->v[r->n++];
	memset(e, 0, sizeof(*e));
	e->line = line;
	e->suite = kj__chk_str(value, "source_suite");
	e->kernel = kj__chk_str(value, "kernel_name");
	e->api = kj__chk_str(value, "parallel_api");
	e->spec_file = sf;
	if (kj_jsonx_load_file(p, KJ_JSONX_OBJECT, &e->doc, &je) == KJ_ENOMEM)
		return r->rc = KJ_ENOMEM;
	{
		const char *u = kj__chk_str(kj__chk_obj(e->doc, "identity"), "unique_id");
		const char *b = strrchr(sf, '/');
		size_t len;

		if (*u) {
			snprintf(e->uid, sizeof(e->uid), "%s", u);
		} else {
			b = b ? b + 1 : sf;
			len = strlen(b);
			snprintf(e->uid, sizeof(e->uid), "%.*s",
				 (int)(len > 5 && !strcmp(b + len - 5, ".json") ? len - 5 : len), b);
		}
	}
	return 0;
}

/* An evidence path: relative, inside root, a readable regular file. */
static int evidence(const char *root, const char *label, const char *value, json_t *problems)
{
	char abs[PATH_MAX];
	struct kj_error e;
	int fd;

	if (value[0] == '/')
		return kj__chk_add(problems, label, "%s evidence path is absolute, not repo-relative: "
				   "%s", label, value);
	if (kj_spec_resolve(root, NULL, value, 1, label, abs, &e) != KJ_OK) {
		if (e.code == KJ_EINVAL)
			return kj__chk_add(problems, label, "%s evidence path escapes the repository: "
					   "%s", label, value);
		return kj__chk_add(problems, label, "%s evidence path is not an existing regular "
				   "file: %s", label, value);
	}
	if (!kj__is_file(abs))
		return kj__chk_add(problems, label, "%s evidence path is not an existing regular "
				   "file: %s", label, value);
	if ((fd = kj_spec_open_nofollow(abs, O_RDONLY)) < 0)
		return kj__chk_add(problems, label, "%s evidence file is not readable: %s", label,
				   value);
	close(fd);
	return KJ_OK;
}

/* Whether declared equals the spec's correctness arguments (none: []). */
static int same_args(const json_t *declared, const json_t *doc)
{
	const json_t *a = json_object_get(kj__chk_obj(kj__chk_obj(kj__chk_obj(doc, "run"),
						"input_configurations"), "correctness"), "arguments");

	if (!a)
		return json_is_array(declared) && json_array_size(declared) == 0;
	return json_equal(declared, a);
}

/* Every unmet condition of c into problems (its pair's specs src, tgt). */
static int resolve(const char *root, const json_t *c, const json_t *src, const json_t *tgt,
		   json_t *problems)
{
	const char *cmp = json_string_value(json_object_get(c, "comparability"));
	const json_t *w = kj__chk_obj(c, "baseline_witness"), *co = kj__chk_obj(c, "comparator");
	const json_t *sh = kj__chk_obj(c, "shared_input"), *tr = kj__chk_obj(c, "translated_run");
	const json_t *orc = kj__chk_obj(c, "target_oracle"), *st;
	const char *ws = json_string_value(json_object_get(w, "status"));
	const char *we = json_string_value(json_object_get(w, "evidence"));
	int rc = KJ_OK;

	if (!cmp || strcmp(cmp, "eligible"))
		rc = kj__chk_add(problems, "comparability", "comparability is '%s', not 'eligible'",
				 cmp ? cmp : "unresolved");
	if (!rc && (!ws || strcmp(ws, "pass")))
		rc = kj__chk_add(problems, "baseline_witness.status", "baseline witness status is "
				 "'%s', not 'pass'", ws ? ws : "None");
	if (!rc && (!we || !*we))
		rc = kj__chk_add(problems, "baseline_witness.evidence", "baseline witness has no "
				 "evidence path");
	else if (!rc)
		rc = evidence(root, "baseline witness", we, problems);
	if (!rc && (!*kj__chk_str(co, "type") || !*kj__chk_str(co, "evidence")))
		rc = kj__chk_add(problems, "comparator", "comparator with type and evidence is not "
				 "declared");
	else if (!rc)
		rc = evidence(root, "comparator", kj__chk_str(co, "evidence"), problems);
	if (!rc && (!json_object_get(sh, "source_args") || !json_object_get(sh, "target_args")))
		rc = kj__chk_add(problems, "shared_input", "shared_input does not declare source_args "
				 "and target_args");
	if (!rc && json_object_get(sh, "source_args") && src &&
	    !same_args(json_object_get(sh, "source_args"), src))
		rc = kj__chk_add(problems, "shared_input.source_args", "declared source_args do not "
				 "match the source spec's correctness arguments");
	if (!rc && json_object_get(sh, "target_args") && tgt &&
	    !same_args(json_object_get(sh, "target_args"), tgt))
		rc = kj__chk_add(problems, "shared_input.target_args", "declared target_args do not "
				 "match the target spec's correctness arguments");
	if (!rc && !json_object_get(tr, "args"))
		rc = kj__chk_add(problems, "translated_run", "translated_run does not declare args");
	st = json_object_get(orc, "strategies");
	if (!rc && !json_array_size(st))
		rc = kj__chk_add(problems, "target_oracle", "target_oracle declares no strategies");
	return rc;
}

/* Load the contract file strictly, against its schema, refusing repeated
 * pairs: the document (a new reference) or NULL with err filled. */
static json_t *load_contracts(const char *file, struct kj_error *err)
{
	const struct kj_jschema *s = kj_spec_schema(KJ_SCHEMA_PAIR_CONTRACT, err);
	struct kj_jschema_result res = { NULL, 0, 0 };
	json_t *doc = NULL, *p, *q;
	size_t i, j;
	char path[1024];

	if (!s || kj_jsonx_load_file(file, KJ_JSONX_OBJECT, &doc, err) != KJ_OK)
		return NULL;
	if (kj_jschema_validate(s, doc, 1, &res, err) != KJ_OK) {
		json_decref(doc);
		return NULL;
	}
	if (res.n) {
		kj__chk_dotted(res.errors[0].path, path, sizeof(path));
		kj_error_set(err, KJ_EINVAL, "'%s': violates the pair-contract schema: %s: %s", file,
			     path, res.errors[0].message);
		kj_jschema_result_release(&res);
		json_decref(doc);
		return NULL;
	}
	json_array_foreach(json_object_get(doc, "pairs"), i, p)
		for (j = 0; j < i; j++) {
			q = json_array_get(json_object_get(doc, "pairs"), j);
			if (!strcmp(kj__chk_str(p, "source_spec"), kj__chk_str(q, "source_spec")) &&
			    !strcmp(kj__chk_str(p, "target_spec"), kj__chk_str(q, "target_spec"))) {
				kj_error_set(err, KJ_EINVAL, "'%s': pairs[%zu]: duplicate pair key %s "
					     "-> %s (first at pairs[%zu])", file, i,
					     kj__chk_str(p, "source_spec"), kj__chk_str(p, "target_spec"),
					     j);
				json_decref(doc);
				return NULL;
			}
		}
	return doc;
}

int kj_spec_pairs(const char *root, const char *contracts, json_t **out, struct kj_error *err)
{
	char r[PATH_MAX], tree[PATH_MAX], mf[PATH_MAX + 32];
	struct rd d;
	json_t *rep = NULL, *pairs, *cdoc = NULL, *used = NULL, *c;
	size_t i, j, k;
	int rc;

	*out = NULL;
	memset(&d, 0, sizeof(d));
	if ((rc = kj__chk_tree(root, r, tree, err)) != KJ_OK)
		return rc;
	if (contracts && !(cdoc = load_contracts(contracts, err)))
		return err ? err->code : KJ_EINVAL;
	d.root = r;
	d.ignored = json_array();
	d.m = json_array();
	rep = json_pack("{s:[], s:O, s:b}", "pairs", "ignored", d.ignored, "contracts", cdoc != NULL);
	used = json_array();
	if (!d.ignored || !d.m || !rep || !used) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(mf, sizeof(mf), "%s/manifest.jsonl", r);
	rc = kj_jsonl_load_file(mf, KJ_JSONX_OBJECT, line_fn, &d, err);
	if (d.rc) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	if (rc != KJ_OK && rc != KJ_EJSON)
		goto out;
	rc = KJ_OK;
	pairs = json_object_get(rep, "pairs");
	for (i = 0; i < d.n && rc == KJ_OK; i++)
		for (j = 0; j < d.n && rc == KJ_OK; j++) {
			struct ent *a = &d.v[i], *b = &d.v[j];
			json_t *p, *found = NULL;

			if (i == j || strcmp(a->suite, b->suite) || strcmp(a->kernel, b->kernel) ||
			    !strcmp(a->api, b->api))
				continue;
			p = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "source_spec", a->uid,
				      "target_spec", b->uid, "source_suite", a->suite, "kernel_name",
				      a->kernel, "source_api", a->api, "target_api", b->api);
			if (!p || json_array_append_new(pairs, p) != 0) {
				rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
				break;
			}
			json_array_foreach(json_object_get(cdoc, "pairs"), k, c)
				if (!strcmp(kj__chk_str(c, "source_spec"), a->uid) &&
				    !strcmp(kj__chk_str(c, "target_spec"), b->uid)) {
					found = c;
					json_array_append_new(used, json_integer((json_int_t)k));
				}
			if (!cdoc)
				continue;
			if (!found) {
				json_object_set_new(p, "contract", json_string("none"));
				continue;
			}
			{
				json_t *probs = json_array();

				if (!probs || resolve(r, found, a->doc, b->doc, probs) != KJ_OK) {
					json_decref(probs);
					rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
					break;
				}
				json_object_set_new(p, "contract", json_string(json_array_size(probs) ?
									"unresolved" : "resolved"));
				json_object_set_new(p, "problems", probs);
			}
		}
	/* Contracts naming no pair of the manifest: said, since a contract
	 * for a spec that is gone is a sign of a stale registry. */
	if (rc == KJ_OK && cdoc) {
		json_t *stray = json_array();

		json_array_foreach(json_object_get(cdoc, "pairs"), k, c) {
			json_t *u;
			size_t x;
			int seen = 0;

			json_array_foreach(used, x, u)
				seen |= (size_t)json_integer_value(u) == k;
			if (!seen)
				json_array_append_new(stray, json_pack("{s:s, s:s}", "source_spec",
								 kj__chk_str(c, "source_spec"),
								 "target_spec",
								 kj__chk_str(c, "target_spec")));
		}
		json_object_set_new(rep, "unmatched_contracts", stray);
	}
out:
	for (i = 0; i < d.n; i++)
		json_decref(d.v[i].doc);
	free(d.v);
	json_decref(d.ignored);
	json_decref(d.m);
	json_decref(used);
	json_decref(cdoc);
	if (rc != KJ_OK) {
		json_decref(rep);
		return rc;
	}
	*out = rep;
	return KJ_OK;
}
