#!/usr/bin/env bash
# t0700-parsuite: the bundled suite (examples/parsuite) is known good before
# kjudge judges it: its specs and manifest follow the naming and file rules,
# every variant builds, the OpenMP and OpenCL variants (OpenCL on PoCL) pass
# every strategy of their oracles checked by hand, the CUDA variants compile
# (no GPU here), and of the two translations of tests/spec/translations the
# correct one passes its strong oracle and the wrong one fails it, and a
# cheat that copies the verification-only reference finds no file to copy.  The
# checks are examples/parsuite/check.sh's; this file asserts its counts.
. "$(dirname "$0")/lib.sh"
suite=$KJ_TESTS/../examples/parsuite
cand=$KJ_TESTS/spec/translations/parsuite-histogram-opencl

test_expect 'the suite: 12 specs, 12 builds, 8 runs whose every strategy passes' '
	"$suite/check.sh" > out
	grep -c "names, file lists and manifest line" out | grep -qx 12
	grep -c ": build" out | grep -qx 12
	test "$(grep -c "compiled only" out)" = 4
	test "$(grep -c "exit status 0" out)" = 8
	test "$(grep -c "sha256 of counts.txt" out)" = 2
	test "$(grep -c "is within relative" out)" = 2
	test "$(grep -c "is within absolute" out)" = 2
	! grep -q "^FAIL" out
	tail -n 1 out | grep -qx "57 passed, 0 failed"
'

test_expect 'a correct OpenCL translation of histogram passes the strong oracle' '
	"$suite/check.sh" --spec "$suite/specs/parsuite-histogram-opencl.json" --candidate "$cand/correct" > out
	grep -q "ok   parsuite-histogram-opencl: sha256 of counts.txt" out
	tail -n 1 out | grep -qx "7 passed, 0 failed"
'

test_expect 'a wrong one (one value short) fails the hash, the diff, the pattern, the exit status and the exclusion' '
	expect_exit 1 "$suite/check.sh" --spec "$suite/specs/parsuite-histogram-opencl.json" --candidate "$cand/wrong" > out
	grep -q "FAIL parsuite-histogram-opencl: sha256 of counts.txt is " out
	grep -q "FAIL parsuite-histogram-opencl: counts.txt differs from expected/counts.txt" out
	grep -q "FAIL parsuite-histogram-opencl: exit status 1, not 0" out
	grep -q "FAIL parsuite-histogram-opencl: stdout has the excluded /FAIL/" out
	tail -n 1 out | grep -qx "2 passed, 5 failed"
'

test_expect 'a cheat that copies the verification-only reference finds none where it runs' '
	expect_exit 1 "$suite/check.sh" --spec "$suite/specs/parsuite-histogram-omp.json" \
		--candidate "$KJ_TESTS/spec/translations/parsuite-histogram-omp/cheat" > out
	grep -q "FAIL parsuite-histogram-omp: sha256 of counts.txt is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" out
	grep -q "ok   parsuite-histogram-omp: stdout has /PASS histogram/" out
'

test_done
