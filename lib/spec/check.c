/*
 * check.c - `kjudge spec validate`: a suite's specs and manifest checked
 * against the compiled-in schemas, then against the rules the schema cannot
 * say (ParBench's scripts/validate_schema.py is the behaviour matched;
 * docs/spec.md lists where kjudge is stricter).
 *
 * Every problem is a {"path", "message"} object in the report: the checks
 * never stop at the first one, and none of them is a returned error.  Each
 * check reads the document defensively (a field of the wrong type reads as
 * absent), because the schema's own errors have already said what is wrong
 * with it and one wrong type must not hide the other checks.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/jschema.h"
#include "kjudge/spec.h"
#include "kjudge/spec_check.h"
#include "spec/check_internal.h"
#include "base/fs.h"
#include "base/vec.h"
#include "base/internal.h"

/* --- the compiled-in schemas, compiled once -------------------------------------- */

extern const char kj__spec_schema[], kj__manifest_schema[], kj__pair_contract_schema[];
extern const size_t kj__spec_schema_len, kj__manifest_schema_len, kj__pair_contract_schema_len;

static struct {
	const char *name, *text;
	const size_t *len;
	struct kj_jschema *s;
	struct kj_error err;
} schemas[] = {
	[KJ_SCHEMA_SPEC] = { "spec_schema.json", kj__spec_schema, &kj__spec_schema_len, NULL, { 0 } },
	[KJ_SCHEMA_MANIFEST] = { "manifest_schema.json", kj__manifest_schema,
				 &kj__manifest_schema_len, NULL, { 0 } },
	[KJ_SCHEMA_PAIR_CONTRACT] = { "pair_contract_schema.json", kj__pair_contract_schema,
				      &kj__pair_contract_schema_len, NULL, { 0 } },
};
static pthread_once_t schemas_once = PTHREAD_ONCE_INIT;

static void compile_schemas(void)
{
	size_t i;

	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		json_t *doc = NULL;

		if (kj_jsonx_loadb(schemas[i].text, *schemas[i].len, schemas[i].name, 0, &doc,
				   &schemas[i].err) == KJ_OK)
			kj_jschema_compile(doc, schemas[i].name, &schemas[i].s, &schemas[i].err);
		json_decref(doc);
	}
}

const struct kj_jschema *kj_spec_schema(enum kj_spec_schema_kind kind, struct kj_error *err)
{
	pthread_once(&schemas_once, compile_schemas);
	if (!schemas[kind].s)
		kj_error_set(err, schemas[kind].err.code ? schemas[kind].err.code : KJ_ENOMEM, "%s",
			     schemas[kind].err.msg);
	return schemas[kind].s;
}

/* --- small helpers, shared with pairs.c ----------------------------------------- */

int kj__chk_add(json_t *arr, const char *path, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	json_t *o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = json_pack("{s:s, s:s}", "path", path, "message", msg);
	if (!o || json_array_append_new(arr, o) != 0)
		return KJ_ENOMEM;
	return KJ_OK;
}

const char *kj__chk_str(const json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));

	return v ? v : "";
}

