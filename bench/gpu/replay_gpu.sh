#!/usr/bin/env bash
# replay_gpu.sh - one short device call, from the repository root (carry
# build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so,
# build/kjudge_template.so): the unseen-input probe with its decoy rounds
# on the GPU.  Each candidate's benchmark on cuda, its cases' samples'
# fastest unseen call and the judge's probe-less-decoy excess, both sides
# (replay_cases.tsv); then check_bench.py's verdicts for the same ones.
# Knobs: DEADLINE (seconds for the whole call, 170), NAMES.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DEADLINE=${DEADLINE:-170}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
K=$PWD/build/kjudge
NAMES=${NAMES:-honest_matmul memo_forger content_memo honest_slow_start}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
printf 'candidate\tcase\tstatus\terror\tspeedup\tunseen_impl_ms\tunseen_ref_ms\texcess_impl_ms\texcess_ref_ms\tmedian_ms\n' > "$OUT/replay_cases.tsv"
for c in $NAMES; do
	[ "$(left)" -gt 40 ] || break
	d=/tmp/replay/$c
	rm -rf "$d"; mkdir -p "$d"
	task=$(python3 -c "import json;print(json.load(open('tests/candidates/$c/bench.json')).get('task',''))")
	if [ -n "$task" ]; then cp "tests/candidates/tasks/$task" "$d/addmul_torch.py"
	else cp tests/candidates/addmul_torch.py "$d/"; fi
	cp "tests/candidates/$c/candidate.py" "$d/addmul_triton_ascend_impl.py"
	cp tests/candidates/sample_forger/kj_forge_samples.py "$d/"
	KJ_CACHE_DIR=off timeout $(( $(left) - 20 )) "$K" benchmark --op_name addmul --verify_dir "$d" \
		--output "$d/perf.json" --device cuda --verify_not_required --repeats 20 \
		--time_budget 2 --no-sol >/dev/null 2>"$d/err"
	python3 - "$c" "$d/perf.json" >> "$OUT/replay_cases.tsv" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[2]))
except (OSError, ValueError):
    print(sys.argv[1] + "\tno perf JSON"); sys.exit()
for r in p.get("per_shape_results", []):
    u = r.get("unseen_inputs_ms") or {}
    j = u.get("judge_excess") or {}
    print("\t".join(str(x) for x in (sys.argv[1], r.get("case_idx"), r.get("status"),
          r.get("error_type"), r.get("speedup_vs_torch"), u.get("implementation"),
          u.get("framework"), j.get("implementation"), j.get("framework"),
          (r.get("implementation") or {}).get("median_ms"))))
    if r.get("error_msg"):
        print("#\t" + r["error_msg"][:300])
PY
done
cat "$OUT/replay_cases.tsv"
echo "== check_bench ($(left) s left)"
[ "$(left)" -gt 30 ] && timeout $(( $(left) - 10 )) python3 tests/helpers/check_bench.py --kjudge "$K" \
	--device cuda $NAMES 2>&1 | tee "$OUT/check_bench.txt"
echo "== done, $(left) s left"
