#!/usr/bin/env bash
# t0822-kernelbench-layout.sh - a KernelBench user's study: the runs kept as
# MODEL/levelL/TASK/ATTEMPT.py are read by eval (a level the suite lacks is
# named and skipped), and report --kernelbench writes KernelBench's
# eval_results.json, which a reader doing what KernelBench's
# benchmark_eval_analysis.py does (sample 0 of each problem, compiled and
# correctness counts, fast_p over a baseline file) reads back.
. "$(dirname "$0")/lib.sh"
KB=$KJ_TESTS/kernelbench
# ReLU as a KernelBench task file (level1/19_ReLU.py), from eval's suite.
RELU=$KJ_TESTS/eval/suite/ops/relu_torch.py

test_expect 'eval reads MODEL/levelL/TASK/ATTEMPT.py; report --kernelbench is read back' '
	mkdir -p suite/level1 runs/mymodel/level1/19_ReLU runs/mymodel/level2/19_ReLU &&
	cp "$RELU" suite/level1/19_ReLU.py &&
	cp "$KB/level1/1_Square_matrix_multiplication_.py" suite/level1/ &&
	cp "$relu_triton" runs/mymodel/level1/19_ReLU/0.py &&
	relu_wrong runs/mymodel/level1/19_ReLU/1.py &&
	cp "$relu_triton" runs/mymodel/level2/19_ReLU/0.py &&
	"$KJUDGE" eval suite runs --db s.db --device cpu --time_budget 0.05 -j 1 >out 2>err &&
	grep -q "runs/mymodel/level2/19_ReLU/0.py.*no task .19_ReLU. of level 2" out err &&
	eval_verdicts s.db >v.txt &&
	grep -q "^19_ReLU|mymodel|0|done|pass|1|" v.txt &&
	grep -q "^19_ReLU|mymodel|1|done|fail|0|AccuracyError|" v.txt &&
	test "$(wc -l <v.txt)" -eq 2 &&
	"$KJUDGE" report s.db --kernelbench eval_results.json >out 2>err &&
	grep -q "written to eval_results.json" out &&
	printf "{\"level1\": {\"19_ReLU\": {\"mean\": 1.0}, \"1_Square_matrix_multiplication_\": {\"mean\": 2.0}}}" >baseline.json &&
	py "
import json
res = json.load(open(\"eval_results.json\"))
assert list(res) == [\"19\"], list(res)
assert [e[\"sample_id\"] for e in res[\"19\"]] == [0, 1]
for e in res[\"19\"]:
    assert set(e) == {\"sample_id\", \"compiled\", \"correctness\", \"metadata\", \"runtime\", \"runtime_stats\"}, e
# What benchmark_eval_analysis.py does: sample 0 of each problem, the
# problems of the level patched in as failures, counts, fast_p.
problems = {1: \"1_Square_matrix_multiplication_\", 19: \"19_ReLU\"}
greedy = {}
for k, r in res.items():
    entry = [x for x in r if x[\"sample_id\"] == 0]
    assert len(entry) <= 1
    if entry:
        greedy[k] = entry[0]
for pid in problems:
    greedy.setdefault(str(pid), {\"sample_id\": 0, \"compiled\": False, \"correctness\": False,
                                 \"metadata\": {}, \"runtime\": -1.0, \"runtime_stats\": {}})
compiled = sum(e[\"compiled\"] is True for e in greedy.values())
correct = sum(e[\"correctness\"] is True for e in greedy.values())
assert (compiled, correct) == (1, 1), (compiled, correct)
base = json.load(open(\"baseline.json\"))[\"level1\"]
rows = [(greedy[str(p)][\"correctness\"], base[n][\"mean\"], greedy[str(p)][\"runtime\"])
        for p, n in sorted(problems.items())]
fast_0 = sum(1 for c, b, a in rows if c and b / a > 0) / len(rows)
assert fast_0 == 0.5, fast_0
r0 = greedy[\"19\"]
assert r0[\"runtime\"] > 0 and r0[\"runtime_stats\"][\"num_trials\"] > 0
assert r0[\"metadata\"][\"kjudge\"][\"clean\"] is True
bad = res[\"19\"][1]
assert bad[\"compiled\"] is True and bad[\"correctness\"] is False and bad[\"runtime\"] == -1.0
assert bad[\"metadata\"][\"correctness_issue_name\"] == \"AccuracyError\", bad
"
'

test_expect 'report --kernelbench: a choice left open is refused, naming what to choose' '
	make_store s.db &&
	expect_exit 2 "$KJUDGE" report s.db --kernelbench kb.json 2>err &&
	grep -q "holds 2 models (.*); KernelBench.s file is of one: name it with --model" err &&
	test ! -e kb.json &&
	m=m1 &&
	expect_exit 2 "$KJUDGE" report s.db --kernelbench kb.json --model "$m" 2>err &&
	grep -q "has attempts at levels .*: name it with --level" err &&
	"$KJUDGE" report s.db --kernelbench kb.json --model "$m" --level 1 >out &&
	jget kb.json "list(d), [e[\"correctness\"] for e in d[\"19\"]]" |
		grep -qx "\[.19., .23.\] \[True, True\]" &&
	expect_exit 2 "$KJUDGE" report s.db --kernelbench kb.json --model nobody 2>err &&
	grep -q "no finished attempt of model .nobody." err &&
	expect_exit 2 "$KJUDGE" report s.db --level 1 2>err &&
	grep -q "go with --kernelbench" err
'

test_done
