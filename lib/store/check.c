/*
 * check.c - what a row of the store may hold (store_internal.h; the table
 * is docs/store.md's "What a row may hold").
 *
 * A store is a file: anything may have written it (a shard of another
 * machine, a hand, a bug).  The values kjudge writes have a range: states
 * and statuses from their lists, times, token counts and speedups finite
 * and not negative, flags 0 or 1.  merge refuses a
 * source holding any other value (nothing of it merged), and the metrics
 * leave such an attempt out, named, instead of failing the study or
 * computing with it.  Both ask the one table below, as SQL: for each
 * table a CASE that gives the index of the first check a row fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_internal.h"
#include "base/text.h"
#include "base/vec.h"
#include "base/banned.h"

/* KJ_STORE_COUNT_MAX (kjudge/store.h), as SQL text: 2^53. */
#define COUNT_MAX "9007199254740992"
/* A REAL past it is infinite (SQLite stores no NaN: it reads back NULL). */
#define FINITE_MAX "1.7976931348623157e308"

#define NOT_TEXT(c) "(typeof(" c ") != 'text')"
#define NOT_COUNT(c) \
	"(typeof(" c ") != 'integer' OR " c " < 0 OR " c " > " COUNT_MAX ")"
/* A finite number (a median the timer's floor was taken from may dip
 * below 0 for a kernel faster than the floor's noise). */
#define NOT_FINITE(c) \
	"(typeof(" c ") NOT IN ('integer', 'real') OR abs(" c ") > " FINITE_MAX ")"
/* A finite number, at least 0 (seconds, a speedup). */
#define NOT_SECONDS(c) \
	"(typeof(" c ") NOT IN ('integer', 'real') OR " c " < 0 OR " c " > " FINITE_MAX ")"
#define NOT_FLAG(c) "(typeof(" c ") != 'integer' OR " c " NOT IN (0, 1))"
#define OR_NULL(c, cond) "(" c " IS NOT NULL AND " cond ")"
#define STATUSES "('pass', 'fail', 'task_error', 'judge_error')"

static const struct kj__store_check attempt_checks[] = {
	{ "attempt_key", "attempt_key IS NULL OR " NOT_TEXT("attempt_key"), "a text key" },
	{ "model", "model IS NULL OR " NOT_TEXT("model"), "a model's name" },
	{ "task_key", "task_key IS NULL OR " NOT_TEXT("task_key"), "a task's key" },
	{ "state", "state IS NULL OR state NOT IN ('running', 'done')", "running or done" },
	{ "status", OR_NULL("status", "status NOT IN " STATUSES),
	  "pass, fail, task_error, judge_error, or null while running" },
	{ "charged", OR_NULL("charged", "charged NOT IN ('none', 'candidate', 'task', 'judge')"),
	  "none, candidate, task, judge or null" },
	{ "clean", OR_NULL("clean", NOT_FLAG("clean")), "0, 1 or null" },
	{ "static_ok", OR_NULL("static_ok", NOT_FLAG("static_ok")), "0, 1 or null" },
	{ "disabled_ok", OR_NULL("disabled_ok", NOT_FLAG("disabled_ok")), "0, 1 or null" },
	{ "profile_ok", OR_NULL("profile_ok", NOT_FLAG("profile_ok")), "0, 1 or null" },
	{ "round", OR_NULL("round", NOT_COUNT("round")), "a whole number from 0 to 2^53, or null" },
	{ "prompt_tokens", OR_NULL("prompt_tokens", NOT_COUNT("prompt_tokens")),
	  "a whole number of tokens from 0 to 2^53, or null" },
	{ "completion_tokens", OR_NULL("completion_tokens", NOT_COUNT("completion_tokens")),
	  "a whole number of tokens from 0 to 2^53, or null" },
	{ "generation_s", OR_NULL("generation_s", NOT_SECONDS("generation_s")),
	  "a finite number of seconds, at least 0, or null" },
	{ "judge_s", OR_NULL("judge_s", NOT_SECONDS("judge_s")),
	  "a finite number of seconds, at least 0, or null" },
	{ "speedup", OR_NULL("speedup", NOT_SECONDS("speedup")),
	  "a finite number, at least 0, or null" },
	{ "cases_total", OR_NULL("cases_total", NOT_COUNT("cases_total")),
	  "a whole number from 0 to 2^53, or null" },
	{ "cases_passed", OR_NULL("cases_passed", NOT_COUNT("cases_passed") " OR cases_passed > "
				  "coalesce(cases_total, cases_passed)"),
	  "a whole number from 0 to cases_total, or null" },
};