const json_t *kj__chk_obj(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_object(v) ? v : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The strings of v (n of them), sorted and without repeats, in the form
 * ParBench's messages print a sorted list: ['a', 'b']. */
static void py_list(const char **v, size_t n, char *out, size_t size)
{
	size_t i, len = 0;

	qsort(v, n, sizeof(*v), cmp_str);
	len += (size_t)snprintf(out, size, "[");
	for (i = 0; i < n && len < size; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s'%s'", len > 1 ? ", " : "", v[i]);
	}
	if (len < size)
		snprintf(out + len, size - len, "]");
}

int kj__chk_tree(const char *root, char out_root[PATH_MAX], char tree[PATH_MAX],
		 struct kj_error *err)
{
	char p[PATH_MAX + 32];
	json_t *j = NULL;
	const json_t *d;
	int rc;

	if (!realpath(root ? root : ".", out_root))
		return kj_error_set(err, KJ_ENOENT, "project root '%s': %s", root ? root : ".",
				    strerror(errno));
	if (!kj__is_dir(out_root))
		return kj_error_set(err, KJ_EINVAL, "project root '%s' is not a directory",
				    root ? root : ".");
	memcpy(tree, out_root, PATH_MAX);
	snprintf(p, sizeof(p), "%s/config/paths.json", out_root);
	if (access(p, F_OK) != 0)
		return KJ_OK;
	if ((rc = kj_jsonx_load_file(p, KJ_JSONX_OBJECT, &j, err)) != KJ_OK)
		return rc;
	d = json_object_get(j, "downloads_root");
	if (d && !json_is_null(d)) {
		const char *v = json_string_value(d);

		if (!v || !*v) {
			json_decref(j);
			return kj_error_set(err, KJ_EINVAL, "'%s': downloads_root: must be a "
					    "non-empty string", p);
		}
		if (v[0] == '/')
			snprintf(p, sizeof(p), "%s", v);
		else
			snprintf(p, sizeof(p), "%s/%s", out_root, v);
		if (!realpath(p, tree)) {
			rc = kj_error_set(err, KJ_ENOENT, "'config/paths.json': downloads_root "
					  "'%s': %s", v, strerror(errno));
			json_decref(j);
			return rc;
		}
	}
	json_decref(j);
	return KJ_OK;
}

/*
 * A path of the validator ("a.b[2].c", "a['x y']") in ParBench's dotted
 * form ("a.b.2.c", "a.x y"), which is what jsonschema's absolute_path gives
 * joined with dots.
 */
void kj__chk_dotted(const char *in, char *out, size_t size)
{
	size_t o = 0;

	if (!strcmp(in, "(root)")) {
		snprintf(out, size, "(root)");
		return;
	}
	while (*in && o + 1 < size) {
		if (*in == '[') {
			if (o)
				out[o++] = '.';
			in++;
			if (*in == '\'') {
				for (in++; *in && *in != '\'' && o + 1 < size; in++) {
					if (*in == '\\' && in[1])
						in++;
					out[o++] = *in;
				}
				if (*in == '\'')
					in++;
			} else {
				while (*in && *in != ']' && o + 1 < size)
					out[o++] = *in++;
			}
			if (*in == ']')
				in++;
		} else {
			out[o++] = *in++;
		}
	}
	out[o] = '\0';
}

/* The schema's errors of doc into arr, each prefixed as asked. */
int kj__chk_schema(const struct kj_jschema *s, const json_t *doc, json_t *arr, const char *prefix,
		   struct kj_error *err)
{
	struct kj_jschema_result res = { NULL, 0, 0 };
	char path[1024];
	size_t i;
	int rc = kj_jschema_validate(s, doc, 0, &res, err);

	for (i = 0; rc == KJ_OK && i < res.n; i++) {
		kj__chk_dotted(res.errors[i].path, path, sizeof(path));
		rc = kj__chk_add(arr, path, "%s%s", prefix, res.errors[i].message);
	}
	if (rc == KJ_OK && res.truncated)
		rc = kj__chk_add(arr, "(root)", "%smore than %d errors: the rest not shown", prefix,
				 KJ_JSCHEMA_MAX_ERRORS);
	kj_jschema_result_release(&res);
	return rc;
}

/* --- one spec ---------------------------------------------------------------------- */

struct ctx {
	char root[PATH_MAX], tree[PATH_MAX];
	json_t *specs;                /* the report's "specs" */
	json_t *merr, *mwarn;         /* the report's manifest */
	struct kj_error *err;
};

/* The strings of a list field of files (absent or not an array: none). */
static size_t str_list(const json_t *files, const char *key, const char **v, size_t max)
{
	const json_t *a = json_object_get(files, key), *e;
	size_t i, n = 0;

	json_array_foreach(a, i, e)
		if (json_is_string(e) && n < max)
			v[n++] = json_string_value(e);
	return n;
}

static int in_list(const char *s, const char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, v[i]))
			return 1;
	return 0;
}

