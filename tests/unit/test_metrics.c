/*
 * test_metrics.c - the figures of an evaluation (lib/store/metrics.c) from a
 * store of known verdicts, each checked against its hand computation, and
 * their renderings (lib/store/report.c): every string escaped, the figures
 * the JSON's.
 *
 * The store: run 1's suite held A, B, F; run 2's (the latest) A..E.  So the
 * operators are A, B, C, D, E (5): F's attempts are not counted, and model
 * m3, which tried only F, is not a model of the report.
 *
 *   m1  A  0 pass clean, speedup 1.0 (no timings)       tokens 100+50
 *          0 (run 1, finished earlier) fail: replaced by the row above
 *          1 fail accuracy                              tokens NULL, gen NULL
 *          9 state 'running': not counted
 *       B  0 pass, not clean (static), speedup 5.0       tokens 10+NULL
 *          1 judge_error (judge)                        tokens 200+100
 *       C  0 pass clean, speedup 2.5 recorded, timings 9 and 1: 3.0 used
 *          1 pass clean, speedup 0.5
 *          2 fail build (a recorded speedup 7.0: not shown, a failure)
 *          3 fail runtime, 4 fail timeout, 5 task_error (task)
 *                                                       tokens 1+2 each
 *       D  none
 *       E  0 fail timing                                tokens NULL
 *          1 pass clean, 1.4 recorded, timings 1.5 and 1.5: 1.5 used
 *                                                       tokens 30+20
 *   m2  A  0 pass clean, speedup 2.0 (a tie at p = 2)
 *       C  0 pass, not clean (anticheat), speedup 4.0
 *       D  0 fail limit
 *       (no tokens, no generation time)
 *   m3  F  0 pass clean
 * Every m1 attempt has generation_s 1.5 (but A/1) and judge_s 2.0.  Every
 * attempt is on the CPU with env NULL (a store of before attempts.env named
 * the node); metrics_gpu_models gives some a GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "kjudge/metrics.h"
#include "kjudge/store.h"
#include "store/store_internal.h"
#include "unit.h"

static void exec(struct kj_store *s, const char *sql)
{
	struct kj_error err;

	KJ_CHECK_OK(kj_store_exec(s, sql, &err), &err);
}

/* One attempt row; NULLs as the text "NULL". */
static void attempt(struct kj_store *s, const char *key, int run, const char *task,
		    const char *model, const char *label, const char *state,
		    const char *status, const char *clean, const char *cat,
		    const char *speedup, const char *ptok, const char *ctok,
		    const char *gen, const char *judge, const char *finished)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO attempts (attempt_key, run_id, task_key, task, model, attempt, "
		 "round, cand_sha256, origin, prompt_tokens, completion_tokens, generation_s, "
		 "device, state, status, clean, error_type, category, charged, message, speedup, "
		 "judge_s, started_at, finished_at) VALUES ('%s', %d, 'k%s', '%s', '%s', '%s', 1, "
		 "'c0', 'x.jsonl:1', %s, %s, %s, 'cpu', '%s', %s, %s, %s, %s, 'candidate', "
		 "'msg of %s <script>alert(1)</script>', %s, %s, '2026-01-01T00:00:00Z', '%s')",
		 key, run, task, task, model, label, ptok, ctok, gen, state, status, clean,
		 strcmp(cat, "NULL") ? "'SomeError'" : "NULL", cat, key, speedup, judge,
		 finished);
	exec(s, sql);
}

#define T2 "2026-01-02T00:00:00Z"
#define T1 "2026-01-01T00:00:00Z"

static struct kj_store *make_store(const char *path)
{
	struct kj_store *s = NULL;
	struct kj_error err;

