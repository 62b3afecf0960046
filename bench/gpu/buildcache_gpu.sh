#!/usr/bin/env bash
# buildcache_gpu.sh - on the GPU machine (the device tool, from the
# repository root, with build/kjudge, build/kjudge_worker.py and
# build/kjudge_timer.so carried), in one call:
#   1. tests/candidates/l2_persist, the persisting-L2 attack: verify must
#      pass, benchmark must fail every case with L2PersistenceSet
#      (check_verify.py and check_bench.py, --device cuda);
#   2. a CUDA load_inline candidate (x * y + x, KernelBench's way) on the
#      addmul task, with a fresh build cache: verify (built by the judge),
#      benchmark (from the cache), then both again, each run's wall time
#      and its timings' build figures (build_s, build_n, build_cached_n);
#      and the same pair with KJ_CACHE_DIR=off, as before the cache.
# Output goes to $OUT/buildcache.log as it runs.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/buildcache.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate PYTHONUNBUFFERED=1
K=$PWD/build/kjudge
now() { date +%s.%N; }

echo "== 1. persisting L2 (tests/candidates/l2_persist)"
python3 tests/helpers/check_verify.py --kjudge "$K" --device cuda -v l2_persist
python3 tests/helpers/check_bench.py --kjudge "$K" --device cuda l2_persist

echo "== 2. a CUDA load_inline candidate, built once"
d=$(mktemp -d /tmp/kj-bc-XXXXXX)
cp tests/candidates/addmul_torch.py "$d/"
cat > "$d/addmul_triton_ascend_impl.py" <<'PY'
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void addmul_kernel(const float *a, const float *b, float *o, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) o[i] = a[i] * b[i] + a[i];
}
torch::Tensor addmul(torch::Tensor x, torch::Tensor y) {
    auto xc = x.contiguous(), yc = y.contiguous();
    auto out = torch::empty_like(xc);
    long n = xc.numel();
    addmul_kernel<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), yc.data_ptr<float>(),
                                            out.data_ptr<float>(), n);
    return out;
}
"""
CPP = "torch::Tensor addmul(torch::Tensor x, torch::Tensor y);"
ext = load_inline(name="kj_addmul_cuda", cpp_sources=CPP, cuda_sources=CUDA,
                  functions=["addmul"])


class ModelNew(nn.Module):
    def forward(self, x, y):
        return ext.addmul(x, y)
PY
figures() { # figures FILE: the build figures of a result
	python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['kjudge']['timings']
print('     timings:', {k: round(v, 3) for k, v in t.items() if not isinstance(v, dict)})
" "$1"
}
pair() { # pair LABEL: verify then benchmark, each timed
	local t0 t1 t2
	t0=$(now)
	$K verify --op_name addmul --verify_dir "$d" --device cuda | head -1
	t1=$(now)
	figures "$d/verify_result.json"
	$K benchmark --op_name addmul --verify_dir "$d" --device cuda --output "$d/perf.json" > /dev/null
	t2=$(now)
	figures "$d/perf.json"
	echo "   $1: verify $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s, benchmark $(awk "BEGIN{printf \"%.2f\", $t2 - $t1}") s, speedup $(python3 -c "import json; print(json.load(open('$d/perf.json')).get('speedup_vs_torch'))")"
}
export KJ_CACHE_DIR=$d/cache
pair "cold cache"
pair "warm cache"
export KJ_CACHE_DIR=off
pair "no cache (KJ_CACHE_DIR=off: built in the candidate's process)"
ls -la "$d"/cache/ext/
chmod -R u+w "$d"; rm -rf "$d"