/* The ${NAME} references of cmd that vars does not define, into out. */
static size_t undefined_vars(const char *cmd, const json_t *vars, char names[][64], size_t max)
{
	size_t n = 0;
	const char *p;

	for (p = strstr(cmd, "${"); p; p = strstr(p + 1, "${")) {
		const char *q = p + 2;
		size_t len = 0;

		while ((q[len] >= 'a' && q[len] <= 'z') || (q[len] >= 'A' && q[len] <= 'Z') ||
		       (q[len] >= '0' && q[len] <= '9') || q[len] == '_')
			len++;
		if (!len || q[len] != '}' || len >= 64 || n == max)
			continue;
		memcpy(names[n], q, len);
		names[n][len] = '\0';
		if (!json_object_get(vars, names[n]))
			n++;
	}
	return n;
}

#define LIST_MAX 4096

static int file_checks(struct ctx *c, const json_t *doc, json_t *errs, json_t *warns)
{
	const json_t *prov = kj__chk_obj(doc, "provenance"), *files = kj__chk_obj(doc, "files");
	const char *repo = kj__chk_str(prov, "repo_root"), *src = kj__chk_str(prov, "source_path");
	static const char *const lists[] = { "prompt_payload", "support_files", "verification_only" };
	const char **v[3], **tt;
	size_t n[3], ntt, i, k;
	char repo_abs[PATH_MAX], base[PATH_MAX], buf[8192], field[128];
	struct kj_error e;
	int rc = KJ_OK, have_repo = 0, have_base = 0;

	v[0] = calloc(4 * LIST_MAX, sizeof(char *));
	if (!v[0])
		return KJ_ENOMEM;
	v[1] = v[0] + LIST_MAX;
	v[2] = v[1] + LIST_MAX;
	tt = v[2] + LIST_MAX;
	for (k = 0; k < 3; k++)
		n[k] = str_list(files, lists[k], v[k], LIST_MAX);
	ntt = str_list(files, "translation_targets", tt, LIST_MAX);

	/* The source tree: kj_spec_resolve keeps it inside the project's
	 * tree (stricter than ParBench, which resolves it anywhere). */
	if (*repo) {
		rc = kj_spec_resolve(c->tree, NULL, repo, 1, "provenance.repo_root", repo_abs, &e);
		if (rc == KJ_OK && kj__is_dir(repo_abs))
			have_repo = 1;
		else if (rc == KJ_EINVAL && (rc = kj__chk_add(errs, "provenance.repo_root", "%s",
							       e.msg + strlen("provenance.repo_root: "))))
			goto out;
		rc = KJ_OK;
	}
	if (have_repo) {
		rc = kj_spec_resolve(c->tree, repo_abs, *src ? src : ".", 1, "provenance.source_path",
				     base, &e);
		if (rc == KJ_OK && kj__is_dir(base))
			have_base = 1;
		else if (rc == KJ_EINVAL && (rc = kj__chk_add(errs, "provenance.source_path", "%s",
							       e.msg + strlen("provenance.source_path: "))))
			goto out;
		rc = KJ_OK;
	}
	if (!have_base) {
		rc = kj__chk_add(warns, "provenance.source_path", "the source tree '%s%s%s' is absent "
				 "under '%s': the file checks are skipped", repo, *src ? "/" : "", src,
				 c->tree);
		if (rc)
			goto out;
	}
	for (k = 0; have_base && k < 3; k++)
		for (i = 0; i < n[k]; i++) {
			char abs[PATH_MAX];

			snprintf(field, sizeof(field), "files.%s", lists[k]);
			if (kj_spec_resolve(c->tree, base, v[k][i], 1, field, abs, &e) == KJ_OK)
				continue;
			if (e.code == KJ_EINVAL)
				rc = kj__chk_add(errs, field, "%s", e.msg + strlen(field) + 2);
			else
				rc = kj__chk_add(errs, field, "'%s' not found at '%s/%s'", v[k][i], base,
						 v[k][i]);
			if (rc)
				goto out;
		}

	/* The classification itself, whatever is on disk. */
	{
		const char *both[LIST_MAX];
		size_t nb = 0;

		for (i = 0; i < n[0]; i++)
			if (in_list(v[0][i], v[2], n[2]))
				both[nb++] = v[0][i];
		py_list(both, nb, buf, sizeof(buf));
		if (nb && (rc = kj__chk_add(errs, "files", "these files appear in BOTH prompt_payload "
					    "and verification_only (forbidden): %s", buf)))
			goto out;
		nb = 0;
		for (i = 0; i < n[0]; i++)
			if (in_list(v[0][i], v[1], n[1]))
				both[nb++] = v[0][i];
		py_list(both, nb, buf, sizeof(buf));
		if (nb && (rc = kj__chk_add(warns, "files", "these files appear in BOTH prompt_payload "
					    "and support_files (may be intentional): %s", buf)))
			goto out;
		nb = 0;
		for (i = 0; i < ntt; i++)
			if (!in_list(tt[i], v[0], n[0]))
				both[nb++] = tt[i];
		py_list(both, nb, buf, sizeof(buf));
		if (nb && (rc = kj__chk_add(errs, "files", "translation_targets entries not in "
					    "prompt_payload: %s", buf)))
			goto out;
		for (i = 1; i < ntt; i++)
			if (in_list(tt[i], tt, i))
				break;
		if (ntt && i < ntt && (rc = kj__chk_add(warns, "files", "translation_targets "
							"contains duplicate entries")))
			goto out;
	}

	/* Orphans: the regular files of the source directory (by name, as
	 * ParBench compares them) in no list; the first 256 are named (a
	 * warning only: more is a sign of a directory no one classified). */
	if (have_base) {
		const char *orph[LIST_MAX];
		char names[256][NAME_MAX + 1];
		size_t no = 0;
		DIR *d = opendir(base);
		struct dirent *de;

		while (d && (de = readdir(d)) && no < 256) {
			char p[PATH_MAX + NAME_MAX + 2];

			snprintf(p, sizeof(p), "%s/%s", base, de->d_name);
			if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
				continue;
			if (!kj__is_file(p) || in_list(de->d_name, v[0], n[0]) ||
			    in_list(de->d_name, v[1], n[1]) || in_list(de->d_name, v[2], n[2]))
				continue;
			snprintf(names[no], sizeof(names[no]), "%s", de->d_name);
			orph[no] = names[no];
			no++;
		}
		if (d)
			closedir(d);
		py_list(orph, no, buf, sizeof(buf));
		if (no && (rc = kj__chk_add(warns, "files", "orphan files in source dir not in any "
					    "list: %s", buf)))
			goto out;
	}

	/* The build. */
	{
		const json_t *b = kj__chk_obj(doc, "build");
		const json_t *cmds = kj__chk_obj(b, "commands");
		const json_t *vars = kj__chk_obj(b, "variables");
		const char *wd = kj__chk_str(b, "working_directory");
		static const char *const steps[] = { "clean", "configure", "build" };
		char names[32][64];

		if (*wd && have_repo) {
			char abs[PATH_MAX];

			if (kj_spec_resolve(c->tree, repo_abs, wd, 1, "build.working_directory", abs,
					    &e) != KJ_OK) {
				if (e.code == KJ_EINVAL)
					rc = kj__chk_add(errs, "build.working_directory", "%s",
							 e.msg + strlen("build.working_directory: "));
				else
					rc = kj__chk_add(errs, "build.working_directory", "'%s' does "
							 "not exist under repo_root", wd);
				if (rc)
					goto out;
			}
		}
		if (!*kj__chk_str(kj__chk_obj(b, "outputs"), "executable") &&
		    (rc = kj__chk_add(errs, "build.outputs.executable", "name is empty")))
			goto out;
		for (k = 0; k < 3; k++) {
			const char *cmd = kj__chk_str(cmds, steps[k]);
			const char *undef[32];
			size_t nu = undefined_vars(cmd, vars, names, 32);

			for (i = 0; i < nu; i++)
				undef[i] = names[i];
			py_list(undef, nu, buf, sizeof(buf));
			snprintf(field, sizeof(field), "build.commands.%s", steps[k]);
			if (nu && (rc = kj__chk_add(warns, field, "undefined variable(s) referenced: %s",
						    buf)))
				goto out;
		}
	}
out:
	free(v[0]);
	return rc;
}

