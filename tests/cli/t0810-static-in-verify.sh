#!/usr/bin/env bash
# t0810-static-in-verify.sh - the anti-cheat of the single-candidate
# commands: a candidate whose forward computes torch.relu(a + b) beside a
# copy kernel passes every case, so verify warns (stderr and the record's
# warnings) and records the static check (kjudge.static); --strict fails it
# (exit 1, StaticCheck); a candidate the static check cannot see cheating
# (Python's sum() beside a kernel run for show) fails --strict's
# kernels-disabled layer (KernelsNotUsed); the softmax example passes
# --strict; benchmark --strict takes only a verify --strict record; the
# skill's scripts run --strict unless --no-strict.  On the CPU, with Triton's
# interpreter (the profiler layer does not apply there).
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=$kj_root/cache

# cheat DIR: the task relu(a + b) and the candidate of issue 25.
cheat() {
	mkdir -p "$1"
	cat > "$1/addrelu_torch.py" <<'EOF'
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a + b)


def get_input_groups():
    return [[torch.randn(64), torch.randn(64)], [torch.randn(33, 17), torch.randn(33, 17)]]


def get_init_inputs():
    return []
EOF
	cat > "$1/addrelu_triton_ascend_impl.py" <<'EOF'
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        a = a.contiguous()
        scratch = torch.empty_like(a)
        copy_kernel[(triton.cdiv(a.numel(), 1024),)](a, scratch, a.numel(), BLOCK=1024)
        return torch.relu(a + b)
EOF
}

test_expect 'verify warns about torch ops beside a copy kernel and records the static check; --strict fails it' '
	cheat d
	$KJUDGE verify --op_name addrelu --verify_dir d --device cpu > out.txt 2> e.txt
	grep -q "^addrelu: 2/2 cases passed" out.txt
	grep -q "^kjudge verify: warning: the static check failed (StaticCheck; .*): degraded, type 4" e.txt
	py "
