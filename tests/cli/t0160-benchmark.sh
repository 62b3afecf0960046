#!/usr/bin/env bash
# t0160-benchmark.sh - `kjudge benchmark`: the L1 verify gate, the perf JSON,
# and candidates that behave only while they are being checked.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state

cand() {
	cat > "$1/scale_$2.py" <<PY
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return $3
PY
}


test_expect 'the gate: no verify result, unreadable, zero cases, a failed case: exit 2' '
	scale_task d
	cand d triton_ascend_impl "x * 2 + 1"
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d 2> e.txt
	grep -q "verify_result.json. does not exist" e.txt
	echo "{not json" > d/verify_result.json
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d 2> e.txt
	grep -q "cannot be read" e.txt
	echo "{\"total_cases\": 0, \"passed_cases\": 0, \"failures\": []}" > d/verify_result.json
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d 2> e.txt
	grep -q "passed/total: 0/0" e.txt
	printf "{\"total_cases\": 7, \"passed_cases\": 1, \"failures\": [%s]}" \
		"$(for i in 2 3 4 5 6 7; do printf "{\"case_idx\": $i, \"error_type\": \"AccuracyError\", \"error_msg\": \"bad $i\"},"; done | sed "s/,\$//")" > d/verify_result.json
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d 2> e.txt
	grep -q "passed/total: 1/7" e.txt
	test "$(grep -c "^  case" e.txt)" -eq 5
	test ! -e perf.json
'

test_expect '--timed_rounds: queued rounds on the CPU pass and say so (the harness measured by empty calls too); a bad mode is exit 2' '
	scale_task d
	cand d triton_ascend_impl "x * 2 + 1"
	$KJUDGE verify --op_name scale --verify_dir d > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 --time_budget 0.5 \
		--timed_rounds queued --output q.json > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 --time_budget 0.5 \
		--output s.json > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 --time_budget 0.5 \
		--timed_rounds queued --skip_framework --framework_latency_ms 0.05 --output e.json > /dev/null
	py "
