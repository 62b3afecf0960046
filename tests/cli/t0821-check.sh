#!/usr/bin/env bash
# t0821-check.sh - kjudge check TASK.py KERNEL.py: one pair judged as eval
# judges an attempt, on one screen.  A clean Triton kernel exits 0 and its
# --json has KernelBench's result fields; a wrong kernel exits 1 with the
# reason; a correct kernel that is torch itself passes but is not clean
# (exit 1, the static check named); bad input exits 2; nothing is left
# beside the user's files or in TMPDIR.
. "$(dirname "$0")/lib.sh"
KB=$KJ_TESTS/kernelbench
# ReLU as a KernelBench task file (level1/19_ReLU.py), from eval's suite.
RELU=$KJ_TESTS/eval/suite/ops/relu_torch.py

test_expect 'check --help, and bad input: exit 2' '
	cp "$RELU" 19_ReLU.py &&
	"$KJUDGE" check --help >help.txt &&
	grep -q "usage: kjudge check TASK.py KERNEL.py" help.txt &&
	grep -q -- "--baseline B" help.txt &&
	"$KJUDGE" help --man check | grep -q "^.TH" &&
	expect_exit 2 "$KJUDGE" check 2>err &&
	expect_exit 2 "$KJUDGE" check 19_ReLU.py 2>err &&
	expect_exit 2 "$KJUDGE" check 19_ReLU.py nothere.py 2>err &&
	grep -q "nothere.py.: no such kernel file" err &&
	expect_exit 2 "$KJUDGE" check nothere.py "$relu_triton" 2>err &&
	grep -q "no such task file" err &&
	mkdir d && expect_exit 2 "$KJUDGE" check d "$relu_triton" 2>err &&
	expect_exit 2 "$KJUDGE" check 19_ReLU.py "$relu_triton" \
		--baseline fast 2>err && grep -q "baseline" err &&
	printf "import torch\nclass Model(:\n" >broken.py &&
	mkdir tmp && expect_exit 2 env TMPDIR=$PWD/tmp "$KJUDGE" check broken.py \
		"$relu_triton" --device cpu >out 2>err &&
	grep -q "cannot be loaded" err && test -z "$(ls tmp)"
'

test_expect 'a clean Triton kernel: exit 0, KernelBench fields in --json' '
	cp "$RELU" 19_ReLU.py && mkdir tmp &&
	TMPDIR=$PWD/tmp "$KJUDGE" check 19_ReLU.py "$relu_triton" \
		--device cpu --time_budget 0.05 --json >r.json 2>err &&
	test -z "$(ls tmp)" &&
	py "
import json
d = json.load(open(\"r.json\"))
assert d[\"compiled\"] is True and d[\"correctness\"] is True and d[\"clean\"] is True, d
assert isinstance(d[\"metadata\"], dict) and d[\"metadata\"][\"device\"] == \"cpu\"
for k in (\"runtime\", \"ref_runtime\"):
    assert d[k] > 0, (k, d[k])
for k in (\"runtime_stats\", \"ref_runtime_stats\"):
    s = d[k]
    assert s[\"num_trials\"] > 0 and s[\"min\"] <= s[\"median\"] <= s[\"max\"], s
assert d[\"runtime_stats\"][\"median\"] == d[\"runtime\"]
case = d[\"kjudge\"][\"benchmark\"][\"per_shape_results\"][0]
assert d[\"speedup\"] > 0 and abs(d[\"speedup\"] - case[\"speedup_vs_torch\"]) <= 0.00005 + 1e-9, (d[\"speedup\"], case)
assert d[\"speedup_compile\"] is None
k = d[\"kjudge\"]
assert k[\"status\"] == \"pass\" and k[\"static\"][\"ok\"] and k[\"disabled\"][\"ok\"], k
assert k[\"verify\"][\"passed_cases\"] == 1 and k[\"benchmark\"][\"passed_cases\"] == 1
assert k[\"baseline\"] == \"eager\"
"
'

test_expect 'a wrong kernel: exit 1, its error type and why on one screen' '
	cp "$RELU" 19_ReLU.py && relu_wrong relu_wrong.py &&
	expect_exit 1 "$KJUDGE" check 19_ReLU.py relu_wrong.py \
		--device cpu >out 2>err &&
	head -n 1 out | grep -qx "19_ReLU.py: fail, AccuracyError (device cpu)" &&
	grep -q "^  why: output 1: MERE and MARE above threshold" out &&
	grep -q "^  verify: *0/1 cases passed" out &&
	test "$(wc -l <out)" -le 12
'

test_expect 'a kernel that does not load: compiled false, the why names the file given' '
	cp "$RELU" 19_ReLU.py && printf "import torch\nclass ModelNew(:\n" >bad_kernel.py &&
	expect_exit 1 "$KJUDGE" check 19_ReLU.py bad_kernel.py --device cpu --json >r.json 2>err &&
	jget r.json "d[\"compiled\"], d[\"correctness\"], d[\"kjudge\"][\"category\"]" |
		grep -qx "False False build" &&
	jget r.json "d[\"metadata\"][\"compilation_error\"]" |
		grep -q "^SyntaxError: invalid syntax (bad_kernel.py, line 2)$" &&
	jget r.json "\"triton_ascend_impl\" in d[\"kjudge\"][\"message\"]" | grep -qx False
'

test_expect 'torch doing the work: a pass, not clean (exit 1), the static check named' '
	cp "$RELU" 19_ReLU.py &&
	expect_exit 1 "$KJUDGE" check 19_ReLU.py "$KB/kernels/relu_torch.py" \
		--device cpu --time_budget 0.05 --json >r.json 2>err &&
	jget r.json "d[\"correctness\"], d[\"clean\"], d[\"kjudge\"][\"status\"], d[\"kjudge\"][\"error_type\"]" |
		grep -qx "False False pass StaticCheck" &&
	jget r.json "d[\"kjudge\"][\"static\"][\"message\"]" | grep -q "degraded, type 1"
'

test_done
