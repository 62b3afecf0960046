#!/usr/bin/env bash
# t0841-report-columns.sh - what the report says of each attempt and
# model (the store: tests/cli/report_store.py): the attempts' error type
# and the first line of their message, a pass that is not clean named by
# its layer, three significant digits (0.000235, not 0.000), "-" for a
# figure that is unknown (a model without token counts), the runs each
# model's figures come from; --k and --p in the Markdown, the HTML and the
# JSON alike, a k no operator reaches printed "-", and a list that is not
# one refused before anything is written.
. "$(dirname "$0")/lib.sh"

store() {
	"$KJ_PYTHON" "$KJ_TESTS/cli/report_store.py" "$KJ_TESTS/../lib/store/schema.sql" "$1"
}

test_expect 'the attempts table: error type, first line of the message, the layer, the run' '
	store s.db && "$KJUDGE" report s.db >r.md 2>err &&
	test ! -s err &&
	grep -qxF "| model | operator | attempt | verdict | error | message | speedup | run | node | GPU |" r.md &&
	grep -qF "| notoken | 23\\_Softmax | 0 | fail | AccuracyError | FAIL out: MERE 0.31 above 0.01 ... | - | 2 |" r.md &&
	! grep -q "second line" r.md &&
	grep -qF "| fast | 1\\_Square\\_matrix\\_multiplication\\_ | 0 | fail | CompileError | nvcc: error: expected a " r.md &&
	grep -qF "| notoken | 1\\_Square\\_matrix\\_multiplication\\_ | 0 | pass (not clean: static check) | StaticCheck | degraded" r.md &&
	grep -qF "| notoken | 19\\_ReLU | 0 | pass (not clean: kernels disabled) | KernelsNotUsed | with its kernels" r.md &&
	grep -qF "| tiny | 1\\_Square\\_matrix\\_multiplication\\_ | 0 | pass | - | - | 0.000235 | 2 |" r.md &&
	grep -qF "| fast | 97\\_CosineSimilarityLoss | 0 | pass | - | - | 40.0 | 1 |" r.md
'

test_expect 'the models: three significant digits, "-" where unknown, the runs of the figures' '
	store s.db && "$KJUDGE" report s.db --md r.md --html r.html --json r.json >/dev/null &&
	jget r.json "d[\"models\"][\"notoken\"][\"tokens_total\"], d[\"models\"][\"notoken\"][\"runtime_s\"], d[\"models\"][\"fast\"][\"tokens_total\"]" |
		grep -qx "None None 4820" &&
	jget r.json "d[\"models\"][\"fast\"][\"runs\"], d[\"models\"][\"tiny\"][\"runs\"], d[\"warnings\"]" |
		grep -qx "\[1, 2\] \[2\] \[\]" &&
	grep -qF "| notoken | 2 | 5 | 0.400 [0.118, 0.769] | 0 [0, 0.434] |" r.md &&
	grep "^| notoken | 2 | 5 " r.md | grep -qF " | - (0) | - | - | - | 0.667 [0.208, 0.939] |" &&
	grep "^| tiny | 2 | 5 " r.md | grep -qF " | 0.000469 (3) | - | - | - |" &&
	grep "^| fast | 1, 2 | 5 " r.md | grep -qF " | 5.07 (3) | 4820 | 1607 | 42.5 |" &&
	grep -q "<tr data-model=\"notoken\"><td class=\"l\">notoken</td><td class=\"l\" data-k=\"runs\">2</td>" r.html &&
	grep -q "<td data-k=\"tokens_total\">-<span" r.html &&
	grep -q "<td data-k=\"speedup\">0.000469<span" r.html &&
	grep -q "<td class=\"l nc\" data-k=\"verdict\">pass (not clean: static check)</td><td class=\"l\" data-k=\"error\">StaticCheck</td>" r.html &&
	grep -q "<td class=\"m\" data-k=\"message\">FAIL out: MERE 0.31 above 0.01 ...</td>" r.html
'

test_expect '--k and --p: the same columns in the Markdown, the HTML and the JSON; a k no operator reaches is -' '
	store s.db &&
	"$KJUDGE" report s.db --k 3,1,1 --p 2,0.0003 --md r.md --html r.html --json r.json >/dev/null &&
	jget r.json "d[\"k\"], d[\"p\"], list(d[\"models\"][\"fast\"][\"pass_at_k\"]), list(d[\"models\"][\"fast\"][\"fast_p\"])" |
		grep -qx "\[1, 3\] \[0.0003, 2.0\] \[.1., .3.\] \[.0.0003., .2.\]" &&
	jget r.json "d[\"models\"][\"fast\"][\"pass_at_k\"][\"3\"], d[\"models\"][\"fast\"][\"pass_at_k_operators\"][\"3\"], d[\"models\"][\"tiny\"][\"fast_p\"][\"0.0003\"]" |
		grep -qx "None 0 0.4" &&
	grep -qF "| model | runs | operators | accuracy | clean pass rate | pass@1 (operators) | pass@3 (operators) | fast_0.0003 | fast_2 | speedup (operators) |" r.md &&
	grep "^| fast | 1, 2 | 5 " r.md | grep -qF " | 0.833 (3) | - | 0.600 | 0.400 | 5.07 (3) |" &&
	grep -q "<td data-k=\"pass_at_k.3\">-</td>" r.html &&
	grep -q "<th>fast_0.0003</th><th>fast_2</th></tr>" r.html &&
	"$KJUDGE" report s.db --json d.json >/dev/null &&
	jget d.json "d[\"k\"], d[\"p\"]" | grep -qx "\[1, 2, 5, 10\] \[0.0, 0.5, 0.8, 1.0, 1.5, 2.0\]"
'

test_expect 'a --k or --p that is not a list of values: exit 2, a line naming it, nothing written' '
	store s.db &&
	for bad in "--k 0" "--k 1,,2" "--k 2.5" "--k=" "--k x" "--p nan" "--p -1" "--p 1,a" "--p inf"; do
		expect_exit 2 "$KJUDGE" report s.db $bad --md r.md 2>err || { echo "$bad"; exit 1; }
		grep -q "^kjudge report: --[kp]: .* is not \|^kjudge report: --[kp]: an empty list\|^kjudge report: .*--[kp]" err || { echo "$bad"; cat err; exit 1; }
		test ! -e r.md
	done
	"$KJUDGE" report s.db --k 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33 2>err >/dev/null && exit 1
	grep -q "more than 32 values" err
'

test_done
