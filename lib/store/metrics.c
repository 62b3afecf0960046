/*
 * metrics.c - the figures of an evaluation from the results store
 * (kjudge/metrics.h; the definitions are docs/metrics.md's).
 *
 * One read transaction: the latest run, its suite's operators, the
 * attempts counted (state 'done', task in the suite, the last finished of
 * each (model, task, attempt label)), each with its timings and its cases;
 * then every figure per model.  Every SQLite call is checked and any
 * failure is the whole call's error.
 *
 * A row is data, not trusted: an attempt that holds a value no judge
 * writes (check.c: a state or status off its list, a negative or
 * non-finite time, token count or speedup, in its row, its timings or its
 * cases) is left out of every figure and named in "left_out" and a
 * warning; no value of a row fails the study.  The figures that add rows
 * up are made so that no sum can fail either (non-finite sums are null,
 * token sums are checked for overflow).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "kjudge/metrics.h"
#include "kjudge/verdict.h"
#include "store/store_internal.h"
#include "base/json.h"
#include "base/text.h"
#include "base/vec.h"
#include "base/banned.h"

/* Longest text of the store copied into the metrics: messages and names
 * (kj__text_clean's form past it), and JSON columns parsed. */
#define TEXT_MAX 4096
#define JSON_TEXT_MAX (1u << 20)

/* z for a two-sided 95 % interval. */
#define WILSON_Z 1.959963984540054

/* The k of pass@k and the p of fast_p when the caller names none. */
static const int default_ks[] = { 1, 2, 5, 10 };
static const double default_ps[] = { 0.0, 0.5, 0.8, 1.0, 1.5, 2.0 };

/* Categories (schema.sql's attempts.category) and the failure groups. */
static const char *const cats[] = { "build", "runtime", "accuracy", "timeout", "limit",
				    "timing", "task", "judge", "static", "anticheat" };
#define N_CAT (sizeof(cats) / sizeof(cats[0]))
/* The group of each category, in the order of cats[]; "other" for the rest
 * and for a failure without a known category. */
static const char *const cat_group[] = { "build", "runtime", "accuracy", "timeout", "other",
					 "timing", "other", "judge", "static", "other" };
static const char *const groups[] = { "static", "build", "runtime", "accuracy", "timeout",
				      "timing", "judge", "other" };
#define N_GROUP (sizeof(groups) / sizeof(groups[0]))

struct model {
	char *name, *raw; /* cleaned (the JSON's key), as stored */
	long long n_att, n_pass, n_clean, tokens, tokens_missing, tokens_none, runtime_missing;
	int tokens_overflow; /* tokens past what a long long holds: null */
	double runtime_s, judge_s;
	long long cat[N_CAT + 1]; /* [N_CAT]: no category or an unknown one */
	long long group[N_GROUP];
	/* Per operator: attempts, clean passes, any pass, best clean speedup
	 * (< 0: none), the attempts' records with their cases. */
	int *n, *c;
	unsigned char *pass;
	double *best;
	json_t **recs;
	/* The GPU (or "cpu", "unknown") of each attempt whose speedup
	 * enters the figures: name -> count. */
	json_t *gpus;
	/* The runs whose attempts enter its figures: run id (text) -> count. */
	json_t *runs;
	/* The SOL-ExecBench scores of its clean attempts that have one:
	 * their sum and count (docs/metrics.md). */
	double sol_sum;
	long long sol_n;
};

struct ctx {
	const struct kj_metrics_opts *opt;
	sqlite3 *db;
	struct kj_error *err;
	int oom;
	size_t n_ops;
	json_t *ops;       /* the operators' records */
	json_t *op_index;  /* task_key -> index */
	struct model *models;
	size_t n_models;
	json_t *left_out;  /* the attempts left out, with why */
	/* The tasks' audits (audit.c): task_key -> its latest audit; the
	 * suite's weak tasks' records by task_key, and the lists of weak and
	 * not proven tasks; the strong ones and those without an audit. */
	json_t *audits, *weak_index, *weak, *not_proven;
	long long strong, unaudited;
	int has_sol;       /* the store keeps timings.sol_ms (version 5 on) */
};

static int fail(struct ctx *c, int rc, const char *what)
{
	return kj__store_fail(c->db, rc, c->err, what);
}

static void set(struct ctx *c, json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v) != 0)
		c->oom = 1;
}

static void push(struct ctx *c, json_t *a, json_t *v)
{
	if (!v || json_array_append_new(a, v) != 0)
		c->oom = 1;
}

/* A text column: valid UTF-8, bounded; null for NULL. */
static json_t *col_text(struct ctx *c, sqlite3_stmt *st, int i)
{
	const unsigned char *t;
	char *clean;
	json_t *j;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	t = sqlite3_column_text(st, i);
	if (!t) {
		c->oom = 1;
		return NULL;
	}
	clean = kj__text_clean((const char *)t, (size_t)sqlite3_column_bytes(st, i), TEXT_MAX);
	if (!clean)
		return NULL;
	j = json_string(clean);
	free(clean);
	return j;
}

/* An attempt's label: a JSON integer when it is a decimal number as
 * generations number their attempts (0, 7, 12; no sign, no leading zero,
 * at most 18 digits), the text otherwise ("a1", "007"). */
static json_t *attempt_label(struct ctx *c, sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	size_t n = t ? strlen((const char *)t) : 0, k;

	if (n == 0 || n > 18 || (n > 1 && t[0] == '0'))
		return col_text(c, st, i);
	for (k = 0; k < n; k++)
		if (t[k] < '0' || t[k] > '9')
			return col_text(c, st, i);
	return json_integer((json_int_t)strtoll((const char *)t, NULL, 10));
}

/* A JSON column, parsed; a text that is not JSON (or too long) is kept as
 * a string. */
static json_t *col_json(struct ctx *c, sqlite3_stmt *st, int i)
{
	const unsigned char *t;
	size_t len;
	json_t *j;
	int oom = 0;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	t = sqlite3_column_text(st, i);
	len = (size_t)sqlite3_column_bytes(st, i);
	if (t && len <= JSON_TEXT_MAX) {
		j = kj__json_loadb((const char *)t, len, JSON_DECODE_ANY, NULL, &oom);
		if (j || oom)
			return j;
	}
	return col_text(c, st, i);
}

