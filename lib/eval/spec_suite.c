/*
 * spec_suite.c - `kjudge eval` over a ParBench-style suite of specs: its
 * tasks are translation directions, its candidates translations.
 *
 * A suite is a directory holding manifest.jsonl and specs/ (the project
 * root of `kjudge spec verify`, config/paths.json read from it).  Every
 * pair of specs of one source_suite and kernel_name in different APIs
 * gives two tasks, one each way: (source spec, target API), named
 * 'SOURCE_UID:TARGET_API' ('parsuite-histogram-omp:opencl').  A unique_id
 * is a lowercase slug, so the ':' never belongs to it, and it is a plain
 * byte in a POSIX file name and in JSON, so the name serves as the
 * MODEL/TASK/ATTEMPT/ directory's TASK too.
 *
 * A task's key is derived from its name, its path and what judging it
 * reads: the SHA-256 of both spec files and of both source trees (every
 * file the spec lists, its path and its bytes), so an edited spec or
 * reference makes a new task and never reuses old verdicts.
 *
 * A translation is a set of files, {NAME: TEXT}, NAME relative to the
 * target's source directory (only the target's translation_targets are
 * used; the judge says which others it ignored).  Its source in the store
 * is that object as compact JSON with sorted keys, so the same files are
 * the same candidate wherever they came from.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "kjudge/eval.h"
#include "kjudge/spec.h"
#include "eval/eval_internal.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/vec.h"
#include "store/keys.h"
#include "base/internal.h"
#include "base/banned.h"

/* What a translation may hold: files, bytes per file and in all, depth. */
#define MAX_FILES 64
#define MAX_FILE_BYTES (1u << 20)
#define MAX_TOTAL_BYTES (8u << 20)
#define MAX_DEPTH 8

static int oom(struct kj_error *err)
{
	return kj_error_set(err, KJ_ENOMEM, "out of memory");
}

int kj__eval_is_spec_suite(const char *dir)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/manifest.jsonl", dir) >= (int)sizeof(p) || !kj__is_file(p))
		return 0;
	return snprintf(p, sizeof(p), "%s/specs", dir) < (int)sizeof(p) && kj__is_dir(p);
}

/* --- the suite ------------------------------------------------------------------------ */

struct one {
	char *file, *rel, *uid, *api, *suite, *kernel;
	char spec_sha[65], tree_sha[65];
};

static void one_release(struct one *o)
{
	free(o->file);
	free(o->uid);
	free(o->api);
	free(o->suite);
	free(o->kernel);
}

/* The source tree's hash: each listed file's path and SHA-256, in the
 * spec's order, hashed. */
static int tree_hash(const struct kj_spec *s, char out[65], struct kj_error *err)
{
	const struct kj_spec_list *lists[] = { &s->prompt, &s->support, &s->verification_only };
	size_t cap = 256, n = 0, i, k;
	char *text = malloc(cap), hex[65];
	int rc = KJ_OK;

	if (!text)
		return oom(err);
	text[0] = '\0';
	for (k = 0; k < 3 && rc == KJ_OK; k++)
		for (i = 0; i < lists[k]->n && rc == KJ_OK; i++) {
			const struct kj_spec_path *p = &lists[k]->v[i];
			size_t need = strlen(p->rel) + 100;

			rc = kj__sha256_file(p->abs, hex, err);
			if (rc != KJ_OK)
				break;
			if (KJ__GROW(text, cap, n + need) != KJ_OK) {
				rc = oom(err);
				break;
			}
			n += (size_t)snprintf(text + n, cap - n, "%zu:%zu:%s:%s\n", k,
					      strlen(p->rel), p->rel, hex);
		}
	if (rc == KJ_OK && kj__sha256_hex(text, n, out) != 0)
		rc = oom(err);
	free(text);
	return rc;
}

