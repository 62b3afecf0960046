#!/usr/bin/env bash
# t0781-eval-spec: kjudge eval over a spec suite (issue 12 item 8).  The
# bundled suite's translation directions are the tasks; a JSONL of two
# models' translations for two directions (correct and wrong each, and a
# bad line) goes into the store, with its verdicts, the report's pass@1 and
# the translations' speedups; a direction whose source reference cannot
# run here (CUDA, without a GPU) is not run, named on stderr; an
# eval killed with -9 and started again ends with the same verdicts.
. "$(dirname "$0")/lib.sh"
suite=$KJ_TESTS/../examples/parsuite
tr=$KJ_TESTS/spec/translations/parsuite-histogram-opencl
export KJ_CACHE_DIR="$kj_root/cache"
gens=$kj_root/gens.jsonl

# The generations: good and bad on histogram omp->opencl and dot
# opencl->omp, good on dot cuda->omp, and a line that is not JSON.
"$KJ_PYTHON" - "$suite" "$tr" "$gens" <<'PY'
import json, sys
suite, tr, out = sys.argv[1:]
ok = open(tr + "/correct/histogram.cl").read()
bad = open(tr + "/wrong/histogram.cl").read()
omp = open(suite + "/parsuite-src/omp/dot/main.c").read()
wrong = omp.replace("sum += (double)x[i] * (double)y[i];", "sum += 2.0 * (double)x[i] * (double)y[i];")
assert wrong != omp
lines = [
    {"task": "parsuite-histogram-omp:opencl", "model": "good", "attempt": 0, "files": {"histogram.cl": ok},
     "prompt_tokens": 500, "completion_tokens": 100, "generation_s": 2.0},
    {"task": "parsuite-histogram-omp:opencl", "model": "bad", "attempt": 0, "files": {"histogram.cl": bad}},
    {"task": "parsuite-dot-opencl:omp", "model": "good", "attempt": 0, "files": {"main.c": omp}},
    {"task": "parsuite-dot-opencl:omp", "model": "bad", "attempt": 0, "files": {"main.c": wrong}},
    {"task": "parsuite-dot-cuda:omp", "model": "good", "attempt": 0, "files": {"main.c": omp}},
]
with open(out, "w") as f:
    for l in lines[:3]:
        f.write(json.dumps(l) + "\n")
    f.write("{\"task\": \"parsuite-dot-opencl:omp\", \"model\": \"bad\"\n")
    for l in lines[3:]:
        f.write(json.dumps(l) + "\n")
PY

ev() { # ev DB: the eval, few timed runs
	"$KJUDGE" eval "$suite" "$gens" --db "$1" --warmup 0 --repeats 1 -j 2 --quiet
}

verdicts() { # verdicts DB: one line per attempt, sorted
	"$KJ_PYTHON" -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT task, model, attempt, state, status, clean, error_type, charged FROM attempts ORDER BY task, model"):
    print(*r)' "$1"
}

test_expect 'eval judges the translations: verdicts, a bad line named, a direction that cannot run here not run' '
	rc=0
	ev s.db 2>err || rc=$?
	grep -q "skipped .*gens.jsonl:4: not JSON" err
	verdicts s.db > v
	cat v
	grep -qx "parsuite-histogram-omp:opencl good 0 done pass 1 None none" v
	grep -qx "parsuite-histogram-omp:opencl bad 0 done fail 0 VERIFY_FAIL candidate" v
	grep -qx "parsuite-dot-opencl:omp good 0 done pass 1 None none" v
	grep -qx "parsuite-dot-opencl:omp bad 0 done fail 0 VERIFY_FAIL candidate" v
	if [ ! -e /dev/nvidiactl ]; then
		# A direction whose source (timed) is CUDA cannot run here: not
		# run, no attempt, never a failure.
		test -z "$(grep "parsuite-dot-cuda:omp" v)"
		grep -q "not run here: parsuite-dot-cuda:omp: CUDA needs an NVIDIA GPU" err
	fi
	test $rc -eq 0
	cp s.db "$kj_root/full.db"
	verdicts s.db > "$kj_root/full.txt"
'

test_expect 'the store holds the spec verify record and the timing of each pass' '
	"$KJ_PYTHON" -c "
