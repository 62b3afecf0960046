#!/usr/bin/env bash
# devcmp_gpu.sh - outputs compared on the device, on the GPU: does the path
# decide what the host path decides, and what does it save?
#
#   1. kjudge verify and benchmark of KernelBench's 19_ReLU (6.4 GB outputs)
#      with the reference as the candidate and with a wrong candidate (1 %
#      off), each with KJ_DEVICE_COMPARE=auto (the default) and off: the
#      verdicts must agree, auto must not fall back for the honest one
#      (timings.device_redo_n) and must fall back, then fail, for the wrong
#      one; wall seconds of each;
#   2. bench/gpu/eval_vs_kb.sh on KB_SUBSET (default 1-4, 19, 23) with
#      KernelBench's side unless SKIP_KB is set, then bench/store/phases.py.
# Run through the device tool from the repository root:
#   command: bash bench/gpu/devcmp_gpu.sh
#   carry:   ["build/kjudge", "build/kjudge_worker.py", "build/kjudge_timer.so", ".anchors"]
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate
ROOT=$PWD
K=$ROOT/build/kjudge
SRC=$ROOT/.anchors/kb/KernelBench/level1
V=/tmp/devcmp
rm -rf "$V"
mkdir -p "$V"
cp "$SRC"/19_ReLU.py "$V/relu_torch.py"
{ cat "$SRC"/19_ReLU.py; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$V/relu_honest.py"
{ cat "$SRC"/19_ReLU.py; printf '\n\nclass ModelNew(Model):\n    def forward(self, x):\n        return torch.relu(x) * 1.01\n'; } > "$V/relu_wrong.py"
# report WHAT RESULT_JSON LABEL RC T0 T1: one line of a run's figures.
report() {
	python3 - "$@" <<'EOF'
import json, sys
what, p, label, rc, t0, t1 = sys.argv[1:]
try:
    d = json.load(open(p))
except Exception as e:
    print(f"   {what} {label} rc={rc} no result: {e}")
    sys.exit()
t = d.get("kjudge", {}).get("timings", {})
f = [(x.get("error_type"), (x.get("error_msg") or "")[:70]) for x in d.get("failures", [])]
print(f"   {what} {label} rc={rc} wall {float(t1) - float(t0):6.1f} s  redo {t.get('device_redo_n')}  "
      f"compare_s {t.get('compare_s', 0):.2f}  failures {f[:2]}")
EOF
}
echo "== 1. verify and benchmark of 19_ReLU"
for impl in honest wrong; do
	for mode in auto off; do
		t0=$(date +%s.%N)
		(cd "$V" && KJ_DEVICE_COMPARE=$mode timeout 300 "$K" verify --op_name relu --triton_impl_name "$impl" \
			--device cuda --input_sets 5 --output "$V/v_${impl}_$mode.json" > "$V/v_${impl}_$mode.log" 2>&1)
		rc=$?
		t1=$(date +%s.%N)
		report verify "$V/v_${impl}_$mode.json" "$impl $mode" "$rc" "$t0" "$t1"
		[ "$rc" -le 1 ] || tail -5 "$V/v_${impl}_$mode.log"
	done
done
cp "$V/v_honest_auto.json" "$V/verify_result_honest.json" 2>/dev/null
for mode in auto off; do
	t0=$(date +%s.%N)
	(cd "$V" && KJ_DEVICE_COMPARE=$mode KJ_TIME_BUDGET=5 timeout 300 "$K" benchmark --op_name relu \
		--triton_impl_name honest --device cuda --output "$V/b_$mode.json" > "$V/b_$mode.log" 2>&1)
	rc=$?
	t1=$(date +%s.%N)
	report benchmark "$V/b_$mode.json" "honest $mode" "$rc" "$t0" "$t1"
	[ "$rc" -le 1 ] || tail -5 "$V/b_$mode.log"
done
tail -3 "$V/b_auto.log"
mkdir -p "$OUT/devcmp"
cp "$V"/*.json "$V"/*.log "$OUT/devcmp/" 2>/dev/null
[ -n "${SKIP_EVAL:-}" ] && exit 0
echo "== 2. eval on the subset"
KB_SUBSET=${KB_SUBSET:-1 2 3 4 19 23} SKIP_KJ_ALL=1 KJ_SUB_CAP=${KJ_SUB_CAP:-200} \
	EVK_DIR=/tmp/evk DEADLINE=${DEADLINE:-480} bash bench/gpu/eval_vs_kb.sh > "$OUT/eval.log" 2>&1
grep -E "^==|kjudge|KernelBench|ratio|wall|cut|!!" "$OUT/eval.log" | tail -40
python3 bench/store/phases.py /tmp/evk/kj_sub.sqlite 2>&1 | tee "$OUT/phases.txt" | tail -30
cp /tmp/evk/kj_sub.sqlite "$OUT/" 2>/dev/null
true
