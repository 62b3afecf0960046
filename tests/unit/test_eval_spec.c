/*
 * test_eval_spec.c - eval over a suite of specs (lib/eval/spec_suite.c)
 * and the manifest's list (lib/spec/suite.c): the bundled suite's
 * translation directions, their names and keys; translations from JSONL
 * lines and from directories, the same files giving the same candidate;
 * the lines and names that are refused; the kinds table (lib/eval/kinds.c)
 * telling a spec suite from a KernelBench-style one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/spec.h"
#include "unit.h"

static const char *suite_dir(char *buf, size_t size)
{
	const char *dir = getenv("KJ_TESTS");

	snprintf(buf, size, "%s/../examples/parsuite", dir && *dir ? dir : KJ_TESTS_DIR);
	return buf;
}

/* The library's own atomic write, so the test needs no helper of its own. */
static void put(const char *path, const char *text)
{
	struct kj_error err;

	KJ_CHECK_INT(kj_write_file_atomic(path, text, strlen(text), &err), KJ_OK);
}

/* The kinds table: its two rows, and each suite found to be of its own
 * kind, by detection and by discovery alike. */
KJ_TEST(eval_kinds_table_detects_each_suite)
{
	const struct kj_eval_kind *spec = NULL, *torch = NULL;
	struct kj_eval_set set;
	struct kj_error err;
	char dir[4200], kb[4200];
	const char *tests = getenv("KJ_TESTS");
	json_t *line;
	size_t i;

	for (i = 0; kj_eval_kinds[i]; i++) {
		if (!strcmp(kj_eval_kinds[i]->name, "spec"))
			spec = kj_eval_kinds[i];
		else if (!strcmp(kj_eval_kinds[i]->name, "torch"))
			torch = kj_eval_kinds[i];
	}
	KJ_CHECK_INT(i, 2);
	KJ_CHECK(spec != NULL && torch != NULL);
	if (!spec || !torch)
		return;
	/* A fresh set is torch's until discovery says otherwise. */
	kj_eval_set_init(&set);
	KJ_CHECK(set.kind == torch);

	snprintf(kb, sizeof(kb), "%s/eval/suite", tests && *tests ? tests : KJ_TESTS_DIR);
	KJ_CHECK(kj_eval_kind_of(suite_dir(dir, sizeof(dir))) == spec);
	KJ_CHECK(kj_eval_kind_of(kb) == torch);
	KJ_CHECK_INT(kj_eval_discover_suite(dir, &set, &err), KJ_OK);
	KJ_CHECK(set.kind == spec);
	kj_eval_set_release(&set);
	KJ_CHECK_INT(kj_eval_discover_suite(kb, &set, &err), KJ_OK);
	KJ_CHECK(set.kind == torch);
	kj_eval_set_release(&set);

	/* What differs between the rows, as eval uses it: --api scopes only
	 * directions, a spec attempt runs programs a few times, and a JSONL
	 * line with a module's "source" is a torch candidate, never a
	 * translation. */
	KJ_CHECK(spec->flags & KJ_EVAL_KIND_APIS);
	KJ_CHECK(!(torch->flags & KJ_EVAL_KIND_APIS));
	KJ_CHECK_INT(spec->bench_repeats, 5);
	KJ_CHECK_INT(torch->bench_repeats, 0);
	line = json_pack("{s:s}", "source", "class ModelNew: pass\n");
	KJ_CHECK(line != NULL);
	KJ_CHECK(torch->line_lacks(line) == NULL);
	KJ_CHECK(spec->line_lacks(line) != NULL);
	json_decref(line);
}

KJ_TEST(eval_spec_suite_directions)
{
	struct kj_eval_set set;
	struct kj_error err;
	char dir[4200];
	size_t i, k;
	int found = 0;

	kj_eval_set_init(&set);
	KJ_CHECK_INT(kj_eval_discover_suite(suite_dir(dir, sizeof(dir)), &set, &err), KJ_OK);
	/* 4 kernels, 3 APIs: 6 directions each. */
	KJ_CHECK_INT(set.n_tasks, 24);
	for (i = 0; i < set.n_tasks; i++) {
		const struct kj_eval_task *t = &set.tasks[i];

		KJ_CHECK(t->spec_source && t->spec_target && t->spec_root);
		KJ_CHECK(strchr(t->name, ':') != NULL);
		KJ_CHECK_INT(strlen(t->key), 64);
		if (i)
			KJ_CHECK(strcmp(set.tasks[i - 1].name, t->name) < 0);
		for (k = 0; k < i; k++)
			KJ_CHECK(strcmp(set.tasks[k].key, t->key) != 0);
		if (!strcmp(t->name, "parsuite-histogram-omp:opencl")) {
			found = 1;
			KJ_CHECK(strstr(t->spec_source, "specs/parsuite-histogram-omp.json") != NULL);
			KJ_CHECK(strstr(t->spec_target, "specs/parsuite-histogram-opencl.json") != NULL);
			KJ_CHECK(strcmp(t->rel, "specs/parsuite-histogram-opencl.json") == 0);
		}
	}
	KJ_CHECK(found);
	kj_eval_set_release(&set);
}