static json_t *col_int(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	return json_integer(sqlite3_column_int64(st, i));
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A rate k/n, null when n is 0. */
static json_t *rate(long long k, long long n)
{
	return n > 0 ? json_real((double)k / (double)n) : json_null();
}

/* Wilson's 95 % score interval of k successes in n, [lo, hi]; null when n
 * is 0. */
static json_t *wilson(long long k, long long n)
{
	double p, z2, den, mid, half, lo, hi;

	if (n <= 0)
		return json_null();
	p = (double)k / (double)n;
	z2 = WILSON_Z * WILSON_Z;
	den = 1.0 + z2 / (double)n;
	mid = (p + z2 / (2.0 * (double)n)) / den;
	half = WILSON_Z * sqrt(p * (1.0 - p) / (double)n + z2 / (4.0 * (double)n * (double)n)) / den;
	lo = mid - half;
	hi = mid + half;
	return json_pack("[ff]", lo < 0 ? 0.0 : lo, hi > 1 ? 1.0 : hi);
}

/* The geometric mean of v[0..n) (all > 0), in log space; exactly the
 * value when they are all the same (exp(log(x)) need not be x, and a tie
 * at a fast_p threshold must stay one). */
static double geomean(const double *v, size_t n)
{
	double sum = 0, lo = v[0], hi = v[0];
	size_t i;

	for (i = 0; i < n; i++) {
		sum += log(v[i]);
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	return lo == hi ? lo : exp(sum / (double)n);
}

/* pass@k of an operator with n attempts and c clean passes:
 * 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k / i). */
static double pass_at_k(int n, int c, int k)
{
	double prod = 1.0;
	int i;

	if (n - c < k)
		return 1.0;
	for (i = n - c + 1; i <= n; i++)
		prod *= 1.0 - (double)k / (double)i;
	return 1.0 - prod;
}

static int step_done(struct ctx *c, sqlite3_stmt *st, int rc, const char *what)
{
	if (rc != SQLITE_DONE)
		return fail(c, rc, what);
	(void)st;
	return KJ_OK;
}

/* The directions of a suite of specs that the run did not run, as its env
 * names them (skipped entries marked not_run: a target that cannot run on
 * the machine): [{"task", "why"}], empty for any other run. */
static json_t *not_run_of(struct ctx *c, sqlite3_stmt *st, int col)
{
	json_t *env = col_json(c, st, col), *list = json_array(), *v;
	size_t i;

	if (!list) {
		c->oom = 1;
		json_decref(env);
		return NULL;
	}
	json_array_foreach(json_object_get(env, "skipped"), i, v) {
		const json_t *task = json_object_get(v, "where"), *why = json_object_get(v, "why");

		if (!json_is_true(json_object_get(v, "not_run")) || !json_is_string(task) ||
		    !json_is_string(why))
			continue;
		push(c, list, json_pack("{s:O, s:O}", "task", task, "why", why));
	}
	json_decref(env);
	return list;
}

/* The latest run, into *suite (null when none); *run_id 0 when none. */
static int load_suite(struct ctx *c, json_t **suite, long long *run_id)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*suite = NULL;
	*run_id = 0;
	rc = sqlite3_prepare_v2(c->db, "SELECT run_id, judge_version, settings, suite, started_at, "
				"finished_at, (SELECT count(*) FROM runs), env FROM runs "
				"ORDER BY run_id DESC LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(c, rc, "metrics: the latest run");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		json_t *o = json_object();

		*run_id = sqlite3_column_int64(st, 0);
		if (!o) {
			c->oom = 1;
		} else {
			set(c, o, "run_id", json_integer(*run_id));
			set(c, o, "judge_version", col_text(c, st, 1));
			set(c, o, "settings", col_json(c, st, 2));
			set(c, o, "suite", col_text(c, st, 3));
			set(c, o, "started_at", col_text(c, st, 4));
			set(c, o, "finished_at", col_text(c, st, 5));
			set(c, o, "runs", json_integer(sqlite3_column_int64(st, 6)));
			set(c, o, "not_run", not_run_of(c, st, 7));
		}
		*suite = o;
		rc = sqlite3_step(st);
	} else {
		*suite = json_null();
	}
	rc = step_done(c, st, rc, "metrics: the latest run");
	sqlite3_finalize(st);
	return rc;
}

/* A task whose latest attempt found its own reference failing its oracle
 * (a suite of specs: KJ_ET_BASELINE_FAILED) never enters an evaluation: it
 * is not one of the suite's operators, and its attempts count nowhere.  The
 * type's name is bound from verdict.h's table (bind_baseline). */
#define BASELINE_FAILED                                                                    \
	"(SELECT task_key FROM (SELECT task_key, error_type, row_number() OVER "           \
	"(PARTITION BY task_key ORDER BY finished_at DESC, run_id DESC, attempt_key DESC) " \
	"AS rn FROM attempts WHERE state = 'done') WHERE rn = 1 AND "                       \
	"error_type = :baseline_failed)"

/* Bind BASELINE_FAILED's type name in a statement that holds it. */
static int bind_baseline(sqlite3_stmt *st)
{
	return sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, ":baseline_failed"),
				 kj_etype_name(KJ_ET_BASELINE_FAILED), -1, SQLITE_STATIC);
}

/* The audit of the suite's task key (row st of load_ops) into the weak,
 * not proven and strong counts: 1 when the task is weak and the figures
 * leave it out (--exclude-weak), else 0. */
static int audited(struct ctx *c, sqlite3_stmt *st, const char *key)
{
	const json_t *a = json_object_get(c->audits, key);
	const char *verdict = json_string_value(json_object_get(a, "verdict"));
	json_t *r;

	if (!verdict) {
		c->unaudited++;
		return 0;
	}
	if (!strcmp(verdict, "strong")) {
		c->strong++;
		return 0;
	}
	r = json_pack("{s:o, s:o, s:o, s:O, s:O}", "task", col_text(c, st, 1), "task_key",
		      col_text(c, st, 0), "path", col_text(c, st, 2), "reasons",
		      json_object_get(a, "reasons"), "canaries", json_object_get(a, "canaries"));
	if (!r) {
		c->oom = 1;
		return 0;
	}
	if (strcmp(verdict, "weak") != 0) {
		push(c, c->not_proven, r);
		return 0;
	}
	/* Its attempts: those counted, or with --exclude-weak those left out
	 * (load_attempts). */
	set(c, r, "attempts", json_integer(0));
	set(c, c->weak_index, key, json_incref(r));
	push(c, c->weak, r);
	return c->opt->exclude_weak;
}

/* The operators of the run's suite, in the order of level, problem, name. */
static int load_ops(struct ctx *c, long long run_id)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(c->db, "SELECT t.task_key, t.name, t.path, t.level, t.problem "
				"FROM suite_tasks s JOIN tasks t ON t.task_key = s.task_key "
				"WHERE s.run_id = ? AND s.task_key NOT IN " BASELINE_FAILED " "
				"ORDER BY t.level IS NULL, t.level, "
				"t.problem IS NULL, t.problem, t.name, t.task_key", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(c, rc, "metrics: the suite's operators");
	rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = bind_baseline(st);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(st);
		return fail(c, rc, "metrics: the suite's operators");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->oom) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		json_t *o = json_object();

		if (!key || !o) {
			json_decref(o);
			c->oom = 1;
			break;
		}
		if (audited(c, st, key)) {
			/* --exclude-weak: not an operator, its attempts nowhere. */
			json_decref(o);
			continue;
		}
		set(c, o, "task", col_text(c, st, 1));
		set(c, o, "task_key", col_text(c, st, 0));
		set(c, o, "path", col_text(c, st, 2));
		set(c, o, "level", col_int(st, 3));
		set(c, o, "problem", col_int(st, 4));
		set(c, o, "models", json_object());
		set(c, c->op_index, key, json_integer((json_int_t)c->n_ops));
		push(c, c->ops, o);
		c->n_ops++;
	}
	if (c->oom)
		rc = SQLITE_DONE;
	rc = step_done(c, st, rc, "metrics: the suite's operators");
	sqlite3_finalize(st);
	return rc;
}

static struct model *model_get(struct ctx *c, const char *name)
{
	struct model *m;
	size_t i;

	if (c->n_models && !strcmp(c->models[c->n_models - 1].raw, name))
		return &c->models[c->n_models - 1];
	if (KJ__RESIZE(c->models, c->n_models + 1) != KJ_OK)
		return NULL;
	m = &c->models[c->n_models];
	memset(m, 0, sizeof(*m));
	m->name = kj__text_cleans(name, TEXT_MAX);
	m->raw = strdup(name);
	m->n = calloc(c->n_ops + 1, sizeof(*m->n));
	m->c = calloc(c->n_ops + 1, sizeof(*m->c));
	m->pass = calloc(c->n_ops + 1, 1);
	m->best = malloc((c->n_ops + 1) * sizeof(*m->best));
	m->recs = calloc(c->n_ops + 1, sizeof(*m->recs));
	c->n_models++;
	if (!m->name || !m->raw || !m->n || !m->c || !m->pass || !m->best || !m->recs)
		return NULL;
	for (i = 0; i <= c->n_ops; i++)
		m->best[i] = -1.0;
	return m;
}

/* The speedup of an attempt from its timings rows: the geometric mean of
 * their finite, positive speedups; *used the number of rows used (0: none,
 * *out left alone). */
