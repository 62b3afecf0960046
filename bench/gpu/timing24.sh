#!/usr/bin/env bash
# timing24.sh - the judge's clock on the GPU, in one call of the device tool
# (from the repository root; carry build/kjudge, build/kjudge_worker.py,
# build/kjudge_timer.so and .anchors/).  Each part is capped and appends to
# $OUT as it goes, so that a call cut short still brings back what ran; a
# part is left out with SKIP_<NAME>=1.
#
#   AA     A/A of a 20 us kernel (bench/gpu/aa20us: a 512 x 512 float32
#          matmul, the reference as the candidate), AA20_RUNS serial
#          benchmark runs (default 10): the speedup (the judge's clock),
#          the ratio of the samples' medians beside it, the cross-check.
#   AAQ    the same A/A with queued and synced rounds in turn
#          (--timed_rounds), AAQ_RUNS pairs.
#   SIDE   the side-stream candidate and its honest twin (bench/gpu/
#          sidestream), with the rounds of each of SIDE_ROUNDS (auto).
#   CHEATS tests/helpers/check_bench.py on cuda: the timing cheats of
#          tests/candidates/ (the sample forgeries at 1.5, 12 and 1000, the
#          clock and harness patches, the pool stream without a join, the
#          persisting-L2 window, ...), each against its honest twin.
#   KBADV  KernelBench's three adversarial kernels (src/kernelbench/
#          unit_tests/test_kernels/) against level1/1_Square_matrix_
#          multiplication_: verify, then benchmark.
#   KBEX   KernelBench's prompt examples (src/kernelbench/prompts/):
#          validate, verify and benchmark, each pair twice (the second run
#          finds its extension in the build cache): the build's time and
#          the second run's.
#   COST   the judge's own share of a verify + benchmark's wall time (what
#          is neither side's start, inputs nor timed calls), of this build
#          and of the one before the judge's clock (.anchors/old/kjudge).
#
# Knobs: OUT, DEADLINE (seconds for the whole call, default 560), BUDGET
# (each benchmark's --time_budget, default 2), AA20_RUNS, AA_OFF_RUNS, AA_PIN_RUNS,
# AA_NODEV_RUNS, CAP_<NAME> (a
# part's cap in seconds).
set -u
# The device lacks libmicrohttpd, which kjudge links (serve): a copy of
# this machine's (Debian's libmicrohttpd12) travels in .anchors/lib.
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/timing24.log") 2>&1
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate PYTHONUNBUFFERED=1
ROOT=$PWD
K=$ROOT/build/kjudge
KOLD=$ROOT/.anchors/old/kjudge
KB=$ROOT/.anchors/kb
BUDGET=${BUDGET:-2}
DEV=${DEV:-cuda}
DEADLINE=${DEADLINE:-560}
T0=$(date +%s)
W=/tmp/t24
rm -rf "$W"
mkdir -p "$W"
# Each run's files go to $RES, packed into $OUT/results.tgz at the end (the
# device tool brings back only a few files from $OUT).
RES=$W/res
mkdir -p "$RES"
trap 'tar czf "$OUT/results.tgz" -C "$W" res 2>/dev/null' EXIT

