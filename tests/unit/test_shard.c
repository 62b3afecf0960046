/*
 * test_shard.c - a cluster run's parts without a cluster: the shards'
 * assignment, --shard's text and a shard's selection (lib/eval/shard.c),
 * the plan file (lib/eval/plan.c), squeue's lines and the
 * batch script (lib/eval/slurm.c), merging stores and publishing one
 * (lib/store/merge.c), and a store of schema 1 brought to 3.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "store/store_internal.h"
#include "unit.h"

/* --- the assignment ------------------------------------------------------------------------- */

/* A set of n_tasks tasks ("t0", ...; keys "k0", ...) and the candidates
 * per[t] each, in task order. */
static void make_set(struct kj_eval_set *set, size_t n_tasks, const size_t *per)
{
	size_t t, c, n = 0;

	kj_eval_set_init(set);
	set->tasks = calloc(n_tasks, sizeof(*set->tasks));
	KJ_CHECK(set->tasks != NULL);
	set->n_tasks = n_tasks;
	for (t = 0; t < n_tasks; t++) {
		n += per[t];
		snprintf(set->tasks[t].key, sizeof(set->tasks[t].key), "k%zu", t);
	}
	set->cands = calloc(n ? n : 1, sizeof(*set->cands));
	KJ_CHECK(set->cands != NULL);
	set->n_cands = n;
	n = 0;
	for (t = 0; t < n_tasks; t++)
		for (c = 0; c < per[t]; c++)
			set->cands[n++].task = (int)t;
}

static void free_set(struct kj_eval_set *set)
{
	free(set->tasks);
	free(set->cands);
	kj_eval_set_init(set);
}

static void assign_all(const struct kj_eval_set *set, int k, int *shard)
{
	size_t *todo = calloc(set->n_cands ? set->n_cands : 1, sizeof(*todo)), i;
	struct kj_error err;

	KJ_CHECK(todo != NULL);
	for (i = 0; i < set->n_cands; i++)
		todo[i] = i;
	KJ_CHECK_OK(kj_eval_shard_assign(set, todo, set->n_cands, k, shard, &err), &err);
	free(todo);
}

KJ_TEST(shard_assign_keeps_tasks_whole_and_balances)
{
	static const size_t per[] = { 3, 3, 2, 2, 1, 1 };
	struct kj_eval_set set;
	int shard[12], load[4] = { 0 }, again[12], first[6], i;

	make_set(&set, 6, per);
	assign_all(&set, 4, shard);
	for (i = 0; i < 6; i++)
		first[i] = -1;
	for (i = 0; i < 12; i++) {
		int t = set.cands[i].task;

		KJ_CHECK(shard[i] >= 0 && shard[i] < 4);
		load[shard[i]]++;
		/* Every attempt of a task in one shard (none is above 12/4). */
		if (first[t] < 0)
			first[t] = shard[i];
		KJ_CHECK_INT(shard[i], first[t]);
	}
	/* 3+3+2+2+1+1 over 4: no shard above 4, none empty. */
	for (i = 0; i < 4; i++)
		KJ_CHECK(load[i] >= 2 && load[i] <= 4);
	/* The same on every node. */
	assign_all(&set, 4, again);
	KJ_CHECK(memcmp(shard, again, sizeof(shard)) == 0);
	free_set(&set);
}

KJ_TEST(shard_assign_cuts_a_large_task)
{
	static const size_t per[] = { 10, 2 };
	struct kj_eval_set set;
	int shard[12], load[3] = { 0 }, i;

	make_set(&set, 2, per);
	assign_all(&set, 3, shard);
	for (i = 0; i < 12; i++)
		load[shard[i]]++;
	/* ceil(12/3) = 4: the 10 are cut into 4+3+3, the 2 join a 3. */
	for (i = 0; i < 3; i++)
		KJ_CHECK(load[i] >= 3 && load[i] <= 5);
	/* More shards than attempts: each gets at most one. */
	{
		static const size_t one[] = { 2 };
		int s2[2];

		free_set(&set);
		make_set(&set, 1, one);
		assign_all(&set, 5, s2);
		KJ_CHECK(s2[0] != s2[1]);
	}
	free_set(&set);
}

