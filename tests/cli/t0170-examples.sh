#!/usr/bin/env bash
# t0170-examples.sh - every example under examples/ gets the verdict it was
# written for, on the CPU (Triton kernels through Triton's interpreter):
# *_triton_ascend_impl and *_cpu_impl pass, *_wrong_impl fail.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=$kj_root/cache

for task in "$KJ_TESTS"/../examples/*/*_torch.py; do
	dir=$(dirname "$task")
	op=$(basename "$task" _torch.py)
	for impl in triton_ascend_impl cpu_impl wrong_impl; do
		[ -f "$dir/${op}_$impl.py" ] || continue
		want=0
		[ $impl = wrong_impl ] && want=1
		test_expect "example $op: $impl exits $want" "
			cp $dir/*.py .
			expect_exit $want \$KJUDGE verify --op_name $op --triton_impl_name $impl --device cpu --output r.json > out.txt
			py \"import json; d = json.load(open('r.json')); assert d['total_cases'] > 0; assert (d['passed_cases'] == d['total_cases']) == ($want == 0), d\"
		"
	done
done
test_done
