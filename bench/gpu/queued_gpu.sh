#!/usr/bin/env bash
# queued_gpu.sh - queued rounds on the GPU, one device call from the
# repository root (carry build/kjudge, build/kjudge_worker.py,
# build/kjudge_timer.so, build/kjudge_template.so, build/kjudge_audit.py
# and .anchors/):
#   1. bench/gpu/harness_cost.py: the host's cost of each step of a queued
#      call, and of a whole one, beside the device's work per call;
#   2. the 20 us A/A (bench/gpu/aa20us) with --timed_rounds queued, twice:
#      the speedup and the worker's queue_s, wait_s and match_s per call;
#   3. KernelBench's level-1 references each against itself, one at a time
#      (bench/gpu/warm_aa.sh without its serve part: eval -j 1, the rounds
#      auto), cut at the deadline.
# Knobs: DEADLINE (seconds for the whole call, 330).
set -u
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DEADLINE=${DEADLINE:-330}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
K=$PWD/build/kjudge
export KJ_STATE_DIR=/tmp/kjq-state
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
echo "== harness_cost"
timeout 60 python3 bench/gpu/harness_cost.py build/kjudge_timer.so | tee "$OUT/harness_cost.json"
for i in 1 2; do
	[ "$(left)" -gt 60 ] || break
	timeout 40 "$K" benchmark --op_name mm --verify_dir bench/gpu/aa20us --verify_not_required \
		--time_budget 2 --timed_rounds queued --output "$OUT/aa20q_$i.json" > /dev/null 2>&1
	echo "== aa20 queued $i rc=$?"
	python3 - "$OUT/aa20q_$i.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("   no perf JSON:", e); sys.exit()
t = d["kjudge"]["timings"]
for s in d["per_shape_results"]:
    i, f = s.get("implementation") or {}, s.get("framework") or {}
    print("   speedup", s.get("speedup_vs_torch"), s.get("error_type"), "med", f.get("median_ms"),
          i.get("median_ms"), "judge", f.get("judge_ms"), i.get("judge_ms"), "over",
          i.get("overhead_ms"), "samples", f.get("samples"), i.get("samples"))
    for side, x in (("reference", f), ("candidate", i)):
        ph, n = t.get(side) or {}, x.get("samples") or 1
        print("   %s per timed call: queue %.1f us, wait %.1f us, match %.1f us, loop %.1f us" % (
            side, *(1e6 * ph.get(k, 0) / n for k in ("queue_s", "wait_s", "match_s",
                                                     "timed_loop_s"))))
PY
done
echo "== level 1 against itself, serial ($(left) s left)"
SKIP_WARM=1 DEADLINE=$(($(left) - 5)) OUT="$OUT" bash bench/gpu/warm_aa.sh > "$OUT/warm_aa.out" 2>&1
tail -4 "$OUT/warm_aa.out"
echo "== done, $(left) s left"
