#!/usr/bin/env bash
# t0850-spec-explained: suites of specs explained (issue 25 item 10).  A
# failing translation's line in eval and its message in the reports carry
# the strategy that failed and the program's own last lines; eval --api
# scopes the study, a direction whose target cannot run here is not run
# (never a failure) and the report says what every rate is a share of;
# spec verify --json writes a document for bad input; an exit_code
# strategy that fails is VERIFY_FAIL, as ParBench's verifier says.
. "$(dirname "$0")/lib.sh"
suite=$KJ_TESTS/../examples/parsuite
tr=$KJ_TESTS/spec/translations/parsuite-histogram-opencl
spec_root=$KJ_TESTS/spec
export KJ_CACHE_DIR="$kj_root/cache"
gens=$kj_root/gens.jsonl

# One model: a wrong histogram into OpenCL (it says FAIL itself and exits
# 1), a right dot into OpenMP, and a translation into CUDA.
"$KJ_PYTHON" - "$suite" "$tr" "$gens" <<'PY'
import json, sys
suite, tr, out = sys.argv[1:]
lines = [
    {"task": "parsuite-histogram-omp:opencl", "model": "m", "attempt": 0,
     "files": {"histogram.cl": open(tr + "/wrong/histogram.cl").read()}},
    {"task": "parsuite-dot-opencl:omp", "model": "m", "attempt": 0,
     "files": {"main.c": open(suite + "/parsuite-src/omp/dot/main.c").read()}},
    {"task": "parsuite-dot-omp:cuda", "model": "m", "attempt": 0,
     "files": {"main.cu": open(suite + "/parsuite-src/cuda/dot/main.cu").read()}},
]
with open(out, "w") as f:
    f.writelines(json.dumps(l) + "\n" for l in lines)
PY

test_expect 'eval: the failing strategy and the program'"'"'s last lines in the line; CUDA not run here' '
	"$KJUDGE" eval "$suite" "$gens" --db "$kj_root/s.db" --verify-only -j 2 >out 2>err
	cat out err
	grep -q "^parsuite-histogram-omp:opencl m/0: fail VERIFY_FAIL: file_hash FAIL: sha256 of .counts.txt. is " err
	grep -q "the program.s last lines: \"time_ms = [0-9.]*\" \"FAIL histogram: the counts differ from a serial count\"" err
	grep -q "^parsuite-dot-opencl:omp m/0: pass, clean" err
	test ! -s out
	if [ ! -e /dev/nvidiactl ]; then
		# Not run: named, no attempt, not in the failures.
		grep -qx "kjudge eval: not run here: parsuite-dot-omp:cuda: CUDA needs an NVIDIA GPU and its driver (/dev/nvidiactl is absent)" err
		test -z "$(grep "m/0" err | grep cuda)"
		grep -q "the study: 2 directions (0 outside --api, 21 that no translation attempts, 1 not run here, left out with their 1 translation)" err
		grep -q "2 attempts: 1 passed (1 clean), 1 failed, 0 judge or task errors" err
	fi
'

test_expect 'the reports: the message, the denominators, the directions not run' '
	"$KJUDGE" report "$kj_root/s.db" --json r.json --md r.md --html r.html 2>/dev/null
	jget r.json "[a[\"message\"] for a in d[\"attempts\"] if a[\"status\"] == \"fail\"][0]" >msg
	grep -q "^file_hash FAIL: .*; the program.s last lines: .*\"FAIL histogram: the counts differ from a serial count\"; file_diff FAIL: " msg
	grep -q "FAIL histogram: the counts differ from a serial count" r.html
	if [ ! -e /dev/nvidiactl ]; then
		# accuracy = 1 pass / 2 directions attempted and runnable, not / 24.
		jget r.json "d[\"models\"][\"m\"][\"accuracy\"], d[\"models\"][\"m\"][\"operators\"], d[\"denominators\"][\"operators\"]" |
			grep -qx "0.5 2 2"
		jget r.json "d[\"denominators\"][\"accuracy\"]" | grep -qx "operators with a pass / operators"
		jget r.json "d[\"suite\"][\"not_run\"][0][\"task\"]" | grep -qx "parsuite-dot-omp:cuda"
		grep -q "^Denominators: N = 2 operators, .*translation directions in the study (--api) that a translation attempts and that ran here. Accuracy: operators with a pass / operators;" r.md
		grep -q "Not run here, in no figure (1): parsuite-dot-omp:cuda (CUDA needs an NVIDIA GPU" r.md
		grep -q "<p id=\"denominators\">Denominators: N = 2 operators" r.html
	fi
'

test_expect 'eval --api scopes the study; an API no direction targets, or a kernel suite, is refused' '
	"$KJUDGE" eval "$suite" "$gens" --db a.db --verify-only --api opencl >out 2>err
	grep -q "the study: 1 direction (16 outside --api, 7 that no translation attempts, 0 not run here, left out with their 2 translations)" err
	"$KJ_PYTHON" -c "