KJ_TEST(shard_plan_round_trip_and_tamper)
{
	static const size_t per[] = { 2, 1 };
	struct kj_eval_set set;
	struct kj_eval_plan p, q;
	struct kj_error err;
	char keys[3][65], *text;
	size_t todo[3] = { 0, 1, 2 }, i;
	json_t *j;
	const char *path = kj_test_path("plan.json");

	make_set(&set, 2, per);
	for (i = 0; i < 3; i++) {
		memset(keys[i], 'a' + (int)i, 64);
		keys[i][64] = '\0';
	}
	KJ_CHECK_OK(kj_eval_plan_make(&set, todo, 3, (const char (*)[65])keys, 2, "{\"x\":1}",
				      "cpu", "00112233445566778899aabbccddeeff", "/s", "/c", &p,
				      &err), &err);
	KJ_CHECK_INT(p.shards, 2);
	KJ_CHECK_INT(strlen(p.id), 16);
	j = kj_eval_plan_json(&p);
	KJ_CHECK(j != NULL);
	text = kj_json_text(j, JSON_INDENT(1), &err);
	KJ_CHECK(text != NULL);
	KJ_CHECK_OK(kj_write_file_atomic(path, text, strlen(text), &err), &err);
	KJ_CHECK_OK(kj_eval_plan_load(path, &q, &err), &err);
	KJ_CHECK_STR(q.id, p.id);
	KJ_CHECK_INT((int)q.n, 3);
	for (i = 0; i < 3; i++) {
		KJ_CHECK_STR(q.keys[i], p.keys[i]);
		KJ_CHECK_INT(q.shard[i], p.shard[i]);
	}
	KJ_CHECK_STR(q.settings, "{\"x\":1}");
	kj_eval_plan_release(&q);
	/* An attempt moved to another shard by hand: the id no longer
	 * matches, and the plan is refused. */
	json_array_set_new(json_array_get(json_object_get(j, "attempts"), 0), 1,
			   json_integer(!p.shard[0]));
	free(text);
	text = kj_json_text(j, JSON_INDENT(1), &err);
	KJ_CHECK_OK(kj_write_file_atomic(path, text, strlen(text), &err), &err);
	KJ_CHECK_INT(kj_eval_plan_load(path, &q, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "does not match its contents") != NULL);
	/* Not a plan at all. */
	KJ_CHECK_OK(kj_write_file_atomic(path, "{\"a\": 1}", 8, &err), &err);
	KJ_CHECK_INT(kj_eval_plan_load(path, &q, &err), KJ_EINVAL);
	free(text);
	json_decref(j);
	kj_eval_plan_release(&p);
	free_set(&set);
}

KJ_TEST(shard_parse_takes_i_of_k_and_refuses_the_rest)
{
	static const char *const bad[] = { "4/4", "a/4", "1/0", "-1/2", "1/2x", "1/100001", "/2",
					    "1/", "1", "", "99999999999999999999/2" };
	struct kj_error err;
	size_t j;
	int i = -1, k = -1;

	KJ_CHECK_OK(kj_eval_shard_parse("3/4", &i, &k, &err), &err);
	KJ_CHECK_INT(i, 3);
	KJ_CHECK_INT(k, 4);
	KJ_CHECK_OK(kj_eval_shard_parse("0/100000", &i, &k, &err), &err);
	KJ_CHECK_INT(k, KJ_EVAL_SHARDS_MAX);
	for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
		i = k = -7;
		KJ_CHECK_INT(kj_eval_shard_parse(bad[j], &i, &k, &err), KJ_EINVAL);
		/* The whole text is named, and nothing is set. */
		KJ_CHECK(strncmp(err.msg + 1, bad[j], strlen(bad[j])) == 0);
		KJ_CHECK(i == -7 && k == -7);
	}
}

KJ_TEST(shard_select_without_a_plan_is_the_assignment)
{
	static const size_t per[] = { 3, 3, 2, 2, 1, 1 };
	struct kj_eval_set set;
	struct kj_error err;
	int shard[12], i, c, seen[12] = { 0 };
	unsigned char in[12];

	make_set(&set, 6, per);
	assign_all(&set, 4, shard);
	for (i = 0; i < 4; i++) {
		memset(in, 7, sizeof(in));
		KJ_CHECK_OK(kj_eval_shard_select(&set, NULL, NULL, i, 4, in, &err), &err);
		for (c = 0; c < 12; c++) {
			KJ_CHECK_INT(in[c], shard[c] == i);
			seen[c] += in[c];
		}
	}
	/* Every attempt in exactly one shard. */
	for (c = 0; c < 12; c++)
		KJ_CHECK_INT(seen[c], 1);
	free_set(&set);
}

