#!/usr/bin/env bash
# t0220-bench-hostile.sh - kjudge benchmark against the timing cheats of
# tests/candidates/ (those with a bench.json: rewritten samples, patched
# clocks, busy loops while the other side is timed, lazy and replayed
# outputs, a patched writer) and an honest candidate that reuses its output
# buffer, by tests/helpers/check_bench.py, one "ok"/"FAIL" line each.  CPU
# unless KJ_DEVICE says otherwise; then six of them again with queued
# rounds (--timed_rounds queued).
#
# With the golden cache off (KJ_CACHE_DIR=off): that is how this corpus
# runs once so, at no cost, as t0205 runs verify's (benchmark's goldens of
# the timed sets and of the never-seen ones must live through the
# reference's own timed rounds, which is what broke when the cache was
# off).  The cache's own path is every other benchmark's: t0160, the
# examples (t0170) and eval's files (t0600-t0640, content_memo's
# ReplayDetected among them); the two share every line of the golden path
# but the directory the goldens are kept in.
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=off
"$KJ_PYTHON" "$tests/helpers/check_bench.py" --kjudge "$(printf '%q' "$KJUDGE")" \
	--device "${KJ_DEVICE:-cpu}" 2>&1 | tee "$kj_root/bench.log" | grep -v '^# done: '
grep -q '^# done: [0-9]* candidates' "$kj_root/bench.log" ||
	echo "FAIL bench: the runner died before its closing line"
# Queued rounds (a GPU's default) on the CPU: the candidates whose outputs
# the round's matching after the wait must get right (a buffer written
# again by the next call, a first output replayed, a lazy output) and two
# sample forgers, each as in synced rounds.
KJ_TIMED_ROUNDS=queued "$KJ_PYTHON" "$tests/helpers/check_bench.py" \
	--kjudge "$(printf '%q' "$KJUDGE")" --device "${KJ_DEVICE:-cpu}" honest_reused_buffer \
	cache_first_output lazy_output honest_inplace_own sample_forger_12 time_divider 2>&1 |
	sed 's/^\(ok\|FAIL\)\( *\)bench:/\1\2bench (queued):/' | tee "$kj_root/bench_q.log" |
	grep -v '^# done: '
grep -q '^# done: [0-9]* candidates' "$kj_root/bench_q.log" ||
	echo "FAIL bench (queued): the runner died before its closing line"
test_done
