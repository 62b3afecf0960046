#!/usr/bin/env bash
# level1_sol.sh - one device call, from the repository root (carry
# build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so,
# build/kjudge_audit.py and .anchors/):
#   1. bench/serve/warm_gpu.sh (issue 27: a warm evaluation's latency and
#      where its time goes), unless SKIP_WARM;
#   2. the worker template on the GPU (its library built on the device when
#      it did not travel): verify and benchmark of two level-1 problems
#      with and without it; the eval below runs without it unless all
#      passed from it;
#   3. kjudge eval of every KernelBench level-1 problem against itself
#      (eval_vs_kb.sh's step 3, no audit), resumed from KJ_ALL_FROM when an
#      earlier call's store is carried: each reference's speedup against
#      itself (the A/A of issue 24) and its speed-of-light fraction
#      (issue 28), dumped from the store to level1_sol.tsv.
# Knobs: DEADLINE (seconds for the whole call, 570), WARM_S (seconds per
# warm pass, 100).
set -u
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DEADLINE=${DEADLINE:-570}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if [ -z "${SKIP_WARM:-}" ]; then
	DEADLINE_S=${WARM_S:-100} OUT="$OUT" timeout $((2 * ${WARM_S:-100} + 60)) bash bench/serve/warm_gpu.sh >/dev/null 2>&1
	echo "== warm_gpu rc=$? ($(left) s left)"
	tail -40 "$OUT/warm_gpu.log"
fi
# The worker template (docs/ARCHITECTURE.md, "Worker templates") on the
# GPU: its native half built here when it did not travel, then a verify and
# a benchmark of two level-1 problems with and without it.  The eval below
# runs with it only when all four passed.
if [ ! -f build/kjudge_template.so ] && command -v cc >/dev/null; then
	cc -std=c11 -O2 -Iinclude -Ilib -D_GNU_SOURCE -fPIC -shared \
		-Wl,--version-script=worker/kjudge_template.map -o build/kjudge_template.so \
		worker/kjudge_template.c lib/sandbox/child.c lib/sandbox/view.c && echo "   built build/kjudge_template.so"
fi
tmpl_ok=0
if [ -f build/kjudge_template.so ]; then
	tmpl_ok=1
	for p in 1_Square_matrix_multiplication_ 19_ReLU; do
		d=/tmp/tsmoke/$p
		mkdir -p "$d"
		cp ".anchors/kb/KernelBench/level1/$p.py" "$d/kb_torch.py"
		{ cat "$d/kb_torch.py"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$d/kb_triton_ascend_impl.py"
		for m in on off; do
			t0=$(date +%s.%N)
			KJ_TEMPLATE=$m KJ_STATE_DIR=/tmp/kjstate ./build/kjudge verify --op_name kb --verify_dir "$d" --input_sets 2 > "$OUT/tsmoke_${p}_$m.out" 2>&1
			rv=$?
			st=$(python3 -c "import json; d=json.load(open('$d/verify_result.json'))['kjudge']['limits']; print(d['reference_in_force'].get('started'), d['candidate_in_force'].get('started'))" 2>&1)
			KJ_TEMPLATE=$m KJ_STATE_DIR=/tmp/kjstate ./build/kjudge benchmark --op_name kb --verify_dir "$d" --time_budget 2 >> "$OUT/tsmoke_${p}_$m.out" 2>&1
			rb=$?
			echo "   template $m $p: verify rc=$rv benchmark rc=$rb started=$st $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
			[ "$m" = on ] && { [ $rv = 0 ] && [ $rb = 0 ] && [ "$st" = "template template" ] || tmpl_ok=0; }
		done
	done
fi
echo "   template on the GPU: $([ $tmpl_ok = 1 ] && echo works || echo NOT USED)"
[ $tmpl_ok = 1 ] || export KJ_TEMPLATE=off
echo "== level 1 against itself ($(left) s left)"
KJ_AUDIT=off SKIP_KJ_SUB=1 SKIP_KB=1 DEADLINE=$(($(left) - 25)) OUT="$OUT" \
	bash bench/gpu/eval_vs_kb.sh > "$OUT/level1_eval.out" 2>&1
echo "   eval_vs_kb rc=$?"
grep -E "kjudge eval, all|pass|cut|CUT" "$OUT/level1_eval.out" | head -12
python3 - /tmp/evk/kj_all.sqlite "$OUT/level1_sol.tsv" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT t.name, a.status, a.error_type, a.speedup, a.judge_s, m.case_idx, m.impl_ms, m.ref_ms, "
                  "m.speedup, m.sol_ms, m.record FROM attempts a JOIN tasks t USING (task_key) "
                  "LEFT JOIN timings m USING (attempt_key) ORDER BY t.name, m.case_idx").fetchall()
with open(sys.argv[2], "w") as f:
    f.write("task\tstatus\terror_type\tspeedup\tjudge_s\tcase\timpl_ms\tref_ms\tcase_speedup\tsol_ms\tref_sol_fraction\timpl_sol_fraction\tsol_why\n")
    for r in rows:
        rec = json.loads(r[10]) if r[10] else {}
        fw, im = rec.get("framework") or {}, rec.get("implementation") or {}
        sol = rec.get("sol") if isinstance(rec.get("sol"), dict) else {}
        f.write("\t".join(str(x) for x in list(r[:10]) + [fw.get("sol_fraction"), im.get("sol_fraction"), (sol or {}).get("why")]) + "\n")
print(len(rows), "rows in", sys.argv[2])
PY
echo "== done, $(left) s left"
