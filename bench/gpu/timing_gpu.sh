#!/usr/bin/env bash
# timing_gpu.sh - the timing figures of docs/PERFORMANCE.md on the GPU
# machine, in one call (the device tool, from the repository root, with
# build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so and .anchors/
# carried).  Each part appends to $OUT as it goes, so that a call cut short
# still brings back what ran.
#   1. A/A of a 20 us kernel (bench/gpu/aa20us: a 512 x 512 float32
#      matmul, the reference as the candidate): AA20_RUNS serial benchmark
#      runs (default 10), the speedup of each;
#   2. the side-stream candidate and its honest twin (bench/gpu/sidestream);
#   3. the timing cheats of tests/candidates/ (tests/helpers/check_bench.py
#      on the GPU);
#   4. A/A of KernelBench level-1 references (KB_AA, default a spread of
#      ten problems), serial, each against itself.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/timing.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate PYTHONUNBUFFERED=1
K=$PWD/build/kjudge
BUDGET=${BUDGET:-3}
summ() { # summ PERF: one line per case and the overall speedup
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["per_shape_results"]:
    f, i = s.get("framework") or {}, s.get("implementation") or {}
    print("   case", s["case_idx"], s["status"], s.get("error_type"),
          "ref", f.get("median_ms"), f.get("ci95_median_ms"), f.get("samples"),
          "cand", i.get("median_ms"), i.get("ci95_median_ms"), i.get("samples"),
          "speedup", s.get("speedup_vs_torch"), (s.get("error_msg") or "")[:160])
print("   speedup_vs_torch", d.get("speedup_vs_torch"))
PY
}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
date

if [ -z "${SKIP_AA20:-}" ]; then
echo "== A/A, 20 us matmul, ${AA20_RUNS:-10} runs"
for i in $(seq 1 "${AA20_RUNS:-10}"); do
	t0=$(date +%s.%N)
	$K benchmark --op_name mm --verify_dir bench/gpu/aa20us --verify_not_required \
		--time_budget "$BUDGET" --output "$OUT/aa20_$i.json" > /dev/null
	echo "  run $i rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
	summ "$OUT/aa20_$i.json"
done
fi

if [ -z "${SKIP_SIDESTREAM:-}" ]; then
echo "== side stream and its honest twin"
for impl in triton_ascend_impl sidestream_impl; do
	$K benchmark --op_name scale --verify_dir bench/gpu/sidestream --triton_impl_name $impl \
		--verify_not_required --time_budget "$BUDGET" --output "$OUT/side_$impl.json" > /dev/null
	echo "  $impl rc=$?"
	summ "$OUT/side_$impl.json"
done
fi

if [ -z "${SKIP_CHEATS:-}" ]; then
echo "== timing cheats (check_bench.py on cuda)"
python3 tests/helpers/check_bench.py --kjudge "$K" --device cuda 2>&1
fi

if [ -z "${SKIP_KB:-}" ]; then
echo "== A/A, KernelBench level 1"
src=$PWD/.anchors/kb/KernelBench/level1
for p in ${KB_AA:-1_Square_matrix_multiplication_ 4_Matrix_vector_multiplication_ 19_ReLU 23_Softmax 33_BatchNorm 40_LayerNorm 42_Max_Pooling_2D 47_Sum_reduction_over_a_dimension 63_conv_standard_2D__square_input__square_kernel 95_CrossEntropyLoss}; do
	d=/tmp/kbaa/$p
	mkdir -p "$d"
	cp "$src/$p.py" "$d/kb_torch.py"
	{ cat "$src/$p.py"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$d/kb_triton_ascend_impl.py"
	t0=$(date +%s.%N)
	$K benchmark --op_name kb --verify_dir "$d" --verify_not_required --time_budget "$BUDGET" \
		--output "$OUT/kb_$p.json" > /dev/null 2> "$OUT/kb_$p.err"
	echo "  $p rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
	summ "$OUT/kb_$p.json" 2>/dev/null || tail -3 "$OUT/kb_$p.err"
done
fi
echo "== done"