import json
for f, mode in ((\"q.json\", \"queued\"), (\"s.json\", \"synced\"), (\"e.json\", \"queued\")):
    d = json.load(open(f))
    assert d[\"passed_cases\"] == d[\"total_cases\"] > 0, (f, d)
    for s in d[\"per_shape_results\"]:
        assert s[\"timing_check\"][\"rounds\"] == mode, (f, s[\"timing_check\"])
        assert s[\"speedup_vs_torch\"] > 0
"
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d --timed_rounds fast 2> e.txt
	grep -q "timed_rounds" e.txt
	expect_exit 2 env KJ_TIMED_ROUNDS=fast $KJUDGE benchmark --op_name scale --verify_dir d 2> e.txt
	grep -q "KJ_TIMED_ROUNDS" e.txt
'

test_expect 'the gate file follows the implementation name' '
	scale_task d
	cand d triton_baseline "x * 2 + 1"
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d --triton_impl_name triton_baseline 2> e.txt
	grep -q "verify_result_baseline.json" e.txt
	expect_exit 2 $KJUDGE benchmark --op_name scale --verify_dir d --triton_impl_name mine 2> e.txt
	grep -q "verify_result_mine.json" e.txt
'

test_expect 'verify then benchmark: the perf JSON has every field, exit 0' '
	scale_task d
	cand d triton_ascend_impl "x * 2 + 1"
	$KJUDGE verify --op_name scale --verify_dir d > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 2 --repeats 7 --output perf.json > /dev/null
	py "
import json, math
d = json.load(open(\"perf.json\"))
for k in (\"op_name\", \"warmup\", \"repeats\", \"total_cases\", \"passed_cases\", \"failed_cases\",
          \"nan_indices\", \"inf_indices\", \"zero_indices\", \"negative_indices\", \"none_indices\",
          \"framework\", \"implementation\", \"speedup_vs_torch\", \"per_shape_results\"):
    assert k in d, k
assert (d[\"warmup\"], d[\"repeats\"], d[\"total_cases\"], d[\"passed_cases\"]) == (2, 7, 2, 2), d
for s in d[\"per_shape_results\"]:
    assert s[\"status\"] == \"pass\" and s[\"error_type\"] is None, s
    # --repeats is the least number of timed calls: the stopping rule
    # takes more until the medians are known well enough.
    assert s[\"implementation\"][\"samples\"] >= 7 and s[\"framework\"][\"samples\"] >= 7, s
    for side in (\"framework\", \"implementation\"):
        lo, hi = s[side][\"ci95_median_ms\"]
        assert 0 < lo <= s[side][\"median_ms\"] <= hi, s[side]
    assert s[\"framework\"][\"avg_latency_ms\"] > 0 and s[\"implementation\"][\"avg_latency_ms\"] > 0
sp = [s[\"speedup_vs_torch\"] for s in d[\"per_shape_results\"]]
assert abs(d[\"speedup_vs_torch\"] - math.exp(sum(map(math.log, sp)) / len(sp))) < 1e-3, (d[\"speedup_vs_torch\"], sp)
assert set(d[\"framework\"]) == {\"avg_latency_ms\", \"peak_memory_mb\", \"operators\"}
"
'

test_expect 'a candidate that is right only on the first calls is caught by verify, or else by its timed runs' '
	scale_task d
	# One model serves every input set: right only on its first three calls,
	# it fails verify itself (two cases, two input sets each).
	cand d triton_ascend_impl "x * 2 + 1 if self.calls <= 3 else x * 2"
	expect_exit 1 $KJUDGE verify --op_name scale --verify_dir d > /dev/null
	# Right on the four calls of verify, wrong afterwards: its timed calls fail.
	cand d triton_ascend_impl "x * 2 + 1 if self.calls <= 4 else x * 2"
	$KJUDGE verify --op_name scale --verify_dir d > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 --output perf.json > /dev/null
	test "$(jget perf.json "[s[\"status\"] for s in d[\"per_shape_results\"]] == [\"fail\"] * 2")" = True
	test "$(jget perf.json "d[\"per_shape_results\"][0][\"error_type\"]")" = TimedOutputMismatch
	test "$(jget perf.json "(d[\"passed_cases\"], d[\"speedup_vs_torch\"])")" = "(0, None)"
'

test_expect 'a candidate that changes its input while timed fails' '
	scale_task d
	cand d triton_ascend_impl "(x * 2 + 1) if self.calls <= 4 else (x.mul_(1.0001) * 0 + 2 * x + 1)"
	$KJUDGE verify --op_name scale --verify_dir d > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 --output perf.json > /dev/null
	test "$(jget perf.json "d[\"per_shape_results\"][0][\"error_type\"]")" = InputModified
'

test_expect 'output is limited per call: a chatty candidate passes 100 repeats, a flood fails at once' '
	scale_task d
	cat > d/scale_triton_ascend_impl.py <<PY
import sys
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        # About 6.5 KB of honest debug output on every call.
        for i in range(80):
            print("debug: step %2d of 80, shape %s, x[0] = %+.6f" % (i, tuple(x.shape), x.flatten()[0].item()))
        for i in range(40):
            print("trace: block %2d of 40 done ............................." % i, file=sys.stderr)
        return x * 2 + 1
PY
	$KJUDGE verify --op_name scale --verify_dir d > /dev/null
	$KJUDGE benchmark --op_name scale --verify_dir d --warmup 5 --repeats 100 --output perf.json > /dev/null
	test "$(jget perf.json "[s[\"status\"] for s in d[\"per_shape_results\"]] == [\"pass\"] * 2")" = True
	test "$(jget perf.json "all(s[\"implementation\"][\"samples\"] >= 100 for s in d[\"per_shape_results\"])")" = True
	cat > d/scale_flood.py <<PY
import sys
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        line = "flood " * 170 + "\\n"
        for i in range(100000):   # 100 MB in one call
            sys.stdout.write(line)
        return x * 2 + 1
PY
	start=$(date +%s)
	# (Cases that fail are still a benchmark that ran: the seed exits 0.)
	$KJUDGE benchmark --op_name scale --verify_dir d --triton_impl_name flood \
		--verify_not_required --warmup 1 --repeats 3 --output perf.json > /dev/null
	test "$(jget perf.json "[s[\"error_type\"] for s in d[\"per_shape_results\"]] == [\"OutputLimitExceeded\"] * 2")" = True
	# Stopped at its budget (256 KiB a call of the request), not after 100 MB.
	jget perf.json "d[\"per_shape_results\"][0][\"error_msg\"]" | grep -q "more than [0-9]* bytes on one stream in one request (262144 bytes per call)"
	test $(( $(date +%s) - start )) -lt 120
'

test_expect '--skip_framework takes the given latency; --verify_not_required skips the gate' '
	scale_task d
	cand d fast "x * 2 + 1"
	$KJUDGE benchmark --op_name scale --verify_dir d --triton_impl_name fast --verify_not_required \
		--skip_framework --framework_latency_ms 10 --repeats 3 --output perf.json > /dev/null
	test "$(jget perf.json "d[\"framework\"][\"avg_latency_ms\"]")" = 10.0
	test "$(jget perf.json "d[\"speedup_vs_torch\"] > 1")" = True
'
test_expect 'KJ_CACHE_DIR=off: verify, benchmark and eval of a correct candidate pass as with the cache, and keep nothing' '
	scale_task d
	cand d triton_ascend_impl "x * 2 + 1"
	mkdir scratch
	export KJ_SCRATCH_DIR=$PWD/scratch
	KJ_CACHE_DIR=off $KJUDGE verify --op_name scale --verify_dir d > /dev/null
	KJ_CACHE_DIR=off $KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 \
		--output off.json > /dev/null
	# Every case timed on its sets and on sets never seen: the goldens of
	# all of them lived through the reference'"'"'s own timed rounds.
	test "$(jget off.json "(d[\"passed_cases\"], d[\"total_cases\"], d[\"kjudge\"][\"reference_from_cache\"], all(s[\"status\"] == \"pass\" and s[\"unseen_inputs_ms\"][\"implementation\"] > 0 for s in d[\"per_shape_results\"]))")" = "(2, 2, 0, True)"
	KJ_CACHE_DIR=$SCRATCH/cache $KJUDGE benchmark --op_name scale --verify_dir d --warmup 1 --repeats 5 \
		--output on.json > /dev/null
	test "$(jget on.json "[(s[\"status\"], sorted(s)) for s in d[\"per_shape_results\"]]")" = \
		"$(jget off.json "[(s[\"status\"], sorted(s)) for s in d[\"per_shape_results\"]]")"
	# A wrong candidate fails alike.
	cand d wrong "x * 2 + 1.01"
	expect_exit 1 env KJ_CACHE_DIR=off $KJUDGE verify --op_name scale --verify_dir d --triton_impl_name wrong \
		--output w.json > /dev/null
	test "$(jget w.json "\" \".join(f[\"error_type\"] for f in d[\"failures\"])")" = "AccuracyError AccuracyError"
	# eval: the same, each attempt with its own goldens.
	mkdir -p suite gens/m/scale
	cp d/scale_torch.py suite/
	cp d/scale_triton_ascend_impl.py gens/m/scale/0.py
	KJ_CACHE_DIR=off $KJUDGE eval suite gens --db s.db --time_budget 1 2> out
	grep -q "golden outputs in each attempt.s own scratch directory (the cache is off)" out
	test "$(py "import sqlite3; print(*sqlite3.connect(\"s.db\").execute(\"SELECT status FROM attempts\").fetchall())")" = "('"'"'pass'"'"',)"
	# Nothing of the runs is left: the run'"'"'s own cache went with its scratch.
	test -z "$(ls -A scratch)"
'

test_done
