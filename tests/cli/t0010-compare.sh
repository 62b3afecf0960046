#!/usr/bin/env bash
# t0010-compare.sh - `kjudge compare`, its exit codes, its output and JSON.
. "$(dirname "$0")/lib.sh"

# mk NAME PYEXPR: save numpy array PYEXPR (np is numpy) as NAME.npy.
mk() {
	py "import numpy as np; np.save('$1', $2)"
}


test_expect 'version and help' '
	$KJUDGE --version | grep -q "^kjudge [0-9]"
	$KJUDGE --help | grep -q "compare"
	$KJUDGE compare --help > h.txt
	grep -q -- "--dtype NAME" h.txt
	grep -q "exit status" h.txt
	$KJUDGE help compare | grep -q "usage: kjudge compare"
'

test_expect 'usage errors exit 2 with one line on stderr' '
	expect_exit 2 $KJUDGE
	expect_exit 2 $KJUDGE frobnicate 2> e.txt
	grep -q "is not a kjudge command" e.txt
	expect_exit 2 $KJUDGE compare 2> e.txt
	grep -q "expected GOLDEN.npy and ACTUAL.npy" e.txt
	expect_exit 2 $KJUDGE compare --bogus a b 2> e.txt
	grep -q "unknown option" e.txt
	expect_exit 2 $KJUDGE compare --dtype 2> e.txt
	grep -q "option .--dtype. needs a value" e.txt
	expect_exit 2 $KJUDGE compare --threads abc a b 2> e.txt
	grep -q "whole number" e.txt
'

test_expect 'identical float32 tensors pass with exit 0' '
	mk g "np.linspace(-3, 3, 1000, dtype=np.float32).reshape(10, 100)"
	cp g.npy a.npy
	$KJUDGE compare g.npy a.npy > out.txt
	head -1 out.txt | grep -q "^PASS"
	grep -q "MERE 0, MARE 0 over 1000 finite of 1000 elements" out.txt
'

test_expect 'an error above the threshold fails with exit 1 and names the worst position' '
	mk g "np.ones((4, 5), dtype=np.float32)"
	mk a "(lambda x: (x.__setitem__((2, 3), 1.5), x)[1])(np.ones((4, 5), dtype=np.float32))"
	expect_exit 1 $KJUDGE compare g.npy a.npy > out.txt
	head -1 out.txt | grep -q "^FAIL: MERE and MARE above threshold"
	grep -q "\[2, 3\]  golden 1  actual 1.5  rel 0.5" out.txt
	expect_exit 1 $KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"reason\"]")" = accuracy
	test "$(jget r.json "d[\"worst\"][0][\"index\"]")" = "[2, 3]"
	test "$(jget r.json "d[\"mare\"]")" = 0.5
	test "$(jget r.json "d[\"over_threshold\"]")" = 1
'

test_expect 'the JSON record carries every figure' '
	mk g "np.arange(12, dtype=np.float16).reshape(3, 4)"
	mk a "np.arange(12, dtype=np.float16).reshape(3, 4)"
	$KJUDGE compare --json g.npy a.npy > r.json
	py "