static int timed_speedup(struct ctx *c, sqlite3_stmt *st, const char *akey, double *out,
			 long long *used)
{
	double *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*used = 0;
	sqlite3_reset(st);
	rc = sqlite3_bind_text(st, 1, akey, -1, SQLITE_TRANSIENT);
	if (rc != SQLITE_OK)
		return fail(c, rc, "metrics: an attempt's timings");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double x;

		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		x = sqlite3_column_double(st, 0);
		if (!isfinite(x) || x <= 0)
			continue;
		if (KJ__GROW(v, cap, n + 1) != KJ_OK) {
			free(v);
			c->oom = 1;
			sqlite3_reset(st);
			return KJ_OK;
		}
		v[n++] = x;
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return fail(c, rc, "metrics: an attempt's timings");
	}
	if (n) {
		*out = geomean(v, n);
		*used = (long long)n;
	}
	free(v);
	sqlite3_reset(st);
	return KJ_OK;
}

double kj_sol_score(double t_k, double t_b, double t_sol)
{
	if (!(isfinite(t_k) && t_k > 0 && isfinite(t_b) && t_b > 0 && isfinite(t_sol) &&
	      t_sol > 0))
		return NAN;
	/* A baseline at or under the bound leaves no gap to close: as the
	 * published harness, 1 at or under the bound, else 0. */
	if (t_b <= t_sol)
		return t_k <= t_sol ? 1.0 : 0.0;
	return 1.0 / (1.0 + (t_k - t_sol) / (t_b - t_sol));
}

/* An attempt's SOL-ExecBench score from its timings rows (impl_ms,
 * ref_ms, sol_ms): the mean of its cases' scores, NAN unless every timed
 * case has one; *n_cases the cases scored. */
static int attempt_sol(struct ctx *c, sqlite3_stmt *st, const char *akey, double *out,
		       long long *n_cases)
{
	double sum = 0;
	long long n = 0, missing = 0;
	int rc;

	*out = NAN;
	*n_cases = 0;
	sqlite3_reset(st);
	rc = sqlite3_bind_text(st, 1, akey, -1, SQLITE_TRANSIENT);
	if (rc != SQLITE_OK)
		return fail(c, rc, "metrics: an attempt's speed of light");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double x = sqlite3_column_type(st, 2) == SQLITE_NULL ? (double)NAN
			   : kj_sol_score(sqlite3_column_double(st, 0),
					  sqlite3_column_double(st, 1),
					  sqlite3_column_double(st, 2));

		if (isnan(x)) {
			missing++;
			continue;
		}
		sum += x;
		n++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return fail(c, rc, "metrics: an attempt's speed of light");
	if (n && !missing) {
		*out = sum / (double)n;
		*n_cases = n;
	}
	return KJ_OK;
}

/* The case rows of an attempt. */
static int load_cases(struct ctx *c, sqlite3_stmt *st, const char *akey, json_t **out)
{
	json_t *a = json_array();
	int rc;

	*out = a;
	if (!a) {
		c->oom = 1;
		return KJ_OK;
	}
	sqlite3_reset(st);
	rc = sqlite3_bind_text(st, 1, akey, -1, SQLITE_TRANSIENT);
	if (rc != SQLITE_OK)
		return fail(c, rc, "metrics: an attempt's cases");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->oom) {
		json_t *o = json_object();

		if (!o) {
			c->oom = 1;
			break;
		}
		set(c, o, "phase", col_text(c, st, 0));
		set(c, o, "case_idx", col_int(st, 1));
		set(c, o, "params", col_json(c, st, 2));
		set(c, o, "status", col_text(c, st, 3));
		set(c, o, "error_type", col_text(c, st, 4));
		set(c, o, "category", col_text(c, st, 5));
		set(c, o, "message", col_text(c, st, 6));
		push(c, a, o);
	}
	if (c->oom)
		rc = SQLITE_DONE;
	rc = step_done(c, st, rc, "metrics: an attempt's cases");
	sqlite3_reset(st);
	return rc;
}

/* The attempts counted: state 'done', task in the run's suite, and of the
 * rows that share (model, task_key, attempt) the one finished last.  Rows
 * of a state off its list are read too, to be named as left out. */
static const char attempts_sql[] =
	"WITH a AS (SELECT a.*, a.rowid AS rid, row_number() OVER (PARTITION BY a.model, "
	"a.task_key, a.attempt ORDER BY a.finished_at DESC, a.run_id DESC, a.attempt_key DESC) "
	"AS rn FROM attempts a WHERE a.state IS NOT 'running' AND a.task_key IN "
	"(SELECT task_key FROM suite_tasks WHERE run_id = ?) AND a.task_key NOT IN "
	BASELINE_FAILED ") "
	"SELECT attempt_key, task_key, task, model, attempt, round, prompt_tokens, "
	"completion_tokens, generation_s, status, clean, error_type, category, charged, "
	"message, speedup, judge_s, cases_total, cases_passed, finished_at, run_id, env, "
	"device, rid FROM a WHERE rn = 1 ORDER BY model, task, task_key, length(attempt), "
	"attempt, attempt_key";

/* A string of an attempt's env (its node, GPU, driver), bounded; null
 * when the env (NULL in a store of before, or not an object) lacks it. */
static json_t *env_str(struct ctx *c, const json_t *env, const char *key)
{
	const char *s = json_string_value(json_object_get(env, key));
	char *clean;
	json_t *j;

	if (!s)
		return json_null();
	clean = kj__text_cleans(s, TEXT_MAX);
	if (!clean) {
		c->oom = 1;
		return NULL;
	}
	j = json_string(clean);
	free(clean);
	return j;
}

/* One more attempt of m whose speedup enters the figures, measured on
 * gpu (a GPU's name, "cpu" or "unknown"). */
static void count_gpu(struct ctx *c, struct model *m, const char *gpu)
{
	const json_t *n;

	if (!m->gpus && !(m->gpus = json_object())) {
		c->oom = 1;
		return;
	}
	n = json_object_get(m->gpus, gpu);
	set(c, m->gpus, gpu, json_integer(n ? json_integer_value(n) + 1 : 1));
}

/* One more attempt of m from run rid. */
static void count_run(struct ctx *c, struct model *m, long long rid)
{
	const json_t *n;
	char key[24];

	if (!m->runs && !(m->runs = json_object())) {
		c->oom = 1;
		return;
	}
	snprintf(key, sizeof(key), "%lld", rid);
	n = json_object_get(m->runs, key);
	set(c, m->runs, key, json_integer(n ? json_integer_value(n) + 1 : 1));
}

/* The anti-cheat layer a pass that is not clean failed, from what the
 * judge wrote (lib/eval/judge.c: its error type, else its category):
 * "static", "disabled" (its kernels disabled, it still passed),
 * "profile" (the profiler saw none of its kernels), or "unknown". */
static const char *layer_of(const char *error_type, const char *cat)
{
	switch (error_type ? kj_etype_from_name(error_type) : -1) {
	case KJ_ET_STATIC_CHECK:
		return "static";
	case KJ_ET_KERNELS_NOT_USED:
		return "disabled";
	case KJ_ET_NO_OWN_KERNEL:
		return "profile";
	default:
		return cat && !strcmp(cat, kj_category_name(KJ_CAT_STATIC)) ? "static" : "unknown";
	}
}

static void count_category(struct model *m, const char *cat, int clean)
{
	size_t i;

	if (clean)
		return;
	for (i = 0; cat && i < N_CAT; i++)
		if (!strcmp(cat, cats[i]))
			break;
	m->cat[cat ? i : N_CAT]++;
	{
		const char *g = cat && i < N_CAT ? cat_group[i] : "other";
		size_t j;

		for (j = 0; j < N_GROUP; j++)
			if (!strcmp(g, groups[j]))
				m->group[j]++;
	}
}

/*
 * The attempt of st's row holds a value no judge writes (bad): it is left
 * out of the figures, and named in c->left_out.
 */
static void leave_out(struct ctx *c, sqlite3_stmt *st, const struct kj__store_bad *bad)
{
	json_t *o = json_object();

	if (!o) {
		c->oom = 1;
		return;
	}
	set(c, o, "attempt_key", col_text(c, st, 0));
	set(c, o, "model", col_text(c, st, 3));
	set(c, o, "task", col_text(c, st, 2));
	set(c, o, "attempt", attempt_label(c, st, 4));
	set(c, o, "column", json_string(bad->column));
	set(c, o, "case_idx", bad->case_idx >= 0 ? json_integer(bad->case_idx) : json_null());
	set(c, o, "value", json_string(bad->value));
	set(c, o, "must_be", json_string(bad->want));
	push(c, c->left_out, o);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* *sum += v, unless that passes what a long long holds (*overflow set). */
static void add_count(long long *sum, long long v, int *overflow)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*overflow = 1;
}

