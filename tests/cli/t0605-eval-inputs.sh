#!/usr/bin/env bash
# t0605-eval-inputs.sh - what eval takes from its suite and candidates: two
# tasks of byte-identical files are two operators, each judged in a
# directory of its own; a generations file is read strictly (a "path" held
# under its directory, a key given twice refused), and every file of a
# folder layout that is not read (a link, a FIFO) is named on stderr and in
# the run's record; nothing blocks.  Needs $KJ_PYTHON with torch and Triton
# (CPU).
. "$(dirname "$0")/lib.sh"

relu=$KJ_TESTS/eval/suite/ops/relu_torch.py
honest=$KJ_TESTS/eval/cands/relu_triton.py

# q STORE SQL: one query on a store.
q() {
	"$KJ_PYTHON" - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}

test_expect 'two tasks of the same bytes: two operators, two attempts, both clean' '
	mkdir -p suite/ops cands/m/relu cands/m/relu2
	cp "$relu" suite/ops/relu_torch.py
	cp "$relu" suite/ops/relu2_torch.py
	cp "$honest" cands/m/relu/0.py
	cp "$honest" cands/m/relu2/0.py
	timeout 300 "$KJUDGE" eval suite cands --db s.db -j 2 --verify-only >out 2>err ||
		{ cat out err; false; }
	grep -q "2 tasks, 2 attempts" err
	grep -q "2 attempts: 2 passed (2 clean)" err
	test "$(q s.db "SELECT count(DISTINCT task_key) FROM tasks")" = 2
	q s.db "SELECT task, status, clean, disabled_ok FROM attempts ORDER BY task" >got
	printf "relu|pass|1|1\nrelu2|pass|1|1\n" >want
	diff want got
'

# The suite of one task, for the tests that judge nothing.
one_task() {
	mkdir -p suite/ops
	cp "$relu" suite/ops/relu_torch.py
}

test_expect 'a generations line whose "path" leads out, names a FIFO or a link, or gives a key twice: skipped with why' '
	one_task
	mkdir gen
	echo "secret-first-line" >secret.txt
	mkfifo gen/fifo.py
	ln -s ../secret.txt gen/link.py
	{
		echo "{\"task\": \"relu\", \"model\": \"a\", \"path\": \"$SCRATCH/secret.txt\"}"
		echo "{\"task\": \"relu\", \"model\": \"b\", \"path\": \"../secret.txt\"}"
		echo "{\"task\": \"relu\", \"model\": \"c\", \"path\": \"fifo.py\"}"
		echo "{\"task\": \"relu\", \"model\": \"d\", \"path\": \"link.py\"}"
		echo "{\"task\": \"relu\", \"model\": \"honest\", \"model\": \"other\", \"source\": \"x = 1\"}"
	} >gen/g.jsonl
	expect_exit 2 timeout 60 "$KJUDGE" eval suite gen/g.jsonl --db s.db >out 2>err
	grep -q "g.jsonl:1: \"path\": .*secret.txt.: an absolute path, not one relative to .gen." err
	grep -q "g.jsonl:2: \"path\": .\.\./secret.txt.: a path through .\.\.., out of .gen." err
	grep -q "g.jsonl:3: \"path\": .gen/fifo.py.: not a regular file (a FIFO)" err
	grep -q "g.jsonl:4: \"path\": .gen/link.py.: a symbolic link (not followed)" err
	grep -q "g.jsonl:5: not JSON: column [0-9]*: duplicate key .model." err
	test "$(grep -c "skipped gen/g.jsonl" err)" = 5
	grep -q "g.jsonl.: no candidate found: looked for lines of JSON objects, .*; 5 entries were skipped" err
	! grep -q "secret-first-line" out err
	test ! -e s.db
'

test_expect 'a folder layout: a link and a FIFO are named on stderr and in the run record, not read' '
	one_task
	mkdir -p gen/m/relu
	echo "secret-first-line" >secret.txt
	ln -s "$SCRATCH/secret.txt" gen/m/relu/0.py
	mkfifo gen/m/relu/1.py
	cp "$honest" gen/m/relu/2.py
	timeout 120 "$KJUDGE" eval suite gen --db s.db --verify-only >out 2>err || { cat out err; false; }
	grep -q "skipped gen/m/relu/0.py: a symbolic link (not followed)" err
	grep -q "skipped gen/m/relu/1.py: not a regular file (a FIFO)" err
	q s.db "SELECT env FROM runs" >env.json
	"$KJ_PYTHON" - <<PY
import json
s = json.load(open("env.json"))["skipped"]
assert s == [{"where": "gen/m/relu/0.py", "why": "a symbolic link (not followed)"},
             {"where": "gen/m/relu/1.py", "why": "not a regular file (a FIFO)"}], s
PY
'

test_expect 'candidates that are a FIFO: refused at once (exit 2), no store made' '
	one_task
	mkfifo g.jsonl
	expect_exit 2 timeout 60 "$KJUDGE" eval suite g.jsonl --db s.db 2>err
	grep -q "g.jsonl.: not a regular file (a FIFO)" err
	test ! -e s.db
'

test_done
