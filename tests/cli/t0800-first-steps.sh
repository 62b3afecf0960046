#!/usr/bin/env bash
# t0800-first-steps.sh - a new user's first steps, with KJ_PYTHON unset as
# in a fresh shell: `make demo` (which says which of its results are
# expected), then every command README.md shows after a `$ ` prompt, run
# verbatim.  The commands are read from README.md: each fenced block is one
# shell started at the checkout's root (a copy of examples/, so that the
# checkout is not written to), its commands run in turn.  Each command has
# its expected exit status and a line of its output below; a README command
# this file does not know, or one it knows that the README lost, fails, so
# the README and this test change together.  The README's study (eval of
# examples/study.jsonl, then report) is checked against the figures by
# hand from its generations.  Then the files verify and
# benchmark agree on, for two candidates in one directory, and the
# interpreter the workers and the skill's scripts run when the user's own
# Python has no torch.  Needs scripts/install-deps' .venv in the checkout.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=$kj_root/cache
src=$(cd "$KJ_TESTS/.." && pwd)
venv=$src/.venv/bin/python

# README commands this test cannot run here, each with the reason
# (COMMAND ## WHY).
not_run='cat gens.jsonl ## the generations file is shown in part ("...")
build/kjudge eval examples/parsuite gens.jsonl --db tr.db && build/kjudge report tr.db ## its gens.jsonl is shown in part; t0781 judges translations
build/kjudge eval suite gens.jsonl --db study.db --slurm --shards 4 --gpus-per-task 1 --time 1:00:00 --wait ## needs a Slurm cluster; t0795 runs eval --slurm on a loopback one
build/kjudge audit tests/audit/suite --device cpu ## forty verifies (ten canaries on each of four tasks); t0870 audits this suite with two canaries, and a strong task with all ten
build/kjudge serve --db rl.db --device cuda -j 8 & ## a server left running, on a GPU, with a Python session after it; t0860 runs serve through its client'

# Every other README command (COMMAND ## EXIT STATUSES ## PATTERN): the
# exit statuses it may end with, and a Python regular expression that one
# line of its output must match.
expected='build/kjudge verify --op_name softmax --verify_dir examples/softmax ## 0 ## ^softmax: 1/1 cases passed \(device (cpu|cuda), secret seeds\); written to examples/softmax/verify_result\.json$
build/kjudge benchmark --op_name softmax --verify_dir examples/softmax --output perf.json ## 0 ## ^perf report written to perf\.json$
build/kjudge compare examples/compare/golden.npy examples/compare/actual_bad.npy ## 1 ## ^FAIL: NaN positions differ at 128 of 8192 elements \(golden has 0 NaN, actual 128\), first at \[17, 0\]$
build/kjudge validate tests/validate/triton/t3_functional.py ## 1 ## ^tests/validate/triton/t3_functional\.py: degraded, type 3: computation outside the kernel$
build/kjudge eval examples examples/study.jsonl --db study.db ## 0 ## ^kjudge eval: 5 attempts: 3 passed \(1 clean\), 2 failed, 0 judge or task errors
build/kjudge report study.db --html study.html ## 0 ## study\.html
cd examples/parsuite && ../../build/kjudge spec validate --all | tail -n 1 ## 0 ## ^12 specs, 0 errors, 3 warnings$
../../build/kjudge spec pairs | tail -n 1 ## 0 ## ^24 pairs$
build/kjudge spec verify --all --root examples/parsuite --api omp,opencl ## 0 ## ^8 of 8 references pass their own oracle$
build/kjudge doctor ## 0 1 ## ^  ok    python +Python [0-9.]+ at '"$venv"' \(chosen: the \.venv of the checkout kjudge was built in\)$'

