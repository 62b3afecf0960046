#!/usr/bin/env bash
# eval_phases.sh - where kjudge eval's time goes on the GPU, and whether a
# candidate's outputs can reach a judge-owned process on the device.
#
#   1. bench/gpu/vmm_probe.py: the host path of a 6.4 GB output (what the
#      worker does today) against a CUDA VMM allocation exported as a file
#      descriptor to another process (plain, and in a PID namespace);
#   2. kjudge eval on KB_SUBSET (default the side-by-side subset 1-4, 19,
#      23) through eval_vs_kb.sh without KernelBench's side, then
#      bench/store/phases.py over its store: per attempt the workers' start,
#      the wait for the device, verify, benchmark, the workers' phases.
# Run through the device tool from the repository root:
#   command: bash bench/gpu/eval_phases.sh
#   carry:   ["build/kjudge", "build/kjudge_worker.py", "build/kjudge_timer.so", ".anchors"]
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
echo "== vmm probe"
timeout 180 python3 bench/gpu/vmm_probe.py 2>&1 | tee "$OUT/vmm_probe.log"
echo "== kjudge eval"
KB_SUBSET=${KB_SUBSET:-1 2 3 4 19 23} SKIP_KB=1 SKIP_KJ_ALL=1 KJ_SUB_CAP=${KJ_SUB_CAP:-240} \
	EVK_DIR=/tmp/evk bash bench/gpu/eval_vs_kb.sh > "$OUT/eval.log" 2>&1
tail -40 "$OUT/eval.log"
echo "== phases"
python3 bench/store/phases.py /tmp/evk/kj_sub.sqlite 2>&1 | tee "$OUT/phases.txt"
cp /tmp/evk/kj_sub.sqlite "$OUT/" 2>/dev/null