	KJ_CHECK_OK(kj_store_open(path, KJ_STORE_CREATE, 0, &s, &err), &err);
	exec(s, "INSERT INTO runs VALUES (1, '" T1 "', NULL, '0.1.0', '[]', 'suite', 'c', "
		"'{\"seed\": 1}', NULL, NULL);"
		"INSERT INTO runs VALUES (2, '" T2 "', '" T2 "', '0.1.0', '[]', 'suite', 'c', "
		"'{\"seed\": 2}', NULL, NULL);"
		"INSERT INTO tasks VALUES ('kA', 'A', 'level1/1_A.py', 1, 1, 'a', NULL, 's', NULL);"
		"INSERT INTO tasks VALUES ('kB', 'B', 'level1/2_B.py', 1, 2, 'b', NULL, 's', NULL);"
		"INSERT INTO tasks VALUES ('kC', 'C', 'level1/3_C.py', 1, 3, 'c', NULL, 's', NULL);"
		"INSERT INTO tasks VALUES ('kD', 'D', 'level2/1_D.py', 2, 1, 'd', NULL, 's', NULL);"
		"INSERT INTO tasks VALUES ('kE', 'E', 'level2/2_E.py', 2, 2, 'e', NULL, 's', NULL);"
		"INSERT INTO tasks VALUES ('kF', 'F', 'level2/3_F.py', 2, 3, 'f', NULL, 's', NULL);"
		"INSERT INTO suite_tasks VALUES (1, 'kA'), (1, 'kB'), (1, 'kF'), (2, 'kA'), "
		"(2, 'kB'), (2, 'kC'), (2, 'kD'), (2, 'kE');"
		"INSERT INTO candidates VALUES ('c0', 'x');");
	attempt(s, "m1A0", 2, "A", "m1", "0", "done", "'pass'", "1", "NULL", "1.0", "100", "50",
		"1.5", "2.0", T2);
	attempt(s, "m1A0old", 1, "A", "m1", "0", "done", "'fail'", "0", "'accuracy'", "NULL",
		"9999", "9999", "1.5", "2.0", T1);
	attempt(s, "m1A1", 2, "A", "m1", "1", "done", "'fail'", "0", "'accuracy'", "NULL", "NULL",
		"NULL", "NULL", "2.0", T2);
	attempt(s, "m1A9", 2, "A", "m1", "9", "running", "NULL", "NULL", "NULL", "NULL", "7", "7",
		"1.5", "2.0", T2);
	attempt(s, "m1B0", 2, "B", "m1", "0", "done", "'pass'", "0", "'static'", "5.0", "10",
		"NULL", "1.5", "2.0", T2);
	attempt(s, "m1B1", 2, "B", "m1", "1", "done", "'judge_error'", "0", "'judge'", "NULL",
		"200", "100", "1.5", "2.0", T2);
	attempt(s, "m1C0", 2, "C", "m1", "0", "done", "'pass'", "1", "NULL", "2.5", "1", "2",
		"1.5", "2.0", T2);
	attempt(s, "m1C1", 2, "C", "m1", "1", "done", "'pass'", "1", "NULL", "0.5", "1", "2",
		"1.5", "2.0", T2);
	attempt(s, "m1C2", 2, "C", "m1", "2", "done", "'fail'", "0", "'build'", "7.0", "1", "2",
		"1.5", "2.0", T2);
	attempt(s, "m1C3", 2, "C", "m1", "3", "done", "'fail'", "0", "'runtime'", "NULL", "1",
		"2", "1.5", "2.0", T2);
	attempt(s, "m1C4", 2, "C", "m1", "4", "done", "'fail'", "0", "'timeout'", "NULL", "1",
		"2", "1.5", "2.0", T2);
	attempt(s, "m1C5", 2, "C", "m1", "5", "done", "'task_error'", "0", "'task'", "NULL", "1",
		"2", "1.5", "2.0", T2);
	attempt(s, "m1E0", 2, "E", "m1", "0", "done", "'fail'", "0", "'timing'", "NULL", "NULL",
		"NULL", "1.5", "2.0", T2);
	attempt(s, "m1E1", 2, "E", "m1", "1", "done", "'pass'", "1", "NULL", "1.4", "30", "20",
		"1.5", "2.0", T2);
	attempt(s, "m2A0", 2, "A", "m2", "0", "done", "'pass'", "1", "NULL", "2.0", "NULL",
		"NULL", "NULL", "NULL", T2);
	attempt(s, "m2C0", 2, "C", "m2", "0", "done", "'pass'", "0", "'anticheat'", "4.0", "NULL",
		"NULL", "NULL", "NULL", T2);
	attempt(s, "m2D0", 2, "D", "m2", "a1", "done", "'fail'", "0", "'limit'", "NULL", "NULL",
		"NULL", "NULL", "NULL", T2);
	attempt(s, "m3F0", 2, "F", "m3", "0", "done", "'pass'", "1", "NULL", "9.0", "1", "1",
		"1", "1", T2);
	exec(s, "INSERT INTO timings (attempt_key, case_idx, impl_ms, ref_ms, speedup) VALUES "
		"('m1C0', 1, 1, 9, 9.0), ('m1C0', 2, 1, 1, 1.0), "
		"('m1E1', 1, 2, 3, 1.5), ('m1E1', 2, 2, 3, 1.5);"
		"INSERT INTO case_results (attempt_key, phase, case_idx, params, status, "
		"error_type, category, message) VALUES "
		"('m1C0', 'benchmark', 1, '{\"n\": 8}', 'pass', '', NULL, NULL), "
		"('m1C0', 'verify', 2, '{\"n\": 16}', 'pass', '', NULL, NULL), "
		"('m1C0', 'verify', 1, '{\"n\": 8}', 'pass', '', NULL, NULL), "
		"('m1A1', 'verify', 1, 'not json', 'fail', 'AccuracyError', 'accuracy', "
		"'MERE 0.5 <b>too high</b>');");
	return s;
}

static double real_at(const json_t *o, const char *path)
{
	char buf[256], *tok, *save = NULL;
	const json_t *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok && v; tok = strtok_r(NULL, "/", &save))
		v = json_is_array(v) ? json_array_get(v, (size_t)strtol(tok, NULL, 10))
				     : json_object_get(v, tok);
	if (!v)
		kj_test_fail(__FILE__, __LINE__, "no %s", path);
	if (json_is_null(v))
		return NAN;
	return json_number_value(v);
}

#define CHECK_NEAR(o, path, want)                                                         \
	do {                                                                              \
		double kj__g = real_at(o, path), kj__w = (want);                         \
		if (!(fabs(kj__g - kj__w) <= 1e-9 * (1 + fabs(kj__w))))                   \
			kj_test_fail(__FILE__, __LINE__, "%s = %.17g, want %.17g", path, kj__g, \
				     kj__w);                                              \
	} while (0)
#define CHECK_NULL(o, path) KJ_CHECK(isnan(real_at(o, path)))