KJ_TEST(eval_spec_translations)
{
	struct kj_eval_set set;
	struct kj_error err;
	char dir[4200], tmp[] = "/tmp/kj-evalspec-XXXXXX", path[4300];
	const char *task = "parsuite-histogram-omp:opencl";

	kj_eval_set_init(&set);
	KJ_CHECK(mkdtemp(tmp) != NULL);
	KJ_CHECK_INT(kj_eval_discover_suite(suite_dir(dir, sizeof(dir)), &set, &err), KJ_OK);
	snprintf(path, sizeof(path), "%s/t", tmp);
	KJ_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/t/histogram.cl", tmp);
	put(path, "kernel text\n");
	snprintf(path, sizeof(path), "%s/g.jsonl", tmp);
	put(path,
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"a\", \"files\": "
	    "{\"histogram.cl\": \"kernel text\\n\"}}\n"
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"b\", \"path\": \"t\"}\n"
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"c\", \"files\": {\"../x\": \"\"}}\n"
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"c\", \"files\": {\"a//b\": \"\"}}\n"
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"c\", \"files\": {\"x\": 1}}\n"
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"c\", \"source\": \"x\"}\n"
	    "{\"task\": \"parsuite-histogram-omp:opencl\", \"model\": \"c\", \"files\": {}}\n"
	    "{\"task\": \"no-such:task\", \"model\": \"c\", \"files\": {\"x\": \"\"}}\n");
	KJ_CHECK_INT(kj_eval_discover_candidates(path, &set, &err), KJ_OK);
	KJ_CHECK_INT(set.n_cands, 2);
	KJ_CHECK_INT(json_array_size(set.problems), 6);
	KJ_CHECK(strcmp(set.tasks[set.cands[0].task].name, task) == 0);
	/* The same files, from a line and from a directory: one candidate. */
	KJ_CHECK(strcmp(set.cands[0].sha256, set.cands[1].sha256) == 0);
	KJ_CHECK(strcmp(set.cands[0].source, "{\"histogram.cl\":\"kernel text\\n\"}") == 0);
	/* And as the list of files the attempt writes out. */
	KJ_CHECK_INT(set.cands[1].n_files, 1);
	if (set.cands[1].n_files == 1) {
		KJ_CHECK_STR(set.cands[1].files[0].name, "histogram.cl");
		KJ_CHECK_INT(set.cands[1].files[0].len, 12);
		KJ_CHECK(memcmp(set.cands[1].files[0].data, "kernel text\n", 12) == 0);
	}
	kj_eval_set_release(&set);

	/* MODEL/TASK/ATTEMPT/ */
	kj_eval_set_init(&set);
	KJ_CHECK_INT(kj_eval_discover_suite(dir, &set, &err), KJ_OK);
	snprintf(path, sizeof(path), "%s/c/m/%s/a1/sub", tmp, task);
	{
		char cmd[16000];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && echo k > '%s/../histogram.cl' && "
			 "echo s > '%s/extra.txt'", path, path, path);
		KJ_CHECK(system(cmd) == 0);
	}
	snprintf(path, sizeof(path), "%s/c", tmp);
	KJ_CHECK_INT(kj_eval_discover_candidates(path, &set, &err), KJ_OK);
	KJ_CHECK_INT(set.n_cands, 1);
	KJ_CHECK(strcmp(set.cands[0].attempt, "a1") == 0);
	KJ_CHECK(strcmp(set.cands[0].source,
			"{\"histogram.cl\":\"k\\n\",\"sub/extra.txt\":\"s\\n\"}") == 0);
	KJ_CHECK_INT(set.cands[0].n_files, 2);
	if (set.cands[0].n_files == 2) {
		KJ_CHECK_STR(set.cands[0].files[0].name, "histogram.cl");
		KJ_CHECK_STR(set.cands[0].files[1].name, "sub/extra.txt");
		KJ_CHECK_STR(set.cands[0].files[1].data, "s\n");
	}
	kj_eval_set_release(&set);
	{
		char cmd[4300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		KJ_CHECK(system(cmd) == 0);
	}
}

KJ_TEST(spec_suite_list_refuses_bad_manifests)
{
	char tmp[] = "/tmp/kj-suitelist-XXXXXX", path[4300], **files = NULL;
	struct kj_error err;
	size_t n = 0;

	KJ_CHECK(mkdtemp(tmp) != NULL);
	snprintf(path, sizeof(path), "%s/manifest.jsonl", tmp);
	KJ_CHECK_INT(kj_spec_suite_list(tmp, &files, &n, &err), KJ_ENOENT);
	put(path, "{\"spec_file\": \"specs/a.json\"}\n\n{\"kernel_name\": \"x\"}\n");
	KJ_CHECK(kj_spec_suite_list(tmp, &files, &n, &err) == KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "manifest.jsonl:3: spec_file is missing") != NULL);
	put(path, "{\"spec_file\": \"/etc/passwd\"}\n");
	KJ_CHECK(kj_spec_suite_list(tmp, &files, &n, &err) == KJ_EINVAL);
	put(path, "\n");
	KJ_CHECK(kj_spec_suite_list(tmp, &files, &n, &err) == KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "names no spec") != NULL);
	put(path, "{\"spec_file\": \"specs/a.json\"}\n{\"spec_file\": \"specs/b.json\"}\n");
	KJ_CHECK_INT(kj_spec_suite_list(tmp, &files, &n, &err), KJ_OK);
	KJ_CHECK_INT(n, 2);
	KJ_CHECK(strstr(files[1], "/specs/b.json") != NULL);
	kj_spec_suite_free(files, n);
	unlink(path);
	rmdir(tmp);
}
