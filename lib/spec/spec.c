/*
 * spec.c - a ParBench-style spec loaded, its paths resolved inside the
 * project tree, and its prompt (see kjudge/spec.h for the rules).
 *
 * The loader checks what verification needs (the fields it reads, their
 * types, every path) and nothing more: schema conformance is `kjudge spec
 * validate`'s job.  A strategy that is malformed is not a load error: it is
 * kept with its message and evaluates to ERROR (strategy.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/jschema.h"
#include "kjudge/spec.h"
#include "spec/spec_internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/internal.h"

/* The most links one resolution follows (the kernel's own limit). */
#define LINKS_MAX 40
/* The most components a path may hold below the tree. */
#define DEPTH_MAX 256

/* --- resolution ------------------------------------------------------------------ */

/*
 * The next component of *p into part, *p moved past it and the slashes
 * after it.  1 taken, 0 none left, -1 one longer than NAME_MAX.
 */
static int next_component(const char **p, char part[NAME_MAX + 1])
{
	size_t n;

	while (**p == '/')
		(*p)++;
	n = strcspn(*p, "/");
	if (n == 0)
		return 0;
	if (n > NAME_MAX)
		return -1;
	memcpy(part, *p, n);
	part[n] = '\0';
	*p += n;
	while (**p == '/')
		(*p)++;
	return 1;
}