static int load_one(const char *root, const char *file, struct one *o, struct kj_error *err)
{
	struct kj_spec s;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = kj_spec_load(&s, file, root, err);
	if (rc == KJ_OK && (!s.unique_id || !s.parallel_api || !s.kernel_name || !s.source_suite))
		rc = kj_error_set(err, KJ_EINVAL, "'%s': identity needs unique_id, parallel_api, "
				  "kernel_name and source_suite", file);
	if (rc == KJ_OK && strchr(s.unique_id, ':'))
		rc = kj_error_set(err, KJ_EINVAL, "'%s': unique_id '%s' holds a ':', which "
				  "separates a task's source and target", file, s.unique_id);
	if (rc == KJ_OK) {
		o->file = strdup(file);
		o->uid = strdup(s.unique_id);
		o->api = strdup(s.parallel_api);
		o->suite = strdup(s.source_suite);
		o->kernel = strdup(s.kernel_name);
		if (!o->file || !o->uid || !o->api || !o->suite || !o->kernel)
			rc = oom(err);
	}
	if (rc == KJ_OK)
		rc = kj__sha256_file(file, o->spec_sha, err);
	if (rc == KJ_OK)
		rc = tree_hash(&s, o->tree_sha, err);
	kj_spec_release(&s);
	if (o->file)
		o->rel = o->file + strlen(root) + 1;
	return rc;
}

static int cmp_task(const void *a, const void *b)
{
	return strcmp(((const struct kj_eval_task *)a)->name, ((const struct kj_eval_task *)b)->name);
}

static int add_direction(struct kj_eval_set *set, const char *root, const struct one *src,
			 const struct one *dst, struct kj_error *err)
{
	struct kj_eval_task *t;
	char text[600], content[KJ_SHA256_HEX];
	size_t i;

	if (KJ__RESIZE(set->tasks, set->n_tasks + 1) != KJ_OK)
		return oom(err);
	t = &set->tasks[set->n_tasks++];
	memset(t, 0, sizeof(*t));
	t->level = t->problem = -1;
	if (asprintf(&t->name, "%s:%s", src->uid, dst->api) < 0) {
		t->name = NULL;
		return oom(err);
	}
	t->path = strdup(dst->file);
	t->rel = strdup(dst->rel);
	t->spec_source = strdup(src->file);
	t->spec_target = strdup(dst->file);
	t->spec_root = strdup(root);
	t->api_source = strdup(src->api);
	t->api_target = strdup(dst->api);
	if (!t->path || !t->rel || !t->spec_source || !t->spec_target || !t->spec_root ||
	    !t->api_source || !t->api_target)
		return oom(err);
	memcpy(t->task_sha256, dst->spec_sha, 65);
	snprintf(text, sizeof(text), "kjudge-spec-task-1\n%s\n%s\n%s\n%s\n", src->spec_sha,
		 src->tree_sha, dst->spec_sha, dst->tree_sha);
	if (kj__sha256_hex(text, strlen(text), content) != 0 ||
	    kj__store_task_key(t->name, t->rel, content, t->key) != 0)
		return oom(err);
	for (i = 0; i + 1 < set->n_tasks; i++)
		if (!strcmp(set->tasks[i].name, t->name))
			return kj_error_set(err, KJ_EINVAL, "two tasks named '%s' (two specs of "
					    "API '%s' for kernel '%s' of suite '%s')", t->name,
					    dst->api, dst->kernel, dst->suite);
	return KJ_OK;
}

int kj__eval_discover_specs(const char *dir, struct kj_eval_set *set, struct kj_error *err)
{
	char root[PATH_MAX], **files = NULL;
	struct one *specs = NULL;
	size_t n = 0, i, j, loaded = 0;
	int rc;

	if (!realpath(dir, root))
		return kj_error_set(err, KJ_ENOENT, "'%s': %s", dir, strerror(errno));
	rc = kj_spec_suite_list(root, &files, &n, err);
	if (rc != KJ_OK)
		return rc;
	if (!(specs = calloc(n, sizeof(*specs)))) {
		kj_spec_suite_free(files, n);
		return oom(err);
	}
	for (i = 0; i < n && rc == KJ_OK; i++, loaded++)
		rc = load_one(root, files[i], &specs[i], err);
	for (i = 0; i < n && rc == KJ_OK; i++)
		for (j = 0; j < n && rc == KJ_OK; j++)
			if (i != j && !strcmp(specs[i].suite, specs[j].suite) &&
			    !strcmp(specs[i].kernel, specs[j].kernel) &&
			    strcmp(specs[i].api, specs[j].api))
				rc = add_direction(set, root, &specs[i], &specs[j], err);
	for (i = 0; i < loaded; i++)
		one_release(&specs[i]);
	free(specs);
	kj_spec_suite_free(files, n);
	if (rc == KJ_OK && set->n_tasks == 0)
		rc = kj_error_set(err, KJ_EINVAL, "'%s': no translation direction in the suite (no "
				  "two specs of one suite and kernel in different APIs)", dir);
	if (rc == KJ_OK)
		qsort(set->tasks, set->n_tasks, sizeof(*set->tasks), cmp_task);
	return rc;
}