KJ_TEST(metrics_hand_computed)
{
	struct kj_store *s = make_store(kj_test_path("m.db"));
	struct kj_error err;
	json_t *m = NULL, *m1, *m2, *att, *op;
	size_t i;

	kj_store_close(s);
	KJ_CHECK_OK(kj_store_open(kj_test_path("m.db"), KJ_STORE_READONLY, 0, &s, &err), &err);
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	kj_store_close(s);

	/* The suite: run 2, its five operators. */
	CHECK_NEAR(m, "suite/run_id", 2);
	CHECK_NEAR(m, "suite/operators", 5);
	CHECK_NEAR(m, "suite/runs", 2);
	CHECK_NEAR(m, "suite/settings/seed", 2);
	KJ_CHECK_INT(json_object_size(json_object_get(m, "models")), 2); /* no m3 */
	m1 = json_object_get(json_object_get(m, "models"), "m1");
	m2 = json_object_get(json_object_get(m, "models"), "m2");
	KJ_CHECK(m1 && m2);

	/* m1: 12 attempts (A0 old replaced, A9 running). */
	CHECK_NEAR(m1, "operators", 5);
	CHECK_NEAR(m1, "attempts", 12);
	CHECK_NEAR(m1, "operators_attempted", 4); /* A B C E */
	/* accuracy: a pass on A, B (not clean counts), C, E: 4/5. */
	CHECK_NEAR(m1, "accuracy", 0.8);
	/* Wilson, n 5, p 0.8, z^2 3.841459: centre (0.8 + 0.384146) / 1.768292
	 * = 0.669655, half 1.959964 sqrt(0.032 + 0.038415) / 1.768292 =
	 * 0.294120: [0.375535, 0.963775]. */
	KJ_CHECK(fabs(real_at(m1, "accuracy_ci/0") - 0.375535) < 1e-5);
	KJ_CHECK(fabs(real_at(m1, "accuracy_ci/1") - 0.963775) < 1e-5);
	/* clean: A, C, E: 3/5. */
	CHECK_NEAR(m1, "clean_pass_rate", 0.6);
	CHECK_NEAR(m1, "solved_clean", 3);
	/* attempts that passed: A0 B0 C0 C1 E1 of 12. */
	CHECK_NEAR(m1, "attempt_pass_rate", 5.0 / 12.0);
	/* pass@1 = mean c/n over A (1/2), B (0/2), C (2/6), E (1/2) = 1/3. */
	CHECK_NEAR(m1, "pass_at_k/1", 1.0 / 3.0);
	CHECK_NEAR(m1, "pass_at_k_operators/1", 4);
	/* pass@5: C only (n 6 >= 5), n - c = 4 < 5: 1. */
	CHECK_NEAR(m1, "pass_at_k/5", 1.0);
	CHECK_NEAR(m1, "pass_at_k_operators/5", 1);
	/* pass@2: A (1 - C(1,2)/C(2,2) = 1), B (0), C (1 - C(4,2)/C(6,2) =
	 * 0.6), E (1): 2.6 / 4. */
	CHECK_NEAR(m1, "pass_at_k/2", 2.6 / 4.0);
	/* pass@10: no operator has 10 attempts: null, over 0 operators. */
	KJ_CHECK(json_is_null(json_object_get(json_object_get(m1, "pass_at_k"), "10")));
	CHECK_NEAR(m1, "pass_at_k_operators/10", 0);
	/* Every attempt counted is of run 2. */
	KJ_CHECK_INT(json_array_size(json_object_get(m1, "runs")), 1);
	CHECK_NEAR(m1, "runs/0", 2);
	/* Best clean speedups: A 1.0, C 3.0 (timings 9 and 1: sqrt 9), E 1.5
	 * (timings, not the recorded 1.4); B's 5.0 is not clean. */
	CHECK_NEAR(m1, "fast_p/0", 0.6);
	CHECK_NEAR(m1, "fast_p/0.5", 0.6);
	CHECK_NEAR(m1, "fast_p/0.8", 0.6);
	CHECK_NEAR(m1, "fast_p/1", 0.4);   /* A's 1.0 is not > 1 */
	CHECK_NEAR(m1, "fast_p/1.5", 0.2); /* E's 1.5 is not > 1.5 */
	CHECK_NEAR(m1, "fast_p/2", 0.2);
	/* Wilson, n 5, p 0.4: [0.117623, 0.769275]. */
	KJ_CHECK(fabs(real_at(m1, "fast_p_ci/1/0") - 0.117623) < 1e-5);
	KJ_CHECK(fabs(real_at(m1, "fast_p_ci/1/1") - 0.769275) < 1e-5);
	/* speedup: (1.0 * 3.0 * 1.5)^(1/3) = 4.5^(1/3). */
	CHECK_NEAR(m1, "speedup", cbrt(4.5));
	CHECK_NEAR(m1, "speedup_operators", 3);
	/* tokens: 150 (A0) + 0 (A1) + 10 (B0) + 300 (B1) + 6 * 3 (C) + 0 (E0)
	 * + 50 (E1) = 528, A1, B0 and E0 lack a count; 528 / 3 solved. */
	CHECK_NEAR(m1, "tokens_total", 528);
	CHECK_NEAR(m1, "tokens_missing", 3);
	CHECK_NEAR(m1, "tokens_per_success", 176);
	/* generation: 11 * 1.5 (A1 has none); judge: 12 * 2.0. */
	CHECK_NEAR(m1, "runtime_s", 16.5);
	CHECK_NEAR(m1, "runtime_missing", 1);
	CHECK_NEAR(m1, "judge_s", 24.0);
	/* Failures: the 8 attempts not clean, one of each group. */
	CHECK_NEAR(m1, "categories/accuracy", 1);
	CHECK_NEAR(m1, "categories/static", 1);
	CHECK_NEAR(m1, "categories/task", 1);
	CHECK_NEAR(m1, "categories/limit", 0);
	CHECK_NEAR(m1, "failures/static", 1);
	CHECK_NEAR(m1, "failures/build", 1);
	CHECK_NEAR(m1, "failures/runtime", 1);
	CHECK_NEAR(m1, "failures/accuracy", 1);
	CHECK_NEAR(m1, "failures/timeout", 1);
	CHECK_NEAR(m1, "failures/timing", 1);
	CHECK_NEAR(m1, "failures/judge", 1);
	CHECK_NEAR(m1, "failures/other", 1); /* task */
	CHECK_NEAR(m1, "failures/total", 8);

	/* m2: A clean 2.0, C anticheat, D limit. */
	CHECK_NEAR(m2, "attempts", 3);
	CHECK_NEAR(m2, "accuracy", 0.4);        /* A, C */
	CHECK_NEAR(m2, "clean_pass_rate", 0.2); /* A */
	CHECK_NEAR(m2, "attempt_pass_rate", 2.0 / 3.0);
	CHECK_NEAR(m2, "pass_at_k/1", 1.0 / 3.0); /* (1 + 0 + 0) / 3 */
	KJ_CHECK(json_is_null(json_object_get(json_object_get(m2, "pass_at_k"), "5")));
	CHECK_NEAR(m2, "fast_p/0", 0.2);
	CHECK_NEAR(m2, "fast_p/1.5", 0.2);
	CHECK_NEAR(m2, "fast_p/2", 0.0); /* 2.0 is not > 2 */
	CHECK_NEAR(m2, "speedup", 2.0);
	CHECK_NEAR(m2, "speedup_operators", 1);
	/* No attempt of m2 has token counts or a generation time: unknown
	 * (null, printed "-"), not 0. */
	KJ_CHECK(json_is_null(json_object_get(m2, "tokens_total")));
	CHECK_NEAR(m2, "tokens_missing", 3);
	KJ_CHECK(json_is_null(json_object_get(m2, "tokens_per_success")));
	KJ_CHECK(json_is_null(json_object_get(m2, "runtime_s")));
	CHECK_NEAR(m2, "failures/other", 2); /* anticheat, limit */

	/* The attempts: 15 (12 + 3), pass/fail with the store's verdict. */
	att = json_object_get(m, "attempts");
	KJ_CHECK_INT(json_array_size(att), 15);
	for (i = 0; i < json_array_size(att); i++) {
		json_t *a = json_array_get(att, i);
		const char *st = json_string_value(json_object_get(a, "status"));
		const char *v = json_string_value(json_object_get(a, "verdict"));

		KJ_CHECK(st && v);
		KJ_CHECK(!strcmp(st, "pass") || !strcmp(st, "fail"));
		KJ_CHECK(!strcmp(st, "pass") == !strcmp(v, "pass"));
		if (strcmp(st, "pass"))
			KJ_CHECK(json_is_null(json_object_get(a, "speedup")));
		if (!strcmp(json_string_value(json_object_get(a, "model")), "m1") &&
		    !strcmp(json_string_value(json_object_get(a, "task")), "B") &&
		    json_integer_value(json_object_get(a, "attempt")) == 1)
			KJ_CHECK_STR(v, "judge_error");
		/* A decimal label is an integer, any other a string. */
		if (!strcmp(json_string_value(json_object_get(a, "task")), "D"))
			KJ_CHECK_STR(json_string_value(json_object_get(a, "attempt")), "a1");
		else
			KJ_CHECK(json_is_integer(json_object_get(a, "attempt")));
		if (!strcmp(json_string_value(json_object_get(a, "task")), "C") &&
		    json_integer_value(json_object_get(a, "attempt")) == 2)
			CHECK_NEAR(a, "speedup_recorded", 7.0); /* kept, not shown */
	}

	/* env NULL: no node, no GPU, no driver; the four clean speedups of m1
	 * (A0, C0, C1, E1) measured on the CPU; no warning. */
	for (i = 0; i < json_array_size(att); i++) {
		json_t *a = json_array_get(att, i);

		KJ_CHECK(json_is_null(json_object_get(a, "node")));
		KJ_CHECK(json_is_null(json_object_get(a, "gpu")));
		KJ_CHECK(json_is_null(json_object_get(a, "driver")));
	}
	CHECK_NEAR(m1, "gpu_models/cpu", 4);
	KJ_CHECK_INT(json_object_size(json_object_get(m1, "gpu_models")), 1);
	CHECK_NEAR(m2, "gpu_models/cpu", 1);
	/* One warning: m1's A0 of run 1 (seed 1) was judged again by run 2
	 * (seed 2), whose judgement the figures count. */
	KJ_CHECK(json_is_array(json_object_get(m, "warnings")));
	KJ_CHECK_INT(json_array_size(json_object_get(m, "warnings")), 1);
	KJ_CHECK_STR(json_string_value(json_array_get(json_object_get(m, "warnings"), 0)),
		     "m1's figures count 1 attempt judged again by run 2 under other settings "
		     "than run 1's, which they replace: seed 2 (was 1)");

	/* The operators, by level and problem: A B C D E. */
	op = json_object_get(m, "operators");
	KJ_CHECK_INT(json_array_size(op), 5);
	KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(op, 3), "task")), "D");
	CHECK_NEAR(op, "3/models/m1/attempts", 0);
	KJ_CHECK(json_is_false(json_object_get(
		json_object_get(json_object_get(json_array_get(op, 3), "models"), "m1"),
		"passed")));
	CHECK_NEAR(op, "2/models/m1/best_speedup", 3.0);
	CHECK_NEAR(op, "4/models/m1/best_speedup", 1.5);
	CHECK_NULL(op, "1/models/m1/best_speedup");
	CHECK_NEAR(op, "2/models/m1/records/0/speedup", 3.0);
	CHECK_NEAR(op, "2/models/m1/records/0/speedup_recorded", 2.5);
	CHECK_NEAR(op, "2/models/m1/records/0/timed_cases", 2);
	/* C/0's cases: verify 1, verify 2, benchmark 1. */
	{
		json_t *cases = json_object_get(json_array_get(json_object_get(json_object_get(
			json_object_get(json_array_get(op, 2), "models"), "m1"), "records"), 0),
			"cases");

		KJ_CHECK_INT(json_array_size(cases), 3);
		KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(cases, 0),
							       "phase")), "verify");
		CHECK_NEAR(cases, "1/case_idx", 2);
		CHECK_NEAR(cases, "1/params/n", 16);
		KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(cases, 2),
							       "phase")), "benchmark");
	}
	/* A/1's case: params that are not JSON kept as text. */
	KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(json_object_get(json_object_get(
			json_array_get(op, 0), "models"), "m1"), "records"), 1), "cases"), 0),
		"params")), "not json");
	json_decref(m);
}

