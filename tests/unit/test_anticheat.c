/*
 * test_anticheat.c - the anti-cheat layers' decisions (kjudge/anticheat.h)
 * that eval and --strict share: the static check as a layer and its record,
 * the kernels-disabled verdict in each of its branches, the profiler's.
 */
#include <stdio.h>
#include <string.h>

#include "kjudge/anticheat.h"
#include "unit.h"

static const char *write_file(const char *name, const char *text)
{
	FILE *f = fopen(kj_test_path(name), "w");

	KJ_CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
	return kj_test_path(name);
}

static const char *member(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

KJ_TEST(anticheat_static_torch_beside_copy_kernel_fails)
{
	struct kj_static_layer s;
	struct kj_error err;
	const char *path = write_file("c.py",
		"import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n"
		"@triton.jit\ndef copy_kernel(x, y, n, B: tl.constexpr):\n"
		"    o = tl.program_id(0) * B + tl.arange(0, B)\n"
		"    tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)\n\n"
		"class ModelNew(nn.Module):\n    def forward(self, a, b):\n"
		"        s = torch.empty_like(a)\n"
		"        copy_kernel[(1,)](a, s, a.numel(), B=1024)\n"
		"        return torch.relu(a + b)\n");
	const json_t *failed;
	size_t i;
	int torch_ops = 0;

	KJ_CHECK_OK(kj_static_layer(path, &s, &err), &err);
	KJ_CHECK_INT(s.layer.ok, 0);
	KJ_CHECK(strstr(s.layer.msg, "degraded, type 4") == s.layer.msg);
	KJ_CHECK_INT(s.n_kernels, 1);
	KJ_CHECK_STR(s.kernels[0], "copy_kernel");
	KJ_CHECK_STR(member(s.record, "status"), "fail");
	KJ_CHECK_INT(json_integer_value(json_object_get(s.record, "regression_type")), 4);
	KJ_CHECK_STR(json_string_value(json_array_get(json_object_get(s.record, "launched"), 0)),
		     "copy_kernel");
	failed = json_object_get(s.record, "failed_checks");
	for (i = 0; i < json_array_size(failed); i++)
		torch_ops |= !strcmp(json_string_value(json_array_get(failed, i)),
				     "no_forbidden_torch_ops");
	KJ_CHECK(torch_ops);
	KJ_CHECK(json_array_size(json_object_get(s.record, "violations")) >= 2);
	kj_static_layer_release(&s);
	KJ_CHECK(s.record == NULL && s.kernels == NULL);
}

KJ_TEST(anticheat_static_unreadable_file_fails_with_why)
{
	struct kj_static_layer s;
	struct kj_error err;

	KJ_CHECK_OK(kj_static_layer(kj_test_path("missing.py"), &s, &err), &err);
	KJ_CHECK_INT(s.layer.ok, 0);
	KJ_CHECK(strstr(s.layer.msg, "the static check could not judge it: ") == s.layer.msg);
	KJ_CHECK_STR(member(s.record, "status"), "fail");
	KJ_CHECK(json_is_null(json_object_get(s.record, "regression_type")));
	kj_static_layer_release(&s);
}

KJ_TEST(anticheat_disabled_layer_passes_only_on_a_candidate_failure)
{
	struct kj_layer l;

	kj_disabled_layer(0, "no Python", 0, 0, KJ_STATUS_PASS, KJ_ET_NONE, "", &l);
	KJ_CHECK(l.ok == 0 && strstr(l.msg, "could not run: no Python"));
	kj_disabled_layer(1, NULL, 2, 2, KJ_STATUS_PASS, KJ_ET_NONE, "", &l);
	KJ_CHECK(l.ok == 0 && strstr(l.msg, "still passed all 2 cases"));
	kj_disabled_layer(1, NULL, 2, 1, KJ_STATUS_JUDGE_ERROR, KJ_ET_TIMEOUT, "slow", &l);
	KJ_CHECK(l.ok == 0 && strstr(l.msg, "could not decide"));
	kj_disabled_layer(1, NULL, 2, 0, KJ_STATUS_FAIL, KJ_ET_ACCURACY, "off", &l);
	KJ_CHECK_INT(l.ok, 1);
	KJ_CHECK(strstr(l.msg, "failed 2 of 2 cases (AccuracyError)") != NULL);
}

KJ_TEST(anticheat_profile_layer_wants_one_of_its_own_kernels)
{
	char name[] = "add_kernel", *own[] = { name };
	json_t *ran = json_pack("[s, s]", "void at::native::elementwise<relu>", "add_kernel_0d1d");
	json_t *others = json_pack("[s]", "void at::native::elementwise<relu>");
	struct kj_layer l;

	kj_profile_layer(ran, own, 1, &l);
	KJ_CHECK_INT(l.ok, 1);
	kj_profile_layer(others, own, 1, &l);
	KJ_CHECK(l.ok == 0 && strstr(l.msg, "none of the 1 GPU kernels"));
	kj_profile_layer(NULL, own, 1, &l);
	KJ_CHECK(l.ok == 0 && strstr(l.msg, "missing"));
	json_decref(ran);
	json_decref(others);
}