/* --- the study's scope ----------------------------------------------------------------- */

/* Whether name is one of the comma list's items. */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t k = strcspn(list, ",");

		if (k == n && !strncmp(list, name, n))
			return 1;
		list += k + (list[k] == ',');
	}
	return 0;
}

/* Why an API's programs cannot run on this machine, or NULL when they can
 * as far as the judge can tell (a reference that still fails is then the
 * task's BaselineFailed). */
static const char *cannot_run(const struct kj_config *cfg, const char *api)
{
	static const char *const nvcc[] = { "/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc" };
	const char *path = kj_config_env(cfg, "PATH"), *home = kj_config_env(cfg, "CUDA_HOME");
	char p[PATH_MAX];
	size_t i;

	if (strcmp(api, "cuda"))
		return NULL;
	if (!kj__nvidia_driver_loaded())
		return "CUDA needs an NVIDIA GPU and its driver (/dev/nvidiactl is absent)";
	if (home && snprintf(p, sizeof(p), "%s/bin/nvcc", home) < (int)sizeof(p) &&
	    access(p, X_OK) == 0)
		return NULL;
	for (i = 0; i < sizeof(nvcc) / sizeof(nvcc[0]); i++)
		if (access(nvcc[i], X_OK) == 0)
			return NULL;
	while (path && *path) {
		size_t k = strcspn(path, ":");

		if (k && snprintf(p, sizeof(p), "%.*s/nvcc", (int)k, path) < (int)sizeof(p) &&
		    access(p, X_OK) == 0)
			return NULL;
		path += k + (path[k] == ':');
	}
	return "CUDA needs nvcc (not on PATH, in CUDA_HOME/bin or /usr/local/cuda/bin)";
}

int kj_eval_spec_scope(struct kj_eval_set *set, const char *apis, int timed,
		       const struct kj_config *here,
		       json_t **not_run, size_t counts[4], struct kj_error *err)
{
	size_t i, k, kept = 0, n_cands = 0, *to = NULL;
	char *attempted = NULL;
	int rc = KJ_OK;

	memset(counts, 0, 4 * sizeof(*counts));
	if (!(*not_run = json_array()))
		return oom(err);
	/* Every API asked for is one that some direction targets: a
	 * mistyped name never leaves an empty study. */
	for (i = 0; apis && apis[i];) {
		size_t len = strcspn(apis + i, ",");
		int found = 0;

		for (k = 0; k < set->n_tasks && !found; k++)
			found = strlen(set->tasks[k].api_target) == len &&
				!strncmp(set->tasks[k].api_target, apis + i, len);
		if (!found)
			return kj_error_set(err, KJ_EINVAL, "--api: no direction of the suite "
					    "targets '%.*s'", (int)len, apis + i);
		i += len + (apis[i + len] == ',');
	}
	attempted = calloc(set->n_tasks + 1, 1);
	to = calloc(set->n_tasks + 1, sizeof(*to));
	if (!attempted || !to) {
		free(attempted);
		free(to);
		return oom(err);
	}
	for (i = 0; i < set->n_cands; i++)
		attempted[set->cands[i].task] = 1;
	/* What stays and why not, decided first: an allocation that fails
	 * leaves the set as it was. */
	for (i = 0; i < set->n_tasks && rc == KJ_OK; i++) {
		const struct kj_eval_task *t = &set->tasks[i];
		const char *why = here ? cannot_run(here, t->api_target) : NULL;

		if (!why && here && timed)
			why = cannot_run(here, t->api_source);
		to[i] = (size_t)-1;
		if (apis && !in_list(apis, t->api_target)) {
			counts[0]++;
		} else if (!attempted[i]) {
			counts[1]++;
		} else if (why) {
			json_t *o = json_pack("{s:s, s:s}", "task", t->name, "why", why);

			counts[2]++;
			if (!o || json_array_append_new(*not_run, o) != 0)
				rc = oom(err);
		} else {
			to[i] = kept++;
		}
	}
	if (rc != KJ_OK) {
		free(attempted);
		free(to);
		json_decref(*not_run);
		*not_run = NULL;
		return rc;
	}
	for (i = 0; i < set->n_tasks; i++) {
		struct kj_eval_task *t = &set->tasks[i];

		if (to[i] != (size_t)-1) {
			set->tasks[to[i]] = *t;
			continue;
		}
		kj__eval_task_release(t);
	}
	set->n_tasks = kept;
	for (i = 0; i < set->n_cands; i++) {
		struct kj_eval_cand *c = &set->cands[i];

		if (to[c->task] == (size_t)-1) {
			counts[3]++;
			kj__eval_cand_release(c);
			continue;
		}
		c->task = (int)to[c->task];
		set->cands[n_cands++] = *c;
	}
	set->n_cands = n_cands;
	free(attempted);
	free(to);
	return KJ_OK;
}