static const struct kj__store_check timing_checks[] = {
	{ "impl_ms", OR_NULL("impl_ms", NOT_FINITE("impl_ms")),
	  "a finite number of milliseconds, or null" },
	{ "ref_ms", OR_NULL("ref_ms", NOT_FINITE("ref_ms")),
	  "a finite number of milliseconds, or null" },
	{ "speedup", OR_NULL("speedup", NOT_SECONDS("speedup")),
	  "a finite number, at least 0, or null" },
	{ "impl_samples", OR_NULL("impl_samples", NOT_COUNT("impl_samples")),
	  "a whole number from 0 to 2^53, or null" },
	{ "ref_samples", OR_NULL("ref_samples", NOT_COUNT("ref_samples")),
	  "a whole number from 0 to 2^53, or null" },
};

static const struct kj__store_check case_checks[] = {
	{ "phase", "phase IS NULL OR phase NOT IN ('verify', 'benchmark', 'disabled')",
	  "verify, benchmark or disabled" },
	{ "status", "status IS NULL OR status NOT IN " STATUSES,
	  "pass, fail, task_error or judge_error" },
};

/* A task's audit (audit.c): the verdict and each canary's end from their
 * lists, the reasons a JSON array of sentences. */
static const struct kj__store_check audit_checks[] = {
	{ "task_key", "task_key IS NULL OR " NOT_TEXT("task_key"), "a task's key" },
	{ "audit_key", "audit_key IS NULL OR " NOT_TEXT("audit_key"), "an audit's key" },
	{ "verdict", "verdict IS NULL OR verdict NOT IN ('weak', 'strong', 'not_proven')",
	  "weak, strong or not_proven" },
	{ "reasons", "reasons IS NULL OR " NOT_TEXT("reasons") " OR length(reasons) > 65536 OR "
	  "NOT json_valid(reasons) OR json_type(reasons) != 'array'",
	  "a JSON array of sentences, 64 KiB at most" },
};

static const struct kj__store_check canary_checks[] = {
	{ "canary", "canary IS NULL OR " NOT_TEXT("canary") " OR length(canary) > 64",
	  "a canary's name" },
	{ "outcome", "outcome IS NULL OR outcome NOT IN ('fail', 'pass', 'n/a', 'error', 'skipped')",
	  "fail, pass, n/a, error or skipped" },
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *table;
	const struct kj__store_check *checks;
	size_t n;
} tables[] = {
	{ "attempts", attempt_checks, N_OF(attempt_checks) },
	{ "timings", timing_checks, N_OF(timing_checks) },
	{ "case_results", case_checks, N_OF(case_checks) },
}, audit_tables[] = {
	/* Not an attempt's: the checker (below) reads the tables above only. */
	{ "task_audits", audit_checks, N_OF(audit_checks) },
	{ "audit_canaries", canary_checks, N_OF(canary_checks) },
};

const struct kj__store_check *kj__store_checks(const char *table, size_t *n)
{
	size_t i;

	for (i = 0; i < N_OF(tables); i++)
		if (!strcmp(tables[i].table, table)) {
			*n = tables[i].n;
			return tables[i].checks;
		}
	for (i = 0; i < N_OF(audit_tables); i++)
		if (!strcmp(audit_tables[i].table, table)) {
			*n = audit_tables[i].n;
			return audit_tables[i].checks;
		}
	*n = 0;
	return NULL;
}

char *kj__store_check_sql(const char *table, int value)
{
	const struct kj__store_check *ck;
	struct kj__buf b;
	size_t n, i;
	int bad = 0;

	ck = kj__store_checks(table, &n);
	if (!ck)
		return NULL;
	kj__buf_init(&b, 1u << 20);
	bad |= kj__buf_addf(&b, "CASE") != 0;
	for (i = 0; i < n; i++) {
		if (value)
			bad |= kj__buf_addf(&b, " WHEN %s THEN %s", ck[i].bad, ck[i].column) != 0;
		else
			bad |= kj__buf_addf(&b, " WHEN %s THEN %zu", ck[i].bad, i) != 0;
	}
	bad |= kj__buf_addf(&b, " END") != 0;
	if (bad || b.dropped) {
		kj__buf_release(&b);
		return NULL;
	}
	return kj__buf_take(&b);
}