static int load_attempts(struct ctx *c, long long run_id, json_t *list)
{
	sqlite3_stmt *st = NULL, *tst = NULL, *cst = NULL, *sst = NULL;
	struct kj__store_checker ck;
	long long *bad_rows = NULL;
	size_t n_bad = 0;
	int rc, ck_open = 0;

	/* The attempts holding a value no judge writes, found in one scan;
	 * the checker says what is wrong with each of them alone. */
	rc = kj__store_bad_rowids(c->db, "main", SIZE_MAX, &bad_rows, &n_bad, c->err);
	if (rc == KJ_OK && n_bad && (rc = kj__store_checker_open(&ck, c->db, "main", c->err)) ==
	    KJ_OK)
		ck_open = 1;
	if (rc != KJ_OK) {
		free(bad_rows);
		return rc;
	}
	rc = sqlite3_prepare_v2(c->db, attempts_sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(c->db, "SELECT speedup FROM timings WHERE attempt_key = ? "
					"ORDER BY case_idx", -1, &tst, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(c->db, "SELECT phase, case_idx, params, status, error_type, "
					"category, message FROM case_results WHERE attempt_key = ? "
					"ORDER BY CASE phase WHEN 'verify' THEN 0 WHEN 'benchmark' "
					"THEN 1 ELSE 2 END, case_idx", -1, &cst, NULL);
	/* A store of before version 4 has no speed of light: unknown. */
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(c->db, c->has_sol
					? "SELECT impl_ms, ref_ms, sol_ms FROM timings WHERE "
					  "attempt_key = ? ORDER BY case_idx"
					: "SELECT impl_ms, ref_ms, NULL FROM timings WHERE "
					  "attempt_key = ? ORDER BY case_idx", -1, &sst, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = bind_baseline(st);
	if (rc != SQLITE_OK) {
		rc = fail(c, rc, "metrics: the attempts");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->oom) {
		const char *akey = (const char *)sqlite3_column_text(st, 0);
		const char *tkey = (const char *)sqlite3_column_text(st, 1);
		const char *mname = (const char *)sqlite3_column_text(st, 3);
		const char *status = (const char *)sqlite3_column_text(st, 9);
		const char *cat = (const char *)sqlite3_column_text(st, 12);
		const char *device = (const char *)sqlite3_column_text(st, 22);
		int passed, clean, on_cpu = device && !strcmp(device, "cpu");
		double speedup = NAN, sol = NAN;
		long long used = 0, sol_cases = 0;
		json_t *rec, *full, *cases = NULL, *idx, *env, *gpu, *w;
		struct kj__store_bad bad;
		struct model *m;
		long long rid;
		size_t oi;

		/* Checked first: a missing key or model is a bad row too. */
		rid = sqlite3_column_int64(st, 23);
		if (n_bad && bsearch(&rid, bad_rows, n_bad, sizeof(*bad_rows), cmp_ll)) {
			rc = kj__store_checker_run(&ck, rid, sqlite3_column_type(st, 0) ==
						   SQLITE_TEXT ? akey : NULL, &bad, c->err);
			if (rc < 0)
				goto out;
			if (rc == 1) {
				leave_out(c, st, &bad);
				continue;
			}
		}
		if (!akey || !tkey || !mname) {
			c->oom = 1;
			break;
		}
		if ((w = json_object_get(c->weak_index, tkey)) != NULL)
			set(c, w, "attempts", json_integer(json_integer_value(
				json_object_get(w, "attempts")) + 1));
		idx = json_object_get(c->op_index, tkey);
		if (!idx)
			continue; /* cannot be: the query joins on the suite */
		oi = (size_t)json_integer_value(idx);
		m = model_get(c, mname);
		if (!m) {
			c->oom = 1;
			break;
		}
		passed = status && !strcmp(status, "pass");
		clean = passed && sqlite3_column_type(st, 10) != SQLITE_NULL &&
			sqlite3_column_int64(st, 10) == 1;
		if (passed) {
			if (sqlite3_column_type(st, 15) != SQLITE_NULL)
				speedup = sqlite3_column_double(st, 15);
			if (!isfinite(speedup) || speedup <= 0)
				speedup = NAN;
			rc = timed_speedup(c, tst, akey, &speedup, &used);
			if (rc == KJ_OK)
				rc = attempt_sol(c, sst, akey, &sol, &sol_cases);
			if (rc != KJ_OK)
				goto out;
		}
		m->n_att++;
		m->n[oi]++;
		if (passed) {
			m->n_pass++;
			m->pass[oi] = 1;
		}
		/* Where it ran: the GPU of the worker's hello, unless the
		 * attempt was judged on the CPU of a machine that has one. */
		env = col_json(c, st, 21);
		gpu = on_cpu ? json_null() : env_str(c, env, "device_name");
		if (!gpu) {
			json_decref(env);
			c->oom = 1;
			break;
		}
		if (clean) {
			m->n_clean++;
			m->c[oi]++;
			if (isfinite(speedup) && speedup > m->best[oi])
				m->best[oi] = speedup;
			if (!isnan(sol)) {
				m->sol_sum += sol;
				m->sol_n++;
			}
			/* Every clean speedup is a candidate for its operator's
			 * best: all of them enter the figures. */
			if (isfinite(speedup))
				count_gpu(c, m, on_cpu ? "cpu" : json_is_string(gpu)
							 ? json_string_value(gpu) : "unknown");
		}
		count_category(m, cat, clean);
		if (sqlite3_column_type(st, 6) == SQLITE_NULL ||
		    sqlite3_column_type(st, 7) == SQLITE_NULL)
			m->tokens_missing++;
		if (sqlite3_column_type(st, 6) == SQLITE_NULL &&
		    sqlite3_column_type(st, 7) == SQLITE_NULL)
			m->tokens_none++;
		count_run(c, m, sqlite3_column_int64(st, 20));
		/* Each at most 2^53 (checked): only the sum can overflow. */
		add_count(&m->tokens, sqlite3_column_int64(st, 6), &m->tokens_overflow);
		add_count(&m->tokens, sqlite3_column_int64(st, 7), &m->tokens_overflow);
		if (sqlite3_column_type(st, 8) == SQLITE_NULL)
			m->runtime_missing++;
		else
			m->runtime_s += sqlite3_column_double(st, 8);
		m->judge_s += sqlite3_column_double(st, 16);

		rec = json_object();
		if (!rec) {
			c->oom = 1;
			break;
		}
		set(c, rec, "task", col_text(c, st, 2));
		set(c, rec, "task_key", col_text(c, st, 1));
		set(c, rec, "model", json_string(m->name));
		set(c, rec, "attempt", attempt_label(c, st, 4));
		set(c, rec, "round", col_int(st, 5));
		set(c, rec, "status", json_string(passed ? "pass" : "fail"));
		set(c, rec, "verdict", col_text(c, st, 9));
		set(c, rec, "clean", json_boolean(clean));
		set(c, rec, "error_type", col_text(c, st, 11));
		set(c, rec, "category", col_text(c, st, 12));
		set(c, rec, "charged", col_text(c, st, 13));
		set(c, rec, "message", col_text(c, st, 14));
		set(c, rec, "not_clean_layer", passed && !clean
			? json_string(layer_of((const char *)sqlite3_column_text(st, 11), cat))
			: json_null());
		set(c, rec, "speedup", passed ? num(speedup) : json_null());
		set(c, rec, "speedup_recorded", sqlite3_column_type(st, 15) == SQLITE_NULL
							? json_null()
							: num(sqlite3_column_double(st, 15)));
		set(c, rec, "timed_cases", json_integer(used));
		set(c, rec, "sol_score", isnan(sol) ? json_null() : num(sol));
		set(c, rec, "sol_cases", json_integer(sol_cases));
		set(c, rec, "prompt_tokens", col_int(st, 6));
		set(c, rec, "completion_tokens", col_int(st, 7));
		set(c, rec, "generation_s", sqlite3_column_type(st, 8) == SQLITE_NULL
						    ? json_null()
						    : num(sqlite3_column_double(st, 8)));
		set(c, rec, "judge_s", sqlite3_column_type(st, 16) == SQLITE_NULL
					       ? json_null()
					       : num(sqlite3_column_double(st, 16)));
		set(c, rec, "cases_total", col_int(st, 17));
		set(c, rec, "cases_passed", col_int(st, 18));
		set(c, rec, "finished_at", col_text(c, st, 19));
		set(c, rec, "run_id", col_int(st, 20));
		set(c, rec, "node", env_str(c, env, "node"));
		set(c, rec, "gpu", gpu);
		set(c, rec, "driver", env_str(c, env, "driver"));
		json_decref(env);
		rc = load_cases(c, cst, akey, &cases);
		if (rc != KJ_OK) {
			json_decref(cases);
			json_decref(rec);
			goto out;
		}
		full = json_copy(rec);
		if (full)
			set(c, full, "cases", cases);
		else
			json_decref(cases);
		push(c, list, rec);
		if (!m->recs[oi] && !(m->recs[oi] = json_array()))
			c->oom = 1;
		if (m->recs[oi])
			push(c, m->recs[oi], full);
		else
			json_decref(full);
	}
	if (c->oom)
		rc = SQLITE_DONE;
	rc = step_done(c, st, rc, "metrics: the attempts");
out:
	if (ck_open)
		kj__store_checker_close(&ck);
	free(bad_rows);
	sqlite3_finalize(st);
	sqlite3_finalize(tst);
	sqlite3_finalize(cst);
	sqlite3_finalize(sst);
	return rc;
}

/* What every rate is a share of, said in the report (docs/metrics.md). */
static json_t *denominators(json_int_t n_ops)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s}", "operators", n_ops,
		"operators_are", "the tasks of the latest run's suite, less those whose own "
		"reference fails its oracle; for a suite of specs, the translation directions "
		"in the study (--api) that a translation attempts and that ran here",
		"accuracy", "operators with a pass / operators",
		"clean_pass_rate", "operators with a clean pass / operators",
		"pass_at_k", "mean over the operators with at least k attempts (the count beside it)",
		"fast_p", "operators whose best clean speedup is above p / operators",
		"attempt_pass_rate", "passes / the model's attempts");
}