int kj_spec_open_nofollow(const char *abs, int flags)
{
	char part[NAME_MAX + 1];
	const char *p = abs;
	int fd, next;

	if (abs[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0) {
		int got = next_component(&p, part);

		if (got == 0)
			break;
		if (got < 0) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		/* Every component but the last is a directory reached without
		 * following a link; the last is opened as asked, never through
		 * one either. */
		next = openat(fd, part, *p ? (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
					   : (flags | O_NOFOLLOW | O_CLOEXEC));
		close(fd);
		fd = next;
		if (!*p)
			return fd;
	}
	/* abs is "/" itself. */
	if (fd >= 0 && flags != (O_PATH | O_DIRECTORY)) {
		close(fd);
		return open("/", flags | O_CLOEXEC);
	}
	return fd;
}

/* The state of one resolution: the directory reached (cur, its component
 * ends in marks, below base) and what is left to walk. */
struct walk {
	char cur[PATH_MAX];
	size_t base_len;
	size_t marks[DEPTH_MAX];
	int depth;
	char rest[2 * PATH_MAX];
	int links;
	char link[PATH_MAX];          /* the last link followed, for messages */
};

static int push(struct walk *w, const char *name)
{
	size_t len = strlen(w->cur), n = strlen(name);

	if (w->depth == DEPTH_MAX || len + 1 + n >= sizeof(w->cur))
		return -1;
	w->marks[w->depth++] = len;
	w->cur[len] = '/';
	memcpy(w->cur + len + 1, name, n + 1);
	return 0;
}

static void pop(struct walk *w)
{
	w->cur[w->marks[--w->depth]] = '\0';
}

/* Put `target` in front of what is left. */
static int prepend(struct walk *w, const char *target)
{
	char tmp[2 * PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s/%s", target, w->rest) >= (int)sizeof(tmp))
		return -1;
	memcpy(w->rest, tmp, strlen(tmp) + 1);
	return 0;
}

int kj_spec_resolve(const char *base, const char *start, const char *path, int must_exist,
		    const char *field, char out[PATH_MAX], struct kj_error *err)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t blen = strlen(base);
	const char *rel = path;
	int rc = KJ_OK;

	if (!w)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (!*path) {
		rc = kj_error_set(err, KJ_EINVAL, "%s: the path is empty", field);
		goto done;
	}
	if (path[0] == '/') {
		/* An absolute path is accepted only when it names a place in
		 * the tree, and is then walked like any other. */
		if (strncmp(path, base, blen) != 0 || (path[blen] != '/' && path[blen] != '\0')) {
			rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' is an absolute path outside "
					  "the project tree", field, path);
			goto done;
		}
		rel = path + blen;
		start = NULL;
	}
	snprintf(w->cur, sizeof(w->cur), "%s", base);
	w->base_len = blen;
	if (start && start[blen]) {
		/* The start's own components, so that ".." can climb out of it
		 * as far as the tree. */
		if (strncmp(start, base, blen) != 0 || start[blen] != '/' ||
		    snprintf(w->rest, sizeof(w->rest), "%s/", start + blen + 1) >= (int)sizeof(w->rest)) {
			rc = kj_error_set(err, KJ_EINVAL, "%s: the start directory is outside the "
					  "project tree", field);
			goto done;
		}
	}
	{
		size_t have = strlen(w->rest), add = strlen(rel);

		if (have + add + 1 >= sizeof(w->rest)) {
			rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' is too long", field, path);
			goto done;
		}
		memcpy(w->rest + have, rel, add + 1);
	}
	for (;;) {
		char name[NAME_MAX + 1], target[PATH_MAX];
		const char *p = w->rest;
		struct stat st;
		ssize_t len;
		int last, got = next_component(&p, name);

		if (got == 0)
			break;
		if (got < 0) {
			rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' has a component longer than "
					  "%d bytes", field, path, NAME_MAX);
			goto done;
		}
		memmove(w->rest, p, strlen(p) + 1);
		last = w->rest[0] == '\0';
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			if (w->depth == 0) {
				if (w->links)
					rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' leaves the project "
							  "tree through the symbolic link '%s'",
							  field, path, w->link);
				else
					rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' leaves the project "
							  "tree", field, path);
				goto done;
			}
			pop(w);
			continue;
		}
		if (push(w, name) < 0) {
			rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' is too long", field, path);
			goto done;
		}
		if (lstat(w->cur, &st) < 0) {
			if (errno == ENOENT && last && !must_exist)
				break;
			rc = kj_error_set(err, errno == ENOENT || errno == ENOTDIR ? KJ_ENOENT : KJ_EIO,
					  "%s: '%s' does not exist", field, path);
			goto done;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++w->links > LINKS_MAX ||
			    (len = readlink(w->cur, target, sizeof(target) - 1)) <= 0) {
				rc = kj_error_set(err, KJ_EINVAL, "%s: '%s': too many symbolic links, "
						  "or one that cannot be read", field, path);
				goto done;
			}
			target[len] = '\0';
			snprintf(w->link, sizeof(w->link), "%s", w->cur + blen + (w->cur[blen] == '/'));
			pop(w);
			if (target[0] == '/') {
				if (strncmp(target, base, blen) != 0 ||
				    (target[blen] != '/' && target[blen] != '\0')) {
					rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' leaves the project "
							  "tree through the symbolic link '%s'",
							  field, path, w->link);
					goto done;
				}
				while (w->depth)
					pop(w);
				memmove(target, target + blen, strlen(target + blen) + 1);
			}
			if (prepend(w, target) < 0) {
				rc = kj_error_set(err, KJ_EINVAL, "%s: '%s' is too long", field, path);
				goto done;
			}
			continue;
		}
		if (!last && !S_ISDIR(st.st_mode)) {
			rc = kj_error_set(err, KJ_ENOENT, "%s: '%s' does not exist", field, path);
			goto done;
		}
	}
	snprintf(out, PATH_MAX, "%s", w->cur);
done:
	free(w);
	return rc;
}

/* --- loading ------------------------------------------------------------------------ */

/*
 * The one place a spec's JSON is parsed: the strict reader (kjudge/
 * jschema.h: duplicate keys, NaN, overflowing numbers, trailing garbage and
 * bad UTF-8 refused, with the file, line and column), whose message becomes
 * the load's.  The top level must be an object.
 */
static json_t *load_json(const char *file, struct kj_error *err)
{
	json_t *j = NULL;
	int rc = kj_jsonx_load_file(file, KJ_JSONX_OBJECT, &j, err);

	if (rc == KJ_EJSON)
		err->code = KJ_EINVAL;
	return rc == KJ_OK ? j : NULL;
}

static void list_release(struct kj_spec_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].rel);
		free(l->v[i].abs);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void kj_spec_init(struct kj_spec *s)
{
	memset(s, 0, sizeof(*s));
}

