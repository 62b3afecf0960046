#!/usr/bin/env bash
# t0870-audit.sh - kjudge audit: canary candidates judged as any candidate.
# A suite with three tasks built to be weak and a strong one: the audit
# flags exactly the weak ones, each with the canary that passed and the
# figure; a strong task rejects every canary (exit 0) and says its lowp
# headroom; the FLOPs and bytes of a matmul, a convolution and an
# elementwise task are the hand-computed ones; bad input exits 2.  The
# suite runs with two canaries only (every canary is a verify of its own:
# the whole set runs once, on the strong task); an audit again of the same
# tasks with the same options comes from the cache, other options do not.
. "$(dirname "$0")/lib.sh"
AUD=$KJ_TESTS/audit

test_expect 'audit --help and bad input: exit 2' '
	"$KJUDGE" audit --help >help.txt &&
	grep -q "usage: kjudge audit SUITE" help.txt &&
	grep -q -- "--canaries LIST" help.txt &&
	"$KJUDGE" help --man audit | grep -q "^.TH" &&
	expect_exit 2 "$KJUDGE" audit 2>err && grep -q "give a SUITE" err &&
	expect_exit 2 "$KJUDGE" audit "$AUD/suite" --op_name x 2>err &&
	grep -q "not both" err &&
	expect_exit 2 "$KJUDGE" audit --op_name nothere --verify_dir . 2>err &&
	grep -q "no task file" err &&
	expect_exit 2 "$KJUDGE" audit "$AUD/suite" --canaries zeros,bogus 2>err &&
	expect_exit 2 "$KJUDGE" audit --op_name "../x" 2>err &&
	mkdir empty && expect_exit 2 "$KJUDGE" audit empty 2>err &&
	grep -q "no task" err &&
	mkdir b && printf "import torch\nclass Model(:\n" >b/broken_torch.py &&
	expect_exit 2 "$KJUDGE" audit --op_name broken --verify_dir b --device cpu \
		--json b.json >out 2>err &&
	grep -q "^broken: not audited: the audit.s measurement exited with status 1: SyntaxError" out &&
	test "$(jget b.json "d[\"tasks\"][0][\"weak\"]")" = False
'

test_expect 'a suite: exactly the weak tasks are flagged, with canary and figure' '
	mkdir tmp &&
	expect_exit 1 env TMPDIR=$PWD/tmp KJ_CACHE_DIR=$PWD/cache "$KJUDGE" audit "$AUD/suite" --device cpu -j 2 \
		--canaries zeros,input --json a.json >out 2>err &&
	test -z "$(ls tmp)" &&
	grep -q "^4 tasks: 3 weak, 0 not proven" out &&
	grep -q "^1_ReLU_nonneg: weak \[input passes\]" out &&
	grep -q "^4_Softmax: no canary asked for passes" out &&
	grep -q "zeros passes case 1: 100.0 % of the golden.s 4096 elements are within the threshold of 0" out &&
	py "