/* The run ids of m's attempts counted, ascending. */
static json_t *model_runs(struct ctx *c, const struct model *m)
{
	json_t *a = json_array(), *v;
	const char *key;
	size_t i, j;

	if (!a) {
		c->oom = 1;
		return NULL;
	}
	json_object_foreach(m->runs, key, v)
		push(c, a, json_integer((json_int_t)strtoll(key, NULL, 10)));
	/* Insertion sort: a model's attempts come from a few runs. */
	for (i = 1; i < json_array_size(a); i++)
		for (j = i; j > 0 && json_integer_value(json_array_get(a, j - 1)) >
				     json_integer_value(json_array_get(a, j)); j--) {
			json_t *x = json_incref(json_array_get(a, j));

			json_array_set(a, j, json_array_get(a, j - 1));
			json_array_set_new(a, j - 1, x);
		}
	return a;
}

/* One model's figures. */
static json_t *model_figures(struct ctx *c, struct model *m)
{
	json_t *o = json_object(), *pk = json_object(), *pko = json_object();
	json_t *fp = json_object(), *fpc = json_object(), *fpn = json_object();
	json_t *cat = json_object(), *grp = json_object();
	long long n_ops = (long long)c->n_ops, solved = 0, solved_clean = 0, tried = 0;
	double *logs = malloc((c->n_ops + 1) * sizeof(double));
	size_t i, j, n_sp = 0;
	int no_tokens;

	if (!o || !pk || !pko || !fp || !fpc || !fpn || !cat || !grp || !logs) {
		c->oom = 1;
		json_decref(o);
		json_decref(pk);
		json_decref(pko);
		json_decref(fp);
		json_decref(fpc);
		json_decref(fpn);
		json_decref(cat);
		json_decref(grp);
		free(logs);
		return NULL;
	}
	for (i = 0; i < c->n_ops; i++) {
		solved += m->pass[i];
		solved_clean += m->c[i] > 0;
		tried += m->n[i] > 0;
		if (m->best[i] > 0)
			logs[n_sp++] = m->best[i];
	}
	set(c, o, "operators", json_integer(n_ops));
	set(c, o, "operators_attempted", json_integer(tried));
	set(c, o, "attempts", json_integer(m->n_att));
	set(c, o, "attempts_passed", json_integer(m->n_pass));
	set(c, o, "attempts_clean", json_integer(m->n_clean));
	set(c, o, "solved", json_integer(solved));
	set(c, o, "solved_clean", json_integer(solved_clean));
	set(c, o, "accuracy", rate(solved, n_ops));
	set(c, o, "accuracy_ci", wilson(solved, n_ops));
	set(c, o, "clean_pass_rate", rate(solved_clean, n_ops));
	set(c, o, "clean_pass_rate_ci", wilson(solved_clean, n_ops));
	set(c, o, "attempt_pass_rate", rate(m->n_pass, m->n_att));
	set(c, o, "attempt_pass_rate_ci", wilson(m->n_pass, m->n_att));
	for (j = 0; j < c->opt->n_k; j++) {
		double sum = 0;
		long long nk = 0;
		char key[16];

		for (i = 0; i < c->n_ops; i++) {
			if (m->n[i] < c->opt->k[j])
				continue;
			sum += pass_at_k(m->n[i], m->c[i], c->opt->k[j]);
			nk++;
		}
		/* Every k asked for is in the JSON: null where no operator has
		 * k attempts (the estimator is undefined there). */
		snprintf(key, sizeof(key), "%d", c->opt->k[j]);
		set(c, pk, key, nk ? json_real(sum / (double)nk) : json_null());
		set(c, pko, key, json_integer(nk));
	}
	set(c, o, "pass_at_k", pk);
	set(c, o, "pass_at_k_operators", pko);
	for (j = 0; j < c->opt->n_p; j++) {
		long long k = 0;
		char key[32];

		kj_metrics_p_key(c->opt->p[j], key, sizeof(key));
		for (i = 0; i < c->n_ops; i++)
			k += m->best[i] > c->opt->p[j];
		set(c, fp, key, rate(k, n_ops));
		set(c, fpc, key, wilson(k, n_ops));
		set(c, fpn, key, json_integer(k));
	}
	set(c, o, "fast_p", fp);
	set(c, o, "fast_p_ci", fpc);
	set(c, o, "fast_p_count", fpn);
	set(c, o, "speedup", n_sp ? num(geomean(logs, n_sp)) : json_null());
	set(c, o, "speedup_operators", json_integer((json_int_t)n_sp));
	/* The mean of the clean attempts' SOL-ExecBench scores, over those
	 * that have one (sol_score_attempts). */
	set(c, o, "sol_score", m->sol_n ? num(m->sol_sum / (double)m->sol_n) : json_null());
	set(c, o, "sol_score_attempts", json_integer(m->sol_n));
	set(c, o, "runs", model_runs(c, m));
	set(c, o, "gpu_models", m->gpus ? m->gpus : json_object());
	m->gpus = NULL;
	free(logs);
	/* A model none of whose attempts has token counts (or generation
	 * times) has no such figure: null, printed "-", never 0. */
	no_tokens = m->tokens_overflow || m->tokens_none == m->n_att;
	set(c, o, "tokens_total", no_tokens ? json_null() : json_integer(m->tokens));
	set(c, o, "tokens_missing", json_integer(m->tokens_missing));
	set(c, o, "tokens_per_success", solved_clean && !no_tokens
						? num((double)m->tokens / (double)solved_clean)
						: json_null());
	/* Sums of finite times can still pass what a double holds. */
	set(c, o, "runtime_s", m->runtime_missing == m->n_att ? json_null() : num(m->runtime_s));
	set(c, o, "runtime_missing", json_integer(m->runtime_missing));
	set(c, o, "judge_s", num(m->judge_s));
	for (j = 0; j < N_CAT; j++)
		set(c, cat, cats[j], json_integer(m->cat[j]));
	set(c, cat, "unknown", json_integer(m->cat[N_CAT]));
	set(c, o, "categories", cat);
	{
		long long total = 0;

		for (j = 0; j < N_GROUP; j++) {
			set(c, grp, groups[j], json_integer(m->group[j]));
			total += m->group[j];
		}
		set(c, grp, "total", json_integer(total));
	}
	set(c, o, "failures", grp);
	return o;
}