void kj_spec_release(struct kj_spec *s)
{
	size_t i, k;

	free(s->file);
	json_decref(s->doc);
	list_release(&s->prompt);
	list_release(&s->support);
	list_release(&s->verification_only);
	list_release(&s->targets);
	for (i = 0; i < s->n_vars; i++) {
		free(s->vars[i].name);
		free(s->vars[i].value);
	}
	free(s->vars);
	free(s->build_output);
	free(s->executable);
	for (i = 0; i < s->n_env; i++)
		free(s->env[i]);
	free(s->env);
	for (i = 0; i < s->n_configs; i++) {
		struct kj_spec_config *c = &s->configs[i];

		free(c->name);
		for (k = 0; k < c->n_args; k++)
			free(c->args[k]);
		free(c->args);
		list_release(&c->input_files);
		free(c->expected_pattern);
		free(c->reference_output.rel);
		free(c->reference_output.abs);
	}
	free(s->configs);
	for (i = 0; i < s->n_strategies; i++)
		kj_spec_strategy_release(&s->strategies[i]);
	free(s->strategies);
	kj_spec_init(s);
}

/* The context of one load: the file for messages, the error. */
struct ld {
	struct kj_spec *s;
	struct kj_error *err;
};

static int bad(struct ld *l, const char *field, const char *what)
{
	return kj_error_set(l->err, KJ_EINVAL, "'%s': %s: %s", l->s->file, field, what);
}

static int oom(struct ld *l)
{
	return kj_error_set(l->err, KJ_ENOMEM, "out of memory");
}

/* The member `key` of obj: an object / a string / ... as asked; NULL when
 * absent (or JSON null with nullable), else an error. */
static int get(struct ld *l, const json_t *obj, const char *key, const char *field,
	       int type, int required, json_t **out)
{
	json_t *v = json_object_get(obj, key);
	static const char *const names[] = { [JSON_OBJECT] = "an object",
		[JSON_ARRAY] = "an array", [JSON_STRING] = "a string", [JSON_INTEGER] = "an integer" };

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return bad(l, field, "is required");
		return KJ_OK;
	}
	if ((int)json_typeof(v) != type) {
		char msg[64];

		snprintf(msg, sizeof(msg), "must be %s", names[type]);
		return bad(l, field, msg);
	}
	*out = v;
	return KJ_OK;
}

static int get_str(struct ld *l, const json_t *obj, const char *key, const char *field,
		   int required, const char **out)
{
	json_t *v;
	int rc = get(l, obj, key, field, JSON_STRING, required, &v);

	*out = v ? json_string_value(v) : NULL;
	if (rc == KJ_OK && v && required && !**out)
		return bad(l, field, "must not be empty");
	return rc;
}

/* A resolved path of the tree, kept. */
static int resolve_kept(struct ld *l, const char *start, const char *rel, int must_exist,
			const char *field, struct kj_spec_path *p)
{
	char abs[PATH_MAX];
	struct kj_error e;
	int rc = kj_spec_resolve(l->s->tree, start, rel, must_exist, field, abs, &e);

	if (rc != KJ_OK)
		return kj_error_set(l->err, rc, "'%s': %s", l->s->file, e.msg);
	p->rel = strdup(rel);
	p->abs = strdup(abs);
	return p->rel && p->abs ? KJ_OK : oom(l);
}

/* A list of files under start, each existing. */
static int path_list(struct ld *l, const json_t *arr, const char *field, const char *start,
		     int must_exist, struct kj_spec_list *out)
{
	size_t i, n = json_array_size(arr);
	char f[128];
	int rc;

	if (!n)
		return KJ_OK;
	out->v = calloc(n, sizeof(*out->v));
	if (!out->v)
		return oom(l);
	for (i = 0; i < n; i++) {
		const json_t *v = json_array_get(arr, i);

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		if (!json_is_string(v))
			return bad(l, f, "must be a string");
		if ((rc = resolve_kept(l, start, json_string_value(v), must_exist, f,
				       &out->v[i])) != KJ_OK)
			return rc;
		out->n++;
	}
	return KJ_OK;
}