KJ_TEST(shard_select_with_a_plan_finds_its_attempts_by_key)
{
	static const size_t per[] = { 2, 2 };
	struct kj_eval_set set;
	struct kj_eval_plan p;
	struct kj_error err;
	char keys[4][65];
	size_t todo[4] = { 0, 1, 2, 3 };
	unsigned char in[4];
	int i, c, n;

	make_set(&set, 2, per);
	for (c = 0; c < 4; c++) {
		memset(keys[c], 'a' + c, 64);
		keys[c][64] = '\0';
	}
	KJ_CHECK_OK(kj_eval_plan_make(&set, todo, 4, (const char (*)[65])keys, 2, "{}", "cpu",
				      "00112233445566778899aabbccddeeff", "/s", "/c", &p, &err),
		    &err);
	for (i = 0; i < 2; i++) {
		KJ_CHECK_OK(kj_eval_shard_select(&set, (const char (*)[65])keys, &p, i, 2, in, &err),
			    &err);
		for (c = 0, n = 0; c < 4; c++) {
			KJ_CHECK_INT(in[c], p.shard[c] == i);
			n += in[c];
		}
		KJ_CHECK_INT(n, 2);
	}
	/* A candidate whose key changed since the plan was made (its source,
	 * the settings): the shard is refused, not judged with one missing. */
	keys[p.shard[0] == 0 ? 0 : 1][0] = 'z';
	i = p.shard[0] == 0 ? 0 : p.shard[1];
	KJ_CHECK_INT(kj_eval_shard_select(&set, (const char (*)[65])keys, &p, i, 2, in, &err),
		     KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "the plan gives shard") != NULL);
	KJ_CHECK(strstr(err.msg, "hold 1 of them") != NULL);
	kj_eval_plan_release(&p);
	free_set(&set);
}

KJ_TEST(shard_status_file_clean_and_store_lock)
{
	struct kj_config cfg;
	struct kj_error err;
	char dir[4096], path[4200];
	json_error_t je;
	json_t *o;
	FILE *f;
	int fd, fd2;

	snprintf(dir, sizeof(dir), "%s", kj_test_path("pub"));
	KJ_CHECK_INT(mkdir(dir, 0755), 0);
	kj_config_init(&cfg, NULL);
	cfg.slurm.job_id = "77";
	KJ_CHECK_OK(kj_eval_shard_status(&cfg, dir, 1, 4, "abcd", 0, 5, 3, &err), &err);
	snprintf(path, sizeof(path), "%s/shard-1.json", dir);
	o = json_load_file(path, 0, &je);
	KJ_CHECK(o != NULL);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "shard")), 1);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "shards")), 4);
	KJ_CHECK_STR(json_string_value(json_object_get(o, "plan")), "abcd");
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "exit")), 0);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "attempts")), 5);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "done")), 3);
	KJ_CHECK_STR(json_string_value(json_object_get(o, "slurm_job_id")), "77");
	json_decref(o);
	/* A status where none can be written names the file. */
	KJ_CHECK(kj_eval_shard_status(&cfg, "/nonexistent/kj", 0, 1, NULL, 1, 0, 0, &err) != KJ_OK);
	KJ_CHECK(strstr(err.msg, "/nonexistent/kj/shard-0.json") != NULL);
	/* What a killed publishing of shard 1 left goes; shard 2's stays. */
	snprintf(path, sizeof(path), "%s/shard-1.db.tmp-123", dir);
	f = fopen(path, "w");
	KJ_CHECK(f != NULL && fclose(f) == 0);
	snprintf(path, sizeof(path), "%s/shard-2.db.tmp-123", dir);
	f = fopen(path, "w");
	KJ_CHECK(f != NULL && fclose(f) == 0);
	kj_eval_shard_clean(dir, 1);
	snprintf(path, sizeof(path), "%s/shard-1.db.tmp-123", dir);
	KJ_CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/shard-2.db.tmp-123", dir);
	KJ_CHECK(access(path, F_OK) == 0);
	/* One eval per store: a second lock is refused, and said so. */
	snprintf(path, sizeof(path), "%s/s.db", dir);
	f = fopen(path, "w");
	KJ_CHECK(f != NULL && fclose(f) == 0);
	fd = kj_eval_lock_store(path, 0, &err);
	KJ_CHECK(fd >= 0);
	KJ_CHECK_INT(kj_eval_lock_store(path, 0, &err), -1);
	KJ_CHECK_INT(err.code, KJ_EBUSY);
	KJ_CHECK(strstr(err.msg, "another kjudge eval") != NULL);
	close(fd);
	fd2 = kj_eval_lock_store(path, 0, &err);
	KJ_CHECK(fd2 >= 0);
	close(fd2);
	KJ_CHECK_INT(kj_eval_lock_store(kj_test_path("missing.db"), 0, &err), -1);
	KJ_CHECK_INT(err.code, KJ_ENOENT);
}