/* The warnings of the report: today one, when the speedups that enter the
 * figures (of one model, or across the models) were measured on more than
 * one GPU model.  CPU and unknown devices are not GPU models. */
static json_t *warnings(struct ctx *c, const json_t *models)
{
	json_t *list = json_array(), *tot = json_object(), *m, *n;
	const char *name, *gpu;
	struct kj__buf b;
	size_t k, count;
	int bad;

	if (!list || !tot) {
		c->oom = 1;
		json_decref(list);
		json_decref(tot);
		return NULL;
	}
	json_object_foreach((json_t *)(uintptr_t)models, name, m)
		json_object_foreach(json_object_get(m, "gpu_models"), gpu, n) {
			const json_t *t = json_object_get(tot, gpu);

			if (strcmp(gpu, "cpu") && strcmp(gpu, "unknown"))
				set(c, tot, gpu, json_integer(json_integer_value(n) +
							      (t ? json_integer_value(t) : 0)));
		}
	count = json_object_size(tot);
	if (count < 2 || c->oom) {
		json_decref(tot);
		return list;
	}
	kj__buf_init(&b, 1u << 26);
	bad = kj__buf_addf(&b, "speedups measured on different GPU models: ") != 0;
	/* The most attempts first, then by name: a stable sentence. */
	for (k = 0; k < count; k++) {
		const char *best = NULL;
		json_int_t most = -1;

		json_object_foreach(tot, gpu, n)
			if (json_integer_value(n) > most ||
			    (json_integer_value(n) == most && strcmp(gpu, best) < 0)) {
				best = gpu;
				most = json_integer_value(n);
			}
		bad |= kj__buf_addf(&b, "%s%s (%lld attempt%s)", k ? ", " : "", best,
				    (long long)most, most == 1 ? "" : "s") != 0;
		json_object_del(tot, best);
	}
	bad |= kj__buf_addf(&b, "; compare them with care") != 0;
	{
		/* The names are bounded (TEXT_MAX each): 64 MiB hold more
		 * GPU models than a store of attempts can name. */
		char *text = bad || b.dropped ? NULL : kj__buf_take(&b);

		push(c, list, text ? json_string(text) : NULL);
		free(text);
	}
	kj__buf_release(&b);
	json_decref(tot);
	return list;
}

/* The warning of the attempts left out (c->left_out), after the others:
 * how many, and the first of them. */
static void left_out_warning(struct ctx *c, json_t *list)
{
	size_t n = json_array_size(c->left_out);
	const json_t *f = json_array_get(c->left_out, 0);
	const char *key = json_string_value(json_object_get(f, "attempt_key"));
	const char *model = json_string_value(json_object_get(f, "model"));
	const char *task = json_string_value(json_object_get(f, "task"));
	char *text = NULL;

	if (!n || !list)
		return;
	if (asprintf(&text, "%zu attempt%s of the store %s left out of every figure: %s "
		     "no judge writes (the first: attempt %s of model %s, task %s: %s is %s, "
		     "not %s); the JSON's left_out lists them", n, n == 1 ? "" : "s",
		     n == 1 ? "is" : "are", n == 1 ? "it holds a value" : "they hold values",
		     key ? key : "(no key)", model ? model : "(none)", task ? task : "(none)",
		     json_string_value(json_object_get(f, "column")),
		     json_string_value(json_object_get(f, "value")),
		     json_string_value(json_object_get(f, "must_be"))) < 0)
		text = NULL;
	push(c, list, text ? json_string(text) : NULL);
	free(text);
}

/* The runs whose attempts enter the figures (every model's), each with
 * its start and settings, ascending: read in the report's transaction. */
static int load_runs(struct ctx *c, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *ids = json_object(), *list = json_array(), *v;
	const char *key;
	size_t k;
	int rc;

	*out = NULL;
	if (!ids || !list) {
		json_decref(ids);
		json_decref(list);
		c->oom = 1;
		return KJ_OK;
	}
	for (k = 0; k < c->n_models; k++)
		json_object_foreach(c->models[k].runs, key, v)
			set(c, ids, key, json_true());
	rc = sqlite3_prepare_v2(c->db, "SELECT run_id, started_at, settings FROM runs ORDER BY "
				"run_id", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		json_decref(ids);
		json_decref(list);
		return fail(c, rc, "metrics: the runs");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->oom) {
		char id[24];
		json_t *o;

		snprintf(id, sizeof(id), "%lld", (long long)sqlite3_column_int64(st, 0));
		if (!json_object_get(ids, id))
			continue;
		if (!(o = json_object())) {
			c->oom = 1;
			break;
		}
		set(c, o, "run_id", json_integer(sqlite3_column_int64(st, 0)));
		set(c, o, "started_at", col_text(c, st, 1));
		set(c, o, "settings", col_json(c, st, 2));
		push(c, list, o);
	}
	if (c->oom)
		rc = SQLITE_DONE;
	rc = step_done(c, st, rc, "metrics: the runs");
	sqlite3_finalize(st);
	json_decref(ids);
	if (rc != KJ_OK)
		json_decref(list);
	else
		*out = list;
	return rc;
}

/* Each leaf of settings v as "a.b" -> its compact JSON text, into flat. */
static void flatten(struct ctx *c, const char *prefix, const json_t *v, json_t *flat)
{
	const char *key;
	json_t *x;

	if (json_is_object(v) && json_object_size(v)) {
		json_object_foreach((json_t *)(uintptr_t)v, key, x) {
			char *name = NULL;

			if (asprintf(&name, "%s%s%s", prefix, *prefix ? "." : "", key) < 0) {
				c->oom = 1;
				return;
			}
			flatten(c, name, x, flat);
			free(name);
		}
		return;
	}
	{
		int oom = 0;
		char *t = kj__json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY, &oom);

		set(c, flat, *prefix ? prefix : "settings", t ? json_string(t) : NULL);
		free(t);
	}
}

/* The keys of the flattened settings flats[] that differ: some of them
 * lacks the key or holds another value.  Into keys (key -> true). */
static void differing(struct ctx *c, const json_t *flats, json_t *keys)
{
	size_t i, j, n = json_array_size(flats);
	const char *key;
	json_t *v;

	for (i = 0; i < n && !c->oom; i++)
		json_object_foreach(json_array_get(flats, i), key, v)
			for (j = 0; j < n; j++)
				if (!json_equal(v, json_object_get(json_array_get(flats, j), key)))
					set(c, keys, key, json_true());
}

/* How many runs a warning names, at most, before "and N more". */
#define RUNS_NAMED 8

/*
 * The warning of runs of different settings: when the attempts counted
 * come from runs whose settings (runs.settings, every setting that changes
 * a verdict) differ, each run is named with the settings that differ, so
 * that a re-run with other flags never changes a model's figures unseen.
 */