KJ_TEST(metrics_renderings_escape_and_agree)
{
	struct kj_store *s = make_store(kj_test_path("r.db"));
	struct kj_error err;
	json_t *m = NULL;
	char *md, *html, buf[64];

	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	kj_store_close(s);
	md = kj_metrics_markdown(m, &err);
	html = kj_metrics_html(m, &err);
	KJ_CHECK(md && html);
	/* The candidates' messages are text, never markup. */
	KJ_CHECK(strstr(html, "<script") == NULL);
	KJ_CHECK(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
	KJ_CHECK(strstr(html, "<b>too high") == NULL);
	KJ_CHECK(strstr(md, "<script") == NULL);
	/* Nothing outside the page. */
	KJ_CHECK(strstr(html, "http:") == NULL && strstr(html, "https:") == NULL);
	KJ_CHECK(strstr(html, "src=") == NULL && strstr(html, "href=") == NULL);
	KJ_CHECK(strstr(html, "<svg") != NULL);
	/* The figures as the JSON has them: m1's accuracy 0.800, speedup
	 * 1.651, clean pass rate 0.600. */
	{
		/* Three significant digits, no exponent above 1e-9: a tiny
		 * speedup shows its digits, a large figure all of its own. */
		static const struct { double v; const char *want; } cases[] = {
			{ 0.8, "0.800" }, { 0.0625, "0.0625" }, { 0.000235, "0.000235" },
			{ 2.0, "2.00" }, { 12.34, "12.3" }, { 1234.6, "1235" },
			{ 0.99951, "1.00" }, { 0.0, "0" }, { -0.5, "-0.500" },
			{ 1.5e-12, "1.50e-12" },
		};
		json_t *n = json_integer(528);
		size_t k;

		for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			json_t *r = json_real(cases[k].v);

			KJ_CHECK_STR(kj_metrics_fmt(r, buf, sizeof(buf)), cases[k].want);
			json_decref(r);
		}
		KJ_CHECK_STR(kj_metrics_fmt(n, buf, sizeof(buf)), "528");
		KJ_CHECK_STR(kj_metrics_fmt(NULL, buf, sizeof(buf)), "-");
		json_decref(n);
	}
	KJ_CHECK(strstr(md, "| m1 | 2 | 5 | 0.800 [0.376, 0.964] | 0.600") != NULL);
	KJ_CHECK(strstr(md, "1.65 (3)") != NULL);
	/* C's row: m1's best 3.000 of 2 clean in 6, m2's none of 0 clean in 1. */
	KJ_CHECK(strstr(md, "| C | 1 | 3 | 3.00 (2/6 clean) | - (0/1 clean) |") != NULL);
	KJ_CHECK(strstr(html, ">1.65<") != NULL);
	free(md);
	free(html);
	json_decref(m);
}

