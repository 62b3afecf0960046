#!/usr/bin/env bash
# t0840-report-settings.sh - a store whose runs used different settings,
# made as a user makes one: kjudge eval of model-a's softmax benchmarked,
# then eval of model-b's with --verify-only into the same store, then
# model-a's judged again with --verify-only.  The report names the runs
# and the settings that differ, says which run each model's figures come
# from, and says when a re-run replaced a model's earlier figures (the
# benchmarked speedup gone).  Needs $KJ_PYTHON with torch and Triton
# (CPU); about a minute.
. "$(dirname "$0")/lib.sh"
root=$(cd "$KJ_TESTS/.." && pwd)

test_expect 'runs of other settings: named in a warning, each model its run, a replaced judgement said' '
	cp "$root/examples/softmax/softmax_cpu_impl.py" a.py &&
	cp "$root/examples/softmax/softmax_cpu_impl.py" b.py &&
	echo "{\"task\": \"softmax\", \"model\": \"model-a\", \"attempt\": 0, \"path\": \"a.py\", \"prompt_tokens\": 790, \"completion_tokens\": 388}" >a.jsonl &&
	echo "{\"task\": \"softmax\", \"model\": \"model-b\", \"attempt\": 0, \"path\": \"b.py\"}" >b.jsonl &&
	"$KJUDGE" eval "$root/examples" a.jsonl --db s.db --time_budget 0.3 --repeats 3 >out 2>err ||
		{ cat out err; exit 1; }
	"$KJUDGE" eval "$root/examples" b.jsonl --db s.db --verify-only >out 2>err || { cat out err; exit 1; }
	# What the runs table records: the settings of each run.
	test "$(py "import sqlite3, json; print([json.loads(s)[\"verify_only\"] for (s,) in sqlite3.connect(\"s.db\").execute(\"SELECT settings FROM runs ORDER BY run_id\")])")" = "[False, True]"
	"$KJUDGE" report s.db --md r.md --html r.html --json r.json >out 2>err
	grep -q "^kjudge report: warning: the figures come from runs of different settings: run 1 has .*verify_only false; run 2 has .*verify_only true; each model.s runs say which its figures come from$" err
	grep -q "^> \*\*Warning:\*\* the figures come from runs of different settings: run 1 has" r.md
	grep -q "<p class=\"warning\"><b>Warning:</b> the figures come from runs of different settings" r.html
	test "$(jget r.json "[r[\"run_id\"] for r in d[\"runs\"]], d[\"models\"][\"model-a\"][\"runs\"], d[\"models\"][\"model-b\"][\"runs\"]")" = "[1, 2] [1] [2]"
	grep -q "^| model-a | 1 | 4 | " r.md && grep -q "^| model-b | 2 | 4 | " r.md
	grep -q "<td class=\"l\" data-k=\"runs\">1</td>" r.html
	# Each attempt says its run; model-a was benchmarked, model-b not.
	grep -q "^| model-a | softmax | 0 | pass (not clean: static check) | StaticCheck | .* | [0-9.]* | 1 | " r.md
	grep -q "^| model-b | softmax | 0 | pass (not clean: static check) | StaticCheck | .* | - | 2 | " r.md

	# model-a judged again with --verify-only: its speedup is gone, and
	# the report says whose figures changed and why.
	"$KJUDGE" eval "$root/examples" a.jsonl --db s.db --verify-only >out 2>err || { cat out err; exit 1; }
	"$KJUDGE" report s.db --md r.md --json r.json >out 2>err
	grep -q "^kjudge report: warning: model-a.s figures count 1 attempt judged again by run 3 under other settings than run 1.s, which they replace: .*verify_only true (was false)$" err
	! grep -q "runs of different settings" err
	test "$(jget r.json "d[\"models\"][\"model-a\"][\"runs\"], d[\"models\"][\"model-a\"][\"speedup\"], len(d[\"warnings\"])")" = "[3] None 1"
	grep -q "^| model-a | softmax | 0 | .* | - | 3 | " r.md
'

test_done
