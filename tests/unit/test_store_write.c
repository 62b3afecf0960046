/*
 * test_store_write.c - the rows eval writes through the store's typed
 * writes (lib/store/write.c): each written and read back, an attempt begun
 * again losing its partial rows, the baseline another attempt reads, and
 * the clean errors of a store that cannot be written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "kjudge/store.h"
#include "store/store_internal.h"
#include "unit.h"

static const char task_key[] = "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a";
static const char key_a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char key_b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
static const char key_c[] = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
static const char batch1[] = "00112233445566778899aabbccddeeff";
static const char batch2[] = "ffeeddccbbaa99887766554433221100";

/* The first column of the first row of sql, as text ("" for NULL or no
 * row). */
static void text_of(struct kj_store *s, const char *sql, char *out, size_t size)
{
	sqlite3_stmt *st = NULL;

	*out = '\0';
	KJ_CHECK(sqlite3_prepare_v2(kj__store_db(s), sql, -1, &st, NULL) == SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

static long long count(struct kj_store *s, const char *sql)
{
	char v[64];

	text_of(s, sql, v, sizeof(v));
	return *v ? atoll(v) : -1;
}

/* A run of one task; its id. */
static long long one_run(struct kj_store *s)
{
	static const char src[] = "class Model: pass\n";
	struct kj_store_run run = { .judge_version = "0.1.0", .command = "[\"kjudge\",\"eval\"]",
				    .suite = "suite", .candidates = "cands", .settings = "{}" };
	struct kj_store_task task = { .key = task_key, .name = "relu", .path = "ops/relu.py",
				      .level = 1, .problem = -1, .sha256 = "ab",
				      .cases_sha256 = "", .source = src,
				      .source_len = sizeof(src) - 1 };
	struct kj_error err;
	long long id = -1;

	KJ_CHECK_OK(kj_store_run_begin(s, &run, &task, 1, &id, &err), &err);
	KJ_CHECK(id > 0);
	return id;
}

static struct kj_store_attempt attempt_of(const char *key, long long run_id)
{
	static const char src[] = "print('candidate')";
	struct kj_store_attempt a = {
		.key = key, .run_id = run_id, .task_key = task_key, .task = "relu",
		.model = "m", .attempt = "0", .round = -1, .cand_sha256 = "cd",
		.source = src, .source_len = sizeof(src) - 1, .origin = "m/relu/0.py",
		.prompt_tokens = 12, .completion_tokens = -1, .generation_s = -1,
		.device = "cpu",
	};

	return a;
}

/* A timed benchmark case whose reference was measured (a baseline). */
static int timed_case(struct kj_store *s, const char *key, int idx, double ref_judge_ms,
		      struct kj_error *err)
{
	char rec[256];
	struct kj_store_case c = { .phase = "benchmark", .case_idx = idx, .status = "pass",
				   .error_type = "None", .charged = "none", .record = rec };
	struct kj_store_timing t = { .impl_ms = 1.0, .ref_ms = 2.0, .speedup = 2.0,
				     .impl_samples = 10, .ref_samples = 11 };

	/* A figure of 7 ms or more was measured in queued rounds. */
	snprintf(rec, sizeof(rec), "{\"timing\": {\"ref_judge_ms\": %g, \"ref_overhead_ms\": "
		 "0.25, \"ref_measured\": 1, \"rounds\": \"%s\"}}", ref_judge_ms,
		 ref_judge_ms >= 7 ? "queued" : "synced");
	return kj_store_case(s, key, &c, &t, err);
}

static struct kj_store_verdict pass_verdict(void)
{
	struct kj_store_verdict v = { .status = "pass", .clean = 1, .charged = "none",
				      .cases_total = 2, .cases_passed = 2, .static_ok = 1,
				      .disabled_ok = 1, .profile_ok = -1, .speedup = 2.0,
				      .judge_s = 3.5, .env = "{\"host\":\"h\"}" };

	return v;
}

KJ_TEST(store_write_round_trip)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_store_state st;
	struct kj_store_attempt a;
	struct kj_store_verdict v = pass_verdict();
	struct kj_store_case c = { .phase = "verify", .case_idx = 1, .params = "{\"n\":4}",
				   .status = "pass", .error_type = "None", .charged = "none",
				   .record = "{}" };
	char batch[33], text[256];
	long long run_id;

	KJ_CHECK_OK(kj_store_open(kj_test_path("w.db"), KJ_STORE_CREATE, 0, &s, &err), &err);
	/* The batch key: the first one offered stays. */
	KJ_CHECK_OK(kj_store_batch(s, batch1, batch, &err), &err);
	KJ_CHECK_STR(batch, batch1);
	KJ_CHECK_OK(kj_store_batch(s, batch2, batch, &err), &err);
	KJ_CHECK_STR(batch, batch1);
	run_id = one_run(s);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM suite_tasks"), 1);
	text_of(s, "SELECT name || ' ' || path || ' ' || level || ' ' || "
		"coalesce(problem, 'null') || ' ' || coalesce(cases_sha256, 'null') FROM tasks",
		text, sizeof(text));
	KJ_CHECK_STR(text, "relu ops/relu.py 1 null null");

	/* An attempt: unknown before, running once begun. */
	KJ_CHECK_OK(kj_store_attempt_state(s, key_a, &st, &err), &err);
	KJ_CHECK_INT(st.found, 0);
	a = attempt_of(key_a, run_id);
	KJ_CHECK_OK(kj_store_attempt_begin(s, &a, &err), &err);
	KJ_CHECK_OK(kj_store_attempt_state(s, key_a, &st, &err), &err);
	KJ_CHECK_INT(st.found, 1);
	KJ_CHECK_STR(st.state, "running");
	KJ_CHECK_STR(st.status, "");
	text_of(s, "SELECT prompt_tokens || ' ' || coalesce(completion_tokens, 'null') || ' ' || "
		"coalesce(round, 'null') FROM attempts", text, sizeof(text));
	KJ_CHECK_STR(text, "12 null null");
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM candidates WHERE source = "
			   "'print(''candidate'')'"), 1);

	/* A case without a timing, a case with one. */
	KJ_CHECK_OK(kj_store_case(s, key_a, &c, NULL, &err), &err);
	KJ_CHECK_OK(timed_case(s, key_a, 2, 5.0, &err), &err);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM case_results"), 2);
	text_of(s, "SELECT case_idx || ' ' || impl_ms || ' ' || ref_ms || ' ' || speedup || ' ' "
		"|| impl_samples || ' ' || ref_samples FROM timings", text, sizeof(text));
	KJ_CHECK_STR(text, "2 1.0 2.0 2.0 10 11");
	text_of(s, "SELECT params FROM case_results WHERE case_idx = 1", text, sizeof(text));
	KJ_CHECK_STR(text, "{\"n\":4}");

	/* The verdict, then the run's end. */
	KJ_CHECK_OK(kj_store_attempt_done(s, key_a, &v, &err), &err);
	KJ_CHECK_OK(kj_store_attempt_state(s, key_a, &st, &err), &err);
	KJ_CHECK_STR(st.state, "done");
	KJ_CHECK_STR(st.status, "pass");
	KJ_CHECK_INT(st.clean, 1);
	text_of(s, "SELECT cases_passed || ' ' || static_ok || ' ' || coalesce(profile_ok, 'null') "
		"|| ' ' || judge_s || ' ' || env || ' ' || (finished_at LIKE '____-__-__T__:__:__Z') "
		"FROM attempts", text, sizeof(text));
	KJ_CHECK_STR(text, "2 1 null 3.5 {\"host\":\"h\"} 1");
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM runs WHERE finished_at IS NULL"), 1);
	KJ_CHECK_OK(kj_store_run_end(s, run_id, &err), &err);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM runs WHERE finished_at IS NULL"), 0);
	kj_store_close(s);
}

