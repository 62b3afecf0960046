#!/usr/bin/env bash
# t0831-eval-mistakes.sh - a user's slips are errors: eval of an empty or
# mistyped candidates folder, or of generations that are all skipped, exits
# 2 saying what it looked for, before any store is made; a task with a
# syntax error is named by its file in the suite, not by the copy an
# attempt ran.  Needs $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite

test_expect 'an empty folder, a mistyped one, a layout not read: exit 2, what was looked for, no store' '
	mkdir empty
	expect_exit 2 "$KJUDGE" eval "$suite" empty --db s.db >out 2>err
	grep -q "^kjudge eval: .empty.: no candidate found: looked for files RUN/level_L_problem_P_sample_S_kernel.py (KernelBench.s runs) or MODEL/TASK/ATTEMPT.py under it, TASK a task of the suite (.*: 3 tasks: 1_Add, ...)\$" err
	test ! -s out && test ! -e s.db
	# The candidates of one model given instead of the folder above it.
	mkdir -p gens/m1/1_Add
	cp "$KJ_TESTS/eval/cands/add_torch.py" gens/m1/1_Add/0.py
	expect_exit 2 "$KJUDGE" eval "$suite" gens/m1 --db s.db 2>err
	grep -q "skipped gens/m1/1_Add/0.py: neither" err
	grep -q "no candidate found: looked for .*; 1 entry was skipped (named above)\$" err
	test ! -e s.db
	expect_exit 2 "$KJUDGE" eval "$suite" gnes --db s.db 2>err
	grep -q "gnes.: no such directory or JSONL file of candidates" err
'

test_expect 'generations whose every line is skipped: exit 2 with the lines named' '
	printf "%s\n" "{\"task\": \"99_Nothing\", \"model\": \"m\", \"source\": \"x\"}" "not json" >g.jsonl
	expect_exit 2 "$KJUDGE" eval "$suite" g.jsonl --db s.db 2>err
	grep -q "skipped g.jsonl:1: no task .99_Nothing. in the suite" err
	grep -q "skipped g.jsonl:2: not JSON" err
	grep -q "g.jsonl.: no candidate found: looked for lines of JSON objects, each with \"task\", \"model\" and \"source\" or \"path\" .*; 2 entries were skipped" err
	test ! -e s.db
'

test_expect 'a task with a syntax error: a task error that names level1/1_Bad.py' '
	mkdir -p suite/level1 gens/m/1_Bad
	printf "import torch\nclass Model(torch.nn.Module)\n    pass\n" >suite/level1/1_Bad.py
	cp "$KJ_TESTS/eval/cands/add_torch.py" gens/m/1_Bad/0.py
	timeout 300 "$KJUDGE" eval suite gens --db s.db --verify-only >out 2>err || { cat err; false; }
	grep -q "^1_Bad m/0: task_error TaskError\$" err
	py "
import sqlite3
m = sqlite3.connect(\"s.db\").execute(\"SELECT message FROM attempts\").fetchone()[0]
assert m.startswith(\"'"'"'level1/1_Bad.py'"'"': the task cannot be loaded: SyntaxError\"), m
assert \"(level1/1_Bad.py, line 2)\" in m and \"kjudge-eval-\" not in m and \"kb_1_Bad_torch\" not in m, m"
'

test_done