static void settings_warning(struct ctx *c, const json_t *runs, json_t *list)
{
	json_t *flats = json_array(), *keys = json_object(), *v;
	const char *key;
	struct kj__buf b;
	size_t i, n = json_array_size(runs);
	int bad = 0, first;

	if (!flats || !keys || n < 2) {
		c->oom |= !flats || !keys;
		json_decref(flats);
		json_decref(keys);
		return;
	}
	for (i = 0; i < n; i++) {
		json_t *f = json_object();

		if (f)
			flatten(c, "", json_object_get(json_array_get(runs, i), "settings"), f);
		push(c, flats, f);
	}
	differing(c, flats, keys);
	if (c->oom || !json_object_size(keys)) {
		json_decref(flats);
		json_decref(keys);
		return;
	}
	kj__buf_init(&b, 1u << 20);
	bad |= kj__buf_addf(&b, "the figures come from runs of different settings:") != 0;
	for (i = 0; i < n && i < RUNS_NAMED; i++) {
		const json_t *f = json_array_get(flats, i);

		bad |= kj__buf_addf(&b, "%s run %lld has", i ? ";" : "",
				    (long long)json_integer_value(json_object_get(
					    json_array_get(runs, i), "run_id"))) != 0;
		first = 1;
		json_object_foreach(keys, key, v) {
			const char *val = json_string_value(json_object_get(f, key));

			bad |= kj__buf_addf(&b, "%s %s %s", first ? "" : ",", key,
					    val ? val : "unset") != 0;
			first = 0;
		}
	}
	if (n > RUNS_NAMED)
		bad |= kj__buf_addf(&b, "; and %zu more runs (the JSON's runs lists them)",
				    n - RUNS_NAMED) != 0;
	bad |= kj__buf_addf(&b, "; each model's runs say which its figures come from") != 0;
	{
		char *text = bad || b.dropped ? NULL : kj__buf_take(&b);

		push(c, list, text ? json_string(text) : NULL);
		free(text);
	}
	kj__buf_release(&b);
	json_decref(flats);
	json_decref(keys);
}

/*
 * The attempts counted that replace an earlier judgement of the same
 * candidate (model, task, attempt label) by a run of other settings: a
 * re-run with other flags changes a model's figures, and the report says
 * so.  Per (model, new run, old run): [model, new run, old run, how many,
 * new settings, old settings], into *out.
 */
static const char replaced_sql[] =
	"WITH a AS (SELECT model, run_id, row_number() OVER w AS rn, first_value(run_id) OVER w "
	"AS winner FROM attempts WHERE state = 'done' AND task_key IN (SELECT task_key FROM "
	"suite_tasks WHERE run_id = ?) WINDOW w AS (PARTITION BY model, task_key, attempt "
	"ORDER BY finished_at DESC, run_id DESC, attempt_key DESC)) "
	"SELECT model, winner, run_id, count(*), (SELECT settings FROM runs r WHERE r.run_id = "
	"winner), (SELECT settings FROM runs r WHERE r.run_id = a.run_id) FROM a WHERE rn > 1 "
	"AND run_id != winner GROUP BY model, winner, run_id ORDER BY model, winner, run_id";

static int load_replaced(struct ctx *c, long long run_id, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *list = json_array();
	int rc;

	*out = NULL;
	if (!list) {
		c->oom = 1;
		return KJ_OK;
	}
	rc = sqlite3_prepare_v2(c->db, replaced_sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(st);
		json_decref(list);
		return fail(c, rc, "metrics: the attempts judged again");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !c->oom) {
		json_t *r = json_array();

		if (!r) {
			c->oom = 1;
			break;
		}
		push(c, r, col_text(c, st, 0));
		push(c, r, json_integer(sqlite3_column_int64(st, 1)));
		push(c, r, json_integer(sqlite3_column_int64(st, 2)));
		push(c, r, json_integer(sqlite3_column_int64(st, 3)));
		push(c, r, col_json(c, st, 4));
		push(c, r, col_json(c, st, 5));
		push(c, list, r);
	}
	if (c->oom)
		rc = SQLITE_DONE;
	rc = step_done(c, st, rc, "metrics: the attempts judged again");
	sqlite3_finalize(st);
	if (rc != KJ_OK)
		json_decref(list);
	else
		*out = list;
	return rc;
}

/* At most this many replacements are named, the rest counted. */
#define REPLACED_NAMED 8

static void replaced_warning(struct ctx *c, const json_t *rep, json_t *list)
{
	struct kj__buf b;
	size_t i, named = 0, more = 0;
	int bad = 0;

	kj__buf_init(&b, 1u << 20);
	for (i = 0; i < json_array_size(rep) && !c->oom; i++) {
		const json_t *r = json_array_get(rep, i);
		json_t *flats = json_array(), *keys = json_object(), *fa = json_object(),
		       *fb = json_object(), *v;
		const char *key;
		long long n = (long long)json_integer_value(json_array_get(r, 3));
		int first = 1;

		if (!flats || !keys || !fa || !fb) {
			c->oom = 1;
		} else {
			flatten(c, "", json_array_get(r, 4), fa);
			flatten(c, "", json_array_get(r, 5), fb);
			push(c, flats, json_incref(fa));
			push(c, flats, json_incref(fb));
			differing(c, flats, keys);
		}
		if (!c->oom && json_object_size(keys) && named++ < REPLACED_NAMED) {
			bad |= kj__buf_addf(&b, "%s%s's figures count %lld attempt%s judged again by "
					    "run %lld under other settings than run %lld's, which they "
					    "replace:", b.len ? "; " : "",
					    json_string_value(json_array_get(r, 0)), n,
					    n == 1 ? "" : "s",
					    (long long)json_integer_value(json_array_get(r, 1)),
					    (long long)json_integer_value(json_array_get(r, 2))) != 0;
			json_object_foreach(keys, key, v) {
				const char *now = json_string_value(json_object_get(fa, key));
				const char *was = json_string_value(json_object_get(fb, key));

				bad |= kj__buf_addf(&b, "%s %s %s (was %s)", first ? "" : ",", key,
						    now ? now : "unset", was ? was : "unset") != 0;
				first = 0;
			}
		} else if (!c->oom && json_object_size(keys)) {
			more++;
		}
		json_decref(flats);
		json_decref(keys);
		json_decref(fa);
		json_decref(fb);
	}
	if (more)
		bad |= kj__buf_addf(&b, "; and %zu more", more) != 0;
	if (b.len && !c->oom) {
		char *text = bad || b.dropped ? NULL : kj__buf_take(&b);

		push(c, list, text ? json_string(text) : NULL);
		free(text);
	}
	kj__buf_release(&b);
}

/* Each operator's record gets every model's figures and attempts. */
static void fill_ops(struct ctx *c)
{
	size_t i, k;

	for (i = 0; i < c->n_ops; i++) {
		json_t *op = json_array_get(c->ops, i);
		json_t *ms = json_object_get(op, "models");

		for (k = 0; k < c->n_models; k++) {
			struct model *m = &c->models[k];
			json_t *o = json_object();

			if (!o) {
				c->oom = 1;
				return;
			}
			set(c, o, "attempts", json_integer(m->n[i]));
			set(c, o, "clean_passes", json_integer(m->c[i]));
			set(c, o, "passed", json_boolean(m->pass[i]));
			set(c, o, "solved_clean", json_boolean(m->c[i] > 0));
			set(c, o, "best_speedup", m->best[i] > 0 ? json_real(m->best[i])
								 : json_null());
			if (m->recs[i]) {
				set(c, o, "records", m->recs[i]);
				m->recs[i] = NULL;
			} else {
				set(c, o, "records", json_array());
			}
			if (ms)
				set(c, ms, m->name, o);
			else
				json_decref(o);
		}
	}
}

void kj_metrics_opts_default(struct kj_metrics_opts *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->n_k = sizeof(default_ks) / sizeof(default_ks[0]);
	o->n_p = sizeof(default_ps) / sizeof(default_ps[0]);
	for (i = 0; i < o->n_k; i++)
		o->k[i] = default_ks[i];
	for (i = 0; i < o->n_p; i++)
		o->p[i] = default_ps[i];
}