static int files_section(struct ld *l, const json_t *files)
{
	static const struct { const char *key; size_t off; int required; } lists[] = {
		{ "prompt_payload", offsetof(struct kj_spec, prompt), 1 },
		{ "support_files", offsetof(struct kj_spec, support), 0 },
		{ "verification_only", offsetof(struct kj_spec, verification_only), 0 },
		{ "translation_targets", offsetof(struct kj_spec, targets), 0 },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char field[64];
		json_t *arr;

		snprintf(field, sizeof(field), "files.%s", lists[i].key);
		if ((rc = get(l, files, lists[i].key, field, JSON_ARRAY, lists[i].required,
			      &arr)) != KJ_OK)
			return rc;
		if (!arr)
			continue;
		if (lists[i].required && !json_array_size(arr))
			return bad(l, field, "must list at least one file");
		if (i == 3)
			l->s->targets_given = 1;
		if ((rc = path_list(l, arr, field, l->s->source_dir, 1,
				    (struct kj_spec_list *)((char *)l->s + lists[i].off))) != KJ_OK)
			return rc;
	}
	return KJ_OK;
}

static int build_section(struct ld *l, const json_t *b)
{
	json_t *cmds, *vars, *outs;
	const char *wd = NULL, *exe;
	int rc;

	if ((rc = get_str(l, b, "working_directory", "build.working_directory", 0, &wd)) ||
	    (rc = get(l, b, "commands", "build.commands", JSON_OBJECT, 1, &cmds)) ||
	    (rc = get_str(l, cmds, "build", "build.commands.build", 1, &l->s->build)) ||
	    (rc = get_str(l, cmds, "configure", "build.commands.configure", 0, &l->s->configure)) ||
	    (rc = get_str(l, cmds, "clean", "build.commands.clean", 0, &l->s->clean)) ||
	    (rc = get(l, b, "variables", "build.variables", JSON_OBJECT, 0, &vars)) ||
	    (rc = get(l, b, "outputs", "build.outputs", JSON_OBJECT, 1, &outs)) ||
	    (rc = get_str(l, outs, "executable", "build.outputs.executable", 1, &exe)))
		return rc;
	if (wd) {
		struct kj_spec_path p = { NULL, NULL };

		rc = resolve_kept(l, l->s->repo_root, wd, 1, "build.working_directory", &p);
		if (rc == KJ_OK)
			snprintf(l->s->working_dir, sizeof(l->s->working_dir), "%s", p.abs);
		free(p.rel);
		free(p.abs);
		if (rc != KJ_OK)
			return rc;
		if (!kj__is_dir(l->s->working_dir))
			return bad(l, "build.working_directory", "is not a directory");
	} else {
		memcpy(l->s->working_dir, l->s->source_dir, sizeof(l->s->working_dir));
	}
	/* The executable is made by the build: only where it will be is
	 * checked. */
	{
		char abs[PATH_MAX];
		struct kj_error e;

		if ((rc = kj_spec_resolve(l->s->tree, l->s->working_dir, exe, 0,
					  "build.outputs.executable", abs, &e)) != KJ_OK)
			return kj_error_set(l->err, rc, "'%s': %s", l->s->file, e.msg);
	}
	if (!(l->s->build_output = strdup(exe)))
		return oom(l);
	if (vars) {
		const char *k;
		json_t *v;
		size_t n = json_object_size(vars);

		l->s->vars = calloc(n ? n : 1, sizeof(*l->s->vars));
		if (!l->s->vars)
			return oom(l);
		json_object_foreach(vars, k, v) {
			const json_t *def;
			char field[320];

			snprintf(field, sizeof(field), "build.variables.%s", k);
			if (!json_is_object(v))
				return bad(l, field, "must be an object");
			def = json_object_get(v, "default");
			if (def && !json_is_string(def) && !json_is_null(def)) {
				snprintf(field, sizeof(field), "build.variables.%s.default", k);
				return bad(l, field, "must be a string");
			}
			l->s->vars[l->s->n_vars].name = strdup(k);
			l->s->vars[l->s->n_vars].value =
				strdup(json_is_string(def) ? json_string_value(def) : "");
			if (!l->s->vars[l->s->n_vars].name || !l->s->vars[l->s->n_vars].value) {
				l->s->n_vars++;
				return oom(l);
			}
			l->s->n_vars++;
		}
	}
	return KJ_OK;
}

static int strings(struct ld *l, const json_t *arr, const char *field, char ***out, size_t *n)
{
	size_t i, m = json_array_size(arr);
	char f[512];

	*out = calloc(m + 1, sizeof(**out));
	if (!*out)
		return oom(l);
	for (i = 0; i < m; i++) {
		const json_t *v = json_array_get(arr, i);

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		if (!json_is_string(v))
			return bad(l, f, "must be a string");
		if (!((*out)[i] = strdup(json_string_value(v))))
			return oom(l);
		(*n)++;
	}
	return KJ_OK;
}

