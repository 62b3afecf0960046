#!/usr/bin/env bash
# t0230-cases.sh - tasks with axes ({op}_cases.json beside {op}_torch.py):
# the cases, their parameters in the records, the same cases in benchmark,
# bad cases files, the cache and the gate; and verify --disable-kernels (the
# kernel layer of eval) on Triton's interpreter.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state

# task DIR: "addc" (x * scale + y) over shape x dtype, float32 (33,) excluded:
# cases (8,16)/f16, (8,16)/f32, (33,)/f16, (2,3,4)/f16, (2,3,4)/f32.
task() {
	mkdir -p "$1"
	cat > "$1/addc_torch.py" <<'PY'
import torch
import torch.nn as nn

DT = {"float16": torch.float16, "float32": torch.float32}

class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, y):
        return x * self.scale + y

def get_inputs(shape, dtype):
    return [torch.randn(*shape, dtype=DT[dtype]), torch.randn(*shape, dtype=DT[dtype])]

def get_init_inputs(shape, dtype):
    # The model depends on the case too: built again for each.
    return [2.0 if dtype == "float16" else 3.0]
PY
	cat > "$1/addc_cases.json" <<'J'
{"axes": {"shape": [[8, 16], [33], [2, 3, 4]], "dtype": ["float16", "float32"]},
 "exclude": [{"dtype": "float32", "shape": [33]}]}
J
}

# cand DIR IMPL BODY: forward returns BODY (in x, y, self.scale).
cand() {
	cat > "$1/addc_$2.py" <<PY
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, y):
        return $3
PY
}

test_expect 'the cases are the product of the axes minus the exclusions, each with its params; benchmark runs the same' '
	task d
	cand d triton_ascend_impl "x * self.scale + y"
	$KJUDGE verify --op_name addc --verify_dir d --device cpu > out.txt
	grep -q "addc: 5/5 cases passed" out.txt
	py "