left() { echo $((DEADLINE - ($(date +%s) - T0))); }
# capped S CMD...: CMD in a group of its own, ended after S seconds.
capped() {
	local s=$1 pid rc
	shift
	if [ "$s" -le 5 ]; then echo "   [no time left for: $*]"; return 124; fi
	setsid "$@" &
	pid=$!
	( sleep "$s"; kill -KILL -- -$pid 2>/dev/null && echo "   [cap of $s s: stopped $*]" ) &
	local w=$!
	wait $pid
	rc=$?
	kill $w 2>/dev/null
	wait $w 2>/dev/null
	return $rc
}
# part NAME CAP: whether to run part NAME, with its cap (or what is left).
part() {
	local skip="SKIP_$1" capv="CAP_$1"
	[ -n "${!skip:-}" ] && return 1
	CAP=${!capv:-$2}
	[ "$(left)" -lt "$CAP" ] && CAP=$(left)
	echo "== $1 (cap $CAP s, $(left) s left) $(date -u +%T)"
	[ "$CAP" -gt 5 ]
}
summ() { # summ PERF: per case the judge's figures beside the samples'
	python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("   no perf JSON:", e); sys.exit(0)
for s in d["per_shape_results"]:
    f, i = s.get("framework") or {}, s.get("implementation") or {}
    if s["status"] != "pass":
        print(f"   case {s['case_idx']} {s['error_type']}: {(s.get('error_msg') or '')[:220]}")
        continue
    med = f["median_ms"] / i["median_ms"] if i.get("median_ms") else float("nan")
    print(f"   case {s['case_idx']} speedup {s['speedup_vs_torch']} {s.get('speedup_ci95')} "
          f"(medians {med:.4f}) judge ref {f.get('judge_ms', 0):.5f} impl {i.get('judge_ms', 0):.5f} "
          f"over {i.get('overhead_ms', 0):.5f} med ref {f['median_ms']:.5f} impl {i['median_ms']:.5f} "
          f"rounds {i.get('rounds')} check {s.get('timing_check')}")
print("   speedup_vs_torch", d.get("speedup_vs_torch"))
PY
}
# pairdir DIR TASK CAND: a verify directory of op "kb" with the two files.
pairdir() {
	mkdir -p "$1"
	cp "$2" "$1/kb_torch.py"
	cp "$3" "$1/kb_triton_ascend_impl.py"
}
# vb NAME DIR [K]: verify then benchmark, each timed; perf summed up.
vb() {
	local name=$1 dir=$2 k=${3:-$K} t0 rc
	t0=$(date +%s.%N)
	"$k" verify --op_name kb --verify_dir "$dir" --device "$DEV" > "$RES/$name.verify.out" 2>&1
	rc=$?
	cp "$dir/verify_result.json" "$RES/$name.verify.json" 2>/dev/null
	echo "   $name verify rc=$rc $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s: $(head -c 300 "$RES/$name.verify.out" | tr '\n' ' ')"
	t0=$(date +%s.%N)
	"$k" benchmark --op_name kb --verify_dir "$dir" --device "$DEV" --time_budget "$BUDGET" \
		--output "$RES/$name.perf.json" > "$RES/$name.bench.out" 2>&1
	rc=$?
	echo "   $name benchmark rc=$rc $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
	summ "$RES/$name.perf.json"
}

echo "== machine $(date -u +%FT%TZ)"
[ "$DEV" = cuda ] && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
"$K" --version | head -1
python3 -c "import torch; print('  ', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU')"

if part DIAG 90; then
	# The A/A's asymmetry outside kjudge (bench/gpu/aa_diag.py).
	capped "$CAP" python3 bench/gpu/aa_diag.py build/kjudge_timer.so > "$OUT/aa_diag.json" 2> "$RES/aa_diag.err"
	echo "   aa_diag rc=$?"
	python3 -c "
import json, sys
d = json.load(open('$OUT/aa_diag.json'))
for v, r in d.items():
    for m, x in r.items():
        print('  ', v, m, 'samples A/B %.4f' % x['sample_ratio_A_over_B'], 'walls A/B %.4f' % x['wall_ratio_A_over_B'],
              'A', {k: (round(x['A'][k], 5) if isinstance(x['A'][k], float) else x['A'][k]) for k in x['A']},
              'B med %.5f wall %.5f [%.5f, %.5f]' % (x['B']['sample_median_ms'], x['B']['wall_ms_per_call_median'],
                                                   x['B']['wall_ms_per_call_min'], x['B']['wall_ms_per_call_max']))
" 2>&1 | head -20
fi