import json
d = {t[\"task\"]: t for t in json.load(open(\"a.json\"))[\"tasks\"]}
assert sorted(d) == [\"1_ReLU_nonneg\", \"2_Sparse_max\", \"3_Copy\", \"4_Softmax\"], d
weak = sorted(n for n, t in d.items() if t[\"weak\"])
assert weak == [\"1_ReLU_nonneg\", \"2_Sparse_max\", \"3_Copy\"], weak
passing = {n: sorted(k for k, v in t[\"canaries\"].items() if v == \"pass\") for n, t in d.items()}
assert passing == {\"1_ReLU_nonneg\": [\"input\"], \"2_Sparse_max\": [\"zeros\"], \"3_Copy\": [\"input\"], \"4_Softmax\": []}, passing
assert d[\"4_Softmax\"][\"canaries\"][\"zeros\"] == \"fail\" and d[\"4_Softmax\"][\"canaries\"][\"input\"] == \"fail\"
assert d[\"4_Softmax\"][\"canaries\"][\"noise\"] == \"skipped\" and d[\"4_Softmax\"][\"reasons\"] == []
r = d[\"1_ReLU_nonneg\"][\"reasons\"]
assert len(r) == 1 and r[0].startswith(\"input passes case 1: 100.0 % of the golden\") and \"8192 elements\" in r[0], r
"
'

test_expect 'a strong task rejects every canary: exit 0, lowp headroom said' '
	mkdir t && cp "$AUD/suite/level1/4_Softmax.py" t/softmax_torch.py &&
	KJ_CACHE_DIR=$PWD/cache "$KJUDGE" audit --op_name softmax --verify_dir t --device cpu -j 2 --json a.json >out 2>err &&
	grep -q "^softmax: strong; lowp at" out &&
	py "
import json
t = json.load(open(\"a.json\"))[\"tasks\"][0]
assert t[\"task\"] == \"softmax\" and t[\"weak\"] is False, t
want = [\"zeros\", \"ones\", \"empty\", \"constant\", \"input\", \"lowp\", \"lowp_float16\",
        \"lowp_bfloat16\", \"noise\", \"stale\", \"partial\"]
assert sorted(t[\"canaries\"]) == sorted(want), t[\"canaries\"]
assert all(v == \"fail\" for v in t[\"canaries\"].values()), t[\"canaries\"]
h = t[\"lowp_limit_used\"]
assert h[\"float16\"] > 1 and h[\"bfloat16\"] > h[\"float16\"], h
"
'

test_expect 'FLOPs and bytes of a matmul, a convolution and an elementwise task; the cache' '
	export KJ_CACHE_DIR=$PWD/cache &&
	expect_exit 0 "$KJUDGE" audit "$AUD/sol" --device cpu -j 2 --canaries zeros \
		--json a.json >out 2>err &&
	! grep -q cached out &&
	expect_exit 0 "$KJUDGE" audit "$AUD/sol" --device cpu -j 2 --canaries zeros \
		--json b.json >out2 2>err &&
	test "$(grep -c "cpu, cached)" out2)" = 3 && cmp a.json b.json &&
	mkdir v && cp "$AUD/sol/level1/3_Scale.py" v/scale_torch.py &&
	expect_exit 0 "$KJUDGE" audit --op_name scale --verify_dir v --device cpu \
		--canaries ones >out3 2>err && ! grep -q cached out3 &&
	py "
import json
d = {t[\"task\"]: t[\"cases\"][0] for t in json.load(open(\"a.json\"))[\"tasks\"]}
mm, conv, ew = d[\"1_Matmul\"], d[\"2_Conv\"], d[\"3_Scale\"]
assert mm[\"flops\"] == 2 * 32 * 64 * 16 and mm[\"bytes\"] == (32 * 64 + 64 * 16 + 32 * 16) * 4, mm
assert conv[\"flops\"] == 2 * (2 * 8 * 14 * 14) * (3 * 3 * 3), conv
assert conv[\"bytes\"] == (2 * 3 * 16 * 16 + 8 * 3 * 3 * 3 + 2 * 8 * 14 * 14) * 4, conv
assert ew[\"flops\"] == 0 and ew[\"bytes\"] == 2 * 64 * 128 * 4, ew
tasks = json.load(open(\"a.json\"))[\"tasks\"]
assert all(t[\"peaks\"] == tasks[0][\"peaks\"] for t in tasks), \"the rates are measured once\"
for t in tasks:
    p, c = t[\"peaks\"], t[\"cases\"][0]
    assert p[\"device_name\"] == \"cpu\" and p[\"copy_bytes_per_s\"] > 0, p
    peak = max(p[\"matmul_flops_per_s\"].values())
    sol = max(c[\"flops\"] / peak, c[\"bytes\"] / p[\"copy_bytes_per_s\"]) * 1e3
    assert c[\"sol_ms\"] > 0 and abs(c[\"sol_ms\"] - sol) <= 1e-9 * sol, (c, p)
"
'

test_expect 'a canary out of device memory beside others is judged again alone, and says so' '
	# A task whose forward runs out of the device memory in every canary
	# (their module is loaded) and never in the reference or the
	# measurement: beside another canary that is the audit'"'"'s appetite,
	# judged again alone; alone from the start (one canary) it is judged
	# once.
	mkdir m && cat >m/big_torch.py <<-PY &&
	import sys
	import torch
	import torch.nn as nn


	class Model(nn.Module):
	    def forward(self, x):
	        if "kjudge_audit" in sys.modules:
	            raise torch.OutOfMemoryError("Tried to allocate 6.00 GiB")
	        return x * 2 + 1


	def get_inputs():
	    return [torch.randn(64, 32)]


	def get_init_inputs():
	    return []
	PY
	expect_exit 2 "$KJUDGE" audit --op_name big --verify_dir m --device cpu -j 2 \
		--canaries zeros,noise --json m2.json >out 2>err &&
	grep -q "^big: not proven" out &&
	test "$(grep -c "could not be judged (judged again alone: the device.s memory ran out while other canaries held it)" out)" = 2 &&
	expect_exit 2 "$KJUDGE" audit --op_name big --verify_dir m --device cpu -j 2 \
		--canaries zeros --json m1.json >out1 2>err &&
	test "$(grep -c "could not be judged: it ended other than by its outputs" out1)" = 1 &&
	! grep -q "judged again" out1 &&
	py "
import json
for f in (\"m2.json\", \"m1.json\"):
    t = json.load(open(f))[\"tasks\"][0]
    assert t[\"weak\"] is False and t[\"canaries\"][\"zeros\"] == \"error\", t
    assert any(\"OutOfMemoryError\" in r for r in t[\"reasons\"]), t[\"reasons\"]
"
'

test_done