/* --- squeue and the batch script ------------------------------------------------------------ */

KJ_TEST(shard_squeue_lines)
{
	struct kj_eval_slurm_task *t = NULL;
	struct kj_error err;
	size_t n = 0;

	KJ_CHECK_OK(kj_eval_slurm_parse_queue("123_4 RUNNING\n123_[5-7,9%2] PENDING\n\n"
					      "124 PENDING\n", &t, &n, &err), &err);
	KJ_CHECK_INT((int)n, 6);
	KJ_CHECK(t[0].job == 123 && t[0].task == 4 && strcmp(t[0].state, "RUNNING") == 0);
	KJ_CHECK(t[1].task == 5 && t[3].task == 7 && t[4].task == 9);
	KJ_CHECK_STR(t[4].state, "PENDING");
	KJ_CHECK(t[5].job == 124 && t[5].task == -1);
	free(t);
	KJ_CHECK_OK(kj_eval_slurm_parse_queue("", &t, &n, &err), &err);
	KJ_CHECK_INT((int)n, 0);
	free(t);
	KJ_CHECK_INT(kj_eval_slurm_parse_queue("123_x RUNNING\n", &t, &n, &err), KJ_EINVAL);
	KJ_CHECK_INT(kj_eval_slurm_parse_queue("squeue: error: oops\n", &t, &n, &err), KJ_EINVAL);
	KJ_CHECK(t == NULL && n == 0);
}

KJ_TEST(shard_batch_script_quotes_every_word)
{
	const char *words[] = { "--device", "cpu", "--python", "/opt/it's/python" };
	struct kj_eval_slurm_job j = { "/bin/kjudge", "/s u/ite", "/c", "/d/plan.json",
				       "/d/shards", "/d/logs", "0123456789abcdef", 4, words, 4 };
	struct kj_error err;
	char *text = kj_eval_slurm_script(&j, &err);

	KJ_CHECK(text != NULL);
	KJ_CHECK(strstr(text, "#SBATCH --output='/d/logs/shard-%a.out'\n") != NULL);
	KJ_CHECK(strstr(text, "'/s u/ite'") != NULL);
	KJ_CHECK(strstr(text, "'/opt/it'\\''s/python'") != NULL);
	KJ_CHECK(strstr(text, "--shard \"$i/4\"") != NULL);
	free(text);
	j.suite = "/a\nb";
	KJ_CHECK(kj_eval_slurm_script(&j, &err) == NULL);
	KJ_CHECK_INT(err.code, KJ_EINVAL);
}

/*
 * The value of an #SBATCH line as sbatch reads it (Slurm 22.05's
 * _get_argument: quotes group, a backslash escapes the next character, an
 * unquoted '#' or blank ends it), then as Slurm names the output file
 * (%% one '%', %a the array task, here "7", %j the job, "42"): what a
 * shard's log would be.
 */
