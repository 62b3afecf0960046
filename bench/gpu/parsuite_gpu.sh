#!/usr/bin/env bash
# parsuite_gpu.sh - the bundled suite (examples/parsuite) on the GPU
# machine: every reference verified (the CUDA ones run there), then the
# CUDA variants timed as whole programs against the OpenMP references of
# the same kernels, two ways:
#   1. `kjudge spec verify --time` of each OpenMP and each CUDA spec on the
#      configuration CONFIG (warm-up and repeats below), the speedup the
#      OpenMP median over the CUDA median.  CONFIG is "correctness" by
#      default: spec verify times only a run that passes its oracle, and the
#      "performance" configurations of histogram, dot and matvec fail theirs
#      (their specs' file_hash and expected values are those of the
#      correctness inputs); jacobi's passes both (CONFIG=performance times
#      jacobi alone);
#   2. `kjudge eval` over the suite with each CUDA reference as the
#      translation of its 'parsuite-KERNEL-omp:cuda' direction (the
#      "correctness" configuration, as eval judges; -j 1, so nothing runs
#      beside a timed run), and its report.
# Writes $OUT/parsuite.log, $OUT/verify_all.json, $OUT/time/*.json,
# $OUT/summary.md and summary.json, $OUT/parsuite.db and report.md/json.
#
# Run by the device tool from the repository root with build/kjudge
# carried (it needs gcc, make, OpenMP and /usr/local/cuda/bin/nvcc there;
# what is missing is said, not guessed):
#   command: bash bench/gpu/parsuite_gpu.sh
#   carry:   ["build/kjudge"]
# Environment: WARMUP (default 1), REPEATS (default 5), CONFIG, OMP_NUM_THREADS
# (default: every core; the OpenMP side is then the machine's full CPU).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/time"
exec > >(tee "$OUT/parsuite.log") 2>&1
export KJ_STATE_DIR=/tmp/kjstate-parsuite KJ_CACHE_DIR=/tmp/kjcache-parsuite
WARMUP=${WARMUP:-1} REPEATS=${REPEATS:-5} CONFIG=${CONFIG:-correctness}
K=$PWD/build/kjudge
S=examples/parsuite
now() { date +%s.%N; }

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv || echo "no nvidia-smi"
if [ -x /usr/local/cuda/bin/nvcc ]; then /usr/local/cuda/bin/nvcc --version | tail -n 2
else echo "nvcc ABSENT at /usr/local/cuda/bin/nvcc: the CUDA variants cannot build"; fi
gcc --version | head -n 1 || echo "gcc ABSENT"
make --version | head -n 1 || echo "make ABSENT"
nproc; free -g | head -n 2
echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset (every core)}"

echo "== spec verify --all (every reference, its correctness configuration)"
t0=$(now)
$K spec verify --all --root "$S"
$K spec verify --all --root "$S" --json > "$OUT/verify_all.json"
echo "[verify --all rc=$? $(awk "BEGIN{printf \"%.1f\", $(now) - $t0}") s]"

echo "== whole-program timing, configuration $CONFIG, $WARMUP warm-up, $REPEATS runs"
for k in histogram dot matvec jacobi; do
	for api in omp cuda; do
		t0=$(now)
		$K spec verify "$S/specs/parsuite-$k-$api.json" --root "$S" --config "$CONFIG" \
			--time --warmup "$WARMUP" --repeats "$REPEATS" --json > "$OUT/time/$k-$api.json"
		echo "[$k $api rc=$? $(awk "BEGIN{printf \"%.1f\", $(now) - $t0}") s]"
	done
done
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
rows, summary = [], {}
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"status": "ERROR", "error": str(e)}
for k in ("histogram", "dot", "matvec", "jacobi"):
    r = {api: load(os.path.join(out, "time", f"{k}-{api}.json")) for api in ("omp", "cuda")}
    med = {}
    for api, d in r.items():
        p = (d.get("timing") or {}).get("program") or {}
        med[api] = p if d.get("status") == "PASS" and p.get("median_s") else None
    sp = med["omp"]["median_s"] / med["cuda"]["median_s"] if med["omp"] and med["cuda"] else None
    summary[k] = {"omp": med["omp"], "cuda": med["cuda"], "status": {a: d.get("status") for a, d in r.items()},
                  "speedup_cuda_over_omp": sp}
    f = lambda m: "-" if not m else f"{m['median_s']:.4f} ({m['min_s']:.4f}-{m['max_s']:.4f})"
    rows.append(f"| {k} | {r['omp'].get('status')} | {f(med['omp'])} | {r['cuda'].get('status')} | {f(med['cuda'])} | "
                + ("-" if sp is None else f"{sp:.2f}x") + " |")
md = ["| kernel | OpenMP | median s (min-max) | CUDA | median s (min-max) | CUDA speedup |",
      "| --- | --- | --- | --- | --- | --- |"] + rows
open(os.path.join(out, "summary.md"), "w").write("\n".join(md) + "\n")
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
print("\n".join(md))
PY

echo "== kjudge eval: the CUDA references as translations of the omp:cuda directions"
python3 - "$S" > /tmp/parsuite_cuda.jsonl <<'PY'
import json, sys
s = sys.argv[1]
for k in ("histogram", "dot", "matvec", "jacobi"):
    src = open(f"{s}/parsuite-src/cuda/{k}/main.cu").read()
    print(json.dumps({"task": f"parsuite-{k}-omp:cuda", "model": "cuda-reference", "attempt": 0,
                      "files": {"main.cu": src}}))
PY
t0=$(now)
$K eval "$S" /tmp/parsuite_cuda.jsonl --db "$OUT/parsuite.db" --warmup "$WARMUP" --repeats "$REPEATS" -j 1
echo "[eval rc=$? $(awk "BEGIN{printf \"%.1f\", $(now) - $t0}") s]"
$K report "$OUT/parsuite.db" --md "$OUT/report.md" --json "$OUT/report.json"
python3 - "$OUT/parsuite.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT a.task, a.status, a.error_type, round(t.impl_ms, 2), round(t.ref_ms, 2), "
                    "round(a.speedup, 2), a.message FROM attempts a LEFT JOIN timings t USING (attempt_key) "
                    "ORDER BY a.task"):
    print(" | ".join(str(v) for v in r))
PY
