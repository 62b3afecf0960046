#!/usr/bin/env bash
# t0150-verify.sh - `kjudge verify`: flags, files, verify_result.json, exit codes.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state

# task DIR: a three-case task "scale" (y = 2x + 1) in DIR, its third case
# in float16.
task() {
	scale_task "$1" "[torch.randn(4, 8, 8, dtype=torch.float16)]"
}

# cand DIR IMPL BODY: a candidate whose forward returns BODY (an expression in x).
cand() {
	cat > "$1/scale_$2.py" <<PY
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return $3
PY
}


test_expect 'help and usage errors' '
	$KJUDGE verify --help | grep -q -- "--triton_impl_name IMPL"
	expect_exit 2 $KJUDGE verify 2> e.txt
	grep -q "option .--op_name. is required" e.txt
	expect_exit 2 $KJUDGE verify --op_name x --timeout abc 2> e.txt
	expect_exit 2 $KJUDGE verify --op_name x --device tpu 2> e.txt
	grep -q "wants cpu, cuda or cuda:N, not .tpu." e.txt
	expect_exit 2 $KJUDGE verify --op_name x --verify_dir nowhere 2> e.txt
	grep -q "not a directory" e.txt
	mkdir d
	expect_exit 2 $KJUDGE verify --op_name x --verify_dir d 2> e.txt
	grep -q "no task file" e.txt
'

test_expect 'a correct candidate passes every case: exit 0 and verify_result.json' '
	task d
	cand d triton_ascend_impl "x * 2 + 1"
	$KJUDGE verify --op_name scale --verify_dir d > out.txt
	grep -q "scale: 3/3 cases passed" out.txt
	test "$(jget d/verify_result.json "d[\"total_cases\"], d[\"passed_cases\"], d[\"failed_cases\"], d[\"failures\"]")" = "3 3 0 []"
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"seeds\"], d[\"kjudge\"][\"input_sets\"]")" = "secret 2"
	# Neither side leaves compiled bytecode of the task or the candidate.
	test ! -e d/__pycache__
'

test_expect 'a wrong case fails with the comparator figures, the others pass: exit 1' '
	task d
	cand d wrong_impl "(x * 2 + 1) * (1.01 if x.dim() == 1 else 1.0)"
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong_impl --output r.json
	py "