/* An attempt's device and env. */
static void set_env(struct kj_store *s, const char *key, const char *device, const char *env)
{
	char sql[1024];

	snprintf(sql, sizeof(sql), "UPDATE attempts SET device = '%s', env = %s WHERE "
		 "attempt_key = '%s'", device, env, key);
	exec(s, sql);
}

/* The attempt of a model, task and label in the JSON's attempts. */
static const json_t *find_attempt(const json_t *m, const char *model, const char *task,
				  const char *label)
{
	const json_t *att = json_object_get(m, "attempts");
	size_t i;

	for (i = 0; i < json_array_size(att); i++) {
		const json_t *a = json_array_get(att, i);

		if (!strcmp(json_string_value(json_object_get(a, "model")), model) &&
		    !strcmp(json_string_value(json_object_get(a, "task")), task) &&
		    json_is_integer(json_object_get(a, "attempt")) &&
		    json_integer_value(json_object_get(a, "attempt")) == atoll(label))
			return a;
	}
	kj_test_fail(__FILE__, __LINE__, "no attempt %s %s %s", model, task, label);
	return NULL;
}

#define H200 "NVIDIA H200"
#define A100 "NVIDIA A100-SXM4-80GB"

/*
 * --k and --p: the lists as a user types them, sorted and each once; a
 * value that is not one refused.  Figures for k = 3 and p = 1.2 only.
 */
KJ_TEST(metrics_k_and_p)
{
	struct kj_metrics_opts o;
	struct kj_error err;
	struct kj_store *s;
	json_t *m = NULL;
	char buf[32];
	static const char *const bad_k[] = { "", "0", "1,,2", "x", "2.5", "-1", "1e3", " 1",
					     "1,", "1000001" };
	static const char *const bad_p[] = { "", "nan", "inf", "-1", "0x10", "1..2", "1,a",
					     "1.2.3", "2e9" };
	size_t i;

	kj_metrics_opts_default(&o);
	KJ_CHECK_INT((int)o.n_k, 4);
	KJ_CHECK_INT(o.k[1], 2);
	KJ_CHECK_INT((int)o.n_p, 6);
	KJ_CHECK_OK(kj_metrics_parse_k("10,3,1,3", &o, &err), &err);
	KJ_CHECK_INT((int)o.n_k, 3);
	KJ_CHECK(o.k[0] == 1 && o.k[1] == 3 && o.k[2] == 10);
	KJ_CHECK_OK(kj_metrics_parse_p("1.25,0,.5", &o, &err), &err);
	KJ_CHECK(o.n_p == 3 && o.p[0] == 0.0 && o.p[1] == 0.5 && o.p[2] == 1.25);
	KJ_CHECK_STR(kj_metrics_p_key(1.25, buf, sizeof(buf)), "1.25");
	KJ_CHECK_STR(kj_metrics_p_key(0.8, buf, sizeof(buf)), "0.8");
	KJ_CHECK_STR(kj_metrics_p_key(0.0, buf, sizeof(buf)), "0");
	for (i = 0; i < sizeof(bad_k) / sizeof(bad_k[0]); i++)
		KJ_CHECK(kj_metrics_parse_k(bad_k[i], &o, &err) == KJ_EINVAL);
	for (i = 0; i < sizeof(bad_p) / sizeof(bad_p[0]); i++)
		KJ_CHECK(kj_metrics_parse_p(bad_p[i], &o, &err) == KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "--p: '2e9'") != NULL);

	s = make_store(kj_test_path("kp.db"));
	KJ_CHECK_OK(kj_metrics_parse_k("3", &o, &err), &err);
	KJ_CHECK_OK(kj_metrics_parse_p("1.2", &o, &err), &err);
	KJ_CHECK_OK(kj_metrics_compute_with(s, &o, &m, &err), &err);
	kj_store_close(s);
	/* m1: operators with 3 attempts or more: C only (n 6, c 2):
	 * 1 - C(4,3)/C(6,3) = 0.8.  fast_1.2: C's 3.0 and E's 1.5 of 5. */
	CHECK_NEAR(m, "models/m1/pass_at_k/3", 0.8);
	CHECK_NEAR(m, "models/m1/fast_p/1.2", 0.4);
	KJ_CHECK_INT(json_object_size(json_object_get(json_object_get(json_object_get(m,
		"models"), "m1"), "pass_at_k")), 1);
	KJ_CHECK_INT(json_object_size(json_object_get(json_object_get(json_object_get(m,
		"models"), "m1"), "fast_p")), 1);
	CHECK_NEAR(m, "k/0", 3);
	CHECK_NEAR(m, "p/0", 1.2);
	json_decref(m);
}

/*
 * Runs of different settings: m2's attempts judged by run 1 (seed 1), m1's
 * by run 2 (seed 2).  The warning names both runs and the setting, and
 * each model says its run; one run's settings: no warning.
 */
KJ_TEST(metrics_runs_of_different_settings)
{
	struct kj_store *s = make_store(kj_test_path("rs.db"));
	struct kj_error err;
	json_t *m = NULL;
	const json_t *w;
	char *md;

	exec(s, "UPDATE attempts SET run_id = 1 WHERE model = 'm2'");
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	w = json_object_get(m, "warnings");
	KJ_CHECK_INT(json_array_size(w), 2); /* and m1's A0 judged again */
	KJ_CHECK_STR(json_string_value(json_array_get(w, 0)),
		     "the figures come from runs of different settings: run 1 has seed 1; run 2 "
		     "has seed 2; each model's runs say which its figures come from");
	CHECK_NEAR(m, "models/m2/runs/0", 1);
	CHECK_NEAR(m, "models/m1/runs/0", 2);
	CHECK_NEAR(m, "runs/0/settings/seed", 1);
	md = kj_metrics_markdown(m, &err);
	KJ_CHECK(md && strstr(md, "> **Warning:** the figures come from runs of different") != NULL);
	KJ_CHECK(md && strstr(md, "| m2 | 1 | 5 |") != NULL);
	free(md);
	json_decref(m);
	exec(s, "UPDATE runs SET settings = '{\"seed\": 2}' WHERE run_id = 1");
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	KJ_CHECK_INT(json_array_size(json_object_get(m, "warnings")), 0);
	json_decref(m);
	kj_store_close(s);
}

/*
 * Where the speedups were measured.  m1's clean speedups: A0 on the CPU of
 * a machine with an H200 (the CPU's), C0 on an H200, C1 on an A100, E1 on
 * a GPU with env NULL (unknown); B0 on an A100 is not clean (not counted);
 * m2's A0 on an H200.  Two GPU models: the warning.  C1 moved to an H200:
 * one, no warning.
 */