/* The file name's stem: what is between the last '/' and a final ".json". */
static void stem_of(const char *file, char *out, size_t size)
{
	const char *b = strrchr(file, '/');
	size_t n;

	b = b ? b + 1 : file;
	n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	snprintf(out, size, "%.*s", (int)n, b);
}

/* Validate one spec file into a new entry of c->specs; *doc_out (when not
 * NULL) gets the document (a new reference, NULL when it did not parse). */
static int check_spec(struct ctx *c, const char *file, const char *path, json_t **doc_out)
{
	json_t *ent, *errs, *warns, *doc = NULL;
	const json_t *id, *impl;
	const char *uid, *api, *iapi;
	char stem[NAME_MAX + 1];
	struct kj_error e;
	const struct kj_jschema *s;
	int rc;

	if (doc_out)
		*doc_out = NULL;
	if (!(s = kj_spec_schema(KJ_SCHEMA_SPEC, c->err)))
		return c->err->code;
	ent = json_pack("{s:s, s:[], s:[]}", "spec", file, "errors", "warnings");
	if (!ent || json_array_append_new(c->specs, ent) != 0)
		return KJ_ENOMEM;
	errs = json_object_get(ent, "errors");
	warns = json_object_get(ent, "warnings");
	rc = kj_jsonx_load_file(path, KJ_JSONX_OBJECT, &doc, &e);
	if (rc == KJ_ENOMEM)
		return rc;
	if (rc != KJ_OK)
		return kj__chk_add(errs, "(root)", "%s", e.msg);
	if ((rc = kj__chk_schema(s, doc, errs, "", c->err)) != KJ_OK)
		goto out;
	id = kj__chk_obj(doc, "identity");
	uid = kj__chk_str(id, "unique_id");
	stem_of(file, stem, sizeof(stem));
	if (*uid && strcmp(uid, stem) &&
	    (rc = kj__chk_add(errs, "identity.unique_id", "'%s' does not match filename '%s.json'",
			      uid, stem)))
		goto out;
	if (*uid && json_is_string(json_object_get(id, "source_suite")) &&
	    json_is_string(json_object_get(id, "kernel_name")) &&
	    json_is_string(json_object_get(id, "parallel_api"))) {
		char want[1024];

		snprintf(want, sizeof(want), "%s-%s-%s", kj__chk_str(id, "source_suite"),
			 kj__chk_str(id, "kernel_name"), kj__chk_str(id, "parallel_api"));
		if (strcmp(uid, want) &&
		    (rc = kj__chk_add(errs, "identity.unique_id", "'%s' does not match expected '%s' "
				      "(from source_suite-kernel_name-parallel_api)", uid, want)))
			goto out;
	}
	impl = kj__chk_obj(doc, "implementation");
	iapi = kj__chk_str(impl, "api");
	api = kj__chk_str(id, "parallel_api");
	if (*iapi && *api && strcmp(iapi, api) &&
	    (rc = kj__chk_add(errs, "implementation.api", "'%s' != identity.parallel_api '%s'", iapi,
			      api)))
		goto out;
	rc = file_checks(c, doc, errs, warns);
out:
	if (doc_out && rc == KJ_OK)
		*doc_out = doc;
	else
		json_decref(doc);
	return rc;
}

