#!/usr/bin/env bash
# t0510-skill.sh - `kjudge skill DIR`: the scripts it writes into a
# triton-op-verifier skill directory run kjudge with their arguments, with
# the results and exit codes of direct runs; originals are kept once as .orig.
# The scripts run under the .venv Python with KJ_PYTHON unset, as an agent's
# python3 would: they must hand their own interpreter to kjudge's workers.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=$kj_root/cache
corpus=$KJ_TESTS/validate
examples=$KJ_TESTS/../examples
py3=$KJ_PYTHON

# skill_dir DIR: a skill directory as triton-op-verifier ships it, with
# stand-in original scripts.
skill_dir() {
	mkdir -p "$1/scripts"
	echo "# the skill's prompt" > "$1/SKILL.md"
	for s in verify benchmark validate_triton_impl; do
		printf 'print("original %s")\n' "$s" > "$1/scripts/$s.py"
	done
}

# task DIR: the softmax example with its CPU and wrong candidates.
task() {
	mkdir -p "$1"
	cp "$examples"/softmax/softmax_torch.py "$examples"/softmax/softmax_cpu_impl.py \
		"$examples"/softmax/softmax_wrong_impl.py "$1/"
}

# core FILE: the fields of a verify_result.json that a second run of the
# same candidate must reproduce.
# (not the seeds themselves: every run draws fresh ones)
core() {
	jget "$1" "(d[\"op_name\"], d[\"total_cases\"], d[\"passed_cases\"], d[\"failed_cases\"], [(f[\"case_idx\"], f[\"error_type\"], f[\"seed\"] > 0) for f in d[\"failures\"]], d[\"kjudge\"][\"seeds\"])"
}

test_expect 'skill writes the three scripts and keeps the originals as .orig' '
	skill_dir s
	$KJUDGE skill s > out.txt
	test "$(wc -l < out.txt)" -eq 3
	grep -q "^s/scripts/verify.py: runs kjudge verify --strict (the original is kept as s/scripts/verify.py.orig)$" out.txt
	for x in verify benchmark validate_triton_impl; do
		test "$(cat s/scripts/$x.py.orig)" = "print(\"original $x\")"
		grep -q "^# kjudge-skill-script:" s/scripts/$x.py
		test -x s/scripts/$x.py
	done
	grep -q "\"verify\", \"--strict\"\\]" s/scripts/verify.py
	grep -q "\"validate\"\\]" s/scripts/validate_triton_impl.py
	test "$(cat s/SKILL.md)" = "# the skill'"'"'s prompt"
	# scripts/ is made when it is missing.
	mkdir bare
	$KJUDGE skill bare > /dev/null
	test -f bare/scripts/benchmark.py && test ! -e bare/scripts/benchmark.py.orig
'

test_expect 'verify.py gives the verdict, the record and the exit code of kjudge verify' '
	skill_dir s
	# The PyTorch twin fails --strict (tests/cli/t0810): the seed verdicts here.
	$KJUDGE skill --no-strict s > /dev/null
	task t
	env -u KJ_PYTHON "$py3" s/scripts/verify.py --op_name softmax --verify_dir t \
		--triton_impl_name cpu_impl --device cpu --output via.json > via.txt
	$KJUDGE verify --op_name softmax --verify_dir t --triton_impl_name cpu_impl \
		--device cpu --output direct.json > direct.txt
	test "$(core via.json)" = "$(core direct.json)"
	test "$(jget via.json "d[\"passed_cases\"] == d[\"total_cases\"] > 0")" = True
	rc=0; env -u KJ_PYTHON "$py3" s/scripts/verify.py --op_name softmax --verify_dir t \
		--triton_impl_name wrong_impl --device cpu --output via.json > /dev/null || rc=$?
	test $rc -eq 1
	expect_exit 1 $KJUDGE verify --op_name softmax --verify_dir t --triton_impl_name wrong_impl \
		--device cpu --output direct.json > /dev/null
	test "$(core via.json)" = "$(core direct.json)"
	# A bad command line is refused by kjudge itself, exit 2.
	rc=0; "$py3" s/scripts/verify.py --op_name softmax --timeout nan 2> e.txt || rc=$?
	test $rc -eq 2
	grep -q "^kjudge verify: option .--timeout. wants a number" e.txt
'

test_expect 'validate_triton_impl.py FILE --json prints what kjudge validate prints' '
	skill_dir s
	$KJUDGE skill s > /dev/null
	for f in "$corpus/triton/clean_basic.py" "$corpus/triton/t3_functional.py"; do
		rc1=0; "$py3" s/scripts/validate_triton_impl.py "$f" --json > via.json || rc1=$?
		rc2=0; $KJUDGE validate "$f" --json > direct.json || rc2=$?
		test $rc1 -eq $rc2
		cmp via.json direct.json
	done
	test $rc1 -eq 1
'

