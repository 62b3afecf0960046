#!/usr/bin/env bash
# t0500-bench-overhead.sh - the overhead benchmark's own parts
# (bench/overhead/): the LD_PRELOAD shim reports the judge's own CPU time
# and nothing else's; the driver measures a real kjudge, refuses runs that
# went wrong, and its report gets ratios right; the GPU script runs its
# plan on the CPU.
. "$(dirname "$0")/lib.sh"
shim=${KJ_SHIM:-$KJ_BUILD/bench/selfusage.so}
bench=$KJ_TESTS/../bench
# A sanitizer build of kjudge wants its runtime first in the library list.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

test_expect 'the shim writes the judge process own usage at exit, under its pid' '
	test -f "$shim"
	LD_PRELOAD=$shim KJ_SELFUSAGE_FILE=$PWD/u.json $KJUDGE compare \
		$KJ_TESTS/../examples/compare/golden.npy $KJ_TESTS/../examples/compare/actual_ok.npy > out.txt &
	pid=$!
	wait $pid
	grep -q "^PASS" out.txt
	jget u.json "d[\"pid\"] == $pid and d[\"utime_s\"] + d[\"stime_s\"] > 0 and 0 < d[\"maxrss_kb\"] < 1 << 20 or d" | grep -qx True
'

test_expect 'the shim leaves no trace in the environment and a forked copy that exits writes nothing' '
	LD_PRELOAD=$shim KJ_SELFUSAGE_FILE=$PWD/u.json "$KJ_PYTHON" -c "
