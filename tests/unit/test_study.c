/*
 * test_study.c - a study in its store (lib/eval/study.c) over tests/eval/:
 * the run's row and the attempts left, earlier verdicts counted and
 * skipped, earlier judge errors run again only when asked, a shard's
 * share, a plan's batch that is not the store's, a second eval locked out,
 * and a GPU list parsed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/config.h"
#include "kjudge/eval.h"
#include "kjudge/store.h"
#include "unit.h"

/* tests/: $KJ_TESTS (tests/run sets it), else where it was built from. */
static const char *tests_dir(void)
{
	const char *dir = getenv("KJ_TESTS");

	return dir && *dir ? dir : KJ_TESTS_DIR;
}

static void load_set(struct kj_eval_set *set)
{
	struct kj_error err;
	char path[4200];

	kj_eval_set_init(set);
	snprintf(path, sizeof(path), "%s/eval/suite", tests_dir());
	KJ_CHECK_OK(kj_eval_discover_suite(path, set, &err), &err);
	snprintf(path, sizeof(path), "%s/eval/cands/generations.jsonl", tests_dir());
	KJ_CHECK_OK(kj_eval_discover_candidates(path, set, &err), &err);
}

static struct kj_eval_study_opts study_opts(const char *settings)
{
	static char a0[] = "kjudge", a1[] = "eval";
	static char *argv[] = { a0, a1, NULL };
	struct kj_eval_study_opts o;

	memset(&o, 0, sizeof(o));
	o.argc = 2;
	o.argv = argv;
	o.suite = "suite";
	o.cands = "generations.jsonl";
	o.settings_text = settings;
	o.device = "cpu";
	return o;
}

/* The attempt of candidate c ended with status. */
static void mark_done(struct kj_store *store, const struct kj_eval_study *st,
		      const struct kj_eval_set *set, size_t c, const char *status)
{
	const struct kj_eval_task *t = &set->tasks[set->cands[c].task];
	struct kj_store_attempt a = {
		.key = st->keys[c], .run_id = st->run_id, .task_key = t->key, .task = t->name,
		.model = set->cands[c].model, .attempt = set->cands[c].attempt, .round = -1,
		.cand_sha256 = set->cands[c].sha256, .source = "x", .source_len = 1,
		.origin = "test", .prompt_tokens = -1, .completion_tokens = -1,
		.generation_s = -1, .device = "cpu",
	};
	struct kj_store_verdict v = {
		.status = status, .clean = strcmp(status, "pass") == 0, .error_type = "",
		.category = "", .charged = "", .message = "", .static_ok = -1,
		.disabled_ok = -1, .profile_ok = -1,
	};
	struct kj_error err;

	KJ_CHECK_OK(kj_store_attempt_begin(store, &a, &err), &err);
	KJ_CHECK_OK(kj_store_attempt_done(store, st->keys[c], &v, &err), &err);
}

