#!/usr/bin/env bash
# t0600-eval.sh - kjudge eval over tests/eval/: a suite in KernelBench's
# layout (with a cases sidecar) and a verify directory's task, generations of
# two models in a JSONL file with bad lines; the verdicts and layers in the
# store, the cases' parameters, the resume that runs nothing twice, an
# attempt left running, --retry-failed, the other candidate layouts, and a
# store that is corrupt, foreign or locked.  Needs $KJ_PYTHON with torch
# and Triton (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
gens=$KJ_TESTS/eval/cands/generations.jsonl
store=$kj_root/study.db
fast="--time_budget 0.3 --repeats 3 --warmup 1"

# q SQL: one query on the study's store (Python's sqlite3: the shell need not exist).
q() {
	"$KJ_PYTHON" - "$store" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}

# The whole study once; the tests below read its store and output.  As a
# Slurm job would (some of its variables set, one empty, the rest unset):
# each attempt's env records the judge's own node and job.
env -u SLURM_ARRAY_JOB_ID -u SLURM_RESTART_COUNT -u SLURMD_NODENAME \
	SLURM_JOB_ID=4242 SLURM_ARRAY_TASK_ID=7 SLURM_CLUSTER_NAME= \
	"$KJUDGE" eval "$suite" "$gens" --db "$store" -j 2 $fast >"$kj_root/out1" 2>"$kj_root/err1"
echo $? >"$kj_root/rc1"

test_expect 'eval judges every good line and exits 0' '
	test "$(cat $kj_root/rc1)" = 0 || { cat $kj_root/err1; false; }
	grep -q "3 tasks, 7 attempts (0 already in" $kj_root/err1
	grep -q "7 attempts: 4 passed (1 clean), 3 failed, 0 judge or task errors" $kj_root/err1
'

test_expect 'each bad JSONL line is named with its number and why, and skipped' '
	grep -q "generations.jsonl:3: not JSON" $kj_root/err1
	grep -q "generations.jsonl:5: no \"model\"" $kj_root/err1
	grep -q "generations.jsonl:9: no task .99_Nothing. in the suite" $kj_root/err1
	grep -q "generations.jsonl:10: a second attempt .0. of model .m1. on task .1_Add." $kj_root/err1
	grep -q "generations.jsonl:12: exactly one of \"source\" and \"path\"" $kj_root/err1
	test "$(grep -c "skipped" $kj_root/err1)" = 5
'

test_expect 'the verdicts: clean only for the honest Triton kernel, torch passes are not clean' '
	q "SELECT task, model, attempt, state, status, clean, error_type, category, charged, cases_total, cases_passed FROM attempts ORDER BY task, model" >got
	cat >want <<EOF
1_Add|m1|0|done|pass|0|StaticCheck|static|none|1|1
1_Add|m2|0|done|fail|0|AccuracyError|accuracy|candidate|1|0
1_Add|m3|0|done|pass|0|StaticCheck|static|none|1|1
2_Scale|m1|0|done|pass|0|StaticCheck|static|none|3|3
2_Scale|m2|a|done|fail|0|AccuracyError|accuracy|candidate|3|1
relu|m1|0|done|pass|1|||none|1|1
relu|m2|0|done|fail|0|ForwardError|runtime|candidate|1|0
EOF
	diff want got
'

test_expect 'the anti-cheat layers: static and kernels-disabled recorded with why' '
	test "$(q "SELECT static_ok, disabled_ok FROM attempts WHERE task = '\''relu'\'' AND model = '\''m1'\''")" = "1|1"
	# After a failed static check the kernel layer is not run: it could
	# only cost time.
	test "$(q "SELECT static_ok, disabled_ok FROM attempts WHERE task = '\''1_Add'\'' AND model = '\''m1'\''")" = "0|"
	q "SELECT disabled_msg FROM attempts WHERE task = '\''1_Add'\'' AND model = '\''m1'\''" | grep -q "not run: the static check failed"
	q "SELECT static_msg FROM attempts WHERE task = '\''1_Add'\'' AND model = '\''m1'\''" | grep -q "degraded"
	# The disabled run of the honest kernel failed: its rows are kept too.
	test "$(q "SELECT count(*) FROM case_results c JOIN attempts a USING (attempt_key) WHERE a.task = '\''relu'\'' AND a.model = '\''m1'\'' AND phase = '\''disabled'\'' AND c.status = '\''fail'\''")" = 1
