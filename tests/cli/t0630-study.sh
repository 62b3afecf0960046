#!/usr/bin/env bash
# t0630-study.sh - the README's example of a study: kjudge eval over
# examples/ with the generations of two models (examples/study.jsonl),
# then kjudge report; the verdicts, and the report's
# figures against the ones computed by hand from the generations.  Needs
# $KJ_PYTHON with torch and Triton (CPU).
. "$(dirname "$0")/lib.sh"
root=$(cd "$KJ_TESTS/.." && pwd)

test_expect 'the study of the README: eval, then report' '
	"$KJUDGE" eval "$root/examples" "$root/examples/study.jsonl" --db study.db \
		--time_budget 0.5 --repeats 5 >out 2>err || { cat out err; false; }
	grep -q "4 tasks, 5 attempts" err
	grep -q "5 attempts: 3 passed (1 clean), 2 failed, 0 judge or task errors" err
	"$KJUDGE" report study.db --md study.md --html study.html --json study.json
	test -s study.md && test -s study.html
	# By hand: 4 operators; model-a solves silu cleanly and softmax with
	# PyTorch (not clean); model-b solves softmax with PyTorch only.
	# Tokens: a 812+431+790+388 = 2421 over 1 clean solve; b 4659, none.
	# Generation seconds: a 9.4+8.1 = 17.5; b 6.2+5.9+7.7 = 19.8.
	test "$(jget study.json "[(m, d[\"models\"][m][\"accuracy\"], d[\"models\"][m][\"clean_pass_rate\"], d[\"models\"][m][\"tokens_total\"], d[\"models\"][m][\"tokens_per_success\"], round(d[\"models\"][m][\"runtime_s\"], 3)) for m in sorted(d[\"models\"])]")" = \
		"[('\''model-a'\'', 0.5, 0.25, 2421, 2421.0, 17.5), ('\''model-b'\'', 0.25, 0.0, 4659, None, 19.8)]"
	# pass@1 over the operators attempted: model-b tried softmax twice
	# (c = 0) and silu once (c = 0).
	test "$(jget study.json "d[\"models\"][\"model-b\"][\"pass_at_k\"][\"1\"], d[\"models\"][\"model-a\"][\"pass_at_k\"][\"1\"]")" = "0.0 0.5"
	test "$(jget study.json "sorted((a[\"model\"], a[\"task\"], a[\"attempt\"], a[\"status\"], a[\"clean\"]) for a in d[\"attempts\"])")" = \
		"[('\''model-a'\'', '\''silu'\'', 0, '\''pass'\'', True), ('\''model-a'\'', '\''softmax'\'', 0, '\''pass'\'', False), ('\''model-b'\'', '\''silu'\'', 0, '\''fail'\'', False), ('\''model-b'\'', '\''softmax'\'', 0, '\''fail'\'', False), ('\''model-b'\'', '\''softmax'\'', 1, '\''pass'\'', False)]"
	grep -q "model-a" study.md
'

test_done