static void sbatch_output(const char *text, char *out, size_t size)
{
	const char *p = strstr(text, "#SBATCH --output=");
	char value[4096], q = 0;
	size_t n = 0, o = 0;
	int esc = 0;

	KJ_CHECK(p != NULL);
	for (p += strlen("#SBATCH --output="); *p && *p != '\n' && n + 1 < sizeof(value); p++) {
		if (esc) {
			esc = 0;
		} else if (*p == '\\') {
			esc = 1;
			continue;
		} else if (q) {
			if (*p == q) {
				q = 0;
				continue;
			}
		} else if (*p == '"' || *p == '\'') {
			q = *p;
			continue;
		} else if (*p == ' ' || *p == '#') {
			break;
		}
		value[n++] = *p;
	}
	value[n] = '\0';
	KJ_CHECK(q == 0 && !esc);
	for (p = value; *p && o + 3 < size; p++) {
		if (*p == '%' && (p[1] == '%' || p[1] == 'a' || p[1] == 'j')) {
			const char *with = p[1] == '%' ? "%" : p[1] == 'a' ? "7" : "42";

			memcpy(out + o, with, strlen(with));
			o += strlen(with);
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

/* Paths with a blank, a '%' (%j a pattern of Slurm's), a quote and a '#':
 * sbatch reads back exactly the logs' directory; a backslash is refused
 * before anything is written. */
KJ_TEST(shard_script_output_path_escaped_for_sbatch)
{
	static const char *const dirs[] = { "/d/a b/logs", "/d/100%/x%j/logs", "/d/it's/logs",
					    "/d/#1 \"q\"/logs", "/d/%%a/logs" };
	struct kj_eval_slurm_job j = { "/bin/kjudge", "/s", "/c", "/d/plan.json", "/d/shards",
				       NULL, "0123456789abcdef", 2, NULL, 0 };
	struct kj_error err;
	char want[4200], got[4200];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *text;

		j.logs_dir = dirs[i];
		text = kj_eval_slurm_script(&j, &err);
		KJ_CHECK(text != NULL);
		sbatch_output(text, got, sizeof(got));
		snprintf(want, sizeof(want), "%s/shard-7.out", dirs[i]);
		KJ_CHECK_STR(got, want);
		free(text);
	}
	j.logs_dir = "/d/back\\slash/logs";
	KJ_CHECK(kj_eval_slurm_script(&j, &err) == NULL);
	KJ_CHECK_INT(err.code, KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "backslash") != NULL);
	KJ_CHECK_INT(kj_eval_slurm_path_ok("/d/back\\slash", &err), KJ_EINVAL);
	KJ_CHECK_INT(kj_eval_slurm_path_ok("/d/a b/100%", &err), KJ_OK);
	KJ_CHECK_INT(kj_eval_slurm_path_ok("/d/a\nb", &err), KJ_EINVAL);
}

/* --- merging ----------------------------------------------------------------------------- */

static void exec_sql(struct kj_store *s, const char *sql)
{
	struct kj_error err;

	KJ_CHECK_OK(kj_store_exec(s, sql, &err), &err);
}

static long long one(struct kj_store *s, const char *sql)
{
	return kj_test_store_int(s, sql);
}

/* An attempt row (status NULL: running) with one case result. */
static void attempt(struct kj_store *s, const char *key, const char *status, int clean,
		    const char *when)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO attempts (attempt_key, run_id, task_key, task, model, attempt, "
		 "cand_sha256, origin, device, state, status, clean, started_at, finished_at, "
		 "speedup) VALUES ('%s', 1, 'kA', 'A', 'm', '%s', 'c1', 'x', 'cpu', '%s', %s%s%s, "
		 "%d, '%s', '%s', 1.5);"
		 "INSERT INTO case_results (attempt_key, phase, case_idx, status) VALUES "
		 "('%s', 'verify', 1, '%s');",
		 key, key, status ? "done" : "running", status ? "'" : "", status ? status : "NULL",
		 status ? "'" : "", clean, when, when, key, status ? status : "pass");
	exec_sql(s, sql);
}

/* A shard's store: its run, the task, the candidate. */
static struct kj_store *shard_store(const char *path, const char *started)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	char sql[1024];

	KJ_CHECK_OK(kj_store_open(path, KJ_STORE_CREATE, 0, &s, &err), &err);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO runs (run_id, started_at, judge_version, command, suite, candidates, "
		 "settings) VALUES (1, '%s', '0.1.0', '[\"eval\"]', 's', 'c', '{}');"
		 "INSERT INTO tasks VALUES ('kA', 'A', 'A.py', NULL, NULL, 'a', NULL, 'src', NULL);"
		 "INSERT INTO suite_tasks VALUES (1, 'kA');"
		 "INSERT INTO candidates VALUES ('c1', 'code');"
		 "INSERT INTO meta VALUES ('batch', '00112233445566778899aabbccddeeff');", started);
	exec_sql(s, sql);
	return s;
}

