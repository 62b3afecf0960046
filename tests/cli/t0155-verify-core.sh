#!/usr/bin/env bash
# t0155-verify-core.sh - the trusted core under verify and benchmark: who is
# charged with what, outputs of every kind, the comparison rules, errors that
# show the task's own problem, configuration that fails closed, the gate that
# belongs to the candidate, and the golden cache's checks.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state

# task DIR BODY [INPUTS]: a task "op" whose forward returns BODY (in x).
task() {
	mkdir -p "$1"
	cat > "$1/op_torch.py" <<PY
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return $2

def get_input_groups():
    return ${3:-[[torch.randn(64, 33)], [torch.randn(1000)]]}

def get_init_inputs():
    return []
PY
}

# cand DIR BODY [IMPL]: a candidate whose forward returns BODY.
cand() {
	cat > "$1/op_${3:-triton_ascend_impl}.py" <<PY
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return $2
PY
}

test_expect 'every failure says who is charged, and the candidate.s exception in a field of its own' '
	task d "2 * x"
	cat > d/op_triton_ascend_impl.py <<PY
import torch.nn as nn

class ReferenceError(Exception):
    pass

class ModelNew(nn.Module):
    def forward(self, x):
        raise ReferenceError("blame the task")
PY
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > out.txt
	test "$(jget d/verify_result.json "[(f[\"error_type\"], f[\"status\"], f[\"charged\"], f[\"exception\"].split(\".\")[-1]) for f in d[\"failures\"]]")" = "[('"'"'ForwardError'"'"', '"'"'fail'"'"', '"'"'candidate'"'"', '"'"'ReferenceError'"'"'), ('"'"'ForwardError'"'"', '"'"'fail'"'"', '"'"'candidate'"'"', '"'"'ReferenceError'"'"')]"
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"status\"]")" = fail
	# The summary line is the exception, with where it was raised.
	grep -q "case 1: ForwardError: ReferenceError: blame the task (at op_triton_ascend_impl.py:8 in forward)" out.txt
'

test_expect 'outputs that are not tensors are compared: numbers, strings, None, lists and dicts' '
	task d "{\"y\": 2 * x, \"n\": int(x.numel()), \"s\": \"ok\", \"t\": (None, [1.5, True])}"
	cand d "{\"t\": (None, [1.5, True]), \"s\": \"ok\", \"n\": int(x.numel()), \"y\": x + x}"
	$KJUDGE verify --op_name op --verify_dir d > /dev/null
	cand d "{\"t\": (None, [1.5, False]), \"s\": \"ok\", \"n\": int(x.numel()), \"y\": x + x}"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	jget d/verify_result.json "d[\"failures\"][0][\"error_msg\"]" | grep -q "output 1\[.t.\]\[1\]\[1\]: the reference returned True, the candidate False"
	cand d "{\"t\": (None, [1.5, True]), \"s\": \"ok\", \"n\": int(x.numel()) + 1, \"y\": x + x}"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	jget d/verify_result.json "d[\"failures\"][0][\"error_type\"]" | grep -qx AccuracyError
	cand d "{\"s\": \"ok\", \"n\": int(x.numel()), \"y\": x + x}"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	jget d/verify_result.json "d[\"failures\"][0][\"error_type\"]" | grep -qx OutputTypeMismatch
'

test_expect 'a tensor against anything else fails and says what each side returned' '
	task d "2 * x"
	cand d "float((2 * x).sum())"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	jget d/verify_result.json "d[\"failures\"][0][\"error_msg\"]" | grep -q "the reference returned a float32 tensor of shape \[64, 33\], the candidate the float"
'

test_expect 'integer outputs are exact by default; --int-rule spec is the seed.s rule; the record says which' '
	task d "torch.full((4,), 30000, dtype=torch.int64)"
	cand d "torch.full((4,), 30002, dtype=torch.int64)"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"rules\"][\"int\"], d[\"failures\"][0][\"metrics\"][\"reason\"]")" = "exact value_mismatch"
	$KJUDGE verify --op_name op --verify_dir d --int-rule spec > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"rules\"][\"int\"]")" = spec
'

test_expect 'float64 outputs follow the seed.s rule unless --float64-rule float64' '
	task d "torch.full((3,), 1e39, dtype=torch.float64)"
	cand d "torch.full((3,), 1e39, dtype=torch.float64)"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	$KJUDGE verify --op_name op --verify_dir d --float64-rule float64 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"rules\"][\"float64\"]")" = float64
'