'

test_expect 'the cases of the sidecar: three, with their parameters; wrong only where scale is 2' '
	q "SELECT case_idx, params, c.status FROM case_results c JOIN attempts a USING (attempt_key) WHERE a.model = '\''m2'\'' AND a.task = '\''2_Scale'\'' AND phase = '\''verify'\'' ORDER BY case_idx" >got
	cat >want <<EOF
1|{"n":16,"scale":0.5}|pass
2|{"n":16,"scale":2.0}|fail
3|{"n":32,"scale":2.0}|fail
EOF
	diff want got
'

test_expect 'timings of every benchmarked case, the tokens and times of the generations' '
	test "$(q "SELECT count(*) FROM timings t JOIN attempts a USING (attempt_key) WHERE a.status = '\''pass'\''")" = 6
	test "$(q "SELECT count(*) FROM attempts WHERE status = '\''pass'\'' AND speedup > 0")" = 4
	test "$(q "SELECT prompt_tokens, completion_tokens, generation_s, round FROM attempts WHERE task = '\''1_Add'\'' AND model = '\''m1'\''")" = "100|50|3.5|"
	test "$(q "SELECT round FROM attempts WHERE task = '\''2_Scale'\'' AND model = '\''m1'\''")" = 1
	test "$(q "SELECT count(*) FROM candidates")" = 7
	test "$(q "SELECT count(*) FROM suite_tasks")" = 3
	q "SELECT env FROM attempts WHERE task = '\''relu'\'' AND model = '\''m1'\''" | grep -q torch
'

test_expect 'every attempt'\''s env names the judge'\''s node and its Slurm job, beside the worker'\''s keys' '
	"$KJ_PYTHON" - "$store" "$(hostname)" <<-"PY"
	import json, sqlite3, sys
	rows = sqlite3.connect(sys.argv[1]).execute("SELECT task, model, env FROM attempts").fetchall()
	assert len(rows) == 7, rows
	for task, model, env in rows:
	    e = json.loads(env)
	    assert e["node"] == sys.argv[2], (task, model, e)
	    assert e["slurm"] == {"SLURM_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": "7"}, (task, model, e)
	    assert "torch" in e and "python" in e and "cuda_available" in e, (task, model, e)
	PY
'

test_expect 'one baseline per task and case: the later candidate is given the first one'\''s' '
	q "SELECT a.model, t.ref_ms, json_extract(t.record, '\''$.timing.ref_measured'\'') FROM timings t JOIN attempts a USING (attempt_key) WHERE a.task = '\''1_Add'\'' ORDER BY a.finished_at" >got
	test "$(wc -l <got)" = 2
	test "$(cut -d"|" -f2 got | sort -u | wc -l)" = 1
	test "$(cut -d"|" -f3 got | tr "\n" " ")" = "1 0 "
'

test_expect 'the same command again judges nothing twice and changes nothing' '
	q "SELECT attempt_key, finished_at, judge_s FROM attempts ORDER BY attempt_key" >before
	"$KJUDGE" eval "$suite" "$gens" --db "$store" -j 2 $fast >out 2>err
	grep -q "7 attempts (7 already in" err
	grep -q "7 attempts: 4 passed (1 clean), 3 failed" err
	q "SELECT attempt_key, finished_at, judge_s FROM attempts ORDER BY attempt_key" >after
	diff before after
	test "$(q "SELECT count(*) FROM runs")" = 2
	test "$(q "SELECT count(*) FROM case_results")" = "$(q "SELECT count(*) FROM case_results")"
'

test_expect 'an attempt left running is judged again; a judge error only with --retry-failed' '
	q "SELECT count(*) FROM case_results" >rows_before
	"$KJ_PYTHON" -c "