/* --- the manifest and the checks across the suite ------------------------------------ */

struct mline {
	size_t line;
	json_t *v;                    /* the entry (a reference), or NULL */
};

struct mread {
	struct ctx *c;
	const struct kj_jschema *s;
	struct mline *v;
	size_t n, cap;
	int rc;
};

static int manifest_line(void *arg, size_t line, json_t *value, const struct kj_error *bad)
{
	struct mread *m = arg;
	struct ctx *c = m->c;
	char prefix[64], p[PATH_MAX * 2];
	const char *sf, *sd;
	int rc;

	snprintf(prefix, sizeof(prefix), "line %zu: ", line);
	if (!value)
		return m->rc = kj__chk_add(c->merr, "(root)", "%s%s", prefix, bad->msg);
	if ((rc = kj__chk_schema(m->s, value, c->merr, prefix, c->err)) != KJ_OK)
		return m->rc = rc;
	sf = json_string_value(json_object_get(value, "spec_file"));
	sd = json_string_value(json_object_get(value, "source_dir"));
	snprintf(p, sizeof(p), "%s/%s", c->root, sf ? sf : "");
	if (sf && access(p, F_OK) != 0 &&
	    (rc = kj__chk_add(c->merr, "spec_file", "%s'%s' does not exist on disk", prefix, sf)))
		return m->rc = rc;
	snprintf(p, sizeof(p), "%s/%s", c->tree, sd ? sd : "");
	if (sd && access(p, F_OK) != 0 &&
	    (rc = kj__chk_add(c->merr, "source_dir", "%s'%s' does not exist on disk", prefix, sd)))
		return m->rc = rc;
	if (KJ__GROW(m->v, m->cap, m->n + 1) != KJ_OK)
		return m->rc = KJ_ENOMEM;
	m->v[m->n].line = line;
	m->v[m->n++].v = json_incref(value);
	return KJ_OK;
}

