#!/usr/bin/env bash
# t0200-verify-hostile.sh - kjudge verify against the hostile candidates of
# tests/candidates/ (cheats, crashes, hangs, forgers, leaks), one "ok"/"FAIL"
# line per candidate, by tests/helpers/check_verify.py.  Needs $KJ_PYTHON
# (the runner is plain Python; the judge's own worker needs torch) and runs on
# the CPU unless KJ_DEVICE says otherwise.
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
if ! "$KJUDGE" verify --help >/dev/null 2>&1; then
	echo "FAIL hostile: '$KJUDGE verify --help' fails: no verify command to test"
	exit 0
fi
# Two lanes (KJ_HOSTILE_JOBS): the candidates' verdicts do not depend on
# having the machine alone (their time limits leave room), and CI's time does.
kj_host_locked -s "$KJ_PYTHON" "$tests/helpers/check_verify.py" --kjudge "$(printf '%q' "$KJUDGE")" \
	--jobs "${KJ_HOSTILE_JOBS:-2}" --device "${KJ_DEVICE:-cpu}" 2>&1 | tee "$kj_root/hostile.log" | grep -v '^# done: '
# The runner prints its own closing line; without it, it died half-way.
grep -q '^# done: [0-9]* candidates' "$kj_root/hostile.log" ||
	echo "FAIL hostile: the runner died before its closing line"
test_done
