#!/usr/bin/env bash
# t0220-bench-hostile.sh - kjudge benchmark against the timing cheats of
# tests/candidates/ (those with a bench.json: rewritten samples, patched
# clocks, busy loops while the other side is timed, lazy and replayed
# outputs, a patched writer) and an honest candidate that reuses its output
# buffer, by tests/helpers/check_bench.py, one "ok"/"FAIL" line each.  CPU
# unless KJ_DEVICE says otherwise.
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
export KJ_STATE_DIR=$kj_root/state
"$KJ_PYTHON" "$tests/helpers/check_bench.py" --kjudge "$(printf '%q' "$KJUDGE")" \
	--device "${KJ_DEVICE:-cpu}" 2>&1 | tee "$kj_root/bench.log" | grep -v '^# done: '
grep -q '^# done: [0-9]* candidates' "$kj_root/bench.log" ||
	echo "FAIL bench: the runner died before its closing line"
test_done