if part KBEXP 330; then
	# KernelBench's prompt examples, unchanged: every pair's first verify
	# at once (their builds in parallel: each pair's build time), with the
	# flash-attention example's accuracy over 50 input sets beside them
	# (bench/gpu/flash_mare.py); then each pair serially with the cache
	# warm: verify and benchmark.
	P=$KB/src/kernelbench/prompts
	# (model_ex_0 and model_ex_2 are prompt fragments, not tasks: the
	# first has no get_inputs, the second does not parse.)
	PAIRS=${KBEXP_PAIRS:-"model_ex_add:model_new_ex_add model_ex_add:model_new_ex_add_triton
		model_ex_1:model_new_ex_1
		few_shot/model_ex_add:few_shot/model_new_ex_add few_shot/model_ex_fuse_gelu:few_shot/model_new_ex_fuse_gelu
		few_shot/model_ex_mnist2:few_shot/model_new_ex_mnist2 few_shot/model_ex_tiled_matmul:few_shot/model_new_ex_tiled_matmul
		few_shot/model_ex_flash_attn:few_shot/model_new_ex_flash_attn"}
	names=""
	pids=""
	if [ -z "${SKIP_FLASH:-}" ]; then
		( timeout "$CAP" python3 bench/gpu/flash_mare.py "$P/few_shot/model_ex_flash_attn.py" \
			"$P/few_shot/model_new_ex_flash_attn.py" 50 > "$RES/flash_mare.json" 2> "$RES/flash_mare.err"
		  echo "   flash_mare rc=$?" ) &
		pids="$pids $!"
	fi
	for pair in $PAIRS; do
		set -- ${pair/:/ }
		name=$(echo "${2#few_shot/}" | sed 's/model_new_//')
		[ "${2#few_shot/}" != "$2" ] && name=fs_$name
		names="$names $name"
		pairdir "$W/$name" "$P/$1.py" "$P/$2.py"
		echo "   $name validate: $("$K" validate "$W/$name/kb_triton_ascend_impl.py" 2>&1 | head -2 | tr '\n' ' ' | head -c 200)"
		( t0=$(date +%s.%N)
		  timeout $((CAP / 2)) "$K" verify --op_name kb --verify_dir "$W/$name" --device "$DEV" > "$RES/${name}_cold.verify.out" 2>&1
		  echo "   $name cold verify rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s: $(head -c 160 "$RES/${name}_cold.verify.out" | tr '\n' ' ')" ) &
		pids="$pids $!"
	done
	# Only these: a bare wait would also wait for the log's tee.
	wait $pids
	for name in $names; do
		[ "$(left)" -lt 30 ] && break
		capped 60 bash -c "$(declare -f vb summ); K=$K RES=$RES BUDGET=$BUDGET DEV=$DEV vb ${name}_warm $W/$name"
	done
	python3 - "$RES/flash_mare.json" <<'PY'
import json, sys
try:
    print("   flash_mare:", json.dumps(json.load(open(sys.argv[1]))))
except (OSError, ValueError) as e:
    print("   flash_mare: none", e)
PY
fi

if part AA 150; then
	# AA_OFF_RUNS runs first with the sandbox off (KJ_SANDBOX=off): whether
	# the sandbox is where the two sides differ.
	for i in $(seq 1 "${AA_OFF_RUNS:-0}"); do
		capped "$CAP" env KJ_SANDBOX=off "$K" benchmark --op_name mm --verify_dir bench/gpu/aa20us \
			--verify_not_required --time_budget "$BUDGET" --output "$RES/aa20off_$i.json" > /dev/null 2>&1
		echo "  sandbox off, run $i rc=$?"
		summ "$RES/aa20off_$i.json"
	done
	# AA_PIN_RUNS runs with kjudge and both workers on one CPU (taskset
	# -c AA_PIN_CPU, default 2; a worker is frozen while the other is
	# timed): whether the sides' host costs differ by where they run.
	for i in $(seq 1 "${AA_PIN_RUNS:-0}"); do
		capped "$CAP" taskset -c "${AA_PIN_CPU:-2}" "$K" benchmark --op_name mm \
			--verify_dir bench/gpu/aa20us --verify_not_required --time_budget "$BUDGET" \
			--output "$RES/aa20pin_$i.json" > /dev/null 2>&1
		echo "  one CPU, run $i rc=$?"
		summ "$RES/aa20pin_$i.json"
	done
	# AA_NODEV_RUNS runs with the outputs judged through host memory
	# (KJ_DEVICE_COMPARE=off: no export, no copy by the reference's
	# worker): whether the device path is where the sides differ.
	for i in $(seq 1 "${AA_NODEV_RUNS:-0}"); do
		capped "$CAP" env KJ_DEVICE_COMPARE=off "$K" benchmark --op_name mm \
			--verify_dir bench/gpu/aa20us --verify_not_required --time_budget "$BUDGET" \
			--output "$RES/aa20nodev_$i.json" > /dev/null 2>&1
		echo "  host outputs, run $i rc=$?"
		summ "$RES/aa20nodev_$i.json"
	done
	for i in $(seq 1 "${AA20_RUNS:-10}"); do
		t0=$(date +%s.%N)
		capped "$CAP" "$K" benchmark --op_name mm --verify_dir bench/gpu/aa20us --verify_not_required \
			--time_budget "$BUDGET" --output "$RES/aa20_$i.json" > /dev/null
		echo "  run $i rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
		summ "$RES/aa20_$i.json"
		[ "$(left)" -lt 20 ] && break
	done
fi

if part AAQ 260; then
	# The same A/A with the rounds queued and synced in turn
	# (--timed_rounds), AAQ_RUNS pairs (default 8): what the queued
	# round changes in the judge's clock of a 20 us call.
	for i in $(seq 1 "${AAQ_RUNS:-8}"); do
		for mode in queued synced; do
			t0=$(date +%s.%N)
			capped "$CAP" "$K" benchmark --op_name mm --verify_dir bench/gpu/aa20us \
				--verify_not_required --time_budget "$BUDGET" --timed_rounds $mode \
				--output "$RES/aa20${mode}_$i.json" > /dev/null
			echo "  $mode run $i rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
			summ "$RES/aa20${mode}_$i.json"
		done
		[ "$(left)" -lt 40 ] && break
	done
fi

if part SIDE 40; then
	for mode in ${SIDE_ROUNDS:-auto}; do
		for impl in triton_ascend_impl sidestream_impl; do
			capped "$CAP" "$K" benchmark --op_name scale --verify_dir bench/gpu/sidestream \
				--triton_impl_name $impl --verify_not_required --time_budget "$BUDGET" \
				--timed_rounds $mode --output "$RES/side_${mode}_$impl.json" > /dev/null
			echo "  $impl ($mode rounds) rc=$?"
			summ "$RES/side_${mode}_$impl.json"
		done
	done
fi

if part CHEATS 200; then
	capped "$CAP" python3 tests/helpers/check_bench.py --kjudge "$K" --device "$DEV" ${CHEATS_NAMES:-} 2>&1
fi

if part KBADV 120; then
	ref=$KB/KernelBench/level1/1_Square_matrix_multiplication_.py
	for adv in ${KBADV_KERNELS:-result_reuse_kernel zero_out_kernel non_default_stream_kernel}; do
		pairdir "$W/adv_$adv" "$ref" "$KB/src/kernelbench/unit_tests/test_kernels/$adv.py"
		capped "$CAP" bash -c "$(declare -f vb summ); K=$K RES=$RES BUDGET=$BUDGET DEV=$DEV vb adv_$adv $W/adv_$adv"
	done
fi

if part KBEX 200; then
	P=$KB/src/kernelbench/prompts
	for pair in ${KBEX_PAIRS:-"model_ex_add:model_new_ex_add" "model_ex_add:model_new_ex_add_triton" \
		"few_shot/model_ex_fuse_gelu:few_shot/model_new_ex_fuse_gelu" \
		"few_shot/model_ex_flash_attn:few_shot/model_new_ex_flash_attn"}; do
		pair=${pair/:/ }
		set -- $pair
		name=ex_$(basename "$2")
		pairdir "$W/$name" "$P/$1.py" "$P/$2.py"
		"$K" validate "$W/$name/kb_triton_ascend_impl.py" 2>&1 | head -3 | sed 's/^/   validate: /'
		for run in cold warm; do
			capped "$CAP" bash -c "$(declare -f vb summ); K=$K RES=$RES BUDGET=$BUDGET DEV=$DEV vb ${name}_$run $W/$name"
			python3 - "$RES/${name}_$run.perf.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
t = (d.get("kjudge") or {}).get("timings") or {}
print("   timings:", json.dumps({k: v for k, v in t.items() if not isinstance(v, dict)}))
PY
			[ "$(left)" -lt 30 ] && break 2
		done
	done
fi

if part EVAL100 400; then
	# every KernelBench level-1 reference against itself (bench/gpu/
	# eval_vs_kb.sh's step c2): the time for all 100 and each A/A.
	capped "$CAP" env SKIP_KJ_SUB=1 SKIP_KB=1 OUT="$OUT" DEADLINE="$CAP" bash bench/gpu/eval_vs_kb.sh \
		> "$OUT/eval100.out" 2>&1
	echo "   eval_vs_kb rc=$?"
	tail -5 "$OUT/eval100.out"
	f=$(ls /tmp/evk/kj_all.sqlite 2>/dev/null) && cp "$f" "$OUT/kj_all.sqlite" && python3 - "$f" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT t.name, a.status, a.error_type, a.speedup FROM attempts a JOIN tasks t USING (task_key)").fetchall()
sp = sorted(r[3] for r in rows if r[3])
print(f"   attempts {len(rows)}, passed {sum(r[1] == 'pass' for r in rows)}, speedups {len(sp)}:",
      f"min {sp[0]:.4f} median {sp[len(sp)//2]:.4f} max {sp[-1]:.4f}," if sp else "",
      f"within 2 %: {sum(abs(x - 1) <= 0.02 for x in sp)}, within 5 %: {sum(abs(x - 1) <= 0.05 for x in sp)}")
for r in rows:
    if r[1] != "pass" or not r[3] or abs(r[3] - 1) > 0.02:
        print("   ", r)
PY
fi

if part COST 90; then
	pairdir "$W/cost" bench/gpu/aa20us/mm_torch.py bench/gpu/aa20us/mm_triton_ascend_impl.py
	for which in new old; do
		k=$K
		[ $which = old ] && k=$KOLD
		[ -x "$k" ] || { echo "   no $k"; continue; }
		t0=$(date +%s.%N)
		capped "$CAP" bash -c "$(declare -f vb summ); K=$k RES=$RES BUDGET=$BUDGET DEV=$DEV vb cost_$which $W/cost $k"
		wall=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}")
		python3 - "$RES/cost_$which.perf.json" "$wall" "$which" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["kjudge"]["timings"]
sides = sum(t.get(s, {}).get(k, 0) for s in ("reference", "candidate")
            for k in ("inputs_s", "warmup_s", "timed_loop_s"))
judge = t["total_s"] - t["start_s"] - sides
print(f"   {sys.argv[3]}: benchmark total {t['total_s']:.2f} s, workers' start {t['start_s']:.2f} s, "
      f"sides' inputs, warm-up and timed calls {sides:.2f} s, the judge's own {judge:.2f} s "
      f"({100 * judge / t['total_s']:.1f} %); verify + benchmark wall {sys.argv[2]} s")
PY
	done
fi
echo "== done $(date -u +%T), $(($(date +%s) - T0)) s"
