#!/usr/bin/env bash
# t0640-eval-cheats.sh - eval against candidates that cheat its layers:
# one that the static check cannot see computing with PyTorch (Python's
# sum() adds the tensors, its Triton kernel runs for show) must fail the
# kernel layer (with its launches made no-ops it still passes); one that
# answers from memory (tests/candidates/content_memo) must be
# ReplayDetected, also when timed again alone on fresh inputs; an honest
# PyTorch twin passes, not clean.  Needs $KJ_PYTHON with torch and Triton.
. "$(dirname "$0")/lib.sh"

test_expect 'the kernel layer and the replay check hold under eval' '
	mkdir suite
	cp "$KJ_TESTS/eval/cheats/scale2_torch.py" "$KJ_TESTS/candidates/tasks/matmul_torch.py" suite/
	# Their sources inline: a "path" may not lead out of the JSONL'"'"'s folder.
	"$KJ_PYTHON" - <<PY
import json, os
t = os.environ["KJ_TESTS"]
with open("gens.jsonl", "w") as f:
    for task, model, path in (("scale2", "sly", "eval/cheats/sum_for_show.py"),
                              ("matmul", "memo", "candidates/content_memo/candidate.py"),
                              ("matmul", "honest", "candidates/honest_matmul/candidate.py")):
        f.write(json.dumps({"task": task, "model": model, "attempt": 0,
                            "source": open(os.path.join(t, path)).read()}) + "\n")
PY
	"$KJUDGE" eval suite gens.jsonl --db c.db --time_budget 1 >out 2>err || { cat out err; false; }
	"$KJ_PYTHON" - <<PY
import sqlite3
rows = {r[0]: r[1:] for r in sqlite3.connect("c.db").execute(
    "SELECT model, status, clean, error_type, static_ok, disabled_ok, message FROM attempts")}
assert rows["sly"][:5] == ("pass", 0, "KernelsNotUsed", 1, 0), rows["sly"]
assert rows["memo"][:3] == ("fail", 0, "ReplayDetected"), rows["memo"]
assert "timed alone on fresh inputs" in rows["memo"][5], rows["memo"]
assert rows["honest"][:3] == ("pass", 0, "StaticCheck"), rows["honest"]
PY
	grep -q "scale2 sly/0: pass, not clean: KernelsNotUsed" err
'

test_expect 'a candidate that writes frames to the judge'"'"'s channel fails at once and stalls no batch' '
	mkdir suite
	cp "$KJ_TESTS/candidates/addmul_torch.py" suite/
	"$KJ_PYTHON" - <<PY
import json, os
t = os.environ["KJ_TESTS"] + "/candidates/"
with open("gens.jsonl", "w") as f:
    for model, name in (("forger", "frame_forger"), ("honest", "pass")):
        f.write(json.dumps({"task": "addmul", "model": model, "attempt": 0,
                            "source": open(t + name + "/candidate.py").read()}) + "\n")
PY
	start=$(date +%s)
	timeout 300 "$KJUDGE" eval suite gens.jsonl --db f.db -j 2 --timeout 60 --verify-only \
		>out 2>err || test $? -eq 1 || { cat out err; false; }
	took=$(( $(date +%s) - start ))
	test "$took" -lt 60 || { echo "eval took $took s"; false; }
	"$KJ_PYTHON" - <<PY
import sqlite3
rows = {r[0]: r[1:] for r in sqlite3.connect("f.db").execute(
    "SELECT model, status, error_type, message FROM attempts")}
assert rows["forger"][:2] == ("fail", "ProtocolError"), rows["forger"]
assert "wrote to it" in rows["forger"][2], rows["forger"]
assert rows["honest"][0] == "pass", rows["honest"]
PY
'

test_done
