#!/usr/bin/env bash
# t0260-fault.sh - fault injection over verify and benchmark: the
# fault-injection build (make FAULT=1, $KJ_BUILD/fault/kjudge, which `make
# check` makes) fails the judge's allocations in turn, and after each
# injected failure no case may count as passed and the run must end as a
# recorded failure or a judge error, leaving nothing behind
# (tests/fault/check_fault.py, one "ok"/"FAIL" line per scenario and mode
# and per failing run).  Needs $KJ_PYTHON with torch; CPU unless KJ_DEVICE
# says otherwise.  KJ_FAULT_SEED replays the seeded draw of another run;
# KJ_FAULT_PROFILE=full runs the whole selection (hours, not minutes).
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
fault=${KJ_FAULT_KJUDGE:-$KJ_BUILD/fault/kjudge}
if [ ! -x "$fault" ]; then
	# make check builds it: a missing build is a layer that did not run.
	echo "FAIL fault: no fault-injection build at '$fault' (make FAULT=1)"
	test_done
	exit 0
fi
"$KJ_PYTHON" "$tests/fault/check_fault.py" --kjudge "$fault" \
	--device "${KJ_DEVICE:-cpu}" 2>&1 | tee "$kj_root/fault.log" | grep -v '^# done: '
# The runner prints its own closing line; without it, it died half-way.
grep -q '^# done: fault, ' "$kj_root/fault.log" ||
	echo "FAIL fault: the runner died before its closing line"
test_done