KJ_TEST(study_begins_with_every_attempt_left_then_skips_the_done)
{
	struct kj_config cfg;
	struct kj_eval_set set;
	struct kj_eval_study st, again;
	struct kj_eval_study_opts o = study_opts("{}");
	struct kj_error err;
	char db[4200], batch[33];

	snprintf(db, sizeof(db), "%s", kj_test_path("study.db"));
	memset(&cfg, 0, sizeof(cfg));
	load_set(&set);
	kj_eval_study_init(&st);
	KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
	KJ_CHECK_OK(kj_eval_study_begin(&st, &cfg, &set, &o, &err), &err);
	KJ_CHECK(st.run_id > 0);
	KJ_CHECK_INT(strlen(st.batch_hex), 32);
	KJ_CHECK_INT(st.counts.total, set.n_cands);
	KJ_CHECK_INT(st.n_todo, set.n_cands);
	KJ_CHECK_INT(st.counts.skipped, 0);
	/* Each attempt has its own key. */
	KJ_CHECK(strcmp(st.keys[0], st.keys[1]) != 0);

	/* A second eval of the same store is refused while the first holds it. */
	kj_eval_study_init(&again);
	KJ_CHECK_INT(kj_eval_study_open(&again, db, 0, &err), KJ_EBUSY);
	kj_eval_study_close(&again);

	mark_done(st.store, &st, &set, 0, "pass");
	mark_done(st.store, &st, &set, 1, "fail");
	mark_done(st.store, &st, &set, 2, "judge_error");
	snprintf(batch, sizeof(batch), "%s", st.batch_hex);
	KJ_CHECK_OK(kj_eval_study_end(&st, &err), &err);
	kj_eval_study_close(&st);

	/* The next run: the same batch; the done attempts skipped and
	 * counted; the judge error left alone, counted as one. */
	kj_eval_study_init(&st);
	KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
	KJ_CHECK_OK(kj_eval_study_begin(&st, &cfg, &set, &o, &err), &err);
	KJ_CHECK(strcmp(st.batch_hex, batch) == 0);
	KJ_CHECK_INT(st.n_todo, set.n_cands - 3);
	KJ_CHECK_INT(st.counts.skipped, 3);
	KJ_CHECK_INT(st.counts.done, 3);
	KJ_CHECK_INT(st.counts.passed, 1);
	KJ_CHECK_INT(st.counts.clean, 1);
	KJ_CHECK_INT(st.counts.failed, 1);
	KJ_CHECK_INT(st.counts.errors, 1);
	KJ_CHECK_INT(st.counts.judge_errors, 1);
	kj_eval_study_close(&st);

	/* --retry-failed: the judge error is run again. */
	o.retry = 1;
	kj_eval_study_init(&st);
	KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
	KJ_CHECK_OK(kj_eval_study_begin(&st, &cfg, &set, &o, &err), &err);
	KJ_CHECK_INT(st.n_todo, set.n_cands - 2);
	KJ_CHECK_INT(st.todo[0], 2);
	KJ_CHECK_INT(st.counts.judge_errors, 0);
	kj_eval_study_close(&st);

	/* Two shards of the study hold every attempt once. */
	{
		size_t n0, n1, c;
		unsigned char *in0;

		o.retry = 0;
		o.shard_k = 2;
		o.shard = "0/2";
		kj_eval_study_init(&st);
		KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
		KJ_CHECK_OK(kj_eval_study_begin(&st, &cfg, &set, &o, &err), &err);
		n0 = st.counts.total;
		in0 = malloc(set.n_cands);
		KJ_CHECK(in0 != NULL);
		memcpy(in0, st.in_shard, set.n_cands);
		kj_eval_study_close(&st);
		o.shard_i = 1;
		o.shard = "1/2";
		kj_eval_study_init(&st);
		KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
		KJ_CHECK_OK(kj_eval_study_begin(&st, &cfg, &set, &o, &err), &err);
		n1 = st.counts.total;
		for (c = 0; c < set.n_cands; c++)
			KJ_CHECK_INT(in0[c] + st.in_shard[c], 1);
		KJ_CHECK_INT(n0 + n1, set.n_cands);
		KJ_CHECK(n0 > 0 && n1 > 0);
		free(in0);
		kj_eval_study_close(&st);
	}
	kj_eval_set_release(&set);
}

KJ_TEST(study_refuses_a_plan_of_another_batch)
{
	struct kj_config cfg;
	struct kj_eval_set set;
	struct kj_eval_study st;
	struct kj_eval_study_opts o = study_opts("{}");
	struct kj_eval_plan plan;
	struct kj_error err;
	char db[4200];

	snprintf(db, sizeof(db), "%s", kj_test_path("study-plan.db"));
	memset(&cfg, 0, sizeof(cfg));
	load_set(&set);
	kj_eval_study_init(&st);
	KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
	KJ_CHECK_OK(kj_eval_study_begin(&st, &cfg, &set, &o, &err), &err);
	kj_eval_study_close(&st);

	/* The store has its batch: a plan with another is of another study. */
	kj_eval_plan_init(&plan);
	snprintf(plan.batch, sizeof(plan.batch), "%s", "00112233445566778899aabbccddeeff");
	o.plan = &plan;
	kj_eval_study_init(&st);
	KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
	KJ_CHECK_INT(kj_eval_study_begin(&st, &cfg, &set, &o, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "not the plan's") != NULL);
	kj_eval_study_close(&st);
	/* A plan whose batch is not 32 hex digits. */
	snprintf(plan.batch, sizeof(plan.batch), "%s", "xyz");
	kj_eval_study_init(&st);
	KJ_CHECK_OK(kj_eval_study_open(&st, db, 0, &err), &err);
	KJ_CHECK_INT(kj_eval_study_begin(&st, &cfg, &set, &o, &err), KJ_EINVAL);
	kj_eval_study_close(&st);
	kj_eval_plan_release(&plan);
	kj_eval_set_release(&set);
}

KJ_TEST(eval_parses_a_gpu_list)
{
	char devs[4][16];
	struct kj_error err;
	int n;

	KJ_CHECK_OK(kj_eval_parse_gpus("0,3,1", devs, 4, &n, &err), &err);
	KJ_CHECK_INT(n, 3);
	KJ_CHECK(strcmp(devs[1], "cuda:3") == 0);
	KJ_CHECK_INT(kj_eval_parse_gpus("0,0", devs, 4, &n, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "named twice") != NULL);
	KJ_CHECK_INT(kj_eval_parse_gpus("0,x", devs, 4, &n, &err), KJ_EINVAL);
	KJ_CHECK_INT(kj_eval_parse_gpus("", devs, 4, &n, &err), KJ_EINVAL);
	KJ_CHECK_INT(kj_eval_parse_gpus("0,1,2,3,4", devs, 4, &n, &err), KJ_EINVAL);
	KJ_CHECK_INT(kj_eval_parse_gpus("-1", devs, 4, &n, &err), KJ_EINVAL);
}