static int config_one(struct ld *l, const char *name, const json_t *c, struct kj_spec_config *out)
{
	char field[320], f2[400];
	json_t *args, *inputs, *exp;
	const char *pat = NULL, *ref = NULL;
	int rc;

	snprintf(field, sizeof(field), "run.input_configurations.%s", name);
	if (!(out->name = strdup(name)))
		return oom(l);
	if (!json_is_object(c))
		return bad(l, field, "must be an object");
	snprintf(f2, sizeof(f2), "%s.arguments", field);
	if ((rc = get(l, c, "arguments", f2, JSON_ARRAY, 1, &args)) ||
	    (rc = strings(l, args, f2, &out->args, &out->n_args)))
		return rc;
	/* Another configuration's inputs may not be fetched: only the run's
	 * must exist (kj_spec_verify checks them), but none may leave. */
	snprintf(f2, sizeof(f2), "%s.input_files", field);
	if ((rc = get(l, c, "input_files", f2, JSON_ARRAY, 0, &inputs)) ||
	    (inputs && (rc = path_list(l, inputs, f2, l->s->working_dir, 0, &out->input_files))))
		return rc;
	snprintf(f2, sizeof(f2), "%s.expected_results", field);
	if ((rc = get(l, c, "expected_results", f2, JSON_OBJECT, 0, &exp)) != KJ_OK)
		return rc;
	if (exp) {
		snprintf(f2, sizeof(f2), "%s.expected_results.stdout_pattern", field);
		if ((rc = get_str(l, exp, "stdout_pattern", f2, 0, &pat)) != KJ_OK)
			return rc;
		snprintf(f2, sizeof(f2), "%s.expected_results.reference_output_file", field);
		if ((rc = get_str(l, exp, "reference_output_file", f2, 0, &ref)) != KJ_OK)
			return rc;
		if (pat && !(out->expected_pattern = strdup(pat)))
			return oom(l);
		if (ref && (rc = resolve_kept(l, l->s->working_dir, ref, 1, f2,
					      &out->reference_output)) != KJ_OK)
			return rc;
	}
	return KJ_OK;
}

static int run_section(struct ld *l, const json_t *r)
{
	json_t *envs, *cfgs, *v;
	const json_t *to;
	const char *exe, *k;
	size_t n;
	int rc;

	if ((rc = get_str(l, r, "executable", "run.executable", 1, &exe)) ||
	    (rc = get(l, r, "environment_variables", "run.environment_variables", JSON_OBJECT, 0,
		      &envs)) ||
	    (rc = get(l, r, "input_configurations", "run.input_configurations", JSON_OBJECT, 1,
		      &cfgs)))
		return rc;
	{
		char abs[PATH_MAX];
		struct kj_error e;

		if ((rc = kj_spec_resolve(l->s->tree, l->s->working_dir, exe, 0, "run.executable",
					  abs, &e)) != KJ_OK)
			return kj_error_set(l->err, rc, "'%s': %s", l->s->file, e.msg);
	}
	if (!(l->s->executable = strdup(exe)))
		return oom(l);
	to = json_object_get(r, "timeout_seconds");
	l->s->run_timeout_s = 300;
	if (to && !json_is_null(to)) {
		if (!json_is_integer(to) || json_integer_value(to) < 1 ||
		    json_integer_value(to) > 2147483)
			return bad(l, "run.timeout_seconds", "must be a whole number of seconds "
				   "from 1 to 2147483");
		l->s->run_timeout_s = (double)json_integer_value(to);
	}
	if (envs) {
		n = json_object_size(envs);
		l->s->env = calloc(n + 1, sizeof(*l->s->env));
		if (!l->s->env)
			return oom(l);
		json_object_foreach(envs, k, v) {
			char field[320];

			snprintf(field, sizeof(field), "run.environment_variables.%s", k);
			if (!json_is_string(v))
				return bad(l, field, "must be a string");
			if (!*k || strchr(k, '='))
				return bad(l, field, "is not a variable name");
			if (asprintf(&l->s->env[l->s->n_env], "%s=%s", k, json_string_value(v)) < 0) {
				l->s->env[l->s->n_env] = NULL;
				return oom(l);
			}
			l->s->n_env++;
		}
	}
	n = json_object_size(cfgs);
	if (!n)
		return bad(l, "run.input_configurations", "must hold at least one configuration");
	l->s->configs = calloc(n, sizeof(*l->s->configs));
	if (!l->s->configs)
		return oom(l);
	json_object_foreach(cfgs, k, v) {
		rc = config_one(l, k, v, &l->s->configs[l->s->n_configs]);
		l->s->n_configs++;
		if (rc != KJ_OK)
			return rc;
	}
	return KJ_OK;
}

