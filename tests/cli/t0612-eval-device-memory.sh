#!/usr/bin/env bash
# t0612-eval-device-memory.sh - an attempt whose side runs out of device
# memory (torch.OutOfMemoryError) while other attempts share the device is
# not charged: eval judges it again alone after the others, and only that
# verdict stands; with one attempt at a time the same failure is the
# candidate's at once.  Needs $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
fast="--time_budget 0.3 --repeats 3 --warmup 1"
mkdir -p "$kj_root/g"
# Two attempts whose forward raises torch's own out-of-memory error.
"$KJ_PYTHON" - "$kj_root/g/gens.jsonl" <<'PY'
import json, sys
src = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
       "    def forward(self, a, b):\n"
       "        raise torch.OutOfMemoryError('Tried to allocate 6.00 GiB')\n")
with open(sys.argv[1], "w") as f:
    for m in ("m1", "m2"):
        f.write(json.dumps({"task": "1_Add", "model": m, "attempt": 0, "source": src}) + "\n")
PY

rows() {
	"$KJ_PYTHON" - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT model, state, status, charged, error_type FROM attempts ORDER BY model"):
    print("|".join(str(v) for v in r))
PY
}

test_expect 'shared: each attempt stops uncharged, then is judged again alone and charged' '
	"$KJUDGE" eval "$suite" "$kj_root/g/gens.jsonl" --db "$kj_root/shared.db" -j 2 $fast \
		>out 2>err
	rc=$?
	test $rc = 0 || { cat err; false; }
	test "$(grep -c "ran out of memory on cpu while other attempts shared it: judged again alone" err)" = 2 ||
		{ cat err; false; }
	grep -q "kjudge eval: 2 attempts again, each alone on its device" err
	grep -q "2 attempts: 0 passed (0 clean), 2 failed" err || { cat err; false; }
	rows "$kj_root/shared.db" >got
	test "$(wc -l <got)" = 2
	! grep -v "|done|fail|candidate|" got
'

test_expect 'alone from the start (-j 1): charged at once, never judged twice' '
	"$KJUDGE" eval "$suite" "$kj_root/g/gens.jsonl" --db "$kj_root/alone.db" -j 1 $fast \
		>out 2>err
	test $? = 0 || { cat err; false; }
	! grep -q "judged again alone" err
	! grep -q "attempts again" err
	rows "$kj_root/alone.db" >got
	test "$(wc -l <got)" = 2
	! grep -v "|done|fail|candidate|" got
'

# Out of memory while loading: the candidate's model (torch's error, and the
# driver's "CUDA error: out of memory"), and a task whose model does.
"$KJ_PYTHON" - "$kj_root/g/load.jsonl" <<'PY'
import json, sys
src = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
       "    def __init__(self):\n        super().__init__()\n        raise %s\n\n"
       "    def forward(self, a, b):\n        return a + b\n")
with open(sys.argv[1], "w") as f:
    for m, e in (("m1", "torch.OutOfMemoryError('Tried to allocate 6.00 GiB')"),
                 ("m2", "RuntimeError('CUDA error: out of memory')")):
        f.write(json.dumps({"task": "1_Add", "model": m, "attempt": 0, "source": src % e}) + "\n")
PY
mkdir -p "$kj_root/oomsuite/level1"
sed 's/super().__init__()/super().__init__()\n        raise torch.OutOfMemoryError("Tried to allocate 7.00 GiB")/' \
	"$suite/level1/1_Add.py" >"$kj_root/oomsuite/level1/1_Add.py"
printf '%s\n' '{"task": "1_Add", "model": "m1", "attempt": 0, "source": "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return a + b\n"}' \
	'{"task": "1_Add", "model": "m2", "attempt": 0, "source": "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return b + a\n"}' \
	>"$kj_root/g/plain.jsonl"

test_expect 'shared: a model that runs out of memory as it loads is not charged either, the candidate.s nor the task.s, until judged alone' '
	"$KJUDGE" eval "$suite" "$kj_root/g/load.jsonl" --db "$kj_root/load.db" -j 2 $fast \
		>out 2>err
	test $? = 0 || { cat err; false; }
	test "$(grep -c "ran out of memory on cpu while other attempts shared it" err)" = 2 ||
		{ cat err; false; }
	grep -q "kjudge eval: 2 attempts again, each alone on its device" err
	rows "$kj_root/load.db" >got
	test "$(wc -l <got)" = 2
	! grep -v "|done|fail|candidate|" got
	"$KJUDGE" eval "$kj_root/oomsuite" "$kj_root/g/plain.jsonl" --db "$kj_root/task.db" -j 2 \
		$fast >out 2>err
	test $? = 0 || { cat err; false; }
	test "$(grep -c "loading its model: judged again alone" err)" = 2 || { cat err; false; }
	rows "$kj_root/task.db" >got
	test "$(wc -l <got)" = 2
	! grep -v "|done|task_error|task|" got
'

test_done