test_expect 'a reference that returns complex outputs is the task.s error: UnsupportedOutput, exit 2' '
	task d "torch.complex(x, x)"
	cand d "torch.complex(x, x)"
	expect_exit 2 $KJUDGE verify --op_name op --verify_dir d > out.txt 2> e.txt
	test "$(jget d/verify_result.json "d[\"failures\"][0][\"error_type\"], d[\"failures\"][0][\"charged\"], d[\"kjudge\"][\"status\"]")" = "UnsupportedOutput task task_error"
	grep -q "complex" e.txt -e "not the candidate" || grep -q "not the candidate" e.txt
'

test_expect 'a task with a syntax error shows the task.s own line, not the worker.s frames' '
	mkdir d
	printf "import torch\n\ndef get_inputs(:\n    return []\n" > d/op_torch.py
	cand d "x"
	expect_exit 2 $KJUDGE verify --op_name op --verify_dir d 2> e.txt
	grep -q "SyntaxError" e.txt
	grep -q "op_torch.py, line 3" e.txt
	! grep -q "kjudge_worker.py" e.txt
'

test_expect 'get_inputs that raises is the task.s error, with its traceback' '
	task d "x" "[[torch.randn(4)], [1 / 0]]"
	cand d "x"
	expect_exit 2 $KJUDGE verify --op_name op --verify_dir d 2> e.txt
	grep -q "ZeroDivisionError" e.txt
	! grep -q "kjudge_worker.py" e.txt
'

test_expect 'the task.s sibling modules are importable by the reference, the candidate.s helpers by the candidate' '
	mkdir d
	cat > d/refhelp.py <<PY
def twice(x):
    return 2 * x
PY
	cat > d/op_torch.py <<PY
import torch
import torch.nn as nn
from refhelp import twice

class Model(nn.Module):
    def forward(self, x):
        return twice(x)

def get_inputs():
    return [torch.randn(16)]
PY
	cat > d/op_triton_ascend_impl.py <<PY
import torch.nn as nn
from refhelp import twice

class ModelNew(nn.Module):
    def forward(self, x):
        return twice(x)
PY
	$KJUDGE verify --op_name op --verify_dir d > /dev/null
'

test_expect 'configuration that does not parse is exit 2 naming the variable; limits in force are recorded' '
	task d "2 * x"
	cand d "2 * x"
	for v in KJ_LIMIT_MEM_MB=abc KJ_LIMIT_CPU_S=nan KJ_LIMIT_PROCS=-3 KJ_SANDBOX=maybe KJ_CACHE_MAX_MB=1e3 KJ_THREADS=x; do
		expect_exit 2 env $v $KJUDGE verify --op_name op --verify_dir d 2> e.txt
		grep -q "environment variable ${v%%=*}=" e.txt
	done
	KJ_LIMIT_PROCS=333 $KJUDGE verify --op_name op --verify_dir d > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"limits\"][\"configured\"][\"procs\"], d[\"kjudge\"][\"limits\"][\"candidate_in_force\"][\"nproc\"]")" = "333 333"
'

test_expect 'an output that cannot be written is found before the run' '
	task d "2 * x"
	cand d "2 * x"
	start=$(date +%s)
	expect_exit 2 $KJUDGE verify --op_name op --verify_dir d --output nowhere/r.json 2> e.txt
	grep -q "nowhere" e.txt
	mkdir ro && chmod 555 ro
	if [ "$(id -u)" -ne 0 ]; then
		expect_exit 2 $KJUDGE verify --op_name op --verify_dir d --output ro/r.json
	fi
	expect_exit 2 $KJUDGE benchmark --op_name op --verify_dir d --verify_not_required --output nowhere/p.json
	# No worker was started: far less than a worker start-up.
	test $(( $(date +%s) - start )) -lt 3
'

test_expect 'a Python without torch says how to fix it; --device cuda without a GPU is exit 2' '
	task d "2 * x"
	cand d "2 * x"
	expect_exit 2 $KJUDGE verify --op_name op --verify_dir d --python /usr/bin/python3 2> e.txt
	grep -q "fix:" e.txt
	if ! "$KJ_PYTHON" -c "import torch, sys; sys.exit(not torch.cuda.is_available())"; then
		expect_exit 2 $KJUDGE verify --op_name op --verify_dir d --device cuda 2> e.txt
		grep -q "no CUDA device" e.txt
	fi
'