static int verification_section(struct ld *l, const json_t *v)
{
	json_t *arr;
	size_t i, n;
	int rc;

	if ((rc = get(l, v, "strategies", "verification.strategies", JSON_ARRAY, 1, &arr)))
		return rc;
	n = json_array_size(arr);
	l->s->strategies = calloc(n ? n : 1, sizeof(*l->s->strategies));
	if (!l->s->strategies)
		return oom(l);
	for (i = 0; i < n; i++) {
		char field[64];
		struct kj_error e;

		snprintf(field, sizeof(field), "verification.strategies[%zu]", i);
		rc = kj_spec_strategy_parse(&l->s->strategies[i], json_array_get(arr, i), field,
					    l->s->working_dir, l->s->tree, &e);
		l->s->n_strategies++;
		if (rc == KJ_ENOMEM)
			return oom(l);
		if (rc != KJ_OK)
			return kj_error_set(l->err, rc, "'%s': %s", l->s->file, e.msg);
	}
	return KJ_OK;
}

/* config/paths.json's downloads_root, as ParBench reads it. */
static int find_tree(struct ld *l)
{
	char p[PATH_MAX + 32], t[PATH_MAX];
	json_t *j;
	const json_t *d;
	struct kj_error e;

	snprintf(p, sizeof(p), "%s/config/paths.json", l->s->root);
	memcpy(l->s->tree, l->s->root, sizeof(l->s->tree));
	if (access(p, F_OK) != 0)
		return KJ_OK;
	if (!(j = load_json(p, &e)))
		return kj_error_set(l->err, e.code, "%s", e.msg);
	d = json_object_get(j, "downloads_root");
	if (d && !json_is_null(d)) {
		if (!json_is_string(d) || !*json_string_value(d)) {
			json_decref(j);
			return kj_error_set(l->err, KJ_EINVAL, "'%s': downloads_root: must be a "
					    "non-empty string", p);
		}
		if (json_string_value(d)[0] == '/')
			snprintf(p, sizeof(p), "%s", json_string_value(d));
		else
			snprintf(p, sizeof(p), "%s/%s", l->s->root, json_string_value(d));
		/* The tree is the project's own setting, not the spec's: it may
		 * be anywhere, and everything the spec names stays in it. */
		if (!realpath(p, t)) {
			json_decref(j);
			return kj_error_set(l->err, KJ_ENOENT, "'%s': downloads_root '%s': %s",
					    "config/paths.json", json_string_value(d), strerror(errno));
		}
		memcpy(l->s->tree, t, sizeof(l->s->tree));
	}
	json_decref(j);
	return KJ_OK;
}

