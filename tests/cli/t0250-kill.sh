#!/usr/bin/env bash
# t0250-kill.sh - kjudge verify killed by SIGKILL, SIGTERM and SIGINT during
# the workers' start-up, mid-case (a candidate that forks children, a
# grandchild and a daemon, and spins) and while the task's reference runs:
# nothing of the run outlives it, SIGTERM/SIGINT exit 143/130 without a
# verdict or scratch directory, and the next verify of a correct candidate
# passes and leaves nothing behind (tests/helpers/check_kill.py, one
# "ok"/"FAIL" line per check).  Needs $KJ_PYTHON with torch; CPU unless
# KJ_DEVICE says otherwise.
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
if ! "$KJUDGE" verify --help >/dev/null 2>&1; then
	echo "FAIL kill: '$KJUDGE verify --help' fails: no verify command to test"
	exit 0
fi
"$KJ_PYTHON" "$tests/helpers/check_kill.py" --kjudge "$(printf '%q' "$KJUDGE")" \
	--device "${KJ_DEVICE:-cpu}" || true
test_done