# readme_blocks README OUT: checks that README and the two lists above name
# the same commands, then writes OUT/blockN.sh, one per fenced block with
# a command to run: each runs its commands in turn from the directory $1,
# command K writing $2/K.out and its exit status $2/K.rc.
readme_blocks() {
	NOT_RUN=$not_run EXPECTED=$expected "$KJ_PYTHON" - "$1" "$2" <<-"PY"
	import os, shlex, sys
	readme, out = sys.argv[1], sys.argv[2]
	rows = lambda v: [l.split(" ## ") for l in os.environ[v].split("\n") if l]
	skip = {r[0] for r in rows("NOT_RUN")}
	want = {r[0] for r in rows("EXPECTED")}
	blocks, cur = [], None
	for line in open(readme, encoding="utf-8"):
	    line = line.rstrip("\n")
	    if line.startswith("```"):
	        if cur:
	            blocks.append(cur)
	        cur = [] if cur is None else None
	    elif cur is not None and line.startswith("$ "):
	        cur.append(line[2:])
	found = [c for b in blocks for c in b]
	bad = sorted(set(found) - skip - want)
	gone = sorted((skip | want) - set(found))
	for c in bad:
	    print("README command this test does not know: " + c)
	for c in gone:
	    print("command this test knows that the README no longer has: " + c)
	if bad or gone or len(found) != len(set(found)):
	    sys.exit(1)
	k = 0
	for i, b in enumerate(blocks):
	    run = [c for c in b if c not in skip]
	    if not run:
	        continue
	    with open(os.path.join(out, "block%d.sh" % i), "w") as s:
	        s.write('cd "$1" || exit 1\n')
	        for c in run:
	            s.write("printf '%%s\\n' %s > \"$2/%d.cmd\"\n" % (shlex.quote(c), k))
	            # Braces, not a subshell: a cd holds for the next command.
	            s.write("{ %s\n} > \"$2/%d.out\" 2>&1\necho $? > \"$2/%d.rc\"\n" % (c, k, k))
	            k += 1
	PY
}

# readme_results DIR: each command's exit status and output line against
# the list above; one paragraph per command that differs.
readme_results() {
	EXPECTED=$expected "$KJ_PYTHON" - "$1" <<-"PY"
	import glob, os, re, sys
	d = sys.argv[1]
	want = {r[0]: r[1:] for r in (l.split(" ## ") for l in os.environ["EXPECTED"].split("\n") if l)}
	bad, ran = 0, set()
	for f in sorted(glob.glob(os.path.join(d, "*.cmd"))):
	    k = f[:-4]
	    cmd = open(f).read().rstrip("\n")
	    ran.add(cmd)
	    codes, pattern = want[cmd]
	    rc = open(k + ".rc").read().strip()
	    text = open(k + ".out", errors="replace").read()
	    why = None
	    if rc not in codes.split():
	        why = "exit %s, expected %s" % (rc, codes)
	    elif not any(re.search(pattern, l) for l in text.split("\n")):
	        why = "no line matching " + pattern
	    if why:
	        bad = 1
	        print("README command: %s\n  %s" % (cmd, why))
	        print("\n".join("  | " + l for l in text.split("\n")[-15:]))
	for c in sorted(set(want) - ran):
	    bad = 1
	    print("README command did not run: " + c)
	sys.exit(bad)
	PY
}

test_expect 'the checkout has the .venv that scripts/install-deps makes' '
	test -x "$venv" || { echo "no $venv: run scripts/install-deps"; false; }
'