test_expect 'the gate refuses another candidate, another task version, fixed seeds and hand-made records, and says why' '
	task d "2 * x"
	cand d "2 * x"
	$KJUDGE verify --op_name op --verify_dir d > /dev/null
	$KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 --output p.json > /dev/null
	cp d/verify_result.json good.json
	# The candidate changed since it was verified.
	cand d "x + x"
	expect_exit 2 $KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 2> e.txt
	grep -q "verified another candidate" e.txt
	cand d "2 * x"
	$KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 > /dev/null
	# Another version of the task.
	echo "# a comment" >> d/op_torch.py
	expect_exit 2 $KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 2> e.txt
	grep -q "another version of the task" e.txt
	# Fixed seeds, unless asked.
	$KJUDGE verify --op_name op --verify_dir d --seed 3 > /dev/null
	expect_exit 2 $KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 2> e.txt
	grep -q "fixed seeds" e.txt
	$KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 --allow_fixed_seeds > /dev/null
	# A record edited by hand.
	$KJUDGE verify --op_name op --verify_dir d > /dev/null
	py "import json; d = json.load(open(\"d/verify_result.json\")); d[\"kjudge\"][\"device\"] = \"cuda\"; json.dump(d, open(\"d/verify_result.json\", \"w\"))"
	expect_exit 2 $KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 2> e.txt
	grep -q "signature" e.txt
'

test_expect 'the gate refuses a record of a run the machine failed in' '
	task d "2 * x"
	cand d "2 * x"
	$KJUDGE verify --op_name op --verify_dir d > /dev/null
	py "
