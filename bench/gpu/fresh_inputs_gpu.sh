#!/usr/bin/env bash
# fresh_inputs_gpu.sh - the Triton ReLU of tests/eval on fresh inputs
# (fresh_inputs_gpu.py), then kjudge benchmark of it alone and under eval.
# Run by the device tool with build/kjudge, build/kjudge_worker.py and
# build/kjudge_timer.so carried.  Writes $OUT/fresh.log.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/fresh.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate-fresh PYTHONUNBUFFERED=1
[ -n "${SKIP_PY:-}" ] || python3 bench/gpu/fresh_inputs_gpu.py
d=/tmp/relu; mkdir -p $d
cp tests/eval/suite/ops/relu_torch.py $d/; cp tests/eval/cands/relu_triton.py $d/relu_tri_impl.py
build/kjudge verify --op_name relu --verify_dir $d --triton_impl_name tri_impl --device cuda --output $d/verify_result_tri_impl.json >/dev/null
echo "[verify rc=$?]"
for i in $(seq ${RUNS:-3}); do
	build/kjudge benchmark --op_name relu --verify_dir $d --triton_impl_name tri_impl \
		--device cuda --output $d/b$i.json >/dev/null
	echo "[benchmark alone $i rc=$?]"
	python3 -c "
import json, re; s = json.dumps(json.load(open('$d/b$i.json')))
print(re.findall(r'\"(?:unseen\\w*|error_type|speedup|impl_ms|ref_ms|message)\": [^,]*', s)[:12])"
done