KJ_TEST(store_write_attempt_begun_again)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_store_attempt a;

	KJ_CHECK_OK(kj_store_open(kj_test_path("a.db"), KJ_STORE_CREATE, 0, &s, &err), &err);
	a = attempt_of(key_a, one_run(s));
	KJ_CHECK_OK(kj_store_attempt_begin(s, &a, &err), &err);
	KJ_CHECK_OK(timed_case(s, key_a, 1, 5.0, &err), &err);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM timings"), 1);
	/* A judge killed mid-attempt: the next run begins it again, and its
	 * partial rows are gone in the same transaction. */
	KJ_CHECK_OK(kj_store_attempt_begin(s, &a, &err), &err);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM timings"), 0);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM case_results"), 0);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM attempts WHERE state = 'running'"), 1);
	kj_store_close(s);
}

KJ_TEST(store_write_baseline_of_another_attempt)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_store_attempt a;
	struct kj_store_verdict v = pass_verdict();
	double ref[8] = { 0 };
	long long run_id;

	KJ_CHECK_OK(kj_store_open(kj_test_path("b.db"), KJ_STORE_CREATE, 0, &s, &err), &err);
	run_id = one_run(s);
	a = attempt_of(key_a, run_id);
	KJ_CHECK_OK(kj_store_attempt_begin(s, &a, &err), &err);
	KJ_CHECK_OK(timed_case(s, key_a, 2, 5.0, &err), &err);
	/* Running: its committed cases already count (eval gives up the
	 * device between an attempt's benchmark and its later layers). */
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cpu", "{}", key_b, 2, ref, &err), &err);
	KJ_CHECK(ref[0] == 0 && ref[1] == 5.0 && ref[3] == 0.25 && ref[5] == 2.0);
	memset(ref, 0, sizeof(ref));
	KJ_CHECK_OK(kj_store_attempt_done(s, key_a, &v, &err), &err);
	/* Done: another attempt reads its figures for case 2, none for case
	 * 1; the attempt itself, another device or other settings read none. */
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cpu", "{}", key_b, 2, ref, &err), &err);
	KJ_CHECK(ref[0] == 0 && ref[1] == 5.0 && ref[3] == 0.25 && ref[5] == 2.0 && ref[7] == 0);
	memset(ref, 0, sizeof(ref));
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cpu", "{}", key_a, 2, ref, &err), &err);
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cuda", "{}", key_b, 2, ref, &err), &err);
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cpu", "{\"x\":1}", key_b, 2, ref, &err),
		    &err);
	KJ_CHECK(ref[1] == 0 && ref[3] == 0 && ref[5] == 0 && ref[7] == 0);
	kj_store_close(s);
}

