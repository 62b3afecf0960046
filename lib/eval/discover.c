/*
 * discover.c - the suite's tasks and the candidates of an eval
 * (kjudge/eval.h): directory walks, KernelBench's names, JSONL lines.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "kjudge/eval.h"
#include "kjudge/jschema.h"
#include "kjudge/store.h"
#include "eval/eval_internal.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/text.h"
#include "store/keys.h"
#include "base/vec.h"
#include "base/banned.h"

/* The largest task, cases file or candidate read (a suite is source code). */
#define MAX_SOURCE (8u << 20)
/* A JSONL line's limit (a source inline). */
#define MAX_LINE (16u << 20)
/* The deepest directory walked. */
#define MAX_DEPTH 16
/* The most problems kept in set->problems (the rest counted). */
#define MAX_PROBLEMS 10000

void kj_eval_set_init(struct kj_eval_set *set)
{
	memset(set, 0, sizeof(*set));
	set->kind = &kj__eval_kind_torch;
}

void kj__eval_task_release(struct kj_eval_task *t)
{
	free(t->name);
	free(t->path);
	free(t->rel);
	free(t->cases_path);
	free(t->spec_source);
	free(t->spec_target);
	free(t->spec_root);
	free(t->api_source);
	free(t->api_target);
}

void kj__eval_files_free(struct kj_eval_file *files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(files[i].name);
		free(files[i].data);
	}
	free(files);
}

void kj__eval_cand_release(struct kj_eval_cand *c)
{
	free(c->model);
	free(c->attempt);
	free(c->source);
	kj__eval_files_free(c->files, c->n_files);
	free(c->origin);
}

void kj_eval_set_release(struct kj_eval_set *set)
{
	size_t i;

	for (i = 0; i < set->n_tasks; i++)
		kj__eval_task_release(&set->tasks[i]);
	for (i = 0; i < set->n_cands; i++)
		kj__eval_cand_release(&set->cands[i]);
	free(set->tasks);
	free(set->cands);
	json_decref(set->problems);
	kj_eval_set_init(set);
}

static int oom(struct kj_error *err)
{
	return kj_error_set(err, KJ_ENOMEM, "out of memory");
}