/* --- translations --------------------------------------------------------------------- */

/* Whether name is a plain relative path: no leading '/', no empty, '.' or
 * '..' component, at most 255 bytes. */
static int name_ok(const char *name)
{
	const char *p = name;

	if (!*name || name[0] == '/' || strlen(name) > 255)
		return 0;
	while (*p) {
		size_t len = strcspn(p, "/");

		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2)))
			return 0;
		p += len;
		if (*p == '/')
			p++;
		if (!*p && p[-1] == '/')
			return 0;
	}
	return 1;
}

struct reading {
	json_t *files;
	const char *top;
	size_t bytes;
	char why[400];          /* set: the translation cannot be used */
	int oom;
};

static int read_tree(struct reading *r, const char *rel, int depth);

/* One directory of the walk. */
struct here {
	struct reading *r;
	const char *rel;
	int depth;
};

static int read_entry(void *ctx, const char *name, const struct stat *st)
{
	const struct here *h = ctx;
	struct reading *r = h->r;
	const char *rel = h->rel;
	char sub[PATH_MAX], full[PATH_MAX + 256];
	int depth = h->depth;

	if (snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", name) >= (int)sizeof(sub)) {
		snprintf(r->why, sizeof(r->why), "a path too long under '%.200s'", rel);
		return 1;
	}
	if (S_ISDIR(st->st_mode))
		return read_tree(r, sub, depth + 1);
	if (!S_ISREG(st->st_mode)) {
		snprintf(r->why, sizeof(r->why), "'%.200s' is %s", sub, S_ISLNK(st->st_mode)
			 ? "a symbolic link (not followed)" : "not a regular file (a special file)");
		return 1;
	}
	if (json_object_size(r->files) >= MAX_FILES) {
		snprintf(r->why, sizeof(r->why), "more than %d files", MAX_FILES);
		return 1;
	}
	{
		struct kj_error e;
		size_t len = 0;
		char *text;
		json_t *v;

		snprintf(full, sizeof(full), "%s/%s", r->top, sub);
		text = kj__read_file(full, MAX_FILE_BYTES, &len, &e);
		if (!text) {
			r->oom = e.code == KJ_ENOMEM;
			snprintf(r->why, sizeof(r->why), "%.390s", e.msg);
			return 1;
		}
		r->bytes += len;
		v = json_stringn(text, len);
		free(text);
		if (!v) {
			snprintf(r->why, sizeof(r->why), "'%.200s' is not UTF-8 text without NUL "
				 "bytes", sub);
			return 1;
		}
		if (r->bytes > MAX_TOTAL_BYTES) {
			json_decref(v);
			snprintf(r->why, sizeof(r->why), "more than %u bytes in all",
				 MAX_TOTAL_BYTES);
			return 1;
		}
		if (json_object_set_new(r->files, sub, v) != 0) {
			r->oom = 1;
			return 1;
		}
	}
	return 0;
}