test_expect 'benchmark.py: the gate and the perf JSON of kjudge benchmark' '
	skill_dir s
	$KJUDGE skill --no-strict s > /dev/null
	task t
	rc=0; env -u KJ_PYTHON "$py3" s/scripts/benchmark.py --op_name softmax --verify_dir t \
		--triton_impl_name cpu_impl --device cpu 2> e.txt || rc=$?
	test $rc -eq 2
	grep -q "verify_result_cpu_impl.json. does not exist" e.txt
	env -u KJ_PYTHON "$py3" s/scripts/verify.py --op_name softmax --verify_dir t \
		--triton_impl_name cpu_impl --device cpu --output t/verify_result_cpu_impl.json > /dev/null
	env -u KJ_PYTHON "$py3" s/scripts/benchmark.py --op_name softmax --verify_dir t \
		--triton_impl_name cpu_impl --device cpu --warmup 1 --repeats 3 --output p.json > out.txt
	grep -q "perf report written to p.json" out.txt
	test "$(jget p.json "(d[\"repeats\"], d[\"total_cases\"] > 0, d[\"passed_cases\"] == d[\"total_cases\"])")" = "(3, True, True)"
'

test_expect 'a second run rewrites kjudge scripts and never an .orig; a new original needs --force' '
	skill_dir s
	$KJUDGE skill s > /dev/null
	cp s/scripts/verify.py.orig keep.orig
	$KJUDGE skill s > out.txt
	! grep -q "kept as" out.txt
	cmp s/scripts/verify.py.orig keep.orig
	test ! -e s/scripts/verify.py.orig.orig
	# The skill was updated: its verify.py is not kjudge'"'"'s and an .orig is there.
	echo "print(\"new original\")" > s/scripts/verify.py
	cp s/scripts/benchmark.py bench.before
	expect_exit 2 $KJUDGE skill s 2> e.txt
	grep -q "s/scripts/verify.py. is not kjudge.s and .s/scripts/verify.py.orig. exists already" e.txt
	test "$(wc -l < e.txt)" -eq 1
	test "$(cat s/scripts/verify.py)" = "print(\"new original\")"
	cmp s/scripts/benchmark.py bench.before
	$KJUDGE skill --force s > /dev/null
	grep -q "^# kjudge-skill-script:" s/scripts/verify.py
	cmp s/scripts/verify.py.orig keep.orig
	# An .orig without its script: the script is written, the .orig kept.
	rm s/scripts/benchmark.py
	$KJUDGE skill s > /dev/null
	test "$(cat s/scripts/benchmark.py.orig)" = "print(\"original benchmark\")"
'

test_expect 'scripts of a kjudge that is gone run the kjudge on PATH, or say there is none (exit 2)' '
	mkdir -p "a b/we'"'"'ird\"dir\\" onpath
	cp "$KJUDGE" "a b/we'"'"'ird\"dir\\/kjudge"
	mkdir s
	"a b/we'"'"'ird\"dir\\/kjudge" skill s > /dev/null
	f="$corpus/triton/clean_basic.py"
	# The odd path is written so that Python reads it back exactly.
	"$py3" s/scripts/validate_triton_impl.py "$f" --json > via.json
	test "$(jget via.json "d[\"valid\"]")" = True
	rm "a b/we'"'"'ird\"dir\\/kjudge"
	ln -s "$KJUDGE" onpath/kjudge
	PATH=$SCRATCH/onpath:$PATH "$py3" s/scripts/validate_triton_impl.py "$f" --json > via2.json
	cmp via.json via2.json
	rc=0; PATH=/nonexistent "$py3" s/scripts/validate_triton_impl.py "$f" --json 2> e.txt || rc=$?
	test $rc -eq 2
	grep -q "validate_triton_impl.py: kjudge is neither at .*we.ird.dir.*kjudge nor on PATH" e.txt
'

test_expect 'skill writes only inside DIR: a linked scripts/, a FIFO or a linked script is refused (exit 2)' '
	mkdir -p elsewhere a b/scripts c/scripts
	echo secret > secret
	# scripts/ a link to a folder outside DIR: nothing is written there.
	ln -s "$SCRATCH/elsewhere" a/scripts
	expect_exit 2 timeout 20 $KJUDGE skill a 2> e1.txt
	grep -q "a/scripts. is a symbolic link, not a directory: kjudge skill writes only inside" e1.txt
	test -z "$(ls elsewhere)"
	# A script that is a FIFO: refused at once, never opened to block.
	mkfifo b/scripts/verify.py
	expect_exit 2 timeout 20 $KJUDGE skill b 2> e2.txt
	grep -q "b/scripts/verify.py. is a FIFO, not a regular file" e2.txt
	test -p b/scripts/verify.py && test ! -e b/scripts/benchmark.py
	# A script that is a link: neither followed nor kept as an .orig.
	ln -s "$SCRATCH/secret" c/scripts/benchmark.py
	expect_exit 2 timeout 20 $KJUDGE skill c 2> e3.txt
	grep -q "c/scripts/benchmark.py. is a symbolic link, not a regular file" e3.txt
	test -L c/scripts/benchmark.py && test ! -e c/scripts/benchmark.py.orig
	test "$(cat secret)" = secret
'

test_expect 'bad operands: not a directory, none, two' '
	expect_exit 2 $KJUDGE skill nowhere 2> e.txt
	test "$(cat e.txt)" = "kjudge skill: '"'"'nowhere'"'"': not a directory"
	touch file
	expect_exit 2 $KJUDGE skill file
	expect_exit 2 $KJUDGE skill
	expect_exit 2 $KJUDGE skill a b
'
test_done
