#!/usr/bin/env bash
# t0605-eval-inputs.sh - what eval takes from its suite and candidates: two
# tasks of byte-identical files are two operators, each judged in a
# directory of its own.  Needs $KJ_PYTHON with torch and Triton (CPU).
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
	grep -q "2 tasks, 2 attempts" out
	grep -q "2 attempts: 2 passed (2 clean)" out
	test "$(q s.db "SELECT count(DISTINCT task_key) FROM tasks")" = 2
	q s.db "SELECT task, status, clean, disabled_ok FROM attempts ORDER BY task" >got
	printf "relu|pass|1|1\nrelu2|pass|1|1\n" >want
	diff want got
'

test_done
