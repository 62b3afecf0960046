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
