#!/usr/bin/env bash
# t0300-validate.sh - `kjudge validate`: the corpus of tests/validate/ (one
# "ok"/"FAIL" line per file, by tests/helpers/check_validate.py), then the
# command line: records, exit codes, rule files, errors.
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
corpus=$tests/validate
"$KJ_PYTHON" "$tests/helpers/check_validate.py" --kjudge "$(printf '%q' "$KJUDGE")" \
	--corpus "$corpus" || true

test_expect 'help, and usage errors exit 2' '
	$KJUDGE validate --help > h.txt
	grep -q -- "--rules FILE" h.txt
	grep -q "exit status" h.txt
	$KJUDGE --help | grep -q validate
	expect_exit 2 $KJUDGE validate 2> e.txt
	grep -q "expected at least one FILE" e.txt
	expect_exit 2 $KJUDGE validate --bogus x.py 2> e.txt
	grep -q "unknown option" e.txt
	expect_exit 2 $KJUDGE validate --rules 2> e.txt
	grep -q "option .--rules. needs a value" e.txt
'

test_expect 'the spec JSON record of a valid candidate, exit 0' '
	$KJUDGE validate --json "$corpus/triton/clean_basic.py" > r.json
	test "$(wc -l < r.json)" -eq 1
	py "
import json
d = json.load(open(\"r.json\"))
assert d[\"valid\"] is True and d[\"regression_type\"] is None, d
assert d[\"suggestion\"] == \"\"
c = d[\"checks\"]
k = c[\"triton_kernel_exists\"]
assert k[\"passed\"] and k[\"kernels\"][0][\"name\"] == \"softmax_kernel\"
assert k[\"kernels\"][0][\"line\"] == 9 and k[\"kernels\"][0][\"has_tl_usage\"] is True
assert c[\"kernel_called_from_forward\"] == {\"passed\": True, \"called\": [\"softmax_kernel\"], \"error\": None}
assert c[\"no_forbidden_torch_ops\"] == {\"passed\": True, \"violations\": [], \"error\": None}
"
'

test_expect 'a degraded candidate: regression_type, violations with line, call and reason; exit 1' '
	expect_exit 1 $KJUDGE validate "$corpus/triton/t3_functional.py" --json > r.json
	py "
import json
d = json.load(open(\"r.json\"))
assert d[\"valid\"] is False and d[\"regression_type\"] == 3
v = d[\"checks\"][\"no_forbidden_torch_ops\"][\"violations\"]
assert v[0][\"line\"] == 20 and v[0][\"call\"] == \"F.softmax\", v
assert v[0][\"resolved\"] == \"torch.nn.functional.softmax\"
assert \"F.softmax\" in d[\"suggestion\"] and \"line 20\" in d[\"suggestion\"]
"
	expect_exit 1 $KJUDGE validate "$corpus/triton/t3_functional.py" > out.txt
	grep -q "degraded, type 3" out.txt
	grep -q "t3_functional.py:20: F.softmax" out.txt
'

test_expect 'several files give one record each, in order; the worst decides the exit' '
	$KJUDGE validate --json "$corpus/triton/clean_basic.py" "$corpus/cuda/clean_pybind.cu" > r.json
	test "$(wc -l < r.json)" -eq 2
	expect_exit 1 $KJUDGE validate --json "$corpus/triton/clean_basic.py" \
		"$corpus/triton/t4_zeros.py" "$corpus/triton/clean_aliases.py" > r.json
	py "
import json
recs = [json.loads(l) for l in open(\"r.json\")]
assert [r[\"filepath\"].rsplit(\"/\", 1)[1] for r in recs] == [\"clean_basic.py\", \"t4_zeros.py\", \"clean_aliases.py\"]
assert [r[\"regression_type\"] for r in recs] == [None, 4, None]
"
'

test_expect 'a file that cannot be read gets a JSON error record and exit 1' '
	expect_exit 1 $KJUDGE validate --json missing.py "$corpus/triton/clean_basic.py" > r.json
	py "
import json
recs = [json.loads(l) for l in open(\"r.json\")]
assert recs[0][\"valid\"] is False and recs[0][\"filepath\"] == \"missing.py\"
assert \"missing.py\" in recs[0][\"error\"], recs[0]
assert recs[1][\"valid\"] is True
"
	expect_exit 1 $KJUDGE validate missing.py 2> e.txt
	grep -q "missing.py" e.txt
	head -c 9000000 /dev/zero | tr "\0" "#" > big.py
	expect_exit 1 $KJUDGE validate --json big.py > r.json
	grep -q "larger than" r.json
'

test_expect 'a directory stands for the .py, .cu and .cuh files under it, in name order' '
	mkdir -p d/sub d/.hidden d/__pycache__
	cp "$corpus/triton/clean_basic.py" d/b.py
	cp "$corpus/cuda/clean_pybind.cu" d/sub/a.cu
	cp "$corpus/triton/t4_zeros.py" d/.hidden/x.py
	cp "$corpus/triton/t4_zeros.py" d/__pycache__/x.py
	echo "not a candidate" > d/notes.txt
	$KJUDGE validate --json d > r.json
	py "
import json
recs = [json.loads(l) for l in open(\"r.json\")]
assert [r[\"filepath\"] for r in recs] == [\"d/b.py\", \"d/sub/a.cu\"], recs
"
'

test_expect 'a directory without a candidate file is a usage error (exit 2), a missing path a record (exit 1)' '
	mkdir -p empty notes/sub
	echo "not a candidate" > notes/sub/README.txt
	cp "$corpus/triton/clean_basic.py" ok.py
	expect_exit 2 $KJUDGE validate empty 2> e.txt
	test "$(cat e.txt)" = "kjudge validate: '"'"'empty'"'"': no candidate files (.py, .cu, .cuh) under it"
	# Nothing is judged, not even the operands that could be.
	expect_exit 2 $KJUDGE validate --json ok.py notes > r.json 2> e.txt
	test ! -s r.json
	grep -q "'"'"'notes'"'"': no candidate files" e.txt
	expect_exit 1 $KJUDGE validate --json nowhere > r.json
	jget r.json "d[\"error\"]" | grep -q nowhere
'

test_expect 'a task rule file extends the defaults: allowing torch.matmul where only the epilogue is the challenge' '
	cat > epilogue.py <<PYEOF
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_gelu(x_ptr, b_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) + tl.load(b_ptr + offs % m, mask=mask)
    tl.store(x_ptr + offs, x * tl.sigmoid(1.702 * x), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, w, b):
        y = torch.matmul(a, w)
        bias_gelu[(triton.cdiv(y.numel(), 256),)](y, b, y.numel(), b.numel(), BLOCK=256)
        return y
PYEOF
	expect_exit 1 $KJUDGE validate epilogue.py > out.txt
	grep -q "epilogue.py:17: torch.matmul" out.txt
	echo "{\"forward\": {\"allow\": [\"torch.matmul\"]}}" > task.json
	$KJUDGE validate --rules task.json epilogue.py
	$KJUDGE validate --rules task.json --print-rules > eff.json
	py "
import json
d = json.load(open(\"eff.json\"))
assert \"torch.matmul\" in d[\"forward\"][\"allow\"] and \"torch.empty\" in d[\"forward\"][\"allow\"]
assert \"torch.*\" in d[\"forward\"][\"deny\"]
"
'

test_expect 'rule files: extends none, settings, and errors that name the key' '
	echo "{\"extends\": \"none\", \"kernels\": {\"triton_decorators\": [\"triton.jit\"], \"triton_language\": [\"triton.language.*\"]}}" > bare.json
	$KJUDGE validate --rules bare.json "$corpus/triton/t3_functional.py"
	echo "{\"placeholder\": {\"enabled\": false}}" > ph.json
	$KJUDGE validate --rules ph.json "$corpus/triton/t4_copy.py"
	expect_exit 1 $KJUDGE validate "$corpus/triton/t4_copy.py" > /dev/null
	echo "{\"forward\": {\"alow\": [\"torch.matmul\"]}}" > typo.json
	expect_exit 2 $KJUDGE validate --rules typo.json "$corpus/triton/clean_basic.py" 2> e.txt
	grep -q "unknown key .forward.alow." e.txt
	echo "{\"forward\": {\"allow\": \"torch.matmul\"}}" > type.json
	expect_exit 2 $KJUDGE validate --rules type.json x.py 2> e.txt
	grep -q "must be a list" e.txt
	echo "{\"forward\": {\"deny\": [\"*\"]}}" > star.json
	expect_exit 2 $KJUDGE validate --rules star.json x.py 2> e.txt
	grep -q "would match everything" e.txt
	echo "{nope" > broken.json
	expect_exit 2 $KJUDGE validate --rules broken.json x.py 2> e.txt
	grep -q "broken.json" e.txt
	expect_exit 2 $KJUDGE validate --rules absent.json x.py 2> e.txt
	grep -q "absent.json" e.txt
'

test_expect 'the examples: every Triton candidate is valid, every CPU one degraded' '
	for f in "$KJ_TESTS"/../examples/*/*_triton_ascend_impl.py; do
		$KJUDGE validate "$f" > /dev/null
	done
	for f in "$KJ_TESTS"/../examples/*/*_cpu_impl.py; do
		expect_exit 1 $KJUDGE validate "$f" > /dev/null
	done
'
test_done