static void merge_ok(struct kj_store *t, const char *src, struct kj_store_merge_stats *st)
{
	struct kj_error err;

	KJ_CHECK_OK(kj_store_merge(t, src, st, &err), &err);
}

KJ_TEST(shard_merge_is_idempotent_and_counts_only_verdicts)
{
	struct kj_store *a, *b, *t = NULL;
	struct kj_store_merge_stats st;
	struct kj_error err;
	char pa[1024], pb[1024], pt[1024];

	snprintf(pa, sizeof(pa), "%s", kj_test_path("a.db"));
	snprintf(pb, sizeof(pb), "%s", kj_test_path("b.db"));
	snprintf(pt, sizeof(pt), "%s", kj_test_path("t.db"));

	a = shard_store(pa, "2026-12-02T10:00:00Z");
	attempt(a, "x1", "pass", 1, "2026-12-02T10:01:00Z");
	attempt(a, "x2", "judge_error", 0, "2026-12-02T10:02:00Z");
	attempt(a, "x3", NULL, 0, "2026-12-02T10:03:00Z");  /* killed mid-case */
	kj_store_close(a);
	KJ_CHECK_OK(kj_store_open(pt, KJ_STORE_CREATE, 0, &t, &err), &err);
	merge_ok(t, pa, &st);
	KJ_CHECK(st.attempts_new == 2 && st.attempts_running == 1 && st.runs_new == 1);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM attempts"), 2);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM attempts WHERE attempt_key = 'x3'"), 0);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM case_results WHERE attempt_key = 'x3'"), 0);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM suite_tasks"), 1);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM meta WHERE key = 'batch'"), 1);
	/* Again: nothing changes. */
	merge_ok(t, pa, &st);
	KJ_CHECK(st.attempts_new == 0 && st.attempts_same == 2 && st.runs_new == 0);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM runs"), 1);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM case_results"), 2);

	/* A requeued shard's second store: x1 judged again (another
	 * speedup), x2 now a verdict, x3 done. */
	b = shard_store(pb, "2026-12-02T11:00:00Z");
	attempt(b, "x1", "fail", 0, "2026-12-02T11:01:00Z");
	attempt(b, "x2", "pass", 0, "2026-12-02T11:02:00Z");
	attempt(b, "x3", "pass", 1, "2026-12-02T11:03:00Z");
	kj_store_close(b);
	merge_ok(t, pb, &st);
	KJ_CHECK(st.attempts_new == 1 && st.attempts_replaced == 1 && st.attempts_same == 1);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM runs"), 2);
	/* The first verdict of x1 stands; x2's judge error gave way. */
	KJ_CHECK_INT(one(t, "SELECT status = 'pass' AND clean = 1 FROM attempts WHERE "
			 "attempt_key = 'x1'"), 1);
	KJ_CHECK_INT(one(t, "SELECT status = 'pass' FROM attempts WHERE attempt_key = 'x2'"), 1);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM case_results WHERE attempt_key = 'x2'"), 1);
	KJ_CHECK_INT(one(t, "SELECT r.started_at = '2026-12-02T11:00:00Z' FROM attempts a JOIN "
			 "runs r USING (run_id) WHERE a.attempt_key = 'x2'"), 1);
	merge_ok(t, pb, &st);
	merge_ok(t, pa, &st);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM attempts WHERE state = 'done'"), 3);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM runs"), 2);

	/* Not a store, a store into itself: refused, the target as it was. */
	{
		const char *junk = kj_test_path("junk.db");

		KJ_CHECK_OK(kj_write_file_atomic(junk, "not sqlite at all, not at all", 29, &err),
			    &err);
		KJ_CHECK_INT(kj_store_merge(t, junk, &st, &err), KJ_ESTORE);
		KJ_CHECK(kj_store_merge(t, pt, &st, &err) != KJ_OK);
		KJ_CHECK(strstr(err.msg, "into itself") != NULL);
		KJ_CHECK_INT(one(t, "SELECT count(*) FROM attempts"), 3);
	}
	kj_store_close(t);
}