int kj__store_bad_rowids(sqlite3 *db, const char *schema, size_t limit, long long **out,
			 size_t *n, struct kj_error *err)
{
	char *a = kj__store_check_sql("attempts", 0), *t = kj__store_check_sql("timings", 0);
	char *c = kj__store_check_sql("case_results", 0), *sql = NULL;
	sqlite3_stmt *st = NULL;
	long long *v = NULL;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	/* One scan of each table; the bare names of each CASE are its own
	 * table's (the innermost source). */
	if (a && t && c &&
	    asprintf(&sql, "SELECT rowid FROM \"%s\".attempts WHERE (%s) IS NOT NULL "
			   "OR attempt_key IN (SELECT attempt_key FROM \"%s\".timings WHERE (%s) "
			   "IS NOT NULL) OR attempt_key IN (SELECT attempt_key FROM \"%s\"."
			   "case_results WHERE (%s) IS NOT NULL) ORDER BY rowid",
		     schema, a, schema, t, schema, c) < 0)
		sql = NULL;
	free(a);
	free(t);
	free(c);
	if (!sql)
		return kj_error_set(err, KJ_ENOMEM, "the store's checks: out of memory");
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	while (rc == SQLITE_OK && *n < limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		if (KJ__GROW(v, cap, *n + 1) != KJ_OK) {
			rc = SQLITE_NOMEM;
			break;
		}
		v[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		free(v);
		*n = 0;
		return kj__store_fail(db, rc, err, "the store's checks");
	}
	*out = v;
	return KJ_OK;
}

/* --- the checker ------------------------------------------------------------------ */

/* Release what st holds and clear it. */
static void finalize_all(struct kj__store_checker *ck)
{
	size_t i;

	for (i = 0; i < N_OF(ck->st); i++) {
		sqlite3_finalize(ck->st[i]);
		ck->st[i] = NULL;
	}
}

int kj__store_checker_open(struct kj__store_checker *ck, sqlite3 *db, const char *schema,
			   struct kj_error *err)
{
	size_t i;
	int rc = SQLITE_OK;

	memset(ck, 0, sizeof(*ck));
	ck->db = db;
	for (i = 0; i < N_OF(tables) && rc == SQLITE_OK; i++) {
		char *idx = kj__store_check_sql(tables[i].table, 0);
		char *val = kj__store_check_sql(tables[i].table, 1);
		char *sql = NULL;

		/* The attempt's row by its rowid (its key may be the bad
		 * value); its timings and cases by its key, the first bad one
		 * by case. */
		if (idx && val &&
		    asprintf(&sql, i == 0
				 ? "SELECT i, v, -1 FROM (SELECT %s AS i, %s AS v FROM \"%s\".%s "
				   "WHERE rowid = ?1) WHERE i IS NOT NULL"
				 : "SELECT i, v, k FROM (SELECT %s AS i, %s AS v, case_idx AS k FROM "
				   "\"%s\".%s WHERE attempt_key = ?2) WHERE i IS NOT NULL ORDER BY k "
				   "LIMIT 1", idx, val, schema, tables[i].table) < 0)
			sql = NULL;
		free(idx);
		free(val);
		if (!sql) {
			finalize_all(ck);
			return kj_error_set(err, KJ_ENOMEM, "the store's checks: out of memory");
		}
		rc = sqlite3_prepare_v2(db, sql, -1, &ck->st[i], NULL);
		free(sql);
	}
	if (rc != SQLITE_OK) {
		rc = kj__store_fail(db, rc, err, "the store's checks");
		finalize_all(ck);
		return rc;
	}
	return KJ_OK;
}

void kj__store_checker_close(struct kj__store_checker *ck)
{
	finalize_all(ck);
}

/* A value as a message shows it: a number as it is ("inf", "-1000000"),
 * text quoted and cut, a blob by its size. */
static void show_value(sqlite3_stmt *st, int i, char *buf, size_t size)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		snprintf(buf, size, "null");
		break;
	case SQLITE_INTEGER:
		snprintf(buf, size, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		snprintf(buf, size, "%.17g", sqlite3_column_double(st, i));
		break;
	case SQLITE_BLOB:
		snprintf(buf, size, "a blob of %d bytes", sqlite3_column_bytes(st, i));
		break;
	default: {
		char brief[48];

		snprintf(buf, size, "'%s'", kj__text_brief((const char *)sqlite3_column_text(st, i),
							   40, brief, sizeof(brief)));
	}
	}
}

int kj__store_checker_run(struct kj__store_checker *ck, long long rowid, const char *key,
			  struct kj__store_bad *bad, struct kj_error *err)
{
	size_t t;

	memset(bad, 0, sizeof(*bad));
	bad->case_idx = -1;
	for (t = 0; t < N_OF(tables); t++) {
		sqlite3_stmt *st = ck->st[t];
		int rc;

		if (t > 0 && !key)
			break;
		sqlite3_reset(st);
		rc = t == 0 ? sqlite3_bind_int64(st, 1, rowid)
			    : sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			long long i = sqlite3_column_int64(st, 0);

			if (i < 0 || (size_t)i >= tables[t].n)
				i = 0;
			snprintf(bad->column, sizeof(bad->column), "%s%s%s",
				 t ? tables[t].table : "", t ? "." : "", tables[t].checks[i].column);
			show_value(st, 1, bad->value, sizeof(bad->value));
			bad->want = tables[t].checks[i].want;
			bad->case_idx = sqlite3_column_int64(st, 2);
			sqlite3_reset(st);
			return 1;
		}
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return kj__store_fail(ck->db, rc, err, "the store's checks");
	}
	return 0;
}