static void mread_release(struct mread *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		json_decref(m->v[i].v);
	free(m->v);
}

static int read_manifest(struct ctx *c, const char *file, struct mread *m)
{
	struct kj_error e;
	int rc;

	memset(m, 0, sizeof(*m));
	m->c = c;
	if (!(m->s = kj_spec_schema(KJ_SCHEMA_MANIFEST, c->err)))
		return c->err->code;
	rc = kj_jsonl_load_file(file, KJ_JSONX_OBJECT, manifest_line, m, &e);
	if (m->rc)
		return m->rc;
	if (rc == KJ_ENOMEM)
		return rc;
	if (rc != KJ_OK && rc != KJ_EJSON)
		return kj__chk_add(c->merr, "(root)", "%s", e.msg);
	return KJ_OK;
}

/* The sorted names of root/specs/ (every .json) ("specs/NAME"), NULL-terminated,
 * in one allocation; NULL when out of memory. */
char **kj__chk_spec_dir(const char *root)
{
	char p[PATH_MAX + 8], **v;
	DIR *d;
	struct dirent *de;
	size_t n = 0, cap = 16, i;

	snprintf(p, sizeof(p), "%s/specs", root);
	if (!(v = calloc(cap, sizeof(*v))))
		return NULL;
	d = opendir(p);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") || de->d_name[0] == '.')
			continue;
		if (KJ__GROW(v, cap, n + 2) != KJ_OK)
			goto oom;
		if (!(v[n] = malloc(len + 7)))
			goto oom;
		snprintf(v[n++], len + 7, "specs/%s", de->d_name);
		v[n] = NULL;
	}
	if (d)
		closedir(d);
	qsort(v, n, sizeof(*v), cmp_str);
	return v;
oom:
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return NULL;
}