test_expect 'make demo works without KJ_PYTHON and says which results are expected, and why' '
	rc=0
	env -u KJ_PYTHON -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$src" \
		BUILD="$KJ_BUILD" demo > out.txt 2>&1 || rc=$?
	test $rc -eq 0 || { tail -n 30 out.txt; false; }
	# The commands it shows are the README'"'"'s, with no KJ_PYTHON before them.
	grep -q "^$KJ_BUILD/kjudge verify --op_name softmax --verify_dir $KJ_BUILD/demo$" out.txt
	! grep -q "KJ_PYTHON=" out.txt
	grep -q "^softmax: 1/1 cases passed (device [a-z:0-9]*, secret seeds)" out.txt
	grep -Eq "^speedup_vs_torch: [0-9.e-]+ \(candidate .* ms, torch .* ms per call, device [a-z:0-9]+\)$" out.txt
	# The speedup is explained: on the CPU, Triton'"'"'s interpreter.
	if grep -q "^speedup_vs_torch: .*device cpu)$" out.txt; then
		grep -q "^== demo: expected: every case passed; with no GPU the speedup is far below 1 because Triton runs the kernel in its CPU interpreter" out.txt
	else
		grep -q "^== demo: expected: every case passed; the speedup is the compiled kernel.s over torch" out.txt
	fi
	# The FAIL block has a line before it and one after it that say it is expected.
	before=$(grep -n "^== demo: expected: the FAIL block below" out.txt | cut -d: -f1)
	fail=$(grep -n "^FAIL: NaN positions differ" out.txt | cut -d: -f1)
	after=$(grep -n "^== demo: the FAIL above is the expected result" out.txt | cut -d: -f1)
	test -n "$before" && test -n "$fail" && test -n "$after"
	test "$before" -lt "$fail" && test "$fail" -lt "$after"
	tail -n 2 out.txt | grep -q "the demo passed"
'