KJ_TEST(metrics_gpu_models)
{
	struct kj_store *s = make_store(kj_test_path("g.db"));
	struct kj_error err;
	json_t *m = NULL;
	const json_t *a, *w;
	char *md, *html;

	set_env(s, "m1A0", "cpu", "'{\"node\": \"n0\", \"device_name\": \"" H200 "\"}'");
	set_env(s, "m1C0", "cuda:0", "'{\"node\": \"n1\", \"device_name\": \"" H200 "\", "
		"\"driver\": \"550.54\", \"torch\": \"2.11.0\"}'");
	set_env(s, "m1C1", "cuda:0", "'{\"node\": \"n2\", \"device_name\": \"" A100 "\"}'");
	set_env(s, "m1E1", "cuda:0", "NULL");
	set_env(s, "m1B0", "cuda:0", "'{\"node\": \"n2\", \"device_name\": \"" A100 "\"}'");
	set_env(s, "m2A0", "cuda:1", "'{\"node\": \"n1\", \"device_name\": \"" H200 "\"}'");
	set_env(s, "m1A1", "cuda:0", "'not json'");
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);

	a = find_attempt(m, "m1", "C", "0");
	KJ_CHECK_STR(json_string_value(json_object_get(a, "node")), "n1");
	KJ_CHECK_STR(json_string_value(json_object_get(a, "gpu")), H200);
	KJ_CHECK_STR(json_string_value(json_object_get(a, "driver")), "550.54");
	a = find_attempt(m, "m1", "A", "0"); /* the CPU's figures: no GPU */
	KJ_CHECK_STR(json_string_value(json_object_get(a, "node")), "n0");
	KJ_CHECK(json_is_null(json_object_get(a, "gpu")));
	KJ_CHECK(json_is_null(json_object_get(a, "driver")));
	a = find_attempt(m, "m1", "E", "1"); /* env NULL */
	KJ_CHECK(json_is_null(json_object_get(a, "node")) && json_is_null(json_object_get(a, "gpu")));
	a = find_attempt(m, "m1", "A", "1"); /* env not JSON */
	KJ_CHECK(json_is_null(json_object_get(a, "node")) && json_is_null(json_object_get(a, "gpu")));

	CHECK_NEAR(m, "models/m1/gpu_models/cpu", 1);
	CHECK_NEAR(m, "models/m1/gpu_models/" H200, 1);
	CHECK_NEAR(m, "models/m1/gpu_models/" A100, 1);
	CHECK_NEAR(m, "models/m1/gpu_models/unknown", 1);
	KJ_CHECK_INT(json_object_size(json_object_get(json_object_get(json_object_get(m,
		"models"), "m1"), "gpu_models")), 4);
	CHECK_NEAR(m, "models/m2/gpu_models/" H200, 1);
	KJ_CHECK_INT(json_object_size(json_object_get(json_object_get(json_object_get(m,
		"models"), "m2"), "gpu_models")), 1);
	/* The figures themselves are as before. */
	CHECK_NEAR(m, "models/m1/speedup", cbrt(4.5));
	w = json_object_get(m, "warnings");
	KJ_CHECK_INT(json_array_size(w), 2); /* and m1's A0 judged again */
	KJ_CHECK_STR(json_string_value(json_array_get(w, 0)),
		     "speedups measured on different GPU models: " H200 " (2 attempts), " A100
		     " (1 attempt); compare them with care");
	md = kj_metrics_markdown(m, &err);
	html = kj_metrics_html(m, &err);
	KJ_CHECK(md && html);
	/* The warning near the top (before the models' table), in both. */
	KJ_CHECK(strstr(md, "> **Warning:** speedups measured on different GPU models") != NULL);
	KJ_CHECK(strstr(md, "> **Warning:**") < strstr(md, "## Models"));
	KJ_CHECK(strstr(html, "<div id=\"warnings\" class=\"warn\"") != NULL);
	KJ_CHECK(strstr(html, "id=\"warnings\"") < strstr(html, "<table id=\"models\""));
	/* Each attempt says where it ran. */
	KJ_CHECK(strstr(md, " | 3.00 | 2 | n1 | " H200 " |\n") != NULL);
	KJ_CHECK(strstr(md, " | 1.50 | 2 | - | - |\n") != NULL);
	KJ_CHECK(strstr(html, "(node <span data-k=\"node\">n2</span>, GPU <span "
			"data-k=\"gpu\">" A100 "</span>)") != NULL);
	free(md);
	free(html);
	json_decref(m);

	/* One GPU model (and runs of one setting): no warning, anywhere. */
	set_env(s, "m1C1", "cuda:0", "'{\"node\": \"n2\", \"device_name\": \"" H200 "\"}'");
	exec(s, "UPDATE runs SET settings = '{\"seed\": 2}' WHERE run_id = 1");
	m = NULL;
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	kj_store_close(s);
	CHECK_NEAR(m, "models/m1/gpu_models/" H200, 2);
	KJ_CHECK(json_object_get(json_object_get(json_object_get(json_object_get(m, "models"),
		"m1"), "gpu_models"), A100) == NULL);
	KJ_CHECK_INT(json_array_size(json_object_get(m, "warnings")), 0);
	md = kj_metrics_markdown(m, &err);
	html = kj_metrics_html(m, &err);
	KJ_CHECK(md && html);
	KJ_CHECK(strstr(md, "Warning") == NULL);
	KJ_CHECK(strstr(html, "Warning") == NULL && strstr(html, "id=\"warnings\"") == NULL);
	free(md);
	free(html);
	json_decref(m);
}

KJ_TEST(metrics_fail_closed)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	json_t *m = (json_t *)1;
	const char *p = kj_test_path("e.db");
	sqlite3 *db = NULL;

	/* An empty store: no run, no model. */
	KJ_CHECK_OK(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), &err);
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	KJ_CHECK(json_is_null(json_object_get(m, "suite")));
	KJ_CHECK_INT(json_object_size(json_object_get(m, "models")), 0);
	json_decref(m);
	kj_store_close(s);
	s = make_store(kj_test_path("f.db"));
	kj_store_close(s);
	/* A column gone: the query fails, and so does the whole call. */
	KJ_CHECK(sqlite3_open(kj_test_path("f.db"), &db) == SQLITE_OK);
	KJ_CHECK(sqlite3_exec(db, "ALTER TABLE attempts DROP COLUMN judge_s", NULL, NULL,
			      NULL) == SQLITE_OK);
	sqlite3_close(db);
	KJ_CHECK_OK(kj_store_open(kj_test_path("f.db"), KJ_STORE_READONLY, 0, &s, &err), &err);
	m = (json_t *)1;
	KJ_CHECK_INT(kj_metrics_compute(s, &m, &err), KJ_ESTORE);
	KJ_CHECK(m == NULL);
	KJ_CHECK(strstr(err.msg, "judge_s") != NULL);
	kj_store_close(s);
}