/* Whether the baseline's rounds were queued comes back with it. */
KJ_TEST(store_write_baseline_says_its_rounds)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_store_attempt a;
	struct kj_store_verdict v = pass_verdict();
	double ref[4] = { 0 };

	KJ_CHECK_OK(kj_store_open(kj_test_path("q.db"), KJ_STORE_CREATE, 0, &s, &err), &err);
	a = attempt_of(key_a, one_run(s));
	KJ_CHECK_OK(kj_store_attempt_begin(s, &a, &err), &err);
	KJ_CHECK_OK(timed_case(s, key_a, 1, 9.0, &err), &err);
	KJ_CHECK_OK(kj_store_attempt_done(s, key_a, &v, &err), &err);
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cpu", "{}", key_b, 1, ref, &err), &err);
	KJ_CHECK(ref[0] == 9.0 && ref[1] == 0.25 && ref[2] == 2.0 && ref[3] == 1.0);
	/* A done attempt's figure stands over one still running. */
	a = attempt_of(key_b, a.run_id);
	KJ_CHECK_OK(kj_store_attempt_begin(s, &a, &err), &err);
	KJ_CHECK_OK(timed_case(s, key_b, 1, 3.0, &err), &err);
	KJ_CHECK_OK(kj_store_baseline(s, task_key, "cpu", "{}", key_c, 1, ref, &err), &err);
	KJ_CHECK(ref[0] == 9.0 && ref[3] == 1.0);
	kj_store_close(s);
}

KJ_TEST(store_write_refused_cleanly)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_store_attempt a;
	struct kj_store_verdict v = pass_verdict();
	const char *p = kj_test_path("ro.db");
	char batch[33];
	long long run_id = -1;
	sqlite3 *db = NULL;

	KJ_CHECK_OK(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), &err);
	one_run(s);
	/* The verdict of an attempt that was never begun: no row to finish. */
	KJ_CHECK_INT(kj_store_attempt_done(s, key_b, &v, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "row is gone") != NULL);
	kj_store_close(s);

	/* A store opened read-only (report's): every write a clean error,
	 * nothing written. */
	KJ_CHECK_OK(kj_store_open(p, KJ_STORE_READONLY, 0, &s, &err), &err);
	a = attempt_of(key_a, 1);
	KJ_CHECK_INT(kj_store_attempt_begin(s, &a, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "the results store") != NULL);
	KJ_CHECK_INT(kj_store_batch(s, batch1, batch, &err), KJ_ESTORE);
	KJ_CHECK_STR(batch, "");
	{
		struct kj_store_run run = { .judge_version = "0.1.0", .command = "[]",
					    .suite = "s", .candidates = "c", .settings = "{}" };

		KJ_CHECK_INT(kj_store_run_begin(s, &run, NULL, 0, &run_id, &err), KJ_ESTORE);
		KJ_CHECK_INT(run_id, 0);
	}
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM attempts"), 0);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM runs"), 1);
	kj_store_close(s);

	/* A store another process holds the write lock of: KJ_EBUSY once the
	 * busy timeout has passed, nothing written. */
	KJ_CHECK_OK(kj_store_open(p, 0, 100, &s, &err), &err);
	KJ_CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	KJ_CHECK(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
	KJ_CHECK_INT(kj_store_attempt_begin(s, &a, &err), KJ_EBUSY);
	KJ_CHECK(strstr(err.msg, "locked") != NULL);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM attempts"), 0);
	kj_store_close(s);

	/* A store that is not there: opened for writing without CREATE. */
	KJ_CHECK_INT(kj_store_open(kj_test_path("missing.db"), 0, 0, &s, &err), KJ_ENOENT);
	KJ_CHECK(s == NULL);
}