import os, sys, time
print(os.environ.get(\"LD_PRELOAD\"), os.environ.get(\"KJ_SELFUSAGE_FILE\"))
open(\"parent.pid\", \"w\").write(str(os.getpid()))
if os.fork() == 0:
    time.sleep(0.5)   # exits after the parent, through exit(): destructors run
    sys.exit(0)
" > env.txt
	sleep 1.5
	test "$(cat env.txt)" = "None None"
	test "$(jget u.json "d[\"pid\"]")" = "$(cat parent.pid)"
'

test_expect 'without the variable the shim writes nothing' '
	LD_PRELOAD=$shim $KJUDGE --version > /dev/null
	test -z "$(ls)"
'

# The driver on one round of the many-case task, one step: two real runs.
test_expect 'overhead.py run: a real round of two binaries, and its report' '
	"$KJ_PYTHON" $bench/overhead/overhead.py run --a $KJUDGE --b $KJUDGE --runs 1 --warmup-rounds 0 \
		--steps verify-cold --task $bench/overhead/tasks/many::cpu_impl --python "$KJ_PYTHON" \
		--shim $shim --work $PWD --raw raw.json > out.txt
	jget raw.json "len(d[\"runs\"]) == 2 and d[\"rounds_complete\"] == 1 and sorted(r[\"side\"] for r in d[\"runs\"]) == [\"a\", \"b\"]" | grep -qx True
	jget raw.json "all(0 < r[\"judge_cpu_s\"] < r[\"tree_cpu_s\"] and r[\"start_s\"] < r[\"wall_s\"] and r[\"compute_s\"] > 0 and r[\"from_cache\"] == 0 for r in d[\"runs\"]) or d" | grep -qx True
	grep -q "^| many | verify-cold | 1 |" out.txt
	grep -q "^| all | (sum) | 1 |" out.txt
	test -z "$(ls -d kj-overhead-* 2>/dev/null)"
'

test_expect 'overhead.py run: a run that fails, leaves no result or no usage stops the benchmark (exit 2)' '
	printf "#!%s\nimport os\nos._exit(0)\n" "$KJ_PYTHON" > quick_exit
	chmod +x quick_exit
	for bin in /bin/false:"exited 1 (expected 0)" /bin/true:"left no result" $PWD/quick_exit:"left no usage record"; do
		expect_exit 2 "$KJ_PYTHON" $bench/overhead/overhead.py run --a ${bin%%:*} --b $KJUDGE --runs 1 --warmup-rounds 0 \
			--steps verify-cold --task $bench/overhead/tasks/many::cpu_impl --shim $shim --work $PWD \
			--raw raw.json > out.txt 2> err.txt
		grep -q "^overhead: .*${bin#*:}" err.txt
	done
	jget raw.json "len(d[\"runs\"])" | grep -qx 0
	expect_exit 2 "$KJ_PYTHON" $bench/overhead/overhead.py run --a $KJUDGE --b $KJUDGE --steps bench-first \
		--shim $shim --raw raw.json 2> err.txt
	grep -q "bench-first needs verify-cold" err.txt
	expect_exit 2 "$KJ_PYTHON" $bench/overhead/overhead.py run --a $KJUDGE --b $KJUDGE --shim nowhere.so 2> err.txt
	grep -q "no shim" err.txt
'

test_expect 'overhead.py report: medians, percentiles, ratios and intervals of known data, two raw files merged' '
	"$KJ_PYTHON" -c "
import json, sys
sys.path.insert(0, \"$bench/overhead\")
import overhead
def raw(rounds, f):
    runs = []
    for r in range(rounds):
        for side, k in ((\"a\", 1.0), (\"b\", f)):
            rec = {m: k * (1 + r) for m in overhead.METRICS}
            rec.update(side=side, round=r, task=\"t\", step=\"verify-cold\", load1=0.5)
            runs.append(rec)
    return {\"format\": \"kjudge-overhead-1\", \"date\": \"d\", \"device\": \"cpu\", \"rounds_complete\": rounds,
            \"machine\": {\"host\": \"h\", \"cpu\": \"c\", \"cpus\": 2, \"kernel\": \"k\"},
            \"settings\": {\"warmup_rounds\": 1, \"warmup\": 2, \"repeats\": 20},
            \"labels\": {\"a\": \"before\", \"b\": \"after\"},
            \"binaries\": {s: {\"path\": \"p\", \"version\": \"v\", \"sha256\": \"0\" * 64} for s in \"ab\"},
            \"tasks\": [{\"name\": \"t\"}], \"runs\": runs}
json.dump(raw(10, 2.0), open(\"twice.json\", \"w\"))
json.dump(raw(10, 1.0), open(\"same.json\", \"w\"))
json.dump(raw(5, 2.0), open(\"half.json\", \"w\"))
"
	"$KJ_PYTHON" $bench/overhead/overhead.py report twice.json > twice.md
	grep -q "^| t | verify-cold | 10 | 5.500 (1.900–9.100) | 11.00 (3.800–18.20) | 2.000 \[2.000, 2.000\] \* |" twice.md
	"$KJ_PYTHON" $bench/overhead/overhead.py report same.json --json s.json > same.md
	grep -q "^| t | verify-cold | 10 | 5.500 (1.900–9.100) | 5.500 (1.900–9.100) | 1.000 \[1.000, 1.000\] |" same.md
	jget s.json "d[\"rows\"][0][\"judge_cpu_s\"][\"ratio\"]" | grep -qx 1.0
	"$KJ_PYTHON" $bench/overhead/overhead.py report twice.json half.json > both.md
	grep -q "^| t | verify-cold | 15 |" both.md
	expect_exit 2 "$KJ_PYTHON" $bench/overhead/overhead.py report nothing.json 2> err.txt
	grep -q "cannot read a raw file" err.txt
'

# The GPU script's plan on the CPU: the examples part, one round, one step.
test_expect 'bench/gpu/overhead_gpu.sh runs its plan with DEVICE=cpu' '
	(cd $KJ_TESTS/.. && OUT=$SCRATCH/out DEVICE=cpu PART=examples EXAMPLES=examples/multicase/ \
		RUNS=1 WARMUP_ROUNDS=0 STEPS=verify-cold SHIM=$shim PY="$KJ_PYTHON" KJ_PYTHON="$KJ_PYTHON" \
		bash bench/gpu/overhead_gpu.sh $KJUDGE $KJUDGE) > gpu.txt
	grep -q "^| multicase | verify-cold | 1 |" out/overhead.md
	jget out/overhead-raw-examples.json "len(d[\"runs\"])" | grep -qx 2
	expect_exit 2 bash $KJ_TESTS/../bench/gpu/overhead_gpu.sh $KJUDGE
'
test_done