/* sql run on the database at path, its CHECK constraints not enforced
 * and its schema writable (a hand or a bug wrote it). */
static void doctor(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	KJ_CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	if (sqlite3_exec(db, "PRAGMA ignore_check_constraints = ON; PRAGMA writable_schema = ON;",
			 NULL, NULL, NULL) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) !=
	    SQLITE_OK)
		kj_test_fail(__FILE__, __LINE__, "%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_close(db);
}

/* A copy of the store at from, as one file at to, with schema (NULL: none;
 * in a connection of its own, for it to be read again) and sql run on it. */
static void doctored_copy(const char *from, const char *to, const char *schema, const char *sql)
{
	char copy[8400];

	unlink(to);
	snprintf(copy, sizeof(copy), "VACUUM INTO '%s'", to);
	doctor(from, copy);
	if (schema)
		doctor(to, schema);
	doctor(to, sql);
}

/* The metrics of the store at path. */
static json_t *metrics_of(const char *path)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	json_t *m = NULL;

	KJ_CHECK_OK(kj_store_open(path, KJ_STORE_READONLY, 0, &s, &err), &err);
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	kj_store_close(s);
	return m;
}

/* Each kind of value no judge writes, in one attempt of the store (a row
 * of its own, its timings, its cases); schema, where given, lifts a NOT
 * NULL of the schema first, as a store made by hand may lack it. */
static const struct bad_row {
	const char *key, *sql, *column, *value, *schema;
} bad_rows[] = {
	{ "m1C1", "UPDATE attempts SET judge_s = 9e999 WHERE attempt_key = 'm1C1'",
	  "judge_s", "inf", NULL },
	{ "m1C1", "UPDATE attempts SET judge_s = -9e999 WHERE attempt_key = 'm1C1'",
	  "judge_s", "-inf", NULL },
	{ "m1B1", "UPDATE attempts SET generation_s = -0.5 WHERE attempt_key = 'm1B1'",
	  "generation_s", "-0.5", NULL },
	{ "m1B1", "UPDATE attempts SET generation_s = 'slow' WHERE attempt_key = 'm1B1'",
	  "generation_s", "'slow'", NULL },
	{ "m1B1", "UPDATE attempts SET prompt_tokens = -1000000 WHERE attempt_key = 'm1B1'",
	  "prompt_tokens", "-1000000", NULL },
	{ "m1E1", "UPDATE attempts SET completion_tokens = 9223372036854775807 WHERE "
		  "attempt_key = 'm1E1'", "completion_tokens", "9223372036854775807", NULL },
	{ "m1C1", "UPDATE attempts SET speedup = -2 WHERE attempt_key = 'm1C1'", "speedup", "-2", NULL },
	{ "m1C0", "UPDATE timings SET speedup = 9e999 WHERE attempt_key = 'm1C0' AND "
		  "case_idx = 2", "timings.speedup", "inf", NULL },
	{ "m1E1", "UPDATE timings SET impl_ms = -9e999 WHERE attempt_key = 'm1E1' AND "
		  "case_idx = 1", "timings.impl_ms", "-inf", NULL },
	{ "m1C0", "UPDATE case_results SET status = 'maybe' WHERE attempt_key = 'm1C0' AND "
		  "case_idx = 2", "case_results.status", "'maybe'", NULL },
	{ "m1B1", "UPDATE attempts SET status = 'win' WHERE attempt_key = 'm1B1'", "status",
	  "'win'", NULL },
	{ "m1E1", "UPDATE attempts SET state = 'finished' WHERE attempt_key = 'm1E1'", "state",
	  "'finished'", NULL },
	{ "m1C1", "UPDATE attempts SET clean = 7 WHERE attempt_key = 'm1C1'", "clean", "7", NULL },
	{ "m1C1", "UPDATE attempts SET cases_total = 2, cases_passed = 3 WHERE attempt_key = "
		  "'m1C1'", "cases_passed", "3", NULL },
	{ "m1B1", "UPDATE attempts SET model = NULL WHERE attempt_key = 'm1B1'", "model", "null",
	  "UPDATE sqlite_schema SET sql = replace(sql, 'model             TEXT NOT NULL', "
	  "'model TEXT') WHERE name = 'attempts'" },
};

/*
 * A store with one bad row: merge refuses it whole (KJ_ESTORE, the source,
 * the attempt, the column and the value named; the target as it was), and
 * the metrics leave that attempt out, named, with every figure of the rest
 * exactly those of the store without that attempt.
 */