static int read_tree(struct reading *r, const char *rel, int depth)
{
	char dir[PATH_MAX + 256];
	struct here h = { r, rel, depth };

	if (depth > MAX_DEPTH) {
		snprintf(r->why, sizeof(r->why), "directories deeper than %d", MAX_DEPTH);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s%s%s", r->top, *rel ? "/" : "", rel);
	if (kj__each_entry(dir, read_entry, &h) < 0 && !*r->why) {
		snprintf(r->why, sizeof(r->why), "'%.200s': %s", dir, strerror(errno));
		return 1;
	}
	return *r->why || r->oom;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct kj_eval_file *)a)->name, ((const struct kj_eval_file *)b)->name);
}

/* The translation's files of obj (NAME: TEXT, checked) as a list sorted by
 * name, into ex; KJ_OK or KJ_ENOMEM (nothing left to free). */
static int file_list(json_t *obj, struct kj_eval_cand *ex)
{
	size_t n = 0, len;
	const char *name;
	json_t *v;

	ex->files = calloc(json_object_size(obj), sizeof(*ex->files));
	if (!ex->files)
		return KJ_ENOMEM;
	json_object_foreach(obj, name, v) {
		struct kj_eval_file *f = &ex->files[n++];

		len = json_string_length(v);
		f->name = strdup(name);
		f->data = malloc(len + 1);
		if (!f->name || !f->data) {
			kj__eval_files_free(ex->files, n);
			ex->files = NULL;
			return KJ_ENOMEM;
		}
		memcpy(f->data, json_string_value(v), len);
		f->data[len] = '\0';
		f->len = len;
	}
	ex->n_files = n;
	qsort(ex->files, n, sizeof(*ex->files), cmp_file);
	return KJ_OK;
}

int kj__eval_spec_cand(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		       json_t *files, const char *dir, const char *where,
		       struct kj_eval_cand *extra)
{
	struct reading r;
	struct kj_eval_cand ex;
	const char *name;
	json_t *v, *obj;
	char *text;
	int is_oom = 0;

	memset(&r, 0, sizeof(r));
	if (dir) {
		if (!kj__is_dir(dir)) {
			snprintf(r.why, sizeof(r.why), "\"path\" '%.300s' is not a directory", dir);
			return kj__eval_problem(set, where, r.why);
		}
		if (!(r.files = json_object()))
			return KJ_ENOMEM;
		r.top = dir;
		read_tree(&r, "", 0);
		if (r.oom) {
			json_decref(r.files);
			return KJ_ENOMEM;
		}
		if (*r.why) {
			json_decref(r.files);
			return kj__eval_problem(set, where, r.why);
		}
		obj = r.files;
	} else {
		if (!json_is_object(files))
			return kj__eval_problem(set, where, "\"files\" must be an object of NAME: TEXT");
		json_object_foreach(files, name, v) {
			if (!name_ok(name)) {
				snprintf(r.why, sizeof(r.why), "\"files\": '%.200s' is not a relative "
					 "path inside the source directory", name);
				return kj__eval_problem(set, where, r.why);
			}
			if (!json_is_string(v)) {
				snprintf(r.why, sizeof(r.why), "\"files\": '%.200s' must be a string",
					 name);
				return kj__eval_problem(set, where, r.why);
			}
		}
		if (json_object_size(files) > MAX_FILES)
			return kj__eval_problem(set, where, "\"files\": too many files");
		obj = json_incref(files);
	}
	if (json_object_size(obj) == 0) {
		json_decref(obj);
		return kj__eval_problem(set, where, "the translation holds no file");
	}
	/* The files as a list for the attempt to write out, and as one JSON
	 * object, the candidate's source: what the store keeps and the
	 * attempt's key hashes. */
	memset(&ex, 0, sizeof(ex));
	if (extra) {
		ex = *extra;
	} else {
		ex.round = ex.prompt_tokens = ex.completion_tokens = -1;
		ex.generation_s = -1;
	}
	if (file_list(obj, &ex) != KJ_OK) {
		json_decref(obj);
		return KJ_ENOMEM;
	}
	text = kj__json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS, &is_oom);
	json_decref(obj);
	if (!text) {
		kj__eval_files_free(ex.files, ex.n_files);
		return KJ_ENOMEM;
	}
	return kj__eval_add_cand(set, task, model, attempt, text, strlen(text), where, &ex);
}

