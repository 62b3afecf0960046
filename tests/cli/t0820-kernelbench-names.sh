#!/usr/bin/env bash
# t0820-kernelbench-names.sh - op names as KernelBench writes its problems
# (1_Square_matrix_multiplication_: a digit first, a trailing _) are taken
# by verify and benchmark; what is no file stem (a path, "..", an option, a
# control byte, an empty name) is still refused with exit 2.
. "$(dirname "$0")/lib.sh"
KB=$KJ_TESTS/kernelbench
# ReLU as a KernelBench task file (level1/19_ReLU.py), from eval's suite.
RELU=$KJ_TESTS/eval/suite/ops/relu_torch.py

test_expect 'verify and benchmark take a KernelBench problem name' '
	op=1_Square_matrix_multiplication_ &&
	cp "$KB/level1/$op.py" "${op}_torch.py" &&
	cp "$KB/kernels/matmul_by_rows.py" "${op}_cpu_impl.py" &&
	"$KJUDGE" verify --op_name "$op" --triton_impl_name cpu_impl --device cpu \
		--output v.json >out 2>err &&
	grep -q "^$op: 1/1 cases passed" out &&
	jget v.json "d[\"op_name\"]" | grep -qx "$op" &&
	jget v.json "d[\"passed_cases\"], d[\"failed_cases\"]" | grep -qx "1 0" &&
	cp v.json verify_result_cpu_impl.json &&
	"$KJUDGE" benchmark --op_name "$op" --triton_impl_name cpu_impl --device cpu \
		--time_budget 0.05 --output perf.json >out 2>err &&
	jget perf.json "d[\"op_name\"], d[\"total_cases\"]" | grep -qx "$op 1" &&
	# The case is judged (its verdict is the timing tests.: a loaded
	# machine may fail it on timing, never on its name).
	jget perf.json "d[\"passed_cases\"] + d[\"failed_cases\"]" | grep -qx 1
'

test_expect 'a name with a dot or a dash is a file stem too' '
	cp "$RELU" v1.2-relu_torch.py &&
	cp "$KB/kernels/relu_torch.py" v1.2-relu_triton_ascend_impl.py &&
	"$KJUDGE" verify --op_name v1.2-relu --device cpu >out 2>err &&
	grep -q "^v1.2-relu: 1/1 cases passed" out
'

test_expect 'names that are no file stem: exit 2, nothing run' '
	touch x_torch.py &&
	for n in ../x a/b .. .hidden -x "a b" "x$(printf "\\033")y" x..y; do
		expect_exit 2 "$KJUDGE" verify --op_name "$n" --device cpu >out 2>err &&
		grep -q "^kjudge verify: --op_name .*\\(file stem\\|starts with\\|holds\\)" err &&
		! grep -q "$(printf "\\033")" err &&
		test ! -e verify_result.json || { echo "name: $n"; cat err; exit 1; }
	done &&
	expect_exit 2 "$KJUDGE" verify --op_name "" --device cpu 2>err &&
	expect_exit 2 "$KJUDGE" verify --op_name x --triton_impl_name ../y --device cpu 2>err &&
	grep -q "triton_impl_name" err
'

test_done
