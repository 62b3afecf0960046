#!/usr/bin/env bash
# warm_aa.sh - one device call, from the repository root (carry
# build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so,
# build/kjudge_template.so, build/kjudge_audit.py and .anchors/):
#   1. bench/serve/warm_gpu.sh (issue 27: a warm evaluation's latency, and
#      its start's steps after the request came), unless SKIP_WARM;
#   2. KernelBench's level-1 references each against itself, one at a time
#      (`eval -j 1`, no audit: issue 24's serial A/A), resumed from
#      KJ_ALL_FROM when an earlier call's store is carried, cut at the
#      deadline; each attempt's speedup and both sides' figures on the
#      judge's clock and in their samples go to aa_serial.tsv.
# Knobs: DEADLINE (seconds for the whole call, 560), WARM_S (seconds per
# warm pass, 75), AA_IDS (problem ids, default all).
set -u
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DEADLINE=${DEADLINE:-560}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if [ -z "${SKIP_WARM:-}" ]; then
	DEADLINE_S=${WARM_S:-75} OUT="$OUT" timeout $((2 * ${WARM_S:-75} + 60)) bash bench/serve/warm_gpu.sh >/dev/null 2>&1
	echo "== warm_gpu rc=$? ($(left) s left)"
	grep -v '^ *[{}"]' "$OUT/warm_gpu.log" | tail -40
fi
echo "== level 1 against itself, -j 1 ($(left) s left)"
KJ_AUDIT=off JOBS=1 SKIP_KJ_SUB=1 SKIP_KB=1 DEADLINE=$(($(left) - 25)) OUT="$OUT" \
	bash bench/gpu/eval_vs_kb.sh > "$OUT/aa_eval.out" 2>&1
echo "   eval_vs_kb rc=$?"
grep -E "kjudge eval, all|cut|CUT" "$OUT/aa_eval.out" | head -5
cp /tmp/evk/kj_all.sqlite "$OUT/aa_serial.sqlite" 2>/dev/null
python3 - /tmp/evk/kj_all.sqlite "$OUT/aa_serial.tsv" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT t.name, a.status, a.error_type, a.speedup, m.case_idx, m.record "
                  "FROM attempts a JOIN tasks t USING (task_key) "
                  "LEFT JOIN timings m USING (attempt_key) ORDER BY t.name, m.case_idx").fetchall()
keys = ("ref_median_ms", "impl_median_ms", "ref_judge_ms", "impl_judge_ms", "ref_overhead_ms",
        "judge_speedup", "judge_speedup_hi", "speedup_bounded")
n = within = 0
with open(sys.argv[2], "w") as f:
    f.write("\t".join(("task", "status", "error_type", "speedup", "case") + keys) + "\n")
    for r in rows:
        tm = (json.loads(r[5]) if r[5] else {}).get("timing") or {}
        f.write("\t".join(str(x) for x in list(r[:5]) + [tm.get(k) for k in keys]) + "\n")
        if r[3]:
            n += 1
            within += abs(r[3] - 1) <= 0.02
print("%d timed attempts, %d within 2 %% (%s)" % (n, within, sys.argv[2]))
PY
echo "== done, $(left) s left"