import json
d = json.load(open(\"r.json\"))
keys = {\"pass\", \"reason\", \"message\", \"golden\", \"actual\", \"threshold_dtype\",
        \"threshold\", \"mere_limit\", \"mare_limit\", \"mere\", \"mare\", \"elements\",
        \"finite_elements\", \"over_threshold\", \"nan\", \"inf\", \"bool_mismatch\", \"worst\"}
assert keys <= set(d), keys - set(d)
assert d[\"pass\"] is True and d[\"reason\"] == \"pass\"
assert d[\"golden\"] == {\"dtype\": \"float16\", \"shape\": [3, 4]}
assert d[\"threshold\"] == 2 ** -10 and d[\"mare_limit\"] == 10 * 2 ** -10
assert d[\"elements\"] == 12 and d[\"finite_elements\"] == 12
assert d[\"nan\"] == {\"golden\": 0, \"actual\": 0, \"mismatch\": 0}
"
'

test_expect 'NaN in another place fails as nan_mismatch' '
	mk g "np.array([1, np.nan, 3, 4], dtype=np.float32)"
	mk a "np.array([1, 2, 3, np.nan], dtype=np.float32)"
	expect_exit 1 $KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"reason\"]")" = nan_mismatch
	test "$(jget r.json "d[\"nan\"][\"mismatch\"]")" = 2
	test "$(jget r.json "[w[\"index\"][0] for w in d[\"worst\"]]")" = "[1, 3]"
	test "$(jget r.json "d[\"worst\"][1][\"actual\"]")" = nan
'

test_expect '+Inf against -Inf fails as inf_mismatch' '
	mk g "np.array([np.inf, 1], dtype=np.float32)"
	mk a "np.array([-np.inf, 1], dtype=np.float32)"
	expect_exit 1 $KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"reason\"]")" = inf_mismatch
	test "$(jget r.json "d[\"worst\"][0][\"golden\"]")" = inf
'

test_expect 'shapes that differ fail as shape_mismatch' '
	mk g "np.zeros((2, 3), dtype=np.float32)"
	mk a "np.zeros((3, 2), dtype=np.float32)"
	expect_exit 1 $KJUDGE compare g.npy a.npy > out.txt
	grep -q "shapes differ: golden \[2, 3\], actual \[3, 2\]" out.txt
'

test_expect 'bool tensors must be equal' '
	mk g "np.array([True, False, True])"
	mk a "np.array([True, True, True])"
	expect_exit 1 $KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"reason\"]")" = bool_mismatch
	cp g.npy a.npy
	$KJUDGE compare g.npy a.npy > /dev/null
'

test_expect 'zero-size tensors pass with no figures' '
	mk g "np.zeros((3, 0), dtype=np.float32)"
	cp g.npy a.npy
	$KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"mere\"]")" = None
	test "$(jget r.json "d[\"pass\"]")" = True
'

test_expect 'bfloat16 stored as uint16 takes its own threshold with --dtype' '
	# bfloat16 bits of 1.0 and of 1 + 2^-7 (one ulp)
	mk g "np.full(100, 0x3f80, dtype=np.uint16)"
	mk a "(lambda x: (x.__setitem__(7, 0x3f81), x)[1])(np.full(100, 0x3f80, dtype=np.uint16))"
	$KJUDGE compare --dtype bfloat16 --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"golden\"][\"dtype\"]")" = bfloat16
	test "$(jget r.json "d[\"threshold\"]")" = 0.0078125
	test "$(jget r.json "d[\"worst\"][0][\"actual\"]")" = 1.0078125
	expect_exit 2 $KJUDGE compare --dtype bfloat16 g.npy g.npy --bogus 2>/dev/null
'

test_expect 'float8 stored as uint8, and a wrong storage dtype is refused' '
	# e4m3fn: 0x38 is 1.0, 0x39 is 1.125
	mk g "np.full(10, 0x38, dtype=np.uint8)"
	mk a "np.full(10, 0x39, dtype=np.uint8)"
	expect_exit 1 $KJUDGE compare --dtype float8_e4m3fn --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"mere\"]")" = 0.125
	mk f "np.ones(10, dtype=np.float32)"
	expect_exit 2 $KJUDGE compare --dtype bfloat16 f.npy f.npy 2> e.txt
	grep -q "f.npy" e.txt
	expect_exit 2 $KJUDGE compare --dtype float7 f.npy f.npy 2> e.txt
	grep -q "unknown dtype .float7." e.txt
'

test_expect 'hifloat32 selects the 2^-11 threshold' '
	mk g "np.ones(64, dtype=np.float32)"
	mk a "np.full(64, 1 + 2.0 ** -12, dtype=np.float32)"
	expect_exit 1 $KJUDGE compare g.npy a.npy > /dev/null
	$KJUDGE compare --dtype hifloat32 --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"threshold_dtype\"]")" = hifloat32
	mk h "np.ones(64, dtype=np.float16)"
	expect_exit 2 $KJUDGE compare --dtype hifloat32 h.npy h.npy 2> e.txt
	grep -q "must be stored as float32" e.txt
'

test_expect 'the actual is cast to the golden dtype' '
	mk g "np.ones(8, dtype=np.float16)"
	mk a "np.full(8, 1.0001, dtype=np.float32)"
	$KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"mare\"]")" = 0.0
	test "$(jget r.json "d[\"actual\"][\"dtype\"]")" = float32
'

test_expect 'Fortran order and big-endian files compare by logical position' '
	mk g "np.arange(24, dtype=np.float32).reshape(2, 3, 4)"
	mk a "np.asfortranarray(np.arange(24, dtype=\">f4\").reshape(2, 3, 4))"
	$KJUDGE compare g.npy a.npy > /dev/null
	mk b "(lambda x: (x.__setitem__((1, 2, 0), 99), x)[1])(np.asfortranarray(np.arange(24, dtype=\">f4\").reshape(2, 3, 4)))"
	expect_exit 1 $KJUDGE compare --json g.npy b.npy > r.json
	test "$(jget r.json "d[\"worst\"][0][\"index\"]")" = "[1, 2, 0]"
	test "$(jget r.json "d[\"worst\"][0][\"golden\"]")" = 20.0
'

test_expect 'bad files are input errors: exit 2, one line, no verdict' '
	mk g "np.ones(16, dtype=np.float32)"
	expect_exit 2 $KJUDGE compare g.npy missing.npy > out.txt 2> e.txt
	test ! -s out.txt
	test "$(wc -l < e.txt)" -eq 1
	grep -q "missing.npy" e.txt
	head -c 100 g.npy > trunc.npy
	expect_exit 2 $KJUDGE compare g.npy trunc.npy > out.txt 2> e.txt
	test ! -s out.txt && test "$(wc -l < e.txt)" -eq 1
	echo "hello, world" > text.npy
	expect_exit 2 $KJUDGE compare text.npy g.npy 2> e.txt
	test "$(wc -l < e.txt)" -eq 1
	# a header that promises more data than the file holds
	py "
import numpy as np
b = open(\"g.npy\", \"rb\").read()
open(\"lying.npy\", \"wb\").write(b.replace(b\"(16,)\", b\"(99,)\"))
"
	expect_exit 2 $KJUDGE compare g.npy lying.npy 2> e.txt
	test "$(wc -l < e.txt)" -eq 1
	mkdir d.npy
	expect_exit 2 $KJUDGE compare g.npy d.npy 2> e.txt
	mk c "np.ones(4, dtype=np.complex64)"
	expect_exit 2 $KJUDGE compare c.npy c.npy 2> e.txt
	grep -qi "dtype" e.txt
'

test_expect 'threads do not change the figures' '
	mk g "np.random.default_rng(3).standard_normal(3_000_000).astype(np.float32)"
	mk a "np.random.default_rng(3).standard_normal(3_000_000).astype(np.float32) * np.float32(1 + 1e-5)"
	$KJUDGE compare --threads 1 --json g.npy a.npy > r1.json
	$KJUDGE compare --threads 2 --json g.npy a.npy > r2.json
	cmp r1.json r2.json
'

test_expect 'the seed'"'"'s integer rule passes an argmax of 30002 for 30000; --int-rule exact fails it' '
	mk g "np.array([30000, 17, 4], dtype=np.int64)"
	mk a "np.array([30002, 17, 4], dtype=np.int64)"
	$KJUDGE compare --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"int_rule\"]")" = spec
	test "$(jget r.json "d[\"float64_rule\"]")" = None
	test "$(jget r.json "d[\"value_mismatch\"]")" = 1
	jget r.json "d[\"message\"]" | grep -q "seed.s relative rule for integers is in force"
	$KJUDGE compare g.npy a.npy > out.txt
	grep -q "int rule spec" out.txt
	expect_exit 1 $KJUDGE compare --int-rule exact g.npy a.npy > out.txt
	head -1 out.txt | grep -q "^FAIL: int64 elements differ at 1 of 3 positions"
	grep -q "\[0\] golden 30000, actual 30002" out.txt
	expect_exit 1 $KJUDGE compare --int-rule=exact --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"reason\"]")" = value_mismatch
	test "$(jget r.json "d[\"int_rule\"]")" = exact
	test "$(jget r.json "d[\"mere\"]")" = None
	test "$(jget r.json "[(w[\"kind\"], w[\"golden\"], w[\"actual\"]) for w in d[\"worst\"]]")" = "[('"'"'value_mismatch'"'"', 30000, 30002)]"
	$KJUDGE compare --int-rule exact g.npy g.npy > out.txt
	head -1 out.txt | grep -q "^PASS: all 3 int64 elements equal"
'

test_expect 'int64 and uint64 beyond 2^53 compare exactly under --int-rule exact' '
	mk g "np.array([2**63 - 1, -2**63, 5], dtype=np.int64)"
	mk a "np.array([2**63 - 2, -2**63, 5], dtype=np.int64)"
	$KJUDGE compare g.npy a.npy > /dev/null
	expect_exit 1 $KJUDGE compare --int-rule exact --json g.npy a.npy > r.json
	test "$(jget r.json "d[\"worst\"][0][\"golden\"] == 2**63 - 1 and d[\"worst\"][0][\"actual\"] == 2**63 - 2")" = True
	mk u "np.array([2**64 - 1, 0], dtype=np.uint64)"
	mk v "np.array([2**64 - 2, 0], dtype=np.uint64)"
	expect_exit 1 $KJUDGE compare --int-rule exact --json u.npy v.npy > r.json
	test "$(jget r.json "int(d[\"worst\"][0][\"golden\"]) - int(d[\"worst\"][0][\"actual\"])")" = 1
	expect_exit 1 $KJUDGE compare --int-rule exact u.npy v.npy > out.txt
	grep -q "golden 18446744073709551615  actual 18446744073709551614" out.txt
'

test_expect 'integer verdicts and figures agree with torch for mixed dtypes' '
	py "
import numpy as np
rng = np.random.default_rng(5)
g = rng.integers(-1000, 30000, size=(64, 100)).astype(np.int32)
np.save(\"g.npy\", g)
a = g.astype(np.int64)
a[3, 7] += 2
a[50, 99] = -a[50, 99] - 1
np.save(\"a64.npy\", a)
f = g.astype(np.float32)
f[7, 7] += 3                # whole numbers: a cast that loses nothing
np.save(\"af.npy\", f)
np.save(\"a16.npy\", (g % 30000).astype(np.int16))
"
	for a in a64 af a16; do
		$KJUDGE compare --int-rule exact --json g.npy $a.npy > e.json || true
		$KJUDGE compare --json g.npy $a.npy > s.json || true
		py "
import json, numpy as np, torch
g = torch.from_numpy(np.load(\"g.npy\"))
a = torch.from_numpy(np.load(\"$a.npy\"))
e = json.load(open(\"e.json\")); s = json.load(open(\"s.json\"))
ac = a.to(g.dtype)
n = int((ac != g).sum())
assert e[\"value_mismatch\"] == n and s[\"value_mismatch\"] == n, (e[\"value_mismatch\"], n)
assert e[\"pass\"] == (n == 0), e[\"message\"]
t = 2.0 ** -13
rel = (ac.float() - g.float()).abs() / g.float().abs().clamp(min=t)
mere, mare = rel.double().mean().item(), rel.max().item()
assert abs(s[\"mere\"] - mere) <= 1e-6 * mere + 1e-12, (s[\"mere\"], mere)
assert abs(s[\"mare\"] - mare) <= 1e-11 * mare, (s[\"mare\"], mare)  # 12 digits in the JSON
assert s[\"pass\"] == (mere < t and mare < 10 * t)
"
	done
'

test_expect 'a cast that loses information fails as lossy_cast, under both integer rules, where torch'"'"'s .to() would pass it' '
	py "
import numpy as np
g = np.arange(6, dtype=np.int64)
np.save(\"g.npy\", g)
np.save(\"frac.npy\", g.astype(np.float32) + np.float32(0.75))
np.save(\"wide.npy\", g.astype(np.int64) + np.array([0, 0, 2**32, 0, 0, 0]))
np.save(\"g32.npy\", g.astype(np.int32))
n = g.astype(np.float64); n[4] = np.nan
np.save(\"nan.npy\", n)
"
	for rule in spec exact; do
		expect_exit 1 $KJUDGE compare --int-rule $rule g.npy frac.npy > out.txt
		grep -q "^FAIL: casting the actual.s float32 to the golden.s int64 loses information at 6 of 6 elements: \[0\] 0.75 is not a whole number" out.txt
		grep -q "\[1\]  golden 1  actual 1.75  lossy cast: fraction" out.txt
		expect_exit 1 $KJUDGE compare --int-rule $rule --json g32.npy wide.npy > r.json
		test "$(jget r.json "\" \".join(map(str, (d[\"reason\"], d[\"lossy_cast\"], d[\"worst\"][0][\"actual\"], d[\"worst\"][0][\"loss\"])))")" = "lossy_cast 1 4294967298 range"
		expect_exit 1 $KJUDGE compare --int-rule $rule g.npy nan.npy > out.txt
		grep -q "\[4\] nan has no int64 value" out.txt
	done
	# A cast that loses nothing is compared as before.
	$KJUDGE compare --int-rule exact g.npy g32.npy > out.txt
	head -1 out.txt | grep -q "^PASS"
'

test_expect 'float64 beyond float32 fails under the seed'"'"'s rule, as in torch, and passes with --float64-rule float64' '
	mk g "np.array([1e39, 1.0, -2.5], dtype=np.float64)"
	expect_exit 1 $KJUDGE compare --json g.npy g.npy > r.json
	test "$(jget r.json "d[\"reason\"]")" = accuracy
	test "$(jget r.json "d[\"float64_rule\"]")" = spec
	test "$(jget r.json "d[\"int_rule\"]")" = None
	test "$(jget r.json "d[\"mare\"]")" = inf
	jget r.json "d[\"message\"]" | grep -q "float64 promoted to float32"
	py "
import numpy as np, torch
g = torch.from_numpy(np.load(\"g.npy\")); a = g.clone(); t = 2.0 ** -13
fin = torch.isfinite(g) & torch.isfinite(a)
rel = (a[fin].to(g.dtype).float() - g[fin].float()).abs() / g[fin].float().abs().clamp(min=t)
assert not (rel.mean() < t and rel.max() < 10 * t)
"
	$KJUDGE compare --float64-rule float64 --json g.npy g.npy > r.json
	test "$(jget r.json "d[\"pass\"]")" = True
	test "$(jget r.json "d[\"float64_rule\"]")" = float64
	$KJUDGE compare --float64-rule float64 g.npy g.npy | grep -q "float64 rule float64"
'

test_expect 'rule names are checked: exit 2 and one line naming the option' '
	mk g "np.ones(4, dtype=np.int32)"
	expect_exit 2 $KJUDGE compare --int-rule fuzzy g.npy g.npy > out.txt 2> e.txt
	test ! -s out.txt && test "$(wc -l < e.txt)" -eq 1
	grep -q "^kjudge compare: option .--int-rule. wants spec or exact, not .fuzzy.$" e.txt
	expect_exit 2 $KJUDGE compare --float64-rule float32 g.npy g.npy 2> e.txt
	grep -q "^kjudge compare: option .--float64-rule. wants spec or float64, not .float32.$" e.txt
	expect_exit 2 $KJUDGE compare g.npy g.npy --int-rule 2> e.txt
	$KJUDGE compare --help > h.txt
	grep -q -- "--int-rule RULE .*the seed.s relative rule, or" h.txt
	grep -q -- "--float64-rule RULE .*promoted to float32 as the seed" h.txt
'
test_done
