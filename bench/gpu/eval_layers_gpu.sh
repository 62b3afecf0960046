#!/usr/bin/env bash
# eval_layers_gpu.sh - kjudge eval of tests/eval's study on the GPU: the
# verdicts and the anti-cheat layers there (the profiler's among them, which
# applies only on a GPU), the store read back, and the report's page.
# Writes $OUT/layers.db, $OUT/layers.log and $OUT/layers.html.  Run by the
# device tool from the repository root, with build/kjudge,
# build/kjudge_worker.py and build/kjudge_timer.so carried.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/layers.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate-layers PYTHONUNBUFFERED=1
t0=$(date +%s.%N)
build/kjudge eval tests/eval/suite tests/eval/cands/generations.jsonl --db "$OUT/layers.db" \
	--device cuda -j 4 --time_budget 2
echo "[eval rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s]"
python3 - "$OUT/layers.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT task, model, attempt, status, clean, error_type, static_ok, disabled_ok, "
                    "profile_ok, profile_msg, disabled_msg, round(speedup, 3), round(judge_s, 1) "
                    "FROM attempts ORDER BY task, model"):
    print(" | ".join(str(v) for v in r))
PY
build/kjudge report "$OUT/layers.db" --html "$OUT/layers.html" | head -30
