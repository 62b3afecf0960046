/*
 * kinds.c - the kinds of task eval judges (kjudge/eval.h's kj_eval_kind),
 * as rows of one table: what discovers a suite, reads its candidates and
 * judges an attempt is looked up here, so that a further kind of task is a
 * further row rather than a branch in each of those places.
 */
#include <stddef.h>

#include "kjudge/eval.h"
#include "eval/eval_internal.h"
#include "base/fs.h"
#include "base/banned.h"

/* Any directory is a torch suite: the kind detection comes to last. */
static int torch_detect(const char *dir)
{
	return kj__is_dir(dir);
}

const struct kj_eval_kind kj__eval_kind_torch = {
	.name = "torch",
	.cand_layout = "files RUN/level_L_problem_P_sample_S_kernel.py (KernelBench's runs) or "
		       "MODEL/TASK/ATTEMPT.py under it, TASK a task of the suite",
	.detect = torch_detect,
	.discover = kj__eval_torch_suite,
	.read_dir = kj__eval_torch_dir,
	.line_lacks = kj__eval_torch_line_lacks,
	.read_line = kj__eval_torch_line,
	.attempt = kj__eval_torch_attempt,
};

const struct kj_eval_kind kj__eval_kind_spec = {
	.name = "spec",
	.flags = KJ_EVAL_KIND_APIS | KJ_EVAL_KIND_PROGRAMS,
	/* Whole programs: a few runs each, not a kernel's fifty calls. */
	.bench_warmup = 1,
	.bench_repeats = 5,
	.cand_layout = "directories MODEL/TASK/ATTEMPT/ holding a translation's files, TASK a "
		       "direction SOURCE:API of the suite",
	.detect = kj__eval_is_spec_suite,
	.discover = kj__eval_discover_specs,
	.read_dir = kj__eval_spec_dir,
	.line_lacks = kj__eval_spec_line_lacks,
	.read_line = kj__eval_spec_line,
	.attempt = kj__eval_spec_attempt,
};

const struct kj_eval_kind *const kj_eval_kinds[] = { &kj__eval_kind_spec, &kj__eval_kind_torch,
						     NULL };

const struct kj_eval_kind *kj_eval_kind_of(const char *dir)
{
	size_t i;

	for (i = 0; kj_eval_kinds[i]; i++)
		if (kj_eval_kinds[i]->detect(dir))
			return kj_eval_kinds[i];
	return &kj__eval_kind_torch;
}

int kj_eval_attempt(const struct kj_config *cfg, const struct kj_eval_settings *s,
		    const struct kj_eval_slot *slot, const struct kj_eval_set *set, size_t cand,
		    const char *attempt_key, struct kj_eval_outcome *out, struct kj_error *err)
{
	return set->kind->attempt(cfg, s, slot, set, cand, attempt_key, out, err);
}
