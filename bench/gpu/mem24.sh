#!/usr/bin/env bash
# mem24.sh - after the sixth H100 call (docs/PERFORMANCE.md, "a sixth
# call"): the A/A of the 20 us matmul again (the re-check of a deep cut),
# then kjudge eval, -j 8 on one GPU, of the level-1 tasks that ran out of
# device memory there (inputs of 2 to 8 GiB; the fingerprint of large
# inputs, the load's out-of-memory rule).  In one device call, from the
# repository root; carry build/kjudge, build/kjudge_worker.py,
# build/kjudge_timer.so and .anchors/.  Knobs: DEADLINE (seconds, 300),
# AA_RUNS (6), IDS (the tasks' ids).
set -u
OUT=${OUT:-/tmp/out}
DEADLINE=${DEADLINE:-300}
T0=$(date +%s)
IDS=${IDS:-25 30 34 35 36 37 38 39 40 45 76 87}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
SKIP_DIAG=1 SKIP_KBEXP=1 SKIP_KBADV=1 SKIP_KBEX=1 SKIP_SIDE=1 SKIP_COST=1 SKIP_CHEATS=1 \
	SKIP_EVAL100=1 AA20_RUNS=${AA_RUNS:-6} CAP_AA=60 DEADLINE=70 OUT="$OUT" bash bench/gpu/timing24.sh
echo "== the large tasks, kjudge eval -j 8 ($(left) s left)"
SKIP_KB=1 SKIP_KJ_ALL=1 KB_SUBSET="$IDS" OUT="$OUT" DEADLINE=$(($(left) - 15)) KJ_SUB_CAP=$(($(left) - 30)) \
	bash bench/gpu/eval_vs_kb.sh > "$OUT/mem24_eval.out" 2>&1
echo "   eval_vs_kb rc=$?"
grep -E "judged again|attempts again|attempts:" "$OUT/mem24_eval.out" | head -30
f=/tmp/evk/kj_sub.sqlite
[ -f "$f" ] && python3 - "$f" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT t.name, a.state, a.status, a.error_type, a.speedup, a.judge_s, "
                    "substr(replace(a.message, char(10), ' | '), 1, 240) FROM attempts a "
                    "JOIN tasks t USING (task_key) ORDER BY t.name"):
    print("  ", r)
PY
echo "== done, $(($(date +%s) - T0)) s"