import json
k = json.load(open(\"d/verify_result.json\"))[\"kjudge\"]
s = k[\"static\"]
assert s[\"status\"] == \"fail\" and s[\"regression_type\"] == 4, s
assert \"no_forbidden_torch_ops\" in s[\"failed_checks\"], s
assert s[\"launched\"] == [\"copy_kernel\"] and s[\"kernels\"] == [\"copy_kernel\"], s
assert {v[\"call\"] for v in s[\"violations\"]} >= {\"torch.relu\", \"a + b\"}, s
assert [w[\"layer\"] for w in k[\"warnings\"]] == [\"static\"], k[\"warnings\"]
assert \"strict\" not in k, k
"
	expect_exit 1 $KJUDGE verify --op_name addrelu --verify_dir d --device cpu --strict > out.txt 2> e.txt
	grep -q "^addrelu: 2/2 cases passed" out.txt
	grep -q "^kjudge verify: --strict: fail: StaticCheck: degraded, type 4" e.txt
	test "$(jget d/verify_result.json "(lambda s: \" \".join((s[\"status\"], s[\"error_type\"], s[\"kernels_disabled\"][\"status\"])))(d[\"kjudge\"][\"strict\"])")" = "fail StaticCheck not_run"
	# The failed strict record passes no gate; benchmark --strict stops at
	# the static check before any worker starts.
	expect_exit 2 $KJUDGE benchmark --op_name addrelu --verify_dir d --device cpu 2> e.txt
	grep -q "verify --strict failed the candidate: StaticCheck: degraded" e.txt
	expect_exit 1 $KJUDGE benchmark --op_name addrelu --verify_dir d --device cpu --strict 2> e.txt
	grep -q "^kjudge benchmark: --strict: fail: StaticCheck: degraded, type 4" e.txt
	expect_exit 2 $KJUDGE benchmark --op_name addrelu --verify_dir d --strict --verify_not_required 2> e.txt
	grep -q "^kjudge benchmark: --strict needs the verify gate" e.txt
	expect_exit 2 $KJUDGE verify --op_name addrelu --verify_dir d --strict --disable-kernels
'

test_expect 'benchmark warns too and records the static check in the perf JSON' '
	cheat d
	$KJUDGE benchmark --op_name addrelu --verify_dir d --device cpu --verify_not_required \
		--skip_framework --warmup 0 --repeats 1 --time_budget 0.01 --output p.json > out.txt 2> e.txt
	grep -q "^kjudge benchmark: warning: the static check failed (StaticCheck" e.txt
	test "$(jget p.json "\" \".join([d[\"kjudge\"][\"static\"][\"status\"]] + [w[\"layer\"] for w in d[\"kjudge\"][\"warnings\"]])")" = "fail static"
'

test_expect 'a kernel run for show beside Python'"'"'s sum() fails --strict'"'"'s kernels-disabled layer' '
	mkdir d
	cp "$KJ_TESTS/eval/cheats/scale2_torch.py" d/
	cp "$KJ_TESTS/eval/cheats/sum_for_show.py" d/scale2_triton_ascend_impl.py
	expect_exit 1 $KJUDGE verify --op_name scale2 --verify_dir d --device cpu --strict > out.txt 2> e.txt
	grep -q "^kjudge verify: --strict: fail: KernelsNotUsed: with its kernels disabled it still passed" e.txt
	test "$(jget d/verify_result.json "(lambda k: \" \".join((k[\"static\"][\"status\"], k[\"strict\"][\"error_type\"], k[\"strict\"][\"kernels_disabled\"][\"status\"], str(len(k[\"warnings\"])))))(d[\"kjudge\"])")" = "pass KernelsNotUsed fail 0"
'

test_expect 'the softmax example passes --strict; benchmark --strict wants a verify --strict record' '
	cp -r "$KJ_TESTS/../examples/softmax" d
	$KJUDGE verify --op_name softmax --verify_dir d --device cpu > /dev/null 2> e.txt
	test ! -s e.txt
	# A record without --strict ran no anti-cheat layer: refused before any worker starts.
	expect_exit 2 $KJUDGE benchmark --op_name softmax --verify_dir d --device cpu --strict 2> e.txt
	grep -q "comes from a verify without --strict, which ran no anti-cheat layer" e.txt
	$KJUDGE verify --op_name softmax --verify_dir d --device cpu --strict > /dev/null 2> e.txt
	test ! -s e.txt
	py "
import json
k = json.load(open(\"d/verify_result.json\"))[\"kjudge\"]
s = k[\"strict\"]
assert (s[\"status\"], s[\"error_type\"], k[\"static\"][\"status\"]) == (\"pass\", None, \"pass\"), k
assert s[\"kernels_disabled\"][\"status\"] == \"pass\", s
assert (s[\"profile\"][\"status\"], s[\"profile\"][\"message\"]) == (\"not_run\", \"not applicable on cpu\"), s
assert k[\"warnings\"] == [], k
"
'

test_expect 'kjudge skill installs strict verify and benchmark scripts; --no-strict keeps the seed'"'"'s' '
	mkdir -p s/scripts n/scripts
	$KJUDGE skill s > out.txt
	grep -q "^s/scripts/verify.py: runs kjudge verify --strict$" out.txt
	grep -q "^s/scripts/benchmark.py: runs kjudge benchmark --strict$" out.txt
	grep -q "^s/scripts/validate_triton_impl.py: runs kjudge validate$" out.txt
	cheat d
	rc=0; "$KJ_PYTHON" s/scripts/verify.py --op_name addrelu --verify_dir d --device cpu \
		> /dev/null 2> e.txt || rc=$?
	test $rc -eq 1
	grep -q "^kjudge verify: --strict: fail: StaticCheck" e.txt
	$KJUDGE skill --no-strict n > out.txt
	grep -q "^n/scripts/verify.py: runs kjudge verify$" out.txt
	grep -q "\"verify\"\\]" n/scripts/verify.py
	grep -q "\"benchmark\"\\]" n/scripts/benchmark.py
	# A second run turns strict scripts back into the seed'"'"'s.
	$KJUDGE skill --no-strict s > /dev/null
	grep -q "\"verify\"\\]" s/scripts/verify.py
'

test_done
