#!/usr/bin/env bash
# nodevice_gpu.sh - on one GPU: eval of tests/eval's study on cuda:0 (the
# verdicts as before, with the worker's hello giving cuda_count), then a GPU
# that is not there (--gpus 3, --device cuda:1): exit 2, the batch stopped,
# nothing charged.  Run by the device tool from the repository root with
# build/kjudge, build/kjudge_worker.py and build/kjudge_timer.so carried.
# Writes $OUT/nodevice.log and $OUT/ok.db.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/nodevice.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate-nodev PYTHONUNBUFFERED=1
python3 -c "import torch; print('torch sees', torch.cuda.device_count(), 'GPU(s)')"
t0=$(date +%s.%N)
build/kjudge eval tests/eval/suite tests/eval/cands/generations.jsonl --db "$OUT/ok.db" \
	--gpus 0 -j 4 --time_budget 2
echo "[eval --gpus 0 rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s]"
python3 - "$OUT/ok.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT task, model, attempt, status, clean, error_type, round(speedup, 3) "
                    "FROM attempts ORDER BY task, model"):
    print(" | ".join(str(v) for v in r))
PY
t0=$(date +%s.%N)
build/kjudge eval tests/eval/suite tests/eval/cands/generations.jsonl --db /tmp/bad.db --gpus 3
echo "[eval --gpus 3 rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s]"
python3 -c "import sqlite3; print(sqlite3.connect('/tmp/bad.db').execute(\"SELECT state, count(*), count(status) FROM attempts GROUP BY state\").fetchall())"
build/kjudge verify --op_name relu --verify_dir tests/eval/suite/ops --triton_impl_name torch --device cuda:1 >/dev/null
echo "[verify --device cuda:1 rc=$?]"
