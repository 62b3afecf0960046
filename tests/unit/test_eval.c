/*
 * test_eval.c - eval's discovery (lib/eval/discover.c) over tests/eval/:
 * the suite's tasks in both layouts with their cases files, the JSONL's
 * good lines and its bad ones (each named with its line), KernelBench's
 * generation layout and MODEL/TASK/ATTEMPT.py; the attempt key.
 */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "kjudge/config.h"
#include "kjudge/eval.h"
#include "kjudge/pipeline.h"
#include "unit.h"

/* tests/: $KJ_TESTS (tests/run sets it), else where it was built from. */
static const char *tests_dir(void)
{
	const char *dir = getenv("KJ_TESTS");

	return dir && *dir ? dir : KJ_TESTS_DIR;
}

static int find(const struct kj_eval_set *set, const char *name)
{
	size_t i;

	for (i = 0; i < set->n_tasks; i++)
		if (strcmp(set->tasks[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	KJ_CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

KJ_TEST(eval_discovers_the_suite_and_the_jsonl)
{
	struct kj_eval_set set;
	struct kj_error err;
	char path[4200];
	int add, scale, relu;
	size_t i, bad_lines[8], n_bad = 0;

	kj_eval_set_init(&set);
	snprintf(path, sizeof(path), "%s/eval/suite", tests_dir());
	KJ_CHECK_INT(kj_eval_discover_suite(path, &set, &err), KJ_OK);
	KJ_CHECK_INT(set.n_tasks, 3);
	add = find(&set, "1_Add");
	scale = find(&set, "2_Scale");
	relu = find(&set, "relu");
	KJ_CHECK(add >= 0 && scale >= 0 && relu >= 0);
	KJ_CHECK_INT(set.tasks[add].level, 1);
	KJ_CHECK_INT(set.tasks[add].problem, 1);
	KJ_CHECK(set.tasks[add].cases_path == NULL);
	KJ_CHECK(set.tasks[scale].cases_path != NULL);
	KJ_CHECK_INT(strlen(set.tasks[scale].cases_sha256), 64);
	KJ_CHECK_INT(set.tasks[relu].level, -1);
	KJ_CHECK(strcmp(set.tasks[relu].rel, "ops/relu_torch.py") == 0);
	KJ_CHECK(strcmp(set.tasks[add].key, set.tasks[scale].key) != 0);

	snprintf(path, sizeof(path), "%s/eval/cands/generations.jsonl", tests_dir());
	KJ_CHECK_INT(kj_eval_discover_candidates(path, &set, &err), KJ_OK);
	KJ_CHECK_INT(set.n_cands, 7);
	/* The bad lines: 3 (not JSON), 5 (no model), 9 (no such task), 10 (a
	 * second attempt 0 of m1 on 1_Add), 12 (source and path). */
	for (i = 0; i < json_array_size(set.problems) && n_bad < 8; i++) {
		const char *w = json_string_value(json_object_get(json_array_get(set.problems, i),
								  "where"));
		const char *colon = w ? strrchr(w, ':') : NULL;

		KJ_CHECK(colon != NULL);
		bad_lines[n_bad++] = (size_t)atoi(colon + 1);
	}
	KJ_CHECK_INT(n_bad, 5);
	KJ_CHECK_INT(bad_lines[0], 3);
	KJ_CHECK_INT(bad_lines[1], 5);
	KJ_CHECK_INT(bad_lines[2], 9);
	KJ_CHECK_INT(bad_lines[3], 10);
	KJ_CHECK_INT(bad_lines[4], 12);
	/* Line 1: the path, the tokens, the time; line 8: no attempt given,
	 * numbered among m2's relu lines; line 4: named by its path in the
	 * suite, with a round. */
	KJ_CHECK(strcmp(set.cands[0].model, "m1") == 0 && set.cands[0].task == add);
	KJ_CHECK_INT(set.cands[0].prompt_tokens, 100);
	KJ_CHECK_INT(set.cands[0].completion_tokens, 50);
	KJ_CHECK(set.cands[0].generation_s == 3.5);
	KJ_CHECK_INT(set.cands[0].round, -1);
	KJ_CHECK(set.cands[2].task == scale && set.cands[2].round == 1);
	KJ_CHECK(strcmp(set.cands[5].model, "m2") == 0 && set.cands[5].task == relu);
	KJ_CHECK(strcmp(set.cands[5].attempt, "0") == 0);
	KJ_CHECK(strcmp(set.cands[3].attempt, "a") == 0);
	KJ_CHECK(set.cands[1].source_len > 0 && strstr(set.cands[1].source, "a - b"));
	kj_eval_set_release(&set);
}

KJ_TEST(eval_discovers_the_generation_layouts_and_keys_attempts)
{
	struct kj_eval_set set;
	struct kj_error err;
	char path[4200], dir[4200], k1[65], k2[65], k3[65];
	const char *tmp = kj_test_tmpdir();
	struct kj_eval_cand c2;

	kj_eval_set_init(&set);
	snprintf(path, sizeof(path), "%s/eval/suite", tests_dir());
	KJ_CHECK_INT(kj_eval_discover_suite(path, &set, &err), KJ_OK);
	snprintf(dir, sizeof(dir), "%s/gen", tmp);
	KJ_CHECK(mkdir(dir, 0700) == 0);
	snprintf(path, sizeof(path), "%s/gen/run7", tmp);
	KJ_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/gen/run7/level_1_problem_2_sample_4_kernel.py", tmp);
	write_file(path, "x = 1\n");
	snprintf(path, sizeof(path), "%s/gen/run7/level_1_problem_9_sample_0_kernel.py", tmp);
	write_file(path, "x = 2\n");
	snprintf(path, sizeof(path), "%s/gen/run7/readme.txt", tmp);
	write_file(path, "not a candidate\n");
	KJ_CHECK_INT(kj_eval_discover_candidates(dir, &set, &err), KJ_OK);
	KJ_CHECK_INT(set.n_cands, 1);
	KJ_CHECK(strcmp(set.cands[0].model, "run7") == 0);
	KJ_CHECK(strcmp(set.cands[0].attempt, "4") == 0);
	KJ_CHECK(strcmp(set.tasks[set.cands[0].task].name, "2_Scale") == 0);
	KJ_CHECK_INT(json_array_size(set.problems), 1); /* problem 9: no such task */

	/* The key: the same attempt, the same key; another model, settings
	 * or device, another. */
	KJ_CHECK_INT(kj_eval_attempt_key(&set.tasks[0], &set.cands[0], "cuda", "{}", k1, &err),
		     KJ_OK);
	KJ_CHECK_INT(kj_eval_attempt_key(&set.tasks[0], &set.cands[0], "cuda", "{}", k2, &err),
		     KJ_OK);
	KJ_CHECK(strcmp(k1, k2) == 0);
	KJ_CHECK_INT(kj_eval_attempt_key(&set.tasks[0], &set.cands[0], "cpu", "{}", k3, &err),
		     KJ_OK);
	KJ_CHECK(strcmp(k1, k3) != 0);
	KJ_CHECK_INT(kj_eval_attempt_key(&set.tasks[0], &set.cands[0], "cuda", "{\"x\":1}", k3,
					 &err), KJ_OK);
	KJ_CHECK(strcmp(k1, k3) != 0);
	char other[] = "run8";

	c2 = set.cands[0];
	c2.model = other;
	KJ_CHECK_INT(kj_eval_attempt_key(&set.tasks[0], &c2, "cuda", "{}", k3, &err), KJ_OK);
	KJ_CHECK(strcmp(k1, k3) != 0);
	kj_eval_set_release(&set);

	/* No suite, no task in it. */
	kj_eval_set_init(&set);
	KJ_CHECK_INT(kj_eval_discover_suite("/nonexistent-suite", &set, &err), KJ_ENOENT);
	KJ_CHECK_INT(kj_eval_discover_suite(dir, &set, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "no task") != NULL);
	kj_eval_set_release(&set);
}

/* A setting that only some runs have (the int member at offset `flag` of
 * the settings, set) appears in the settings JSON, as key: value, only
 * when set: a run without it keeps the settings, and so the attempt keys,
 * of before. */
static void only_when_set(size_t flag, const char *key, const char *value)
{
	struct kj_eval_settings s;
	json_t *unset, *set;

	memset(&s, 0, sizeof(s));
	kj_judge_opts_init(&s.judge);
	kj_bench_opts_init(&s.bench);
	unset = kj_eval_settings_json(&s);
	*(int *)((char *)&s + flag) = 1;
	set = kj_eval_settings_json(&s);
	KJ_CHECK(unset && set);
	KJ_CHECK(json_object_get(unset, key) == NULL);
	KJ_CHECK(strcmp(json_string_value(json_object_get(set, key)), value) == 0);
	json_object_del(set, key);
	KJ_CHECK(json_equal(unset, set));
	json_decref(unset);
	json_decref(set);
}

/* The compiled baseline is a setting (a store's attempts judged against it
 * are other attempts), and only when on. */
KJ_TEST(eval_settings_name_the_compiled_baseline_only_when_on)
{
	only_when_set(offsetof(struct kj_eval_settings, ref_compiled), "baseline", "compile");
}

/* A run without the speed of light (KJ_SOL=off) judges with one check
 * fewer: its settings say so, and so its attempts are others. */
KJ_TEST(eval_settings_name_a_run_without_the_speed_of_light)
{
	only_when_set(offsetof(struct kj_eval_settings, sol_off), "sol", "off");
}

/* KernelBench's users' runs: MODEL/levelL/TASK/ATTEMPT.py names the task by
 * its level and name; a level the suite lacks, or a fifth part, is a
 * problem named with its path, never a candidate of another task. */
KJ_TEST(eval_discovers_the_level_layout)
{
	struct kj_eval_set set;
	struct kj_error err;
	char path[4200], dir[4200];
	const char *tmp = kj_test_tmpdir();
	static const char *const dirs[] = { "runs", "runs/m", "runs/m/level1",
					    "runs/m/level1/2_Scale", "runs/m/level2",
					    "runs/m/level2/2_Scale", "runs/m/level1/1_Add",
					    "runs/m/level1/1_Add/x" };
	size_t i;

	kj_eval_set_init(&set);
	snprintf(path, sizeof(path), "%s/eval/suite", tests_dir());
	KJ_CHECK_INT(kj_eval_discover_suite(path, &set, &err), KJ_OK);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, dirs[i]);
		KJ_CHECK(mkdir(path, 0700) == 0);
	}
	snprintf(path, sizeof(path), "%s/runs/m/level1/2_Scale/3.py", tmp);
	write_file(path, "x = 1\n");
	snprintf(path, sizeof(path), "%s/runs/m/level2/2_Scale/0.py", tmp);
	write_file(path, "x = 2\n");
	snprintf(path, sizeof(path), "%s/runs/m/level1/1_Add/x/0.py", tmp);
	write_file(path, "x = 3\n");
	snprintf(dir, sizeof(dir), "%s/runs", tmp);
	KJ_CHECK_INT(kj_eval_discover_candidates(dir, &set, &err), KJ_OK);
	KJ_CHECK_INT(set.n_cands, 1);
	KJ_CHECK(strcmp(set.cands[0].model, "m") == 0);
	KJ_CHECK(strcmp(set.cands[0].attempt, "3") == 0);
	KJ_CHECK(strcmp(set.tasks[set.cands[0].task].name, "2_Scale") == 0);
	/* level 2 has no 2_Scale; five parts are no layout. */
	KJ_CHECK_INT(json_array_size(set.problems), 2);
	kj_eval_set_release(&set);
}

/* The workers' phase figures in the record (judge_phases, kjudge.timings):
 * only the phase names the worker times, only finite non-negative figures,
 * added up per side; a reply's other keys are not kept. */
KJ_TEST(attempt_keeps_only_the_phases_a_worker_times)
{
	struct kj_config cfg;
	struct kj_attempt a;
	struct kj_error err;
	json_t *ph, *side;

	kj_config_init(&cfg, NULL);
	cfg.scratch_parent = "/tmp";
	cfg.scratch_private = 0;
	KJ_CHECK_INT(kj_attempt_open(&a, &cfg, &err), KJ_OK);
	ph = json_pack("{s:f, s:f, s:f, s:s, s:f}", "forward_s", 1.5, "padding_0001", 2.0,
		       "write_s", -1.0, "inputs_s", "x", "warmup_s", 0.25);
	KJ_CHECK(ph != NULL);
	kj_attempt_tally_phases(&a, "candidate", ph);
	kj_attempt_tally_phases(&a, "candidate", ph);
	side = json_object_get(a.timings, "candidate");
	KJ_CHECK(side != NULL);
	KJ_CHECK(json_object_size(side) == 2);
	KJ_CHECK(json_real_value(json_object_get(side, "forward_s")) == 3.0);
	KJ_CHECK(json_real_value(json_object_get(side, "warmup_s")) == 0.5);
	KJ_CHECK(json_object_get(side, "padding_0001") == NULL);
	KJ_CHECK(!a.broken);
	json_decref(ph);
	kj_attempt_close(&a);
}

/* Two tasks of the same bytes under two names: two tasks with two keys,
 * and the same candidate for each is two attempts; the same suite
 * discovered again gives the same keys. */
KJ_TEST(eval_tasks_of_the_same_bytes_are_two)
{
	struct kj_eval_set set, again;
	struct kj_error err;
	char dir[4200], path[4300], k1[65], k2[65];
	const char *task = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
	int a, b;

	snprintf(dir, sizeof(dir), "%s/twins", kj_test_tmpdir());
	KJ_CHECK(mkdir(dir, 0700) == 0);
	snprintf(path, sizeof(path), "%s/relu_torch.py", dir);
	write_file(path, task);
	snprintf(path, sizeof(path), "%s/relu2_torch.py", dir);
	write_file(path, task);
	kj_eval_set_init(&set);
	kj_eval_set_init(&again);
	KJ_CHECK_OK(kj_eval_discover_suite(dir, &set, &err), &err);
	KJ_CHECK_OK(kj_eval_discover_suite(dir, &again, &err), &err);
	KJ_CHECK_INT(set.n_tasks, 2);
	a = find(&set, "relu");
	b = find(&set, "relu2");
	KJ_CHECK(a >= 0 && b >= 0);
	KJ_CHECK_STR(set.tasks[a].task_sha256, set.tasks[b].task_sha256);
	KJ_CHECK(strcmp(set.tasks[a].key, set.tasks[b].key) != 0);
	KJ_CHECK_STR(set.tasks[a].key, again.tasks[find(&again, "relu")].key);

	snprintf(path, sizeof(path), "%s/gen.jsonl", kj_test_tmpdir());
	write_file(path, "{\"model\": \"m\", \"task\": \"relu\", \"source\": \"x = 1\"}\n"
		   "{\"model\": \"m\", \"task\": \"relu2\", \"source\": \"x = 1\"}\n");
	KJ_CHECK_OK(kj_eval_discover_candidates(path, &set, &err), &err);
	KJ_CHECK_INT(set.n_cands, 2);
	KJ_CHECK_OK(kj_eval_attempt_key(&set.tasks[set.cands[0].task], &set.cands[0], "cpu", "{}",
					k1, &err), &err);
	KJ_CHECK_OK(kj_eval_attempt_key(&set.tasks[set.cands[1].task], &set.cands[1], "cpu", "{}",
					k2, &err), &err);
	KJ_CHECK(strcmp(k1, k2) != 0);
	kj_eval_set_release(&set);
	kj_eval_set_release(&again);
}