import sqlite3; db = sqlite3.connect(\"$store\")
db.execute(\"UPDATE attempts SET state = '\''running'\'', status = NULL WHERE task = '\''1_Add'\'' AND model = '\''m2'\''\")
db.execute(\"UPDATE attempts SET status = '\''judge_error'\'', charged = '\''judge'\'', finished_at = '\''x'\'' WHERE task = '\''relu'\'' AND model = '\''m2'\''\")
db.commit()"
	# Exit 1: a judge error of an earlier run stands (not retried).
	expect_exit 1 "$KJUDGE" eval "$suite" "$gens" --db "$store" -j 2 $fast >out 2>err
	grep -q "7 attempts (6 already in" err
	grep -q "1 attempts ended as judge errors in earlier runs; --retry-failed" err
	test "$(q "SELECT state, status, error_type FROM attempts WHERE task = '\''1_Add'\'' AND model = '\''m2'\''")" = "done|fail|AccuracyError"
	test "$(q "SELECT status, finished_at FROM attempts WHERE task = '\''relu'\'' AND model = '\''m2'\''")" = "judge_error|x"
	"$KJUDGE" eval "$suite" "$gens" --db "$store" --retry-failed $fast >out 2>err
	grep -q "7 attempts (6 already in" err
	test "$(q "SELECT status, error_type FROM attempts WHERE task = '\''relu'\'' AND model = '\''m2'\''")" = "fail|ForwardError"
	# Re-judging replaced the attempt'\''s rows; it did not add to them.
	diff rows_before <(q "SELECT count(*) FROM case_results")
'

test_expect 'KernelBench generation layout and MODEL/TASK/ATTEMPT.py' '
	mkdir -p runs/kb-model gen/mdl/relu
	cp "$KJ_TESTS/eval/cands/add_wrong.py" runs/kb-model/level_1_problem_1_sample_3_kernel.py
	cp "$KJ_TESTS/eval/cands/add_torch.py" runs/kb-model/level_1_problem_7_sample_0_kernel.py
	cp "$KJ_TESTS/eval/cands/relu_crash.py" gen/mdl/relu/try1.py
	echo "x = 1" >gen/mdl/notes.py
	"$KJUDGE" eval "$suite" runs --db kb.db --verify-only >out 2>err
	grep -q "level_1_problem_7_sample_0_kernel.py: no task of level 1, problem 7" err
	"$KJ_PYTHON" -c "
import sqlite3; r = sqlite3.connect(\"kb.db\").execute(\"SELECT task, model, attempt, status, error_type FROM attempts\").fetchall()
assert r == [(\"1_Add\", \"kb-model\", \"3\", \"fail\", \"AccuracyError\")], r"
	"$KJUDGE" eval "$suite" gen --db mt.db --verify-only >out 2>err
	grep -q "notes.py: neither" err
	"$KJ_PYTHON" -c "
import sqlite3; r = sqlite3.connect(\"mt.db\").execute(\"SELECT task, model, attempt, status, error_type FROM attempts\").fetchall()
assert r == [(\"relu\", \"mdl\", \"try1\", \"fail\", \"ForwardError\")], r"
'

test_expect 'a task that does not load is the task'\''s error, charged to nobody else' '
	mkdir -p broken/suite broken/gen/m/broken
	printf "import torch\nraise RuntimeError(\"this task is broken\")\n" >broken/suite/broken_torch.py
	cp "$KJ_TESTS/eval/cands/add_torch.py" broken/gen/m/broken/0.py
	"$KJUDGE" eval broken/suite broken/gen --db broken.db --verify-only >out 2>err
	grep -q "broken m/0: task_error TaskError" err
	"$KJ_PYTHON" -c "
import sqlite3; r = sqlite3.connect(\"broken.db\").execute(\"SELECT status, category, charged, message FROM attempts\").fetchone()
assert r[:3] == (\"task_error\", \"task\", \"task\") and \"this task is broken\" in r[3], r"
	# No worker said what it ran on; the judge still says where it ran.
	"$KJ_PYTHON" -c "
import json, sqlite3; e = json.loads(sqlite3.connect(\"broken.db\").execute(\"SELECT env FROM attempts\").fetchone()[0])
assert e[\"node\"] == \"$(hostname)\" and \"torch\" not in e, e"
'

test_expect 'a corrupt, a foreign, a locked store and bad operands: exit 2, the file left as it was' '
	head -c 8192 /dev/urandom >junk.db
	cp junk.db junk.orig
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db junk.db 2>err
	grep -q "junk.db" err
	cmp junk.db junk.orig
	"$KJ_PYTHON" -c "import sqlite3; db = sqlite3.connect(\"other.db\"); db.execute(\"CREATE TABLE t (x)\"); db.commit()"
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db other.db 2>err
	grep -q "not a kjudge results store" err
	cp "$store" locked.db
	"$KJ_PYTHON" -c "
import sqlite3, time, sys
db = sqlite3.connect(\"locked.db\", isolation_level=None)
db.execute(\"BEGIN EXCLUSIVE\")
open(\"locked.ready\", \"w\").close()
time.sleep(60)
" >/dev/null 2>holder.err &
	holder=$!
	for i in $(seq 50); do [ -e locked.ready ] && break; sleep 0.1; done
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db locked.db 2>err
	grep -q "locked by another process" err
	# The lock is held past eval'"'"'s wait for it (5 s), then let go at
	# once (its output kept from the test'"'"'s own: a failed check would
	# wait out the minute).
	kill $holder
	wait $holder || true
	# One eval per store at a time: a second is refused, not run beside it.
	"$KJUDGE" eval "$suite" "$gens" --db busy.db --verify-only -q >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 100); do [ -s busy.db ] && break; sleep 0.1; done
	sleep 1
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db busy.db --verify-only 2>err
	grep -q "another kjudge eval is writing to this store" err
	kill $pid
	wait $pid || true
	expect_exit 2 "$KJUDGE" eval "$suite" --db x.db 2>/dev/null
	expect_exit 2 "$KJUDGE" eval /nonexistent "$gens" --db x.db 2>err
	grep -q "/nonexistent" err
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" 2>/dev/null
	test ! -e x.db
'

test_expect 'a device that is not there stops the batch (exit 2), charging nothing; GPUs named twice are exit 2' '
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db dev.db --gpus 0,1,0 2>err
	grep -q "GPU 0 is named twice" err
	test ! -e dev.db
	# (Where torch sees a GPU, cuda is there: nothing to stop.)
	if "$KJ_PYTHON" -c "import torch, sys; sys.exit(torch.cuda.is_available())"; then
		expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db dev.db --device cuda >out 2>err
		grep -q "no CUDA device that torch can use" err
		grep -q "stopped, nothing charged: 0 of 7 attempts done" err
		# No verdict of anyone: the attempts begun stay running, for a
		# run where the device is.
		test "$("$KJ_PYTHON" -c "import sqlite3; print(sqlite3.connect(\"dev.db\").execute(\"SELECT count(*) > 0, sum(state != '\''running'\'' OR status IS NOT NULL) FROM attempts\").fetchone())")" = "(1, 0)"
		# A shard on such a node writes no status: --wait submits it
		# again, as for a node that failed.
		mkdir pub
		expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db devs.db --device cuda \
			--shard 0/1 --publish pub >out 2>err
		grep -q "no CUDA device that torch can use" err
		test -e pub/shard-0.db
		test ! -e pub/shard-0.json
	fi
'

test_expect 'kjudge report reads the study' '
	"$KJUDGE" report "$store" --json r.json --md r.md
	test "$(jget r.json "d[\"models\"][\"m1\"][\"accuracy\"], d[\"models\"][\"m1\"][\"clean_pass_rate\"] * 3, d[\"models\"][\"m2\"][\"accuracy\"]")" = "1.0 1.0 0.0"
	test "$(jget r.json "len(d[\"attempts\"])")" = 7
	grep -q "m1" r.md
'

test_done