import json
d = json.load(open(\"r.json\"))
assert (d[\"total_cases\"], d[\"passed_cases\"], d[\"failed_cases\"]) == (3, 2, 1), d
f = d[\"failures\"][0]
assert f[\"case_idx\"] == 2 and f[\"error_type\"] == \"AccuracyError\", f
assert f[\"input_desc\"] == [{\"type\": \"tensor\", \"shape\": [1000], \"dtype\": \"torch.float32\"}], f
m = f[\"metrics\"]
assert m[\"reason\"] == \"accuracy\" and m[\"mare\"] > m[\"mare_limit\"] and m[\"worst\"], m
assert isinstance(f[\"seed\"], int) and f[\"input_set\"] == 1
"
'

test_expect 'the secret seed of a failure replays it with --seed' '
	task d
	cand d wrong_impl "(x * 2 + 1) * (1.01 if x.dim() == 1 else 1.0)"
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong_impl --output r.json
	seed=$(jget r.json "d[\"failures\"][0][\"seed\"]")
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong_impl --seed $seed --output r2.json
	test "$(jget r2.json "d[\"failures\"][0][\"metrics\"][\"mere\"] == json.load(open(\"r.json\"))[\"failures\"][0][\"metrics\"][\"mere\"]")" = True
	test "$(jget r2.json "d[\"kjudge\"][\"seeds\"]")" = fixed
'

test_expect '--seed 0 makes the inputs verify.py makes; secret seeds defeat a precomputed answer' '
	task d
	cat > d/scale_seed0_impl.py <<PY
import torch
import torch.nn as nn
import scale_torch

# The inputs verify.py makes: seed 0 once, every group.
torch.manual_seed(0)
_known = scale_torch.get_input_groups()

class ModelNew(nn.Module):
    def forward(self, x):
        for g in _known:
            if g[0].shape == x.shape and torch.equal(g[0].to(x.device), x):
                return 2 * x + 1
        return x * 0
PY
	$KJUDGE verify --op_name scale --verify_dir d --triton_impl_name seed0_impl --seed 0 --output r.json > /dev/null
	test "$(jget r.json "d[\"passed_cases\"]")" = 3
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name seed0_impl --output r.json > /dev/null
	test "$(jget r.json "d[\"passed_cases\"]")" = 0
'

test_expect 'a missing candidate file fails every case, exit 1' '
	task d
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name nope --output r.json
	test "$(jget r.json "[f[\"error_type\"] for f in d[\"failures\"]] == [\"CandidateNotFound\"] * 3")" = True
'

test_expect 'a task that cannot be loaded is an input error: exit 2' '
	mkdir d
	echo "raise ImportError(\"broken task\")" > d/scale_torch.py
	cand d triton_ascend_impl "x"
	expect_exit 2 $KJUDGE verify --op_name scale --verify_dir d 2> e.txt
	grep -q "the task cannot be loaded" e.txt
	test ! -e d/verify_result.json
'

test_expect 'a hang is a timeout of that case: 验证超时, exit 1, no process left' '
	task d
	cat > d/scale_hang_impl.py <<PY
import time
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        if x.dim() == 1:
            time.sleep(10 ** 6)
        return 2 * x + 1
PY
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name hang_impl --timeout 4 --output r.json 2> e.txt
	grep -q "验证超时" e.txt
	test "$(jget r.json "[(f[\"case_idx\"], f[\"error_type\"]) for f in d[\"failures\"]] == [(2, \"Timeout\")]")" = True
	! pgrep -f "scale_hang_impl" > /dev/null
'

test_expect 'golden outputs are cached for fixed seeds: a second candidate runs alone, and is still judged' '
	export KJ_CACHE_DIR=$SCRATCH/cache
	task d
	cand d triton_ascend_impl "x * 2 + 1"
	cand d wrong_impl "x * 2 + 1.01"
	$KJUDGE verify --op_name scale --verify_dir d --seed 7 --output r1.json > /dev/null
	test "$(jget r1.json "d[\"kjudge\"][\"golden_from_cache\"]")" = 0
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --seed 7 --triton_impl_name wrong_impl --output r2.json > /dev/null
	# one input set per case with --seed: one golden each, from the cache
	test "$(jget r2.json "d[\"kjudge\"][\"golden_from_cache\"], d[\"passed_cases\"]")" = "3 0"
	KJ_CACHE_DIR=off $KJUDGE verify --op_name scale --verify_dir d --seed 7 --output r3.json > /dev/null
	test "$(jget r3.json "d[\"kjudge\"][\"golden_from_cache\"]")" = 0
	# a changed task is another task
	echo "# changed" >> d/scale_torch.py
	$KJUDGE verify --op_name scale --verify_dir d --seed 7 --output r4.json > /dev/null
	test "$(jget r4.json "d[\"kjudge\"][\"golden_from_cache\"]")" = 0
'

test_expect 'secret seeds are fresh in every run: no golden of one run serves the next, a printed seed replays its failure' '
	export KJ_CACHE_DIR=$SCRATCH/cache-fresh
	task d
	cand d triton_ascend_impl "x * 2 + 1"
	cand d wrong_impl "x * 2 + 1.01"
	$KJUDGE verify --op_name scale --verify_dir d --output r1.json > /dev/null
	$KJUDGE verify --op_name scale --verify_dir d --output r2.json > /dev/null
	test "$(jget r2.json "d[\"kjudge\"][\"golden_from_cache\"], d[\"kjudge\"][\"seeds\"]")" = "0 secret"
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong_impl --output w1.json > /dev/null
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong_impl --output w2.json > /dev/null
	s1=$(jget w1.json "d[\"failures\"][0][\"seed\"]")
	s2=$(jget w2.json "d[\"failures\"][0][\"seed\"]")
	test "$s1" != "$s2"
	# the printed seed replays the failure exactly
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong_impl --seed "$s1" --output w3.json > /dev/null
	py "import json; a, b = (json.load(open(f))[\"failures\"][0] for f in (\"w1.json\", \"w3.json\")); assert (a[\"case_idx\"], a[\"metrics\"]) == (b[\"case_idx\"], b[\"metrics\"]), (a, b)"
'

test_expect 'the reference writes goldens into the cache by rename, and leaves nothing behind' '
	export KJ_CACHE_DIR=$SCRATCH/cache2
	task d
	cand d triton_ascend_impl "x * 2 + 1"
	# Fixed seeds, one set a case: entries a later run can ask for stay.
	$KJUDGE verify --op_name scale --verify_dir d --seed 7 --output r1.json > /dev/null
	test "$(ls $KJ_CACHE_DIR | grep -c "^g-")" = 3
	test "$(ls $KJ_CACHE_DIR | grep -c "^stage-")" = 0
	# Secret seeds: the run.s own entries (two sets a case) go with it.
	$KJUDGE verify --op_name scale --verify_dir d --output r1.json > /dev/null
	test "$(ls $KJ_CACHE_DIR | grep -c "^g-")" = 3
	test "$(ls $KJ_CACHE_DIR | grep -c "^stage-")" = 0
	# The bytecode tree is no entry: a cap of 0 trims every entry but it
	# (the sandbox of the reference makes it, to bind it).
	test -e $KJ_CACHE_DIR/pycache || echo x > $KJ_CACHE_DIR/pycache
	echo "# changed" >> d/scale_torch.py
	KJ_CACHE_MAX_MB=0 $KJUDGE verify --op_name scale --verify_dir d --seed 7 --output r2.json > /dev/null
	test -e $KJ_CACHE_DIR/pycache
	test "$(ls $KJ_CACHE_DIR | grep -c "^g-")" -le 1
'

test_expect 'the scratch directory is a private tmpfs, and is gone after the run' '
	task d
	cand d triton_ascend_impl "x * 2 + 1"
	export KJ_SCRATCH_DIR=$SCRATCH/scratch
	mkdir $KJ_SCRATCH_DIR
	$KJUDGE verify --op_name scale --verify_dir d --output r1.json > /dev/null
	# root (as in CI) or a user namespace: either way a private tmpfs
	case "$(jget r1.json "d[\"kjudge\"][\"scratch\"]")" in private-tmpfs*) ;; *) false ;; esac
	KJ_SCRATCH=shared $KJUDGE verify --op_name scale --verify_dir d --output r2.json > /dev/null
	test "$(jget r2.json "d[\"kjudge\"][\"scratch\"], d[\"passed_cases\"]")" = "shared 3"
	test -z "$(ls -A $KJ_SCRATCH_DIR)"
	! grep -q " $KJ_SCRATCH_DIR" /proc/mounts
'

test_expect 'timings say where the time went' '
	task d
	cand d triton_ascend_impl "x * 2 + 1"
	KJ_CACHE_DIR=off $KJUDGE verify --op_name scale --verify_dir d --output r.json > /dev/null
	test "$(jget r.json "(t := d[\"kjudge\"][\"timings\"]) and all(t[k] > 0 for k in (\"start_s\", \"compare_s\", \"total_s\")) and t[\"start_s\"] < t[\"total_s\"] and sorted(t[\"candidate\"]) == sorted(t[\"reference\"]) == [\"checks_s\", \"forward_s\", \"inputs_s\", \"write_s\"]")" = True
'

test_expect 'cases are counted without making the inputs, or on the device when that fails' '
	mkdir d
	cat > d/scale_torch.py <<PY
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return 2 * x + 1

def get_input_groups():
    n = int(torch.randint(5, 9, (1,)).item())  # needs data: not on meta
    return [[torch.randn(n)], [torch.randn(n, 2)]]
PY
	cand d triton_ascend_impl "x * 2 + 1"
	$KJUDGE verify --op_name scale --verify_dir d --output r.json > /dev/null
	test "$(jget r.json "d[\"total_cases\"], d[\"passed_cases\"]")" = "2 2"
'
test_done