char *kj_metrics_p_key(double p, char *buf, size_t size)
{
	int prec;

	/* The shortest form that reads back as p: 0.5, not 0.50000000000000000. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, p);
		if (strtod(buf, NULL) == p)
			break;
	}
	return buf;
}

/* A comma-separated list of values, each digits[.digits] (whole numbers
 * for k), into o's k or p: ascending, each once. */
static int parse_list(const char *list, const char *what, int integers,
		      struct kj_metrics_opts *o, struct kj_error *err)
{
	const char *s = list;
	size_t n = 0, i, j;
	double v[KJ_METRICS_LIST_MAX];

	if (!list || !*list)
		return kj_error_set(err, KJ_EINVAL, "%s: an empty list", what);
	for (;;) {
		char *end, *after = NULL;
		double x;

		if (n == KJ_METRICS_LIST_MAX)
			return kj_error_set(err, KJ_EINVAL, "%s: more than %d values", what,
					    KJ_METRICS_LIST_MAX);
		/* strtod alone would take "inf", "nan", hex and leading
		 * blanks: only decimal digits and one point are a value. */
		end = (char *)(uintptr_t)s;
		while ((*end >= '0' && *end <= '9') || (*end == '.' && !integers))
			end++;
		x = end > s ? strtod(s, &after) : (double)NAN;
		if (end == s || after != end || (*end && *end != ',') || !isfinite(x) ||
		    (integers && (x < 1 || x > 1000000)) || (!integers && x > 1e9)) {
			size_t len = strcspn(s, ",");

			return kj_error_set(err, KJ_EINVAL, "%s: '%.*s' is not %s", what,
					    (int)(len > 40 ? 40 : len), s,
					    integers ? "a whole number from 1 to 1000000"
						     : "a number from 0 to 1e9");
		}
		v[n++] = x;
		if (!*end)
			break;
		s = end + 1;
	}
	/* Ascending, each once: the order of the report's columns. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (i = j = 0; i < n; i++)
		if (!j || v[i] != v[j - 1])
			v[j++] = v[i];
	for (i = 0; i < j; i++) {
		if (integers)
			o->k[i] = (int)v[i];
		else
			o->p[i] = v[i];
	}
	if (integers)
		o->n_k = j;
	else
		o->n_p = j;
	return KJ_OK;
}

int kj_metrics_parse_k(const char *list, struct kj_metrics_opts *o, struct kj_error *err)
{
	return parse_list(list, "--k", 1, o, err);
}

int kj_metrics_parse_p(const char *list, struct kj_metrics_opts *o, struct kj_error *err)
{
	return parse_list(list, "--p", 0, o, err);
}

int kj_metrics_compute(struct kj_store *s, json_t **out, struct kj_error *err)
{
	struct kj_metrics_opts o;

	kj_metrics_opts_default(&o);
	return kj_metrics_compute_with(s, &o, out, err);
}

/* The k and p of o, as the JSON's "k" and "p". */
static json_t *opts_json(struct ctx *c, int ps)
{
	json_t *a = json_array();
	size_t i;

	if (!a) {
		c->oom = 1;
		return NULL;
	}
	for (i = 0; i < (ps ? c->opt->n_p : c->opt->n_k); i++)
		push(c, a, ps ? json_real(c->opt->p[i]) : json_integer(c->opt->k[i]));
	return a;
}

int kj_metrics_compute_with(struct kj_store *s, const struct kj_metrics_opts *opt, json_t **out,
			    struct kj_error *err)
{
	struct ctx c;
	json_t *root = NULL, *suite = NULL, *models = NULL, *list = NULL, *warn = NULL;
	json_t *runs = NULL, *ks = NULL, *ps = NULL, *rep = NULL;
	long long run_id = 0;
	size_t i, k;
	int rc;

	*out = NULL;
	if (!s)
		return kj_error_set(err, KJ_EINVAL, "metrics: no store");
	memset(&c, 0, sizeof(c));
	c.opt = opt;
	c.db = kj__store_db(s);
	c.has_sol = kj__store_version(s) >= 5;
	c.err = err;
	c.ops = json_array();
	c.op_index = json_object();
	c.left_out = json_array();
	c.weak_index = json_object();
	c.weak = json_array();
	c.not_proven = json_array();
	models = json_object();
	list = json_array();
	if (!c.ops || !c.op_index || !c.left_out || !models || !list || !c.weak_index || !c.weak ||
	    !c.not_proven) {
		rc = kj_error_set(err, KJ_ENOMEM, "metrics: out of memory");
		goto out;
	}
	/* One snapshot: a writer's commit in between cannot mix two states. */
	rc = sqlite3_exec(c.db, "BEGIN", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = fail(&c, rc, "metrics: starting a read");
		goto out;
	}
	rc = load_suite(&c, &suite, &run_id);
	/* A store of before version 4, read as it is, holds no audit. */
	if (rc == KJ_OK && run_id && kj__store_has_audits(c.db, "main"))
		rc = kj__store_audits_of_run(c.db, run_id, &c.audits, err);
	if (rc == KJ_OK && !c.oom && run_id)
		rc = load_ops(&c, run_id);
	if (rc == KJ_OK && !c.oom && run_id)
		rc = load_attempts(&c, run_id, list);
	if (rc == KJ_OK && !c.oom)
		rc = load_runs(&c, &runs);
	if (rc == KJ_OK && !c.oom && run_id)
		rc = load_replaced(&c, run_id, &rep);
	if (rc == KJ_OK) {
		int crc = sqlite3_exec(c.db, "COMMIT", NULL, NULL, NULL);

		if (crc != SQLITE_OK)
			rc = fail(&c, crc, "metrics: ending the read");
	}
	if (rc != KJ_OK) {
		sqlite3_exec(c.db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	if (!c.oom) {
		for (k = 0; k < c.n_models; k++)
			set(&c, models, c.models[k].name, model_figures(&c, &c.models[k]));
		fill_ops(&c);
		warn = warnings(&c, models);
		settings_warning(&c, runs, warn);
		replaced_warning(&c, rep, warn);
		left_out_warning(&c, warn);
	}
	if (suite && json_is_object(suite))
		set(&c, suite, "operators", json_integer((json_int_t)c.n_ops));
	if (suite && json_is_object(suite))
		set(&c, suite, "audit", json_pack("{s:b, s:b, s:O, s:O, s:I, s:I}", "recorded",
						  c.audits != NULL, "exclude_weak",
						  c.opt->exclude_weak, "weak", c.weak, "not_proven",
						  c.not_proven, "strong", (json_int_t)c.strong,
						  "unaudited", (json_int_t)c.unaudited));
	if (!c.oom) {
		ks = opts_json(&c, 0);
		ps = opts_json(&c, 1);
		if (!c.oom)
			root = json_pack("{sOsOsOsOsOsOsOsOsOso}", "suite", suite ? suite : json_null(),
					 "warnings", warn, "k", ks, "p", ps, "runs", runs, "models",
					 models, "attempts", list, "operators", c.ops, "left_out",
					 c.left_out, "denominators",
					 denominators((json_int_t)c.n_ops));
		if (!root)
			c.oom = 1;
	}
	if (c.oom) {
		rc = kj_error_set(err, KJ_ENOMEM, "metrics: out of memory");
		json_decref(root);
		root = NULL;
	}
out:
	json_decref(rep);
	json_decref(runs);
	json_decref(ks);
	json_decref(ps);
	json_decref(suite);
	json_decref(models);
	json_decref(list);
	json_decref(warn);
	json_decref(c.ops);
	json_decref(c.op_index);
	json_decref(c.left_out);
	json_decref(c.audits);
	json_decref(c.weak_index);
	json_decref(c.weak);
	json_decref(c.not_proven);
	for (k = 0; k < c.n_models; k++) {
		struct model *m = &c.models[k];

		for (i = 0; m->recs && i <= c.n_ops; i++)
			json_decref(m->recs[i]);
		free(m->name);
		free(m->raw);
		free(m->n);
		free(m->c);
		free(m->pass);
		free(m->best);
		free(m->recs);
		json_decref(m->gpus);
		json_decref(m->runs);
	}
	free(c.models);
	if (rc == KJ_OK)
		*out = root;
	return rc;
}