KJ_TEST(shard_publish_is_one_file_and_merges)
{
	struct kj_store *a, *t = NULL, *r = NULL;
	struct kj_store_merge_stats st;
	struct kj_error err;
	char pa[1024], pub[1024], wal[1100];

	snprintf(pa, sizeof(pa), "%s", kj_test_path("live.db"));
	snprintf(pub, sizeof(pub), "%s", kj_test_path("pub.db"));

	a = shard_store(pa, "2026-12-02T10:00:00Z");
	attempt(a, "y1", "pass", 1, "2026-12-02T10:01:00Z");
	KJ_CHECK_OK(kj_store_publish(a, pub, &err), &err);
	/* Written while a is open (its WAL in use): one file, no -wal. */
	snprintf(wal, sizeof(wal), "%s-wal", pub);
	KJ_CHECK(access(wal, F_OK) != 0);
	KJ_CHECK_OK(kj_store_open(pub, KJ_STORE_READONLY, 0, &r, &err), &err);
	KJ_CHECK_INT(one(r, "PRAGMA journal_mode = DELETE") >= 0, 1);
	KJ_CHECK_INT(one(r, "SELECT count(*) FROM attempts"), 1);
	kj_store_close(r);
	attempt(a, "y2", "fail", 0, "2026-12-02T10:02:00Z");
	KJ_CHECK_OK(kj_store_publish(a, pub, &err), &err);
	kj_store_close(a);
	KJ_CHECK_OK(kj_store_open(kj_test_path("t2.db"), KJ_STORE_CREATE, 0, &t, &err), &err);
	merge_ok(t, pub, &st);
	KJ_CHECK_INT((int)st.attempts_new, 2);
	kj_store_close(t);
	/* Into a directory that is not there: an error, nothing left. */
	a = NULL;
	KJ_CHECK_OK(kj_store_open(pa, 0, 0, &a, &err), &err);
	KJ_CHECK(kj_store_publish(a, kj_test_path("no/such/dir/p.db"), &err) != KJ_OK);
	kj_store_close(a);
}

KJ_TEST(shard_store_of_schema_1_is_upgraded_and_merged)
{
	struct kj_store *s = NULL, *t = NULL;
	struct kj_store_merge_stats st;
	struct kj_error err;
	sqlite3 *db = NULL;
	char p1[1024];

	snprintf(p1, sizeof(p1), "%s", kj_test_path("v1.db"));

	/* A store as version 1 wrote it: no runs.origin. */
	s = shard_store(p1, "2026-12-01T10:00:00Z");
	attempt(s, "z1", "pass", 1, "2026-12-01T10:01:00Z");
	kj_store_close(s);
	KJ_CHECK(sqlite3_open(p1, &db) == SQLITE_OK);
	if (sqlite3_exec(db, "CREATE TABLE old_runs (run_id INTEGER PRIMARY KEY, started_at TEXT "
			 "NOT NULL, finished_at TEXT, judge_version TEXT NOT NULL, command TEXT NOT "
			 "NULL, suite TEXT NOT NULL, candidates TEXT NOT NULL, settings TEXT NOT NULL, "
			 "env TEXT); INSERT INTO old_runs SELECT run_id, started_at, finished_at, "
			 "judge_version, command, suite, candidates, settings, env FROM runs; "
			 "DROP TABLE runs; ALTER TABLE old_runs RENAME TO runs; "
			 "PRAGMA user_version = 1; UPDATE meta SET value = '1' WHERE key = "
			 "'schema_version'", NULL, NULL, NULL) != SQLITE_OK)
		KJ_CHECK_STR(sqlite3_errmsg(db), "");
	sqlite3_close(db);
	/* Read as it is, and merged. */
	KJ_CHECK_OK(kj_store_open(kj_test_path("t3.db"), KJ_STORE_CREATE, 0, &t, &err), &err);
	merge_ok(t, p1, &st);
	KJ_CHECK_INT((int)st.attempts_new, 1);
	merge_ok(t, p1, &st);
	KJ_CHECK_INT(one(t, "SELECT count(*) FROM runs"), 1);
	kj_store_close(t);
	/* Opened for writing: brought to this version. */
	KJ_CHECK_OK(kj_store_open(p1, 0, 0, &s, &err), &err);
	KJ_CHECK_INT(one(s, "PRAGMA user_version"), KJ_STORE_SCHEMA_VERSION);
	KJ_CHECK_INT(one(s, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = "
			 "'origin'"), 1);
	KJ_CHECK_INT(one(s, "SELECT count(*) FROM attempts"), 1);
	kj_store_close(s);
}