KJ_TEST(metrics_and_merge_refuse_bad_rows)
{
	struct kj_store *s = make_store(kj_test_path("base.db")), *t = NULL;
	struct kj_store_merge_stats st;
	struct kj_error err;
	size_t i;

	kj_store_close(s);
	/* The target: the base merged once. */
	KJ_CHECK_OK(kj_store_open(kj_test_path("target.db"), KJ_STORE_CREATE, 0, &t, &err), &err);
	KJ_CHECK_OK(kj_store_merge(t, kj_test_path("base.db"), &st, &err), &err);
	KJ_CHECK_INT(st.attempts_new, 17);
	for (i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *b = &bad_rows[i];
		char bad[4200], rest[4200], gone[512], want[256];
		json_t *m, *r;
		const json_t *lo;

		snprintf(bad, sizeof(bad), "%s", kj_test_path("bad.db"));
		snprintf(rest, sizeof(rest), "%s", kj_test_path("rest.db"));
		doctored_copy(kj_test_path("base.db"), bad, b->schema, b->sql);
		snprintf(gone, sizeof(gone), "DELETE FROM timings WHERE attempt_key = '%s'; "
			 "DELETE FROM case_results WHERE attempt_key = '%s'; DELETE FROM attempts "
			 "WHERE attempt_key = '%s';", b->key, b->key, b->key);
		doctored_copy(kj_test_path("base.db"), rest, NULL, gone);

		/* merge: refused whole, named. */
		KJ_CHECK_INT(kj_store_merge(t, bad, &st, &err), KJ_ESTORE);
		snprintf(want, sizeof(want), "attempt %s (", b->key);
		if (!strstr(err.msg, bad) || !strstr(err.msg, want) ||
		    !strstr(err.msg, "nothing of this store was merged"))
			kj_test_fail(__FILE__, __LINE__, "%s: %s", b->sql, err.msg);
		snprintf(want, sizeof(want), "): %s is %s, not ", b->column, b->value);
		if (!strstr(err.msg, want) && !strstr(err.msg, want + 1))
			kj_test_fail(__FILE__, __LINE__, "%s: no '%s' in: %s", b->sql, want,
				     err.msg);
		KJ_CHECK_INT(st.attempts_new + st.attempts_replaced + st.attempts_same, 0);

		/* metrics: left out and named; the rest's figures. */
		m = metrics_of(bad);
		r = metrics_of(rest);
		lo = json_object_get(m, "left_out");
		KJ_CHECK_INT(json_array_size(lo), 1);
		KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(lo, 0), "attempt_key")),
			     b->key);
		KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(lo, 0), "column")),
			     b->column);
		KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(lo, 0), "value")),
			     b->value);
		if (!json_equal(json_object_get(m, "models"), json_object_get(r, "models")) ||
		    !json_equal(json_object_get(m, "attempts"), json_object_get(r, "attempts")) ||
		    !json_equal(json_object_get(m, "operators"), json_object_get(r, "operators")))
			kj_test_fail(__FILE__, __LINE__, "%s: figures differ from the rest's", b->sql);
		KJ_CHECK_INT(json_array_size(json_object_get(r, "left_out")), 0);
		/* One warning more than the rest's: the left-out attempt, named. */
		KJ_CHECK_INT(json_array_size(json_object_get(m, "warnings")),
			     json_array_size(json_object_get(r, "warnings")) + 1);
		KJ_CHECK(strstr(json_string_value(json_array_get(json_object_get(m, "warnings"),
			 json_array_size(json_object_get(m, "warnings")) - 1)), b->key) != NULL);
		json_decref(m);
		json_decref(r);
	}
	/* The target took none of them. */
	{
		sqlite3_stmt *q = NULL;

		KJ_CHECK(sqlite3_prepare_v2(kj__store_db(t), "SELECT count(*), sum(judge_s) FROM "
					    "attempts", -1, &q, NULL) == SQLITE_OK);
		KJ_CHECK(sqlite3_step(q) == SQLITE_ROW);
		KJ_CHECK_INT(sqlite3_column_int64(q, 0), 17);
		KJ_CHECK(isfinite(sqlite3_column_double(q, 1)));
		sqlite3_finalize(q);
	}
	kj_store_close(t);
}

/* The SOL-ExecBench score by hand: 0.5 at the baseline, 1 at the bound,
 * 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)) between and beyond; against a
 * baseline at or under the bound, 1 at or under the bound, else 0; no score
 * without three times. */
KJ_TEST(metrics_sol_score_by_hand)
{
	KJ_CHECK(fabs(kj_sol_score(4, 4, 1) - 0.5) < 1e-12);
	KJ_CHECK(fabs(kj_sol_score(1, 4, 1) - 1.0) < 1e-12);
	KJ_CHECK(fabs(kj_sol_score(2, 4, 1) - 0.75) < 1e-12);     /* 1 / (1 + 1/3) */
	KJ_CHECK(fabs(kj_sol_score(7, 4, 1) - 1.0 / 3) < 1e-12);  /* 1 / (1 + 6/3) */
	KJ_CHECK(kj_sol_score(1, 1, 2) == 1.0);
	KJ_CHECK(kj_sol_score(1.5, 1, 2) == 1.0); /* at or under the bound */
	KJ_CHECK(kj_sol_score(3, 1, 2) == 0.0);
	KJ_CHECK(isnan(kj_sol_score(1, 4, 0)));
	KJ_CHECK(isnan(kj_sol_score(0, 4, 1)));
	KJ_CHECK(isnan(kj_sol_score(1, (double)NAN, 1)));
}

/* The report's score per attempt and per model from the timings' sol_ms:
 * m1/C/0's cases score 8.5/9 and 0.5, its mean 13/18; m1/E/1 lacks a
 * figure for a case: no score; m1's score is m1/C/0's, of 1 attempt; m2
 * has none.  A store of version 3 (no sol_ms) reads with every score
 * unknown. */
KJ_TEST(metrics_sol_score_of_store)
{
	struct kj_store *s = make_store(kj_test_path("sol.db"));
	struct kj_error err;
	json_t *m = NULL, *m1, *att;
	char *md;
	size_t i;
	int seen = 0;

	exec(s, "UPDATE timings SET sol_ms = 0.5 WHERE attempt_key = 'm1C0';"
		"UPDATE timings SET sol_ms = 1 WHERE attempt_key = 'm1E1' AND case_idx = 1;");
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	m1 = json_object_get(json_object_get(m, "models"), "m1");
	CHECK_NEAR(m1, "sol_score", 13.0 / 18);
	CHECK_NEAR(m1, "sol_score_attempts", 1);
	CHECK_NULL(json_object_get(json_object_get(m, "models"), "m2"), "sol_score");
	json_array_foreach(json_object_get(m, "attempts"), i, att) {
		const char *k = json_string_value(json_object_get(att, "task"));
		json_int_t l = json_integer_value(json_object_get(att, "attempt"));

		if (!strcmp(json_string_value(json_object_get(att, "model")), "m1") &&
		    !strcmp(k, "C") && l == 0) {
			CHECK_NEAR(att, "sol_score", 13.0 / 18);
			CHECK_NEAR(att, "sol_cases", 2);
			seen++;
		}
		if (!strcmp(k, "E") && l == 1) {
			CHECK_NULL(att, "sol_score");
			seen++;
		}
	}
	KJ_CHECK_INT(seen, 2);
	md = kj_metrics_markdown(m, &err);
	KJ_CHECK(md && strstr(md, "## Speed of light") && strstr(md, "| m1 | 0.722 (1) |"));
	free(md);
	json_decref(m);

	/* Version 3: the column is not there. */
	exec(s, "ALTER TABLE timings DROP COLUMN sol_ms; PRAGMA user_version = 3;");
	kj_store_close(s);
	KJ_CHECK_OK(kj_store_open(kj_test_path("sol.db"), KJ_STORE_READONLY, 0, &s, &err), &err);
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	CHECK_NULL(json_object_get(json_object_get(m, "models"), "m1"), "sol_score");
	CHECK_NEAR(json_object_get(json_object_get(m, "models"), "m1"), "sol_score_attempts", 0);
	json_decref(m);
	kj_store_close(s);
}
