#!/usr/bin/env bash
# run_gpu.sh - everything kjudge measures on the GPU machine, in one call.
#
# Run by the device tool from the repository root with build/kjudge,
# build/kjudge_worker.py and .anchors/ (KernelBench's src and problems, and
# the anchor script with its shims; see ../shared/anchors/kernelbench) carried.
# Writes results.tar.gz and run.log under $OUT.
#   1. the examples: verify every candidate, benchmark the Triton ones;
#   2. the side-stream candidate and its honest twin;
#   3. KernelBench level-1 problems, side by side: kjudge verify + benchmark
#      against KernelBench's eval_kernel_against_ref (5 correctness, 100 timing
#      trials), the reference itself as the candidate in both.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/r"
exec > >(tee "$OUT/run.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate PYTHONUNBUFFERED=1
K=$PWD/build/kjudge
now() { date +%s.%N; }

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
python3 -c "import torch, triton, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
df -h /dev/shm /tmp | sed 's/^/  /'
nproc; free -g | head -2

if [ -z "${SKIP_EXAMPLES:-}" ]; then
echo "== examples"
for t in ${EXAMPLES-examples/*/*_torch.py}; do
	d=$(dirname "$t")
	op=$(basename "$t" _torch.py)
	for f in "$d/${op}"_${IMPLS:-*}.py; do
		impl=$(basename "$f" .py); impl=${impl#${op}_}
		[ "$impl" = torch ] && continue
		t0=$(now)
		$K verify --op_name "$op" --verify_dir "$d" --triton_impl_name "$impl" \
			--output "$d/verify_result_$impl.json" | head -3
		echo "   [$op/$impl verify rc=${PIPESTATUS[0]} $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s]"
		cp "$d/verify_result_$impl.json" "$OUT/r/verify_${op}_${impl}.json"
	done
	cp "$d/verify_result_triton_ascend_impl.json" "$d/verify_result.json"
	t0=$(now)
	$K benchmark --op_name "$op" --verify_dir "$d" --output "$OUT/r/perf_${op}.json"
	echo "   [$op benchmark rc=$? $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s]"
	python3 -c "
import json; d = json.load(open('$OUT/r/perf_${op}.json'))
for s in d['per_shape_results']:
    print('   case', s['case_idx'], s['status'], 'fw', s['framework'] and round(s['framework']['median_ms'], 4),
          'impl', s['implementation'] and round(s['implementation']['median_ms'], 4), 'speedup', s['speedup_vs_torch'])
print('   speedup_vs_torch', d['speedup_vs_torch'])
" 2>/dev/null
done

fi

if [ -z "${SKIP_SIDESTREAM:-}" ]; then
echo "== side-stream candidate"
d=bench/gpu/sidestream
for impl in ${SIDESTREAM-triton_ascend_impl sidestream_impl}; do
	$K verify --op_name scale --verify_dir $d --triton_impl_name $impl --output /tmp/v_$impl.json > /dev/null
	$K benchmark --op_name scale --verify_dir $d --triton_impl_name $impl --verify_not_required \
		--repeats 30 --output "$OUT/r/perf_scale_$impl.json" > /dev/null
	python3 -c "
import json; d = json.load(open('$OUT/r/perf_scale_$impl.json')); s = d['per_shape_results'][0]
print('   $impl:', s['status'], 'impl median', s['implementation']['median_ms'], 'ms, escaped total',
      s['implementation']['escaped_ms_total'], 'ms; reference median', s['framework']['median_ms'], 'ms')
"
done

fi

echo "== where the time goes on a 1.6 G-element problem (KernelBench 19_ReLU's size)"
python3 - <<'PY'
import sys, time
import torch
sys.path.insert(0, "build")
import kjudge_worker as kw
def step(name, fn):
    t = time.perf_counter(); r = fn(); torch.cuda.synchronize(); print(f"   {name}: {time.perf_counter() - t:.2f} s", flush=True); return r
w = kw.Worker(); w._torch()
torch.manual_seed(1)
torch.set_default_device("cuda")
x = step("inputs made on the GPU (torch.rand 4096 x 393216)", lambda: torch.rand(4096, 393216))
y = step("forward (relu)", lambda: torch.relu(x))
step("output to a mapped .npy in /dev/shm (6.4 GB)", lambda: w._save([y], "/dev/shm", "g"))
step("again (pages already there)", lambda: w._save([y], "/dev/shm", "a"))
step("input snapshot on the GPU", lambda: w._snapshot([x]))
torch.set_default_device("cpu")
step("the same inputs made on the CPU, as KernelBench does", lambda: torch.rand(4096, 393216))
PY
t0=$(now); $K compare /dev/shm/g_out0.npy /dev/shm/a_out0.npy | head -1
echo "   kjudge compare of two 6.4 GB tensors: $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s"
rm -f /dev/shm/g_out0.npy /dev/shm/a_out0.npy

du -sh /dev/shm/kjudge-cache-*/pycache 2>/dev/null | sed "s/^/   bytecode cache: /"
echo "== KernelBench side by side"
probs=${KB_PROBLEMS:-"19_ReLU.py 23_Softmax.py"}
for p in $probs; do
	d=/tmp/kbv/${p%.py}; mkdir -p "$d"
	src=.anchors/kb/KernelBench/level1/$p
	cp "$src" "$d/kb_torch.py"
	{ cat "$src"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$d/kb_triton_ascend_impl.py"
	for run in ${RUNS:-cold warm}; do
		t0=$(now)
		$K verify --op_name kb --verify_dir "$d" | head -1
		cp "$d/verify_result.json" "$OUT/r/kb_verify_${p%.py}_$run.json"
		t1=$(now)
		$K benchmark --op_name kb --verify_dir "$d" --repeats 100 --output "$OUT/r/kb_perf_${p%.py}_$run.json" > /dev/null
		t2=$(now)
		python3 -c "
import json
for f in ('$OUT/r/kb_verify_${p%.py}_$run.json', '$OUT/r/kb_perf_${p%.py}_$run.json'):
    k = json.load(open(f))['kjudge']
    print('     sandbox', k.get('sandbox'), 'scratch', k.get('scratch'), 'timings', json.dumps(k.get('timings')))
"
		echo "   kjudge $p ($run): verify $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s, benchmark $(awk "BEGIN{printf \"%.2f\", $t2 - $t1}") s, total $(awk "BEGIN{printf \"%.2f\", $t2 - $t0}") s"
	done
done
if [ -n "${HOSTILE:-}" ]; then
	echo "== hostile candidates on the GPU, in the sandbox"
	python3 tests/helpers/check_verify.py --kjudge "$K" --device cuda -v $HOSTILE
fi
if [ -z "${SKIP_KB:-}" ]; then
	(cd .anchors && OUT=$OUT/r timeout 900 python3 kb_anchor.py $probs)
fi
tar czf "$OUT/results.tar.gz" -C "$OUT" r
echo "== done"