test_expect 'every command of the README runs verbatim, without KJ_PYTHON, with its result' '
	# The checkout as the README sees it: build/ is the binary under
	# test, examples/ a copy (verify and eval write there), tests/validate
	# the corpus validate reads.
	mkdir -p co/tests res
	ln -s "$KJ_BUILD" co/build
	cp -r "$src/examples" co/examples
	ln -s "$src/tests/validate" co/tests/validate
	readme_blocks "$src/README.md" "$SCRATCH"
	for b in block*.sh; do
		env -u KJ_PYTHON bash "$b" "$SCRATCH/co" "$SCRATCH/res"
	done
	readme_results res
	# What the commands wrote is what they said.
	test "$(jget co/perf.json "(d[\"passed_cases\"] == d[\"total_cases\"] > 0, d[\"speedup_vs_torch\"] > 0)")" = "(True, True)"
	test "$(jget co/examples/softmax/verify_result.json "d[\"kjudge\"][\"candidate\"][\"file\"].endswith(\"softmax_triton_ascend_impl.py\")")" = True
	test -s co/study.html
	# The study'"'"'s store and what its eval said, for the next test.
	cp co/study.db "$kj_root/study.db"
	cp "$(grep -l "^kjudge eval: 5 attempts: " res/*.out)" "$kj_root/study.out"
'

# The README'"'"'s study (examples/study.jsonl, two models), judged by its
# own command above: its verdicts, and the report'"'"'s figures against the
# ones computed by hand from the generations.  (This was t0630, which ran
# the same eval a second time.)
test_expect 'the study of the README: its verdicts, and the report'"'"'s figures by hand' '
	test -s "$kj_root/study.db" || { echo "no study.db: the README'"'"'s eval did not run"; false; }
	cp "$kj_root/study.db" study.db
	grep -q "^kjudge eval: 4 tasks, 5 attempts (0 already in study.db)" "$kj_root/study.out"
	grep -q "^kjudge eval: 5 attempts: 3 passed (1 clean), 2 failed, 0 judge or task errors" "$kj_root/study.out"
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

# kj ARGS...: kjudge as a user runs it, with no KJ_PYTHON.
kj() {
	env -u KJ_PYTHON "$KJUDGE" "$@"
}

# two DIR: the softmax task with two candidates, its CPU one as the default
# (triton_ascend_impl) and its wrong one (wrong_impl).
two() {
	mkdir -p "$1"
	cp "$src"/examples/softmax/softmax_torch.py "$src"/examples/softmax/softmax_wrong_impl.py "$1/"
	cp "$src"/examples/softmax/softmax_cpu_impl.py "$1/softmax_triton_ascend_impl.py"
}

test_expect 'verify and benchmark agree on the record of each --triton_impl_name' '
	two d
	kj verify --op_name softmax --verify_dir d --device cpu > out.txt
	grep -q "written to d/verify_result.json$" out.txt
	cp d/verify_result.json default.json
	# The wrong candidate'"'"'s record is its own: the default'"'"'s is untouched.
	expect_exit 1 kj verify --op_name softmax --verify_dir d --device cpu \
		--triton_impl_name wrong_impl > out.txt
	grep -q "written to d/verify_result_wrong_impl.json$" out.txt
	cmp d/verify_result.json default.json
	# benchmark of the wrong candidate finds that record, and says whose.
	expect_exit 2 kj benchmark --op_name softmax --verify_dir d --device cpu \
		--triton_impl_name wrong_impl 2> e.txt
	head -n 1 e.txt | grep -q "^kjudge benchmark: L1 verify gate refused candidate .*/d/softmax_wrong_impl.py. (--triton_impl_name wrong_impl): d/verify_result_wrong_impl.json$"
	grep -q "^  passed/total: 0/1$" e.txt
	# The default candidate is not refused for the other'"'"'s failure.
	kj benchmark --op_name softmax --verify_dir d --device cpu --warmup 1 --repeats 3 \
		--output p.json > /dev/null
	test "$(jget p.json "d[\"passed_cases\"] == d[\"total_cases\"] > 0")" = True
	# triton_<x> is verify_result_<x>.json, as the seed names it.
	cp d/softmax_triton_ascend_impl.py d/softmax_triton_baseline.py
	kj verify --op_name softmax --verify_dir d --device cpu \
		--triton_impl_name triton_baseline > out.txt
	grep -q "written to d/verify_result_baseline.json$" out.txt
	cmp d/verify_result.json default.json
	# A candidate with no record: the gate names it, and how to make one.
	cp d/softmax_triton_ascend_impl.py d/softmax_mine.py
	expect_exit 2 kj benchmark --op_name softmax --verify_dir d --device cpu \
		--triton_impl_name mine 2> e.txt
	grep -q "^kjudge benchmark: L1 verify gate, candidate .*/d/softmax_mine.py. (--triton_impl_name mine): .d/verify_result_mine.json. does not exist: run kjudge verify first with --triton_impl_name mine$" e.txt
	# A record of another candidate in the default'"'"'s place (an older
	# kjudge, or --output) is refused saying whose it is.
	cp d/verify_result_wrong_impl.json d/verify_result.json
	expect_exit 2 kj benchmark --op_name softmax --verify_dir d --device cpu 2> e.txt
	grep -q "^  this record is of the candidate .*/d/softmax_wrong_impl.py., not of .*/d/softmax_triton_ascend_impl.py.: verify this one$" e.txt
'

test_expect 'a Python without torch: the fix names KJ_PYTHON and the .venv; the skill works for it' '
	two d
	# An agent'"'"'s own interpreter, with no torch and no numpy.
	"$venv" -m venv --without-pip agent
	! agent/bin/python -c "import numpy" 2> /dev/null
	expect_exit 2 env KJ_PYTHON=$SCRATCH/agent/bin/python "$KJUDGE" verify --op_name softmax \
		--verify_dir d --device cpu 2> e.txt
	grep -q "No module named" e.txt
	grep -qF "fix: export KJ_PYTHON=$venv (the checkout'"'"'s .venv, which scripts/install-deps fills with torch, Triton and numpy)" e.txt
	env KJ_PYTHON=$SCRATCH/agent/bin/python "$KJUDGE" doctor --group runtimes > doc.txt || true
	grep -q "^  FAIL  torch" doc.txt
	grep -qF "fix: export KJ_PYTHON=$venv" doc.txt
	# The skill'"'"'s scripts run under it and still judge: kjudge runs its own
	# (--no-strict: the candidate here is the example'"'"'s plain PyTorch one).
	mkdir -p s/scripts
	"$KJUDGE" skill --no-strict s > /dev/null
	env -u KJ_PYTHON agent/bin/python s/scripts/verify.py --op_name softmax --verify_dir d \
		--device cpu > out.txt
	grep -q "^softmax: 1/1 cases passed" out.txt
	test "$(jget d/verify_result.json "d[\"passed_cases\"] == d[\"total_cases\"] > 0")" = True
'

test_done