import hashlib, json
d = json.load(open(\"d/verify_result.json\"))
assert (d[\"total_cases\"], d[\"passed_cases\"]) == (5, 5), d
want = [{\"shape\": [8, 16], \"dtype\": \"float16\"}, {\"shape\": [8, 16], \"dtype\": \"float32\"},
        {\"shape\": [33], \"dtype\": \"float16\"}, {\"shape\": [2, 3, 4], \"dtype\": \"float16\"},
        {\"shape\": [2, 3, 4], \"dtype\": \"float32\"}]
cs = d[\"kjudge\"][\"cases\"]
assert [c[\"params\"] for c in cs] == want, cs
# Axis order as in the file.
assert all(list(c[\"params\"]) == [\"shape\", \"dtype\"] for c in cs), cs
t = d[\"kjudge\"][\"task\"]
assert t[\"cases_file\"].endswith(\"/d/addc_cases.json\"), t
assert t[\"cases_sha256\"] == hashlib.sha256(open(\"d/addc_cases.json\", \"rb\").read()).hexdigest(), t
"
	$KJUDGE benchmark --op_name addc --verify_dir d --device cpu --warmup 1 --repeats 5 --time_budget 0.2 --output perf.json > /dev/null
	py "
import json
v = json.load(open(\"d/verify_result.json\"))
p = json.load(open(\"perf.json\"))
assert (p[\"total_cases\"], p[\"passed_cases\"]) == (5, 5), p
assert [s[\"params\"] for s in p[\"per_shape_results\"]] == [c[\"params\"] for c in v[\"kjudge\"][\"cases\"]]
assert p[\"per_shape_results\"][2][\"input_desc\"][0][\"shape\"] == [33], p[\"per_shape_results\"][2]
assert p[\"kjudge\"][\"task\"][\"cases_sha256\"] == v[\"kjudge\"][\"task\"][\"cases_sha256\"]
"
'

test_expect 'a candidate wrong on float16 only fails exactly the float16 cases: exit 1' '
	task d
	cand d wrong_impl "(x * self.scale + y) * (1.1 if x.dtype == torch.float16 else 1.0)"
	expect_exit 1 $KJUDGE verify --op_name addc --verify_dir d --device cpu --triton_impl_name wrong_impl --output r.json > /dev/null
	py "
import json
d = json.load(open(\"r.json\"))
assert (d[\"total_cases\"], d[\"passed_cases\"], d[\"failed_cases\"]) == (5, 2, 3), d
assert [f[\"case_idx\"] for f in d[\"failures\"]] == [1, 3, 4], d[\"failures\"]
assert all(f[\"params\"][\"dtype\"] == \"float16\" and f[\"error_type\"] == \"AccuracyError\"
           for f in d[\"failures\"]), d[\"failures\"]
assert [c[\"status\"] for c in d[\"kjudge\"][\"cases\"]] == [\"fail\", \"pass\", \"fail\", \"fail\", \"pass\"]
"
'

test_expect 'a changed cases file: new cache keys (no golden reused) and the gate refuses the old record' '
	task d
	cand d triton_ascend_impl "x * self.scale + y"
	export KJ_CACHE_DIR=$SCRATCH/cache
	$KJUDGE verify --op_name addc --verify_dir d --device cpu --seed 7 > /dev/null
	$KJUDGE verify --op_name addc --verify_dir d --device cpu --seed 7 > /dev/null
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"golden_from_cache\"]")" -gt 0
	# The same first cases, another file: nothing of the old one is reused.
	sed -i "s/\[2, 3, 4\]\]/[2, 3, 4], [5]]/" d/addc_cases.json
	grep -q "\[5\]\]" d/addc_cases.json
	old=$(jget d/verify_result.json "d[\"kjudge\"][\"task\"][\"cases_sha256\"]")
	# (The gate checks the cases file before the seeds.)
	expect_exit 2 $KJUDGE benchmark --op_name addc --verify_dir d --device cpu --allow_fixed_seeds --warmup 1 --repeats 5 --time_budget 0.2 2> e.txt
	grep -q "another cases file" e.txt
	$KJUDGE verify --op_name addc --verify_dir d --device cpu --seed 7 --output r.json > /dev/null
	test "$(jget r.json "(d[\"total_cases\"], d[\"passed_cases\"], d[\"kjudge\"][\"golden_from_cache\"])")" = "(7, 7, 0)"
	test "$(jget r.json "d[\"kjudge\"][\"task\"][\"cases_sha256\"]")" != "$old"
'

test_expect 'without a cases file nothing changes: no params anywhere' '
	task d
	rm d/addc_cases.json
	cat > d/addc_torch.py <<PY
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x, y):
        return x * 2.0 + y

def get_input_groups():
    return [[torch.randn(4), torch.randn(4)], [torch.randn(3, 3), torch.randn(3, 3)]]

def get_init_inputs():
    return []
PY
	cat > d/addc_triton_ascend_impl.py <<PY
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * 2.0 + y
PY
	$KJUDGE verify --op_name addc --verify_dir d --device cpu > /dev/null
	py "
import json
d = json.load(open(\"d/verify_result.json\"))
assert d[\"total_cases\"] == 2 and \"params\" not in json.dumps(d), d
assert set(d[\"kjudge\"][\"task\"]) == {\"file\", \"sha256\"}, d[\"kjudge\"][\"task\"]
assert \"kernels_disabled\" not in d[\"kjudge\"] and \"kernel_names\" not in d[\"kjudge\"]
"
'

# bad DIR TEXT WANT: a cases file TEXT is refused (exit 2) with WANT in the message.
bad() {
	printf "%s" "$2" > "$1/addc_cases.json"
	expect_exit 2 $KJUDGE verify --op_name addc --verify_dir "$1" --device cpu 2> e.txt
	grep -q "addc_cases.json" e.txt || { cat e.txt; return 1; }
	grep -q -- "$3" e.txt || { cat e.txt; return 1; }
	expect_exit 2 $KJUDGE benchmark --op_name addc --verify_dir "$1" --device cpu --verify_not_required 2> e.txt
	grep -q -- "$3" e.txt || { cat e.txt; return 1; }
}

test_expect 'a bad cases file is the task'"'"'s input error: exit 2 naming the file and why' '
	task d
	cand d triton_ascend_impl "x * self.scale + y"
	bad d "{\"axes\": " "not JSON"
	bad d "[1, 2]" "not a JSON object"
	bad d "{\"axes\": [1]}" "must be an object of axis names"
	bad d "{\"axes\": {}}" "must be an object of axis names"
	bad d "{\"axes\": {\"dtype\": []}}" "axis .dtype. must be a non-empty array"
	bad d "{\"axes\": {\"dtype\": \"float16\"}}" "axis .dtype. must be a non-empty array"
	bad d "{\"axes\": {\"dtype\": [\"float16\"]}, \"exclude\": {}}" "must be a list of objects"
	bad d "{\"axes\": {\"dtype\": [\"float16\"]}, \"exclude\": [3]}" "exclude.0. must be a non-empty object"
	bad d "{\"axes\": {\"dtype\": [\"float16\"]}, \"exclude\": [{\"dtyp\": \"float16\"}]}" "names .dtyp., which is not an axis"
	bad d "{\"axes\": {\"dtype\": [\"float16\"]}, \"exclude\": [{\"dtype\": \"float16\"}]}" "no case left"
	bad d "{\"axes\": {\"dtype\": [\"float16\"]}, \"cases\": []}" "unknown key .cases."
	bad d "{\"axes\": {\"a\": [1, 1], \"a\": [2]}}" "not JSON"
	bad d "{\"axes\": {\"not-a-name\": [1]}}" "not a Python keyword name"
	# 101 x 100 = 10100 cases.
	py "import json; print(json.dumps({\"axes\": {\"a\": list(range(101)), \"b\": list(range(100))}}))" > big.json
	bad d "$(cat big.json)" "more than 10000 cases"
'

test_expect 'a task whose generators do not take the parameters is the task'"'"'s error: exit 2' '
	task d
	cand d triton_ascend_impl "x * self.scale + y"
	sed -i "s/^def get_inputs(shape, dtype):/def get_inputs(shape):/" d/addc_torch.py
	expect_exit 2 $KJUDGE verify --op_name addc --verify_dir d --device cpu 2> e.txt
	grep -q "the task cannot be loaded" e.txt
	grep -q "get_inputs(shape) does not take the cases file.s parameters (dtype, shape) as keyword arguments" e.txt
	task d
	sed -i "s/^def get_init_inputs(shape, dtype):/def get_init_inputs():/" d/addc_torch.py
	expect_exit 2 $KJUDGE verify --op_name addc --verify_dir d --device cpu 2> e.txt
	grep -q "get_init_inputs() does not take" e.txt
'

# A tiny Triton task: y = 2x on 64 elements (Triton's interpreter on the CPU).
triton_task() {
	cat > dbl_torch.py <<PY
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return 2 * x

def get_inputs():
    return [torch.randn(64)]

def get_init_inputs():
    return []
PY
	cat > dbl_triton_ascend_impl.py <<PY
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def dbl(x_ptr, y_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + i, 2 * tl.load(x_ptr + i))

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.full_like(x, 7.0)
        dbl[(1,)](x, y, BLOCK=64)
        return y
PY
	# Launches a kernel for show and computes with torch.
	cat > dbl_show_impl.py <<PY
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def touch(p):
    tl.store(p, tl.load(p))

class ModelNew(nn.Module):
    def forward(self, x):
        scratch = torch.zeros(1)
        touch[(1,)](scratch)
        return x + x
PY
}

test_expect 'verify --disable-kernels: a Triton candidate fails, one that computes with torch passes' '
	triton_task
	expect_exit 1 $KJUDGE verify --op_name dbl --device cpu --disable-kernels --output k.json > /dev/null
	test "$(jget k.json "(d[\"passed_cases\"], d[\"failures\"][0][\"error_type\"], d[\"kjudge\"][\"kernels_disabled\"][\"launches_suppressed\"] >= 1)")" = "(0, '"'"'AccuracyError'"'"', True)"
	# With its kernels the same candidate passes, and the record is as ever.
	$KJUDGE verify --op_name dbl --device cpu --output ok.json > /dev/null
	test "$(jget ok.json "(d[\"passed_cases\"], \"kernels_disabled\" in d[\"kjudge\"])")" = "(1, False)"
	$KJUDGE verify --op_name dbl --device cpu --disable-kernels --triton_impl_name show_impl --output verify_result_show_impl.json > /dev/null
	test "$(jget verify_result_show_impl.json "(d[\"passed_cases\"], d[\"kjudge\"][\"kernels_disabled\"][\"launches_suppressed\"] >= 1)")" = "(1, True)"
	# Such a record is not a verification: the gate refuses it.
	expect_exit 2 $KJUDGE benchmark --op_name dbl --device cpu --triton_impl_name show_impl 2> e.txt
	grep -q "kernels disabled" e.txt
'

test_expect 'the worker: profile_kernels is skipped on the CPU, kernels_disabled counts its launches' '
	triton_task
	mkdir out
	cat > drive.py <<PY
import json, os, socket, subprocess, sys
a, b = socket.socketpair()
w = subprocess.Popen([sys.executable, os.environ["KJ_BUILD"] + "/kjudge_worker.py", "--fd", str(b.fileno())],
                     pass_fds=[b.fileno()])
b.close()
buf = b""
def req(**o):
    global buf
    o["nonce"] = 1
    a.sendall((json.dumps(o) + "\n").encode())
    while b"\n" not in buf:
        buf += a.recv(65536)
    line, buf = buf.split(b"\n", 1)
    r = json.loads(line)
    assert r["ok"], r
    return r
req(op="hello")
req(op="load_task", dir=os.getcwd(), task_module="dbl_torch", device="cpu")
req(op="load", module="dbl_show_impl", cls="ModelNew", init_seed=1, profile_kernels=True,
    kernels_disabled=True)
r = req(op="run", case=0, seed=5, out_dir=os.getcwd() + "/out", tag="c")
assert "kernel_names" not in r and r["launches_suppressed"] == 1, r
req(op="exit") if False else a.sendall(b"{\"op\": \"exit\", \"nonce\": 1}\n")
assert w.wait(timeout=60) == 0
print("ok")
PY
	test "$("$KJ_PYTHON" drive.py)" = ok
'

test_done