import sqlite3
print([r for r in sqlite3.connect(\"a.db\").execute(\"SELECT task, status, error_type FROM attempts\")])" >v
	grep -qxF "[('"'"'parsuite-histogram-omp:opencl'"'"', '"'"'fail'"'"', '"'"'VERIFY_FAIL'"'"')]" v
	expect_exit 2 "$KJUDGE" eval "$suite" "$gens" --db b.db --api openmp 2>err
	grep -qx "kjudge eval: --api: no direction of the suite targets .openmp." err
	test ! -e b.db
	expect_exit 2 "$KJUDGE" eval "$KJ_TESTS/eval/suite" "$KJ_TESTS/eval/cands" --db c.db \
		--api omp 2>err
	grep -qx "kjudge eval: --api is for a suite of specs (its translation directions)" err
	test ! -e c.db
'

mkspec() {
	"$KJ_PYTHON" "$spec_root/mkspec.py" "$spec_root/specs/t-basic.json" "$1" "$2"
}

test_expect 'spec verify --json: a document with status ERROR for bad input, exit 2' '
	mkspec esc.json "d[\"verification\"][\"strategies\"][5][\"reference_file\"] = \"../../../../etc/passwd\""
	expect_exit 2 "$KJUDGE" spec verify esc.json --root "$spec_root" --json >r.json 2>err
	jget r.json "d[\"status\"], d[\"spec\"]" | grep -qx "ERROR esc.json"
	jget r.json "d[\"message\"]" | grep -q "reference_file: .../../../../etc/passwd. leaves the project tree$"
	grep -q "leaves the project tree" err
	mkspec miss.json "d[\"verification\"][\"strategies\"][5][\"reference_file\"] = \"nope.txt\""
	expect_exit 2 "$KJUDGE" spec verify miss.json --root "$spec_root" --json >r.json 2>/dev/null
	jget r.json "d[\"status\"], d[\"message\"].endswith(\"reference_file: '"'"'nope.txt'"'"' does not exist\")" |
		grep -qx "ERROR True"
	expect_exit 2 "$KJUDGE" spec verify "$spec_root/specs/t-basic.json" --root "$spec_root" --json \
		--config nope >r.json 2>/dev/null
	jget r.json "d[\"status\"], \"nope\" in d[\"message\"]" | grep -qx "ERROR True"
	expect_exit 2 "$KJUDGE" spec verify --all --root "$kj_root/nowhere" --json >r.json 2>/dev/null
	jget r.json "d[\"status\"]" | grep -qx ERROR
'

test_expect 'an exit status the exit_code strategy refuses is VERIFY_FAIL; without one, RUN_FAIL' '
	args="d[\"run\"][\"input_configurations\"][\"correctness\"][\"arguments\"] = [\"exit\", \"1\"]"
	# Only the marker and the exit status are checked.
	keep="d[\"verification\"][\"strategies\"] = [s for s in d[\"verification\"][\"strategies\"] if s[\"type\"] in (\"exit_code\", \"stdout_pattern\")]"
	mkspec e.json "$args; $keep"
	expect_exit 1 "$KJUDGE" spec verify e.json --root "$spec_root" --json >r.json
	jget r.json "d[\"status\"], d[\"strategies\"][0][\"detail\"]" | grep -qx "VERIFY_FAIL exit code 1, expected 0"
	# The exit status the strategy expects passes, as in ParBench.
	mkspec e1.json "$args; $keep; d[\"verification\"][\"strategies\"][0][\"expected\"] = 1"
	"$KJUDGE" spec verify e1.json --root "$spec_root" --json >r.json
	jget r.json "d[\"status\"]" | grep -qx PASS
	# No exit_code strategy: a status other than 0 is the run'"'"'s failure.
	mkspec e2.json "$args; $keep; d[\"verification\"][\"strategies\"] = d[\"verification\"][\"strategies\"][1:]"
	expect_exit 1 "$KJUDGE" spec verify e2.json --root "$spec_root" --json >r.json
	jget r.json "d[\"status\"], d[\"run\"][\"reason\"]" | grep -qx "RUN_FAIL exited with status 1"
	# The first strategy, in the declared order, that did not pass decides.
	mkspec e3.json "$args; $keep; d[\"verification\"][\"strategies\"].append({\"type\": \"custom_script\"})"
	expect_exit 1 "$KJUDGE" spec verify e3.json --root "$spec_root" --json >r.json
	jget r.json "d[\"status\"]" | grep -qx VERIFY_FAIL
	mkspec e4.json "$args; $keep; d[\"verification\"][\"strategies\"].insert(0, {\"type\": \"custom_script\"})"
	expect_exit 1 "$KJUDGE" spec verify e4.json --root "$spec_root" --json >r.json
	jget r.json "d[\"status\"]" | grep -qx ERROR
'

test_done