import json, sqlite3
db = sqlite3.connect(\"$kj_root/full.db\")
rows = db.execute(\"SELECT a.task, a.model, c.record FROM case_results c JOIN attempts a USING (attempt_key) WHERE a.status IN (\x27pass\x27, \x27fail\x27)\").fetchall()
assert len(rows) == 4, rows
for task, model, rec in rows:
    r = json.loads(rec)
    assert r[\"status\"] == (\"PASS\" if model == \"good\" else \"VERIFY_FAIL\"), (task, model, r[\"status\"])
    assert r[\"strategies\"], r
t = db.execute(\"SELECT a.task, t.impl_ms, t.ref_ms, t.speedup FROM timings t JOIN attempts a USING (attempt_key)\").fetchall()
assert len(t) == 2, t
for task, impl, ref, sp in t:
    assert impl > 0 and ref > 0 and abs(sp - ref / impl) < 1e-9 * sp, (task, impl, ref, sp)
src = db.execute(\"SELECT source FROM candidates c JOIN attempts a USING (cand_sha256) WHERE a.model = \x27good\x27 AND a.task = \x27parsuite-dot-opencl:omp\x27\").fetchone()[0]
assert list(json.loads(src)) == [\"main.c\"]
# Every verdict, the task_error of a failing baseline too, names the judge'\''s node.
for st, env in db.execute(\"SELECT status, env FROM attempts\"):
    assert json.loads(env)[\"node\"] == \"$(hostname)\", (st, env)
"
'

test_expect 'the report: pass@1 per model and the translation speedups' '
	"$KJUDGE" report "$kj_root/full.db" --json r.json --md r.md
	jget r.json "d[\"models\"][\"good\"][\"pass_at_k\"][\"1\"], d[\"models\"][\"bad\"][\"pass_at_k\"][\"1\"]" > p
	cat p
	# good: 2 of 2 directions (the third, whose CUDA reference cannot run
	# here, never enters the evaluation: docs/metrics.md); with a GPU, 3 of 3.
	grep -qx "1.0 0.0" p
	if [ ! -e /dev/nvidiactl ]; then
		jget r.json "[a[\"task\"] for a in d[\"attempts\"] if \"cuda\" in a[\"task\"]]" | grep -qx "\[\]"
	fi
	jget r.json "d[\"models\"][\"good\"][\"speedup_operators\"], d[\"models\"][\"good\"][\"speedup\"] > 0" | grep -qx "2 True"
	jget r.json "sorted((a[\"task\"], a[\"status\"], a[\"speedup\"] is None) for a in d[\"attempts\"] if a[\"model\"] == \"bad\")" |
		grep -qx "\[(.parsuite-dot-opencl:omp., .fail., True), (.parsuite-histogram-omp:opencl., .fail., True)\]"
	grep -q "parsuite-histogram-omp:opencl" r.md
'

test_expect 'the same command again judges nothing twice' '
	cp "$kj_root/full.db" s.db
	"$KJUDGE" eval "$suite" "$gens" --db s.db --warmup 0 --repeats 1 -j 2 > out 2>&1
	n=$(grep -c " done " "$kj_root/full.txt")
	grep -q "$n attempts ($n already in s.db)" out
	verdicts s.db | cmp - "$kj_root/full.txt"
'

test_expect 'killed with -9 while judging and started again: the same verdicts' '
	"$KJUDGE" eval "$suite" "$gens" --db k.db --warmup 0 --repeats 1 -j 2 --quiet 2>/dev/null &
	pid=$!
	for i in $(seq 1 200); do
		n=$("$KJ_PYTHON" -c "
import sqlite3
try:
    print(sqlite3.connect(\"k.db\").execute(\"SELECT count(*) FROM attempts WHERE state = \x27done\x27\").fetchone()[0])
except Exception:
    print(0)")
		[ "$n" -ge 1 ] && break
		sleep 0.1
	done
	kill -9 $pid
	wait $pid || true
	verdicts k.db | grep -c " done " > done_before || true
	test "$(cat done_before)" -lt "$(grep -c " done " "$kj_root/full.txt")"
	ev k.db 2>/dev/null || true
	verdicts k.db | cmp - "$kj_root/full.txt"
'

test_expect 'translations as MODEL/TASK/ATTEMPT/ directories' '
	mkdir -p c/good/parsuite-histogram-omp:opencl/a1 c/good/no-such:task/0
	cp "$tr/correct/histogram.cl" c/good/parsuite-histogram-omp:opencl/a1/
	echo x > c/good/no-such:task/0/f
	"$KJUDGE" eval "$suite" c --db d.db --verify-only --quiet 2>err
	grep -q "no-such:task/0: no such task" err
	verdicts d.db | grep -qx "parsuite-histogram-omp:opencl good a1 done pass 1 None none"
'

test_done