import json, subprocess
d = json.load(open(\"d/verify_result.json\"))
d[\"kjudge\"][\"infrastructure_errors\"] = 1
json.dump(d, open(\"d/verify_result.json\", \"w\"))"
	expect_exit 2 $KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 2> e.txt
	grep -q "signature\|machine failed" e.txt
'

# cache DIR: the one golden entry of case 1, set 1, in the cache DIR.
test_expect 'a truncated, a deleted or a corrupted golden is rebuilt, never charged to anyone' '
	# fixed seeds: the goldens of one run serve the next
	task d "2 * x" "[[torch.randn(256, 256)], [torch.randn(128, 64)]]"
	cand d "x + x"
	export KJ_CACHE_DIR=$SCRATCH/cache
	$KJUDGE verify --op_name op --verify_dir d --seed 11 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"]")" = 0
	$KJUDGE verify --op_name op --verify_dir d --seed 11 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"]")" = 2
	# Truncate one golden file, corrupt another byte, delete a third.
	set -- $KJ_CACHE_DIR/g-*/*.npy
	test $# -eq 2
	truncate -s 1000 "$1"
	py "f = open(\"$2\", \"r+b\"); f.seek(-9, 2); b = f.read(1); f.seek(-9, 2); f.write(bytes([b[0] ^ 1])); f.close()"
	$KJUDGE verify --op_name op --verify_dir d --seed 11 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"], d[\"passed_cases\"]")" = "0 2"
	$KJUDGE verify --op_name op --verify_dir d --seed 11 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"]")" = 2
	rm -rf $KJ_CACHE_DIR/g-*
	$KJUDGE verify --op_name op --verify_dir d --seed 11 > /dev/null
	test "$(jget d/verify_result.json "d[\"passed_cases\"]")" = 2
'

test_expect 'goldens of fresh seeds leave the cache with their run; fixed seeds stay' '
	task d "2 * x" "[[torch.randn(256, 256)], [torch.randn(128, 64)]]"
	cand d "x + x"
	export KJ_CACHE_DIR=$SCRATCH/cache
	# Secret seeds are the run.s own: no later run can ask for them.
	$KJUDGE verify --op_name op --verify_dir d > /dev/null
	test "$(jget d/verify_result.json "d[\"passed_cases\"]")" = 2
	test -z "$(ls -d cache/g-* 2>/dev/null)"
	# (Its verdicts are not this test.s: a loaded machine may fail a
	# case on timing; the goldens are made and compared all the same.)
	$KJUDGE benchmark --op_name op --verify_dir d --warmup 1 --repeats 3 --output p.json > /dev/null
	test "$(jget p.json "d[\"total_cases\"]")" = 2
	test -z "$(ls -d cache/g-* 2>/dev/null)"
	# The ledger says what the cache holds, nothing of what left it.
	read bytes walked < cache/.ledger
	test "$bytes" -lt 4096
	# Fixed seeds: kept for the next run, and the ledger counts them.
	$KJUDGE verify --op_name op --verify_dir d --seed 5 > /dev/null
	test "$(ls -d cache/g-* | wc -l)" = 2
	read bytes walked < cache/.ledger
	test "$bytes" -gt 290000
'

test_expect 'a shared golden cache ($KJ_CACHE_SHARED) is read, checked, never written' '
	task d "2 * x" "[[torch.randn(256, 256)], [torch.randn(128, 64)]]"
	cand d "x + x"
	KJ_CACHE_DIR=$SCRATCH/shared $KJUDGE verify --op_name op --verify_dir d --seed 12 > /dev/null
	chmod -R a-w shared
	(cd shared && find . -type f | sort | xargs sha256sum) > before.txt
	# A node of its own (an empty cache): both goldens from the shared one.
	export KJ_CACHE_DIR=$SCRATCH/local KJ_CACHE_SHARED=$SCRATCH/shared
	$KJUDGE verify --op_name op --verify_dir d --seed 12 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"], d[\"passed_cases\"]")" = "2 2"
	test -z "$(ls -d local/g-* 2>/dev/null)"
	(cd shared && find . -type f | sort | xargs sha256sum) > after.txt
	diff before.txt after.txt
	# A damaged entry there is a miss: made again here, left as it is there.
	chmod -R u+w shared
	set -- shared/g-*/*.npy
	truncate -s 1000 "$1"
	(cd shared && find . -type f | sort | xargs sha256sum) > before.txt
	$KJUDGE verify --op_name op --verify_dir d --seed 12 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"], d[\"passed_cases\"]")" = "1 2"
	test "$(ls -d local/g-* | wc -l)" = 1
	(cd shared && find . -type f | sort | xargs sha256sum) > after.txt
	diff before.txt after.txt
	KJ_CACHE_SHARED=relative expect_exit 2 $KJUDGE verify --op_name op --verify_dir d 2> e.txt
	grep -q KJ_CACHE_SHARED e.txt
'

test_expect 'two judges under a small cache cap do not evict each other.s entries mid-run' '
	task d "2 * x" "[[torch.randn(512, 512)] for _ in range(6)]"
	cand d "x + x"
	cp -r d e
	export KJ_CACHE_DIR=$SCRATCH/cache KJ_CACHE_MAX_MB=1
	$KJUDGE verify --op_name op --verify_dir d --output r1.json > o1.txt &
	p1=$!
	$KJUDGE verify --op_name op --verify_dir e --output r2.json > o2.txt &
	p2=$!
	wait $p1
	wait $p2
	test "$(jget r1.json "d[\"passed_cases\"], d[\"total_cases\"]")" = "6 6"
	test "$(jget r2.json "d[\"passed_cases\"], d[\"total_cases\"]")" = "6 6"
	# Nothing left but entries, and no stage directory of the runs.
	! ls -d $KJ_CACHE_DIR/stage-* 2>/dev/null
'

test_expect 'a full file system for the goldens is the judge.s error, exit 2, not the task.s' '
	task d "2 * x" "[[torch.randn(1024, 1024)]]"
	cand d "x + x"
	mkdir small
	if mount -t tmpfs -o size=1m kjtest small 2>/dev/null; then
		rc=0
		KJ_CACHE_DIR=$SCRATCH/small $KJUDGE verify --op_name op --verify_dir d 2> e.txt > /dev/null || rc=$?
		umount small
		test $rc -eq 2
		test "$(jget d/verify_result.json "d[\"failures\"][0][\"charged\"]")" = judge
	fi
'
test_expect 'a candidate that writes into an input of more than 256 MiB (kept as a fingerprint, not a copy) is InputModified' '
	task d "2 * x" "[[torch.randn(70_000_000)]]"
	cand d "(2 * x, x.mul_(2))[0]"
	expect_exit 1 $KJUDGE verify --op_name op --verify_dir d --input_sets 1 > /dev/null
	test "$(jget d/verify_result.json "d[\"failures\"][0][\"error_type\"]")" = InputModified
	cand d "2 * x"
	$KJUDGE verify --op_name op --verify_dir d --input_sets 1 > /dev/null
	"$KJ_PYTHON" - "$KJ_TESTS/../worker/kjudge_worker.py" <<PY
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("kw", sys.argv[1])
kw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kw)
w = kw.Worker.__new__(kw.Worker)
w.torch = torch
w.SNAP_COPY_MAX = 1 << 20
x = torch.randn(3_000_001)
b = torch.zeros(1_500_001, dtype=torch.uint8)
n = torch.full((2_000_000,), float("nan"))
snap = w._snapshot([x, b, n, 3])
assert all(isinstance(s, kw._Print) for s in snap[:3]), snap
assert not w._changed([x, b, n, 3], snap)
x2 = x.clone()
x[0], x[1] = x2[1], x2[0]   # two words swapped
assert w._changed([x, b, n, 3], snap)
x.copy_(x2)
b[7] = 1                     # one byte of a length not a multiple of 4
assert w._changed([x, b, n, 3], snap)
b[7] = 0
assert not w._changed([x, b, n, 3], snap)
assert w._changed([x.reshape(1, -1), b, n, 3], snap)
PY
'
test_done