/* MODEL/TASK/ATTEMPT/: three levels of directories. */
struct level {
	struct kj_eval_set *set;
	const char *path;
	const char *model, *task;
	int depth, rc;
};

static int on_level(void *ctx, const char *name, const struct stat *st)
{
	struct level *l = ctx, next = *l;
	char where[PATH_MAX];

	if (name[0] == '.')
		return 0;
	snprintf(where, sizeof(where), "%s/%s", l->path, name);
	if (!S_ISDIR(st->st_mode)) {
		l->rc = kj__eval_problem(l->set, where, S_ISLNK(st->st_mode)
					 ? "a symbolic link (not followed)"
					 : "not a directory (MODEL/TASK/ATTEMPT/ holds a "
					   "translation's files)");
		return l->rc != KJ_OK;
	}
	if (l->depth == 2) {
		size_t t;

		for (t = 0; t < l->set->n_tasks; t++)
			if (!strcmp(l->set->tasks[t].name, l->task))
				break;
		if (t == l->set->n_tasks) {
			l->rc = kj__eval_problem(l->set, where, "no such task in the suite "
						 "(SOURCE_UID:TARGET_API); skipped");
			return l->rc != KJ_OK;
		}
		l->rc = kj__eval_spec_cand(l->set, (int)t, l->model, name, NULL, where, where, NULL);
		return l->rc != KJ_OK;
	}
	next.path = where;
	next.depth = l->depth + 1;
	if (l->depth == 0)
		next.model = name;
	else
		next.task = name;
	if (kj__each_entry(where, on_level, &next) < 0)
		next.rc = kj__eval_problem(l->set, where, strerror(errno));
	l->rc = next.rc;
	return l->rc != KJ_OK;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct kj_eval_cand *x = a, *y = b;
	int c = x->task - y->task;

	if (!c)
		c = strcmp(x->model, y->model);
	return c ? c : strcmp(x->attempt, y->attempt);
}

int kj__eval_spec_dir(const char *path, struct kj_eval_set *set, struct kj_error *err)
{
	struct level l = { set, path, NULL, NULL, 0, KJ_OK };

	if (kj__each_entry(path, on_level, &l) < 0)
		return kj_error_set(err, KJ_ENOENT, "'%s': %s", path, strerror(errno));
	if (l.rc != KJ_OK)
		return oom(err);
	/* Directory order is the file system's: sorted, runs agree. */
	qsort(set->cands, set->n_cands, sizeof(*set->cands), cmp_cand);
	return KJ_OK;
}

/* The spec kind's JSONL line (kinds.c): a translation's "files" (an
 * object of NAME: TEXT) or its directory, "path", held under the JSONL's
 * as a torch candidate's file is. */
const char *kj__eval_spec_line_lacks(json_t *line)
{
	json_t *files = json_object_get(line, "files");
	const char *src = json_string_value(json_object_get(line, "source"));
	const char *path = json_string_value(json_object_get(line, "path"));

	return !files == !path || src ? "exactly one of \"files\" (an object) and \"path\" (a "
		"directory) is needed for a translation" : NULL;
}

int kj__eval_spec_line(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		       json_t *line, const char *dir, const char *where,
		       struct kj_eval_cand *extra)
{
	const char *path = json_string_value(json_object_get(line, "path"));
	char full[PATH_MAX], why[600];
	struct kj_error e;
	int fd = -1;

	if (path && (fd = kj__open_beneath(dir, path, KJ_OPEN_DIR, &e)) < 0) {
		if (e.code == KJ_ENOMEM)
			return KJ_ENOMEM;
		snprintf(why, sizeof(why), "\"path\": %s", e.msg);
		return kj__eval_problem(set, where, why);
	}
	if (fd >= 0)
		close(fd);
	if (path && snprintf(full, sizeof(full), "%s/%s", dir, path) >= (int)sizeof(full))
		return kj__eval_problem(set, where, "\"path\" is too long");
	return kj__eval_spec_cand(set, task, model, attempt, json_object_get(line, "files"),
				  path ? full : NULL, where, extra);
}