static int problem(struct kj_eval_set *set, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Name what was skipped: {"where", "why"}.  Returns KJ_OK or KJ_ENOMEM. */
static int problem(struct kj_eval_set *set, const char *where, const char *fmt, ...)
{
	char why[600], *w, *y;
	va_list ap;
	json_t *p = NULL;

	if (!set->problems && !(set->problems = json_array()))
		return KJ_ENOMEM;
	if (json_array_size(set->problems) >= MAX_PROBLEMS)
		return KJ_OK;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* A file's name is bytes: made valid UTF-8 (JSON's, the store's). */
	w = kj__text_cleans(where, 2 * PATH_MAX);
	y = kj__text_cleans(why, sizeof(why));
	if (w && y)
		p = json_pack("{s:s, s:s}", "where", w, "why", y);
	free(w);
	free(y);
	if (!p || json_array_append_new(set->problems, p) != 0)
		return KJ_ENOMEM;
	return KJ_OK;
}

/* --- walking ---------------------------------------------------------------------- */

struct walk {
	char **paths;           /* relative paths of regular files */
	size_t n, cap;
	int failed;             /* KJ_ENOMEM, or an errno seen */
	char dir_failed[PATH_MAX];
	/* Where what the walk leaves out is named (set->problems), or NULL;
	 * in a suite, only the names ending in ".py" or ".json" (a task or a
	 * cases file: its other files are neither anyway). */
	struct kj_eval_set *set;
	int suite;
};

/* The walk's callbacks return -2 when out of memory (-1 is
 * kj__each_entry's: a directory that cannot be opened). */
static int problem_oom(int rc)
{
	return rc == KJ_ENOMEM ? -2 : 0;
}

static int ends_with(const char *s, const char *suffix);

static int walk_add(struct walk *w, const char *rel)
{
	if (KJ__GROW(w->paths, w->cap, w->n + 1) != KJ_OK)
		return -1;
	if (!(w->paths[w->n] = strdup(rel)))
		return -1;
	w->n++;
	return 0;
}

struct walk_dir {
	struct walk *w;
	const char *root;
	const char *rel;        /* "" at the root */
	int depth;
};

static int walk_dir(struct walk *w, const char *root, const char *rel, int depth);

/* An entry the walk does not take, named with why (0, or -2 when out of
 * memory). */
static int walk_skip(const struct walk_dir *d, const char *rel, const char *why)
{
	char where[PATH_MAX + 8];

	if (!d->w->set || (d->w->suite && !ends_with(rel, ".py") && !ends_with(rel, ".json")))
		return 0;
	snprintf(where, sizeof(where), "%s/%s", d->root, rel);
	return problem_oom(problem(d->w->set, where, "%s", why));
}

static int walk_entry(void *ctx, const char *name, const struct stat *st)
{
	struct walk_dir *d = ctx;
	char rel[PATH_MAX];

	if (name[0] == '.' || strcmp(name, "__pycache__") == 0)
		return 0;
	if (snprintf(rel, sizeof(rel), "%s%s%s", d->rel, *d->rel ? "/" : "", name) >=
	    (int)sizeof(rel))
		return walk_skip(d, name, "a path too long");
	if (S_ISDIR(st->st_mode)) {
		if (d->depth >= MAX_DEPTH)
			return d->w->suite ? 0 : walk_skip(d, rel, "a directory deeper than "
							   "16 levels (not read)");
		return walk_dir(d->w, d->root, rel, d->depth + 1);
	}
	if (S_ISREG(st->st_mode))
		return walk_add(d->w, rel) ? -2 : 0;
	/* Links are not followed (they could lead anywhere), and nothing but
	 * a regular file is read. */
	if (S_ISLNK(st->st_mode))
		return walk_skip(d, rel, "a symbolic link (not followed)");
	return walk_skip(d, rel, S_ISFIFO(st->st_mode) ? "not a regular file (a FIFO)"
			 : S_ISSOCK(st->st_mode) ? "not a regular file (a socket)"
			 : "not a regular file (a device)");
}

static int walk_dir(struct walk *w, const char *root, const char *rel, int depth)
{
	struct walk_dir d = { w, root, rel, depth };
	char path[PATH_MAX];
	int rc;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	errno = 0;
	rc = kj__each_entry(path, walk_entry, &d);
	if (rc == -1) {
		int e = errno ? errno : EIO;

		/* A folder of candidates under the root that cannot be read:
		 * named, and the walk goes on (a suite's is an error: its
		 * tasks are every metric's denominator). */
		if (*rel && w->set && !w->suite)
			return problem_oom(problem(w->set, path, "cannot be read: %s",
						   strerror(e)));
		if (!w->failed) {
			w->failed = e;
			snprintf(w->dir_failed, sizeof(w->dir_failed), "%s", path);
		}
	}
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk_release(struct walk *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->paths[i]);
	free(w->paths);
}

/* Every regular file under root, relative, sorted; what is left out (links,
 * special files, folders that cannot be read) named in set->problems when
 * set is not NULL. */
static int walk(const char *root, struct walk *w, struct kj_eval_set *set, int suite,
		struct kj_error *err)
{
	memset(w, 0, sizeof(*w));
	w->set = set;
	w->suite = suite;
	if (walk_dir(w, root, "", 0) != 0) {
		int e = w->failed;

		walk_release(w);
		if (!e)
			return oom(err);
		return kj_error_set(err, kj_err_from_errno(e), "'%s': %s", w->dir_failed,
				    strerror(e));
	}
	/* qsort's array may not be NULL, even empty (a folder of links only). */
	if (w->n)
		qsort(w->paths, w->n, sizeof(*w->paths), cmp_str);
	return KJ_OK;
}

static const char *base_name(const char *rel)
{
	const char *s = strrchr(rel, '/');

	return s ? s + 1 : rel;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "levelN" as the directory a file is in: N, else -1. */
static int level_of(const char *rel)
{
	const char *slash = strrchr(rel, '/'), *start;
	char *end;
	long v;

	if (!slash)
		return -1;
	for (start = slash; start > rel && start[-1] != '/'; start--)
		;
	if ((size_t)(slash - start) < 6 || strncmp(start, "level", 5) != 0 ||
	    !isdigit((unsigned char)start[5]))
		return -1;
	v = strtol(start + 5, &end, 10);
	return end == slash && v >= 0 && v < 100000 ? (int)v : -1;
}

/* --- the suite ------------------------------------------------------------------------ */

static int add_task(struct kj_eval_set *set, const char *root, const char *rel,
		    const char *name, int level, int problem_id, const char *cases_rel,
		    struct kj_error *err)
{
	struct kj_eval_task *t, *tasks;
	char path[PATH_MAX], both[140], content[KJ_SHA256_HEX];
	size_t i;
	int rc;

	for (i = 0; i < set->n_tasks; i++)
		if (strcmp(set->tasks[i].name, name) == 0)
			return kj_error_set(err, KJ_EINVAL, "two tasks named '%s' in the suite: "
					    "'%s' and '%s'", name, set->tasks[i].rel, rel);
	if (KJ__RESIZE(set->tasks, set->n_tasks + 1) != KJ_OK)
		return oom(err);
	tasks = set->tasks;
	t = &tasks[set->n_tasks];
	memset(t, 0, sizeof(*t));
	t->level = level;
	t->problem = problem_id;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	t->name = strdup(name);
	t->rel = strdup(rel);
	t->path = realpath(path, NULL);
	if (!t->name || !t->rel || !t->path)
		goto fail_alloc;
	if (cases_rel) {
		snprintf(path, sizeof(path), "%s/%s", root, cases_rel);
		if (!(t->cases_path = realpath(path, NULL)))
			goto fail_alloc;
	}
	set->n_tasks++;
	rc = kj__sha256_file(t->path, t->task_sha256, err);
	if (rc == KJ_OK && t->cases_path)
		rc = kj__sha256_file(t->cases_path, t->cases_sha256, err);
	if (rc != KJ_OK)
		return rc;
	/* What judging it reads, then the task it is: two tasks of the same
	 * bytes are two operators. */
	snprintf(both, sizeof(both), "%s:%s", t->task_sha256, t->cases_sha256);
	return kj__sha256_hex(both, strlen(both), content) == 0 &&
	       kj__store_task_key(t->name, t->rel, content, t->key) == 0 ? KJ_OK : oom(err);
fail_alloc:
	free(t->name);
	free(t->rel);
	free(t->path);
	free(t->cases_path);
	memset(t, 0, sizeof(*t));
	return errno == ENOMEM || !errno ? oom(err)
		: kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", path, strerror(errno));
}

/* Whether rel names a file in the walk (sorted). */
static int walk_has(const struct walk *w, const char *rel)
{
	const char *key = rel;

	return bsearch(&key, w->paths, w->n, sizeof(*w->paths), cmp_str) != NULL;
}

int kj_eval_discover_suite(const char *dir, struct kj_eval_set *set, struct kj_error *err)
{
	if (!kj__is_dir(dir))
		return kj_error_set(err, KJ_ENOENT, "'%s': the suite is not a directory", dir);
	set->kind = kj_eval_kind_of(dir);
	return set->kind->discover(dir, set, err);
}

/* The torch kind's tasks (kinds.c): KernelBench's layout and the verify
 * directory's, found recursively. */
int kj__eval_torch_suite(const char *dir, struct kj_eval_set *set, struct kj_error *err)
{
	struct walk w;
	size_t i;
	int rc;

	rc = walk(dir, &w, set, 1, err);
	if (rc != KJ_OK)
		return rc;
	for (i = 0; i < w.n && rc == KJ_OK; i++) {
		const char *rel = w.paths[i], *base = base_name(rel);
		char name[256], sidecar[PATH_MAX];
		size_t blen = strlen(base);
		int level = level_of(rel);

		if (ends_with(base, "_torch.py") && blen > 9 && blen - 9 < sizeof(name)) {
			/* The verify directory's layout: {op}_torch.py. */
			snprintf(name, sizeof(name), "%.*s", (int)(blen - 9), base);
			snprintf(sidecar, sizeof(sidecar), "%.*s%s_cases.json",
				 (int)(base - rel), rel, name);
			rc = add_task(set, dir, rel, name, -1, -1,
				      walk_has(&w, sidecar) ? sidecar : NULL, err);
		} else if (level >= 0 && ends_with(base, ".py") && isdigit((unsigned char)base[0]) &&
			   blen - 3 < sizeof(name)) {
			/* KernelBench's: levelL/P_Name.py. */
			char *end;
			long p = strtol(base, &end, 10);

			if (*end != '_' || p < 0 || p > 1000000)
				continue;
			snprintf(name, sizeof(name), "%.*s", (int)(blen - 3), base);
			snprintf(sidecar, sizeof(sidecar), "%.*s%s.cases.json", (int)(base - rel),
				 rel, name);
			rc = add_task(set, dir, rel, name, level, (int)p,
				      walk_has(&w, sidecar) ? sidecar : NULL, err);
		}
	}
	walk_release(&w);
	if (rc == KJ_OK && set->n_tasks == 0)
		rc = kj_error_set(err, KJ_EINVAL, "'%s': no task in the suite (neither "
				  "levelL/P_Name.py nor {op}_torch.py files)", dir);
	return rc;
}

/* --- candidates ----------------------------------------------------------------------- */

/* The task a candidate names: its name, or its path in the suite without
 * ".py"; -1 when none. */
static int find_task(const struct kj_eval_set *set, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < set->n_tasks; i++) {
		const struct kj_eval_task *t = &set->tasks[i];

		if (strcmp(t->name, name) == 0 ||
		    (strncmp(t->rel, name, n) == 0 && strcmp(t->rel + n, ".py") == 0))
			return (int)i;
	}
	return -1;
}

static int find_problem(const struct kj_eval_set *set, int level, int problem_id)
{
	size_t i;

	for (i = 0; i < set->n_tasks; i++)
		if (set->tasks[i].level == level && set->tasks[i].problem == problem_id)
			return (int)i;
	return -1;
}

/* A candidate: takes `source` (malloc'd, len bytes) whatever happens.
 * Returns KJ_OK, or KJ_ENOMEM; a duplicate is a problem, not an error. */
static int add_cand(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		    char *source, size_t len, const char *origin, struct kj_eval_cand *extra)
{
	struct kj_eval_cand *c, *cands;
	size_t i;

	for (i = 0; i < set->n_cands; i++) {
		c = &set->cands[i];
		if (c->task == task && strcmp(c->model, model) == 0 &&
		    strcmp(c->attempt, attempt) == 0) {
			free(source);
			if (extra)
				kj__eval_files_free(extra->files, extra->n_files);
			return problem(set, origin, "a second attempt '%s' of model '%s' on task "
				       "'%s' (the first: %s)", attempt, model,
				       set->tasks[task].name, c->origin);
		}
	}
	if (KJ__RESIZE(set->cands, set->n_cands + 1) != KJ_OK) {
		free(source);
		if (extra)
			kj__eval_files_free(extra->files, extra->n_files);
		return KJ_ENOMEM;
	}
	cands = set->cands;
	c = &cands[set->n_cands];
	memset(c, 0, sizeof(*c));
	c->round = extra ? extra->round : -1;
	c->prompt_tokens = extra ? extra->prompt_tokens : -1;
	c->completion_tokens = extra ? extra->completion_tokens : -1;
	c->generation_s = extra ? extra->generation_s : -1;
	c->task = task;
	c->source = source;
	c->source_len = len;
	c->files = extra ? extra->files : NULL;
	c->n_files = extra ? extra->n_files : 0;
	c->model = strdup(model);
	c->attempt = strdup(attempt);
	c->origin = strdup(origin);
	set->n_cands++;
	if (!c->model || !c->attempt || !c->origin || kj__sha256_hex(source, len, c->sha256) != 0)
		return KJ_ENOMEM;
	return KJ_OK;
}

/*
 * Read a candidate file, rel under dir, held there (kj__open_beneath: no
 * absolute path, no "..", no symbolic link, nothing but a regular file, an
 * open that cannot block); a file that cannot be read is a problem, its
 * message after `what`.
 */
static int add_cand_file(struct kj_eval_set *set, int task, const char *model,
			 const char *attempt, const char *dir, const char *rel,
			 struct kj_eval_cand *extra, const char *origin, const char *what)
{
	struct kj_error e;
	size_t len = 0;
	char *src = NULL;
	int fd = kj__open_beneath(dir, rel, 0, &e);

	if (fd >= 0) {
		src = kj__read_fd(fd, rel, MAX_SOURCE, &len, &e);
		close(fd);
	}
	if (!src)
		return e.code == KJ_ENOMEM ? KJ_ENOMEM : problem(set, origin, "%s%s", what, e.msg);
	return add_cand(set, task, model, attempt, src, len, origin, extra);
}

/* level_L_problem_P_sample_S_kernel.py: 1 with the numbers, else 0. */
static int kb_name(const char *base, int *level, int *problem_id, long *sample)
{
	int n = 0;
	long l, p, s;

	if (sscanf(base, "level_%ld_problem_%ld_sample_%ld_kernel.py%n", &l, &p, &s, &n) != 3 ||
	    base[n] != '\0' || l < 0 || p < 0 || s < 0 || l > 100000 || p > 1000000)
		return 0;
	*level = (int)l;
	*problem_id = (int)p;
	*sample = s;
	return 1;
}

/* The task of a level by its name ("3_RowSum" of level 1); -1 when none. */
static int find_level_task(const struct kj_eval_set *set, int level, const char *name)
{
	size_t i;

	for (i = 0; i < set->n_tasks; i++)
		if (set->tasks[i].level == level && strcmp(set->tasks[i].name, name) == 0)
			return (int)i;
	return -1;
}

/*
 * The parts of a candidate's path under the candidates' directory:
 * MODEL/TASK/ATTEMPT.py (*level -1) or MODEL/levelL/TASK/ATTEMPT.py, as
 * KernelBench's users keep their runs (runs/mymodel/level1/3_RowSum/0.py).
 * 1 with model, task and attempt filled (each within its size), else 0.
 */
static int cand_path(const char *rel, char *model, size_t msize, int *level, char *task,
		     size_t tsize, char *attempt, size_t asize)
{
	const char *part[4], *p = rel;
	size_t len[4];
	int n = 0;

	for (;;) {
		const char *slash = strchr(p, '/');

		if (n == 4)
			return 0;
		part[n] = p;
		len[n] = slash ? (size_t)(slash - p) : strlen(p);
		if (len[n] == 0)
			return 0;
		n++;
		if (!slash)
			break;
		p = slash + 1;
	}
	*level = -1;
	if (n == 4) {
		char *end;
		long v;

		if (len[1] < 6 || strncmp(part[1], "level", 5) != 0 ||
		    !isdigit((unsigned char)part[1][5]))
			return 0;
		v = strtol(part[1] + 5, &end, 10);
		if (end != part[1] + len[1] || v < 0 || v >= 100000)
			return 0;
		*level = (int)v;
	} else if (n != 3) {
		return 0;
	}
	if (len[0] >= msize || len[n - 2] >= tsize || len[n - 1] <= 3 ||
	    len[n - 1] - 3 >= asize)
		return 0;
	snprintf(model, msize, "%.*s", (int)len[0], part[0]);
	snprintf(task, tsize, "%.*s", (int)len[n - 2], part[n - 2]);
	snprintf(attempt, asize, "%.*s", (int)(len[n - 1] - 3), part[n - 1]);
	return 1;
}

static int discover_dir(const char *root, struct kj_eval_set *set, struct kj_error *err)
{
	struct walk w;
	char rootname[256], *real;
	size_t i;
	int rc;

	real = realpath(root, NULL);
	if (!real)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", root, strerror(errno));
	snprintf(rootname, sizeof(rootname), "%s", base_name(real));
	free(real);
	rc = walk(root, &w, set, 0, err);
	if (rc != KJ_OK)
		return rc;
	for (i = 0; i < w.n && rc == KJ_OK; i++) {
		const char *rel = w.paths[i], *base = base_name(rel);
		char path[PATH_MAX], model[256], task[256], attempt[64];
		int level, pid, t;
		long sample;

		snprintf(path, sizeof(path), "%s/%s", root, rel);
		if (kb_name(base, &level, &pid, &sample)) {
			/* KernelBench's runs/RUN/level_..._kernel.py: the model is
			 * the directory the file is in. */
			if (base == rel)
				snprintf(model, sizeof(model), "%s", rootname);
			else {
				const char *d = base - 1, *start = d;

				while (start > rel && start[-1] != '/')
					start--;
				snprintf(model, sizeof(model), "%.*s", (int)(d - start), start);
			}
			t = find_problem(set, level, pid);
			if (t < 0) {
				rc = problem(set, path, "no task of level %d, problem %d in the suite",
					     level, pid);
				continue;
			}
			snprintf(attempt, sizeof(attempt), "%ld", sample);
			rc = add_cand_file(set, t, model, attempt, root, rel, NULL, path,
					   "cannot read it: ");
			continue;
		}
		if (!ends_with(base, ".py"))
			continue;
		/* MODEL/TASK/ATTEMPT.py, or MODEL/levelL/TASK/ATTEMPT.py */
		if (!cand_path(rel, model, sizeof(model), &level, task, sizeof(task), attempt,
			       sizeof(attempt))) {
			rc = problem(set, path, "neither level_L_problem_P_sample_S_kernel.py nor "
				     "MODEL/TASK/ATTEMPT.py nor MODEL/levelL/TASK/ATTEMPT.py");
			continue;
		}
		t = level < 0 ? find_task(set, task) : find_level_task(set, level, task);
		if (t < 0) {
			if (level < 0)
				rc = problem(set, path, "no task '%s' in the suite", task);
			else
				rc = problem(set, path, "no task '%s' of level %d in the suite",
					     task, level);
			continue;
		}
		rc = add_cand_file(set, t, model, attempt, root, rel, NULL, path,
				   "cannot read it: ");
	}
	walk_release(&w);
	return rc == KJ_ENOMEM ? oom(err) : rc;
}

/* A non-negative integer field of a JSONL object: 0 absent (*v = -1),
 * 1 set, -1 wrong. */
static int opt_count(json_t *o, const char *key, long long *v)
{
	json_t *x = json_object_get(o, key);

	*v = -1;
	if (!x || json_is_null(x))
		return 0;
	/* At most 2^53: what the store holds of a count (docs/store.md). */
	if (!json_is_integer(x) || json_integer_value(x) < 0 ||
	    json_integer_value(x) > KJ_STORE_COUNT_MAX)
		return -1;
	*v = json_integer_value(x);
	return 1;
}

/* One line of a JSONL file: a candidate, or a problem.  The line is read
 * strictly (kjudge/jschema.h): a key given twice, NaN, a number beyond
 * int64 or binary64 is refused with the column, as a spec's would be. */
static int jsonl_line(struct kj_eval_set *set, const char *dir, const char *where,
		      const char *line, size_t len)
{
	struct kj_error je;
	int t, rc;
	json_t *o = NULL, *x;
	struct kj_eval_cand extra;
	const char *task, *model, *attempt = NULL;
	char attempt_buf[32];
	const char *lacks;

	rc = kj_jsonx_loadb(line, len, NULL, KJ_JSONX_OBJECT, &o, &je);
	if (rc == KJ_ENOMEM)
		return KJ_ENOMEM;
	if (rc != KJ_OK) {
		/* "<buffer>:1:COL: what": the line is the problem's, the
		 * column is said as one. */
		const char *at = strncmp(je.msg, "<buffer>:1:", 11) == 0 ? je.msg + 11 : NULL;
		const char *what = at ? strchr(at, ':') : NULL;

		if (what && what[1] == ' ')
			return problem(set, where, "not JSON: column %.*s: %s", (int)(what - at), at,
				       what + 2);
		return problem(set, where, "not JSON: %s", je.msg);
	}
	task = json_string_value(json_object_get(o, "task"));
	model = json_string_value(json_object_get(o, "model"));
	memset(&extra, 0, sizeof(extra));
	if (!task || !*task) {
		rc = problem(set, where, "no \"task\" (a string)");
		goto out;
	}
	if (!model || !*model || strlen(model) > 200) {
		rc = problem(set, where, "no \"model\" (a string of at most 200 bytes)");
		goto out;
	}
	lacks = set->kind->line_lacks(o);
	if (lacks) {
		rc = problem(set, where, "%s", lacks);
		goto out;
	}
	x = json_object_get(o, "attempt");
	if (json_is_string(x) && *json_string_value(x) && strlen(json_string_value(x)) < 64) {
		attempt = json_string_value(x);
	} else if (json_is_integer(x) && json_integer_value(x) >= 0) {
		snprintf(attempt_buf, sizeof(attempt_buf), "%lld", (long long)json_integer_value(x));
		attempt = attempt_buf;
	} else if (x && !json_is_null(x)) {
		rc = problem(set, where, "\"attempt\" must be a non-negative integer or a short "
			     "string");
		goto out;
	}
	if (opt_count(o, "round", &extra.round) < 0 ||
	    opt_count(o, "prompt_tokens", &extra.prompt_tokens) < 0 ||
	    opt_count(o, "completion_tokens", &extra.completion_tokens) < 0) {
		rc = problem(set, where, "\"round\", \"prompt_tokens\" and \"completion_tokens\" "
			     "must be integers from 0 to 2^53");
		goto out;
	}
	x = json_object_get(o, "generation_s");
	extra.generation_s = -1;
	if (x && !json_is_null(x)) {
		if (!json_is_number(x) || json_number_value(x) < 0 ||
		    json_number_value(x) != json_number_value(x)) {
			rc = problem(set, where, "\"generation_s\" must be a non-negative number");
			goto out;
		}
		extra.generation_s = json_number_value(x);
	}
	t = find_task(set, task);
	if (t < 0) {
		rc = problem(set, where, "no task '%.200s' in the suite", task);
		goto out;
	}
	if (!attempt) {
		/* Unnamed attempts are numbered in the file's order. */
		size_t i, n = 0;

		for (i = 0; i < set->n_cands; i++)
			n += set->cands[i].task == t && strcmp(set->cands[i].model, model) == 0;
		snprintf(attempt_buf, sizeof(attempt_buf), "%zu", n);
		attempt = attempt_buf;
	}
	rc = set->kind->read_line(set, t, model, attempt, o, dir, where, &extra);
out:
	json_decref(o);
	return rc;
}

/* The torch kind's JSONL line (kinds.c): a module's text in "source", or
 * its file in "path" (under the JSONL's directory). */
const char *kj__eval_torch_line_lacks(json_t *line)
{
	const char *src = json_string_value(json_object_get(line, "source"));
	const char *path = json_string_value(json_object_get(line, "path"));

	return !src == !path ? "exactly one of \"source\" and \"path\" (a string) is needed"
		: NULL;
}

int kj__eval_torch_line(struct kj_eval_set *set, int t, const char *model, const char *attempt,
			json_t *line, const char *dir, const char *where,
			struct kj_eval_cand *extra)
{
	const char *src = json_string_value(json_object_get(line, "source"));
	const char *path = json_string_value(json_object_get(line, "path"));

	if (src) {
		size_t n = json_string_length(json_object_get(line, "source"));
		char *copy = malloc(n + 1);

		if (!copy)
			return KJ_ENOMEM;
		memcpy(copy, src, n);
		copy[n] = '\0';
		return add_cand(set, t, model, attempt, copy, n, where, extra);
	}
	return add_cand_file(set, t, model, attempt, dir, path, extra, where, "\"path\": ");
}

/*
 * The next line of f into *line (grown as needed, at most MAX_LINE + 1
 * bytes kept: a longer line is read to its end and *len says MAX_LINE + 1),
 * its newline dropped.  1 a line, 0 the end, -1 out of memory or a read
 * error (ferror tells which).
 */
static int next_line(FILE *f, char **line, size_t *cap, size_t *len)
{
	int c, any = 0;

	*len = 0;
	while ((c = getc_unlocked(f)) != EOF) {
		any = 1;
		if (c == '\n')
			break;
		if (*len > MAX_LINE)
			continue;
		if (*len + 1 >= *cap) {
			size_t n = *cap ? *cap * 2 : 4096;

			if (n > (size_t)MAX_LINE + 2)
				n = (size_t)MAX_LINE + 2;
			if (KJ__RESIZE(*line, n) != KJ_OK)
				return -1;
			*cap = n;
		}
		(*line)[(*len)++] = (char)c;
	}
	if (ferror(f))
		return -1;
	if (*line)
		(*line)[*len] = '\0';
	return any;
}

static int discover_jsonl(const char *file, struct kj_eval_set *set, struct kj_error *err)
{
	char dir[PATH_MAX], where[PATH_MAX + 32];
	const char *slash = strrchr(file, '/');
	FILE *f;
	char *line = NULL;
	size_t cap = 0, len;
	long lineno = 0;
	int rc = KJ_OK, got, fd;

	/* The user's file: an open that cannot block, a regular file only. */
	fd = kj__open_regular(file, 0, err);
	if (fd < 0)
		return fd;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return oom(err);
	}
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file), file);
	else
		snprintf(dir, sizeof(dir), ".");
	if (slash == file)
		snprintf(dir, sizeof(dir), "/");
	errno = 0;
	while (rc == KJ_OK && (got = next_line(f, &line, &cap, &len)) > 0) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%ld", file, lineno);
		if (len > MAX_LINE) {
			rc = problem(set, where, "longer than %u bytes", MAX_LINE);
			continue;
		}
		while (len && line[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (memchr(line, '\0', len)) {
			rc = problem(set, where, "holds a NUL byte");
			continue;
		}
		rc = jsonl_line(set, dir, where, line, len);
	}
	if (rc == KJ_OK && ferror(f))
		rc = kj_error_set(err, KJ_EIO, "'%s': %s", file, strerror(errno ? errno : EIO));
	else if (rc == KJ_OK && got < 0)
		rc = KJ_ENOMEM;
	free(line);
	fclose(f);
	return rc == KJ_ENOMEM ? oom(err) : rc;
}

int kj_eval_discover_candidates(const char *path, struct kj_eval_set *set,
				struct kj_error *err)
{
	struct stat st;

	/* stat, not open: a FIFO named as the candidates is refused below,
	 * without blocking. */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		return set->kind->read_dir(path, set, err);
	}
	if (stat(path, &st) < 0)
		return kj_error_set(err, KJ_ENOENT, "'%s': no such directory or JSONL file of "
				    "candidates", path);
	return discover_jsonl(path, set, err);
}

/* The torch kind's directory of candidates (kinds.c). */
int kj__eval_torch_dir(const char *path, struct kj_eval_set *set, struct kj_error *err)
{
	return discover_dir(path, set, err);
}

/* For lib/eval/spec_suite.c (eval_internal.h). */
int kj__eval_add_cand(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		      char *source, size_t len, const char *origin, struct kj_eval_cand *extra)
{
	return add_cand(set, task, model, attempt, source, len, origin, extra);
}

int kj__eval_problem(struct kj_eval_set *set, const char *where, const char *why)
{
	return problem(set, where, "%s", why);
}