void kj__chk_spec_dir_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Manifest and spec agreeing (kernel_name, parallel_api, source_dir). */
static int agree(struct ctx *c, const struct mline *ml, const json_t *doc, const char *sf)
{
	const json_t *id = kj__chk_obj(doc, "identity"), *prov = kj__chk_obj(doc, "provenance");
	const char *mk = kj__chk_str(ml->v, "kernel_name"), *sk = kj__chk_str(id, "kernel_name");
	const char *ma = kj__chk_str(ml->v, "parallel_api"), *sa = kj__chk_str(id, "parallel_api");
	const char *md = kj__chk_str(ml->v, "source_dir"), *rr = kj__chk_str(prov, "repo_root");
	char a[PATH_MAX * 2], b[PATH_MAX * 3], ra[PATH_MAX], rb[PATH_MAX];
	int rc = KJ_OK;

	if (*mk && *sk && strcmp(mk, sk))
		rc = kj__chk_add(c->merr, "kernel_name", "line %zu: %s: manifest kernel_name '%s' != "
				 "spec identity.kernel_name '%s'", ml->line, sf, mk, sk);
	if (!rc && *ma && *sa && strcmp(ma, sa))
		rc = kj__chk_add(c->merr, "parallel_api", "line %zu: %s: manifest parallel_api '%s' "
				 "!= spec identity.parallel_api '%s'", ml->line, sf, ma, sa);
	if (rc || !*md || !*rr)
		return rc;
	/* Both against the tree (ParBench takes both against the project
	 * root here, and the manifest's against the tree when it checks that
	 * it exists). */
	snprintf(a, sizeof(a), "%s/%s", c->tree, md);
	snprintf(b, sizeof(b), "%s/%s/%s", c->tree, rr, kj__chk_str(prov, "source_path"));
	if (!realpath(a, ra))
		snprintf(ra, sizeof(ra), "%.*s", PATH_MAX - 1, a);
	if (!realpath(b, rb))
		snprintf(rb, sizeof(rb), "%.*s", PATH_MAX - 1, b);
	if (strcmp(ra, rb))
		rc = kj__chk_add(c->merr, "source_dir", "line %zu: %s: manifest source_dir resolves "
				 "to '%s' but spec repo_root+source_path resolves to '%s'", ml->line,
				 sf, ra, rb);
	return rc;
}

/* The pairing census: a kernel of a suite with fewer than two APIs. */
static int census(struct ctx *c, const struct mread *m)
{
	size_t i, j;
	int rc = KJ_OK;

	for (i = 0; i < m->n && rc == KJ_OK; i++) {
		const char *su = kj__chk_str(m->v[i].v, "source_suite");
		const char *k = kj__chk_str(m->v[i].v, "kernel_name");
		const char *api = kj__chk_str(m->v[i].v, "parallel_api");
		size_t same = 0, first = 1;

		if (!*k || !*api)
			continue;
		for (j = 0; j < m->n; j++) {
			if (strcmp(kj__chk_str(m->v[j].v, "source_suite"), su) ||
			    strcmp(kj__chk_str(m->v[j].v, "kernel_name"), k) ||
			    !*kj__chk_str(m->v[j].v, "parallel_api"))
				continue;
			if (j < i)
				first = 0;
			same++;
		}
		if (first && same < 2)
			rc = kj__chk_add(c->mwarn, "(root)", "%s/%s has only %zu API(s) (['%s']): not "
					 "useful for translation", *su ? su : "unknown", k, same, api);
	}
	return rc;
}

static json_t *entry_of(struct ctx *c, const char *file)
{
	size_t i;
	json_t *e;

	json_array_foreach(c->specs, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "spec")), file))
			return e;
	return NULL;
}