int kj_spec_load(struct kj_spec *s, const char *file, const char *root, struct kj_error *err)
{
	struct ld l = { s, err };
	json_t *id, *prov, *files, *build, *run, *ver;
	const char *repo_root, *source_path;
	struct kj_spec_path p = { NULL, NULL };
	int rc;

	kj_spec_init(s);
	if (!(s->file = strdup(file)))
		return oom(&l);
	if (!realpath(root ? root : ".", s->root))
		return kj_error_set(err, KJ_ENOENT, "project root '%s': %s", root ? root : ".",
				    strerror(errno));
	if (!kj__is_dir(s->root))
		return kj_error_set(err, KJ_EINVAL, "project root '%s' is not a directory",
				    root ? root : ".");
	if ((rc = find_tree(&l)) != KJ_OK)
		return rc;
	if (!(s->doc = load_json(file, err)))
		return err->code;
	if ((rc = get(&l, s->doc, "identity", "identity", JSON_OBJECT, 1, &id)) ||
	    (rc = get_str(&l, id, "unique_id", "identity.unique_id", 1, &s->unique_id)) ||
	    (rc = get_str(&l, id, "kernel_name", "identity.kernel_name", 1, &s->kernel_name)) ||
	    (rc = get_str(&l, id, "parallel_api", "identity.parallel_api", 1, &s->parallel_api)) ||
	    (rc = get_str(&l, id, "source_suite", "identity.source_suite", 1, &s->source_suite)) ||
	    (rc = get(&l, s->doc, "provenance", "provenance", JSON_OBJECT, 1, &prov)) ||
	    (rc = get_str(&l, prov, "repo_root", "provenance.repo_root", 1, &repo_root)) ||
	    (rc = get_str(&l, prov, "source_path", "provenance.source_path", 1, &source_path)))
		return rc;
	if ((rc = resolve_kept(&l, NULL, repo_root, 1, "provenance.repo_root", &p)) != KJ_OK)
		goto fail_p;
	snprintf(s->repo_root, sizeof(s->repo_root), "%s", p.abs);
	free(p.rel);
	free(p.abs);
	p.rel = p.abs = NULL;
	if ((rc = resolve_kept(&l, s->repo_root, source_path, 1, "provenance.source_path", &p)) !=
	    KJ_OK)
		goto fail_p;
	snprintf(s->source_dir, sizeof(s->source_dir), "%s", p.abs);
	free(p.rel);
	free(p.abs);
	if (!kj__is_dir(s->repo_root) || !kj__is_dir(s->source_dir))
		return bad(&l, kj__is_dir(s->repo_root) ? "provenance.source_path" :
			   "provenance.repo_root", "is not a directory");
	if ((rc = get(&l, s->doc, "files", "files", JSON_OBJECT, 1, &files)) ||
	    (rc = get(&l, s->doc, "build", "build", JSON_OBJECT, 1, &build)) ||
	    (rc = get(&l, s->doc, "run", "run", JSON_OBJECT, 1, &run)) ||
	    (rc = get(&l, s->doc, "verification", "verification", JSON_OBJECT, 1, &ver)) ||
	    (rc = files_section(&l, files)) || (rc = build_section(&l, build)) ||
	    (rc = run_section(&l, run)) || (rc = verification_section(&l, ver)))
		return rc;
	return KJ_OK;
fail_p:
	free(p.rel);
	free(p.abs);
	return rc;
}

const struct kj_spec_config *kj_spec_config_find(const struct kj_spec *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_configs; i++)
		if (!strcmp(s->configs[i].name, name))
			return &s->configs[i];
	return NULL;
}

/* --- the prompt ------------------------------------------------------------------------ */

int kj_spec_prompt(const struct kj_spec *s,
		   int (*fn)(void *ctx, const char *bytes, size_t n), void *ctx,
		   struct kj_error *err)
{
	size_t i;

	for (i = 0; i < s->prompt.n; i++) {
		/* Read through the resolved path with no link followed: a link
		 * put there after loading cannot lead the prompt elsewhere. */
		int fd = kj_spec_open_nofollow(s->prompt.v[i].abs, O_RDONLY);
		char head[PATH_MAX + 64];
		size_t len = 0;
		char *data;
		int n;

		if (fd < 0)
			return kj_error_set(err, KJ_EIO, "'%s': files.prompt_payload[%zu]: '%s': %s",
					    s->file, i, s->prompt.v[i].rel, strerror(errno));
		data = kj__spec_read_fd(fd, 64u << 20, &len);
		close(fd);
		if (!data)
			return kj_error_set(err, KJ_EIO, "'%s': files.prompt_payload[%zu]: '%s' cannot "
					    "be read (not a regular file, or over 64 MiB)",
					    s->file, i, s->prompt.v[i].rel);
		n = snprintf(head, sizeof(head), "==> %s (%zu bytes) <==\n", s->prompt.v[i].rel, len);
		if (fn(ctx, head, (size_t)n) || fn(ctx, data, len) || fn(ctx, "\n", 1)) {
			free(data);
			return kj_error_set(err, KJ_EIO, "cannot write the prompt");
		}
		free(data);
	}
	return KJ_OK;
}

char *kj__spec_read_fd(int fd, size_t max, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size > max)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		errno = ENOMEM;
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
}
