#!/usr/bin/env bash
# overhead_gpu.sh - the judge's own overhead on the GPU machine: two kjudge
# binaries side by side (bench/overhead/overhead.py, method in
# docs/PERFORMANCE.md, "The judge's own overhead"), on the examples' Triton
# candidates and on KernelBench level-1 problems judged against themselves.
#
#   bench/gpu/overhead_gpu.sh BIN_A BIN_B
#
# Run by the device tool from the repository root.  Carried: each binary's
# folder as it was built (kjudge beside its kjudge_worker.py, say
# .ohbin/before/ and .ohbin/after/), build/bench/selfusage.so (else it is
# compiled here with cc), and for the KernelBench part .anchors/ as
# run_gpu.sh has it (KernelBench's problems in .anchors/kb/KernelBench/level1).
# Writes under $OUT: overhead-raw-PART.json (the raw numbers), overhead.md
# (the report of every raw file there) and run.log.
#
# Environment (defaults in brackets):
#   PART          examples, kb or all [all]
#   RUNS          recorded rounds [10]; WARMUP_ROUNDS rounds before them [1]
#   MAX_S         start no round that would end past this many seconds [480]:
#                 one call stays inside the device tool's 10 minutes; a
#                 second call with another PART (or the same, its raw file
#                 renamed) adds rounds, and `overhead.py report` merges them
#   STEPS         the steps measured [verify-cold,verify-warm,bench-first,bench-warm]
#   EXAMPLES      the example folders [examples/*/]
#   KB_PROBLEMS   [19_ReLU.py 1_Square_matrix_multiplication_.py]
#   KB_DIR        [.anchors/kb/KernelBench/level1]
#   DEVICE        [cuda]; cpu runs the same plan on the CPU (to try it)
#   IMPL          the examples' candidate [triton_ascend_impl; cpu_impl on the CPU]
#   WARMUP, REPEATS  benchmark's [2, 20]
#   LABEL_A, LABEL_B [before, after]
#   KJ_PYTHON     [python3]
#   KJ_CACHE_MAX_MB  each binary's golden cache cap [24576]: a round of
#                 19_ReLU stores three 6.4 GB goldens per binary, and the
#                 rounds before it are evicted instead of filling /dev/shm
set -u
if [ $# -ne 2 ]; then
	echo "usage: bench/gpu/overhead_gpu.sh BIN_A BIN_B" >&2
	exit 2
fi
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
A=$1 B=$2
PART=${PART:-all}
DEVICE=${DEVICE:-cuda}
case $PART in examples | kb | all) ;; *) echo "PART: '$PART' is not examples, kb or all" >&2; exit 2 ;; esac
if [ "$DEVICE" = cpu ]; then IMPL=${IMPL:-cpu_impl}; else IMPL=${IMPL:-triton_ascend_impl}; fi
export KJ_PYTHON=${KJ_PYTHON:-python3} PYTHONUNBUFFERED=1
export KJ_CACHE_MAX_MB=${KJ_CACHE_MAX_MB:-24576}
PY=${PY:-python3}

echo "== machine"
if [ "$DEVICE" = cuda ]; then
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
fi
"$KJ_PYTHON" -c "import torch, triton, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
nproc; free -g | head -2; df -h /dev/shm | sed 's/^/  /'; uptime
for bin in "$A" "$B"; do
	echo "  $bin: $("$bin" --version 2>&1) $(sha256sum "$bin" | cut -c1-12)"
	[ -f "$(dirname "$bin")/kjudge_worker.py" ] || { echo "$bin: no kjudge_worker.py beside it" >&2; exit 2; }
done

SHIM=${SHIM:-build/bench/selfusage.so}
if [ ! -f "$SHIM" ]; then
	SHIM=/tmp/selfusage.so
	cc -std=c11 -O2 -Ilib -D_GNU_SOURCE -fPIC -shared -o "$SHIM" bench/overhead/selfusage.c || exit 2
fi

tasks=()
if [ "$PART" != kb ]; then
	for d in ${EXAMPLES-examples/*/}; do
		[ -d "$d" ] && tasks+=(--task "$d")
	done
fi
if [ "$PART" != examples ]; then
	# As run_gpu.sh: the problem is the task, and a candidate that is the
	# problem itself (ModelNew = Model) is the candidate.
	for p in ${KB_PROBLEMS:-19_ReLU.py 1_Square_matrix_multiplication_.py}; do
		src=${KB_DIR:-.anchors/kb/KernelBench/level1}/$p
		[ -f "$src" ] || { echo "$src: no such KernelBench problem" >&2; exit 2; }
		d=/tmp/kbo/${p%.py}
		rm -rf "$d" && mkdir -p "$d"
		cp "$src" "$d/kb_torch.py"
		{ cat "$src"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$d/kb_$IMPL.py"
		tasks+=(--task "$d:kb:$IMPL")
	done
fi

echo "== overhead: $PART, $DEVICE, ${RUNS:-10} rounds"
"$PY" bench/overhead/overhead.py run --a "$A" --b "$B" \
	--label-a "${LABEL_A:-before}" --label-b "${LABEL_B:-after}" \
	--device "$DEVICE" --impl "$IMPL" --runs "${RUNS:-10}" --warmup-rounds "${WARMUP_ROUNDS:-1}" \
	--steps "${STEPS:-verify-cold,verify-warm,bench-first,bench-warm}" \
	--warmup "${WARMUP:-2}" --repeats "${REPEATS:-20}" --max-seconds "${MAX_S:-480}" \
	--python "$KJ_PYTHON" --shim "$SHIM" --raw "$OUT/overhead-raw-$PART.json" "${tasks[@]}" > "$OUT/overhead-runs.log"
rc=$?
tail -n 40 "$OUT/overhead-runs.log"
uptime
"$PY" bench/overhead/overhead.py report "$OUT"/overhead-raw-*.json > "$OUT/overhead.md" || rc=1
echo "== done (rc=$rc): \$OUT/overhead.md, \$OUT/overhead-raw-$PART.json"
exit $rc