static int check_all(struct ctx *c)
{
	char p[PATH_MAX + 32], **dir = NULL;
	struct mread m;
	size_t i, j;
	int rc;

	snprintf(p, sizeof(p), "%s/manifest.jsonl", c->root);
	if ((rc = read_manifest(c, p, &m)) != KJ_OK)
		goto out;
	if (!(dir = kj__chk_spec_dir(c->root))) {
		rc = KJ_ENOMEM;
		goto out;
	}
	/* Every spec the manifest names, then every specs/ (every .json) it does not,
	 * each once, in the order of their names. */
	for (i = 0; i < m.n && rc == KJ_OK; i++) {
		const char *sf = json_string_value(json_object_get(m.v[i].v, "spec_file"));
		char abs[PATH_MAX * 2];
		json_t *doc = NULL;

		if (!sf)
			continue;
		snprintf(abs, sizeof(abs), "%s/%s", c->root, sf);
		if (access(abs, F_OK) != 0)
			continue;
		if (!entry_of(c, sf)) {
			if ((rc = check_spec(c, sf, abs, &doc)) != KJ_OK)
				break;
		} else {
			struct kj_error e;

			if (kj_jsonx_load_file(abs, KJ_JSONX_OBJECT, &doc, &e) == KJ_ENOMEM)
				rc = KJ_ENOMEM;
		}
		if (doc && rc == KJ_OK)
			rc = agree(c, &m.v[i], doc, sf);
		json_decref(doc);
	}
	for (i = 0; dir[i] && rc == KJ_OK; i++) {
		for (j = 0; j < m.n; j++)
			if (!strcmp(kj__chk_str(m.v[j].v, "spec_file"), dir[i]))
				break;
		if (j == m.n)
			rc = kj__chk_add(c->merr, "(root)", "%s: spec file has no corresponding "
					 "manifest entry", dir[i]);
		snprintf(p, sizeof(p), "%s/%s", c->root, dir[i]);
		if (rc == KJ_OK && !entry_of(c, dir[i]))
			rc = check_spec(c, dir[i], p, NULL);
	}
	if (rc == KJ_OK)
		rc = census(c, &m);
	/* The oracle-strength audit, on every specs/ (every .json) (all listed, not
	 * the first five as ParBench prints them). */
	for (i = 0; dir[i] && rc == KJ_OK; i++) {
		json_t *doc = NULL, *ent = entry_of(c, dir[i]);
		struct kj_error e;
		const char *st;

		snprintf(p, sizeof(p), "%s/%s", c->root, dir[i]);
		if (kj_jsonx_load_file(p, KJ_JSONX_OBJECT, &doc, &e) != KJ_OK)
			continue;
		st = json_string_value(json_object_get(kj__chk_obj(doc, "verification"),
						       "oracle_strength"));
		if (!st || (strcmp(st, "strong") && strcmp(st, "medium") && strcmp(st, "weak") &&
			    strcmp(st, "unknown")))
			rc = kj__chk_add(json_object_get(ent, "warnings"), "verification.oracle_strength",
					 "oracle_strength not set");
		else if (!strcmp(st, "weak") || !strcmp(st, "unknown"))
			rc = kj__chk_add(json_object_get(ent, "warnings"), "verification.oracle_strength",
					 "oracle_strength='%s'", st);
		json_decref(doc);
	}
out:
	kj__chk_spec_dir_free(dir);
	mread_release(&m);
	return rc;
}

static size_t count_errors(const json_t *r)
{
	size_t i, n = json_array_size(json_object_get(json_object_get(r, "manifest"), "errors"));
	json_t *e;

	json_array_foreach(json_object_get(r, "specs"), i, e)
		n += json_array_size(json_object_get(e, "errors"));
	return n;
}

int kj_spec_validate(const struct kj_spec_validate_opts *o, json_t **out, size_t *n_errors,
		     struct kj_error *err)
{
	struct ctx c;
	json_t *r;
	size_t i;
	int rc;

	*out = NULL;
	*n_errors = 0;
	memset(&c, 0, sizeof(c));
	c.err = err;
	if ((rc = kj__chk_tree(o->root, c.root, c.tree, err)) != KJ_OK)
		return rc;
	if (!(r = json_pack("{s:[], s:{s:[], s:[]}}", "specs", "manifest", "errors", "warnings")))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	c.specs = json_object_get(r, "specs");
	c.merr = json_object_get(json_object_get(r, "manifest"), "errors");
	c.mwarn = json_object_get(json_object_get(r, "manifest"), "warnings");
	for (i = 0; i < o->n_specs && rc == KJ_OK; i++)
		rc = check_spec(&c, o->specs[i], o->specs[i], NULL);
	if (rc == KJ_OK && o->manifest) {
		struct mread m;

		rc = read_manifest(&c, o->manifest, &m);
		mread_release(&m);
	}
	/* --all names its files relative to the root, as ParBench does. */
	if (rc == KJ_OK && o->all)
		rc = check_all(&c);
	if (rc != KJ_OK) {
		json_decref(r);
		if (rc == KJ_ENOMEM)
			kj_error_set(err, KJ_ENOMEM, "out of memory");
		return rc;
	}
	*n_errors = count_errors(r);
	*out = r;
	return KJ_OK;
}
