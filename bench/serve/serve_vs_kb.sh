#!/usr/bin/env bash
# serve_vs_kb.sh - how an RL loop gets its verdicts, three ways, side by side
# on one GPU (issue 27; bench/serve/drive.py does the work):
#   (a) kjudge serve with the Python client (python/), CONCURRENCY (8) at once;
#   (b) kjudge verify then kjudge benchmark, one candidate after another;
#   (c) KernelBench's eval_kernel_against_ref called in a loop in one Python
#       process, as RL loops call it.
# The stream: for each KernelBench level-1 problem of KB_IDS (default
# 19_ReLU's, 21_Sigmoid's, 22_Tanh's and 1-9), its reference as candidate
# and an honest Triton kernel for the elementwise ones; LOAD_INLINE=1 adds a
# CUDA load_inline ReLU (a build of about a minute each, to see builds
# overlap the other candidates' GPU phases in (a)).  The same trials on all
# three: TRIALS correctness trials (5), PERF timed calls (100).  Reported per
# way: evaluations per hour, latency p50 and p95 (from submission to
# verdict); for (a) the judge's own seconds per evaluation too.
#
# Outputs under $OUT: serve_vs_kb.log, serve.json, cli.json, kb.json and
# serve_vs_kb.json (the three summaries side by side).
#
# Needs build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so and
# .anchors/kb (KernelBench's src/ and KernelBench/, as bench/gpu/eval_vs_kb.sh
# says), .anchors/shims (pydantic and the others KernelBench imports).
# Run through the device tool, from the repository root:
#   command: bash bench/serve/serve_vs_kb.sh
#   carry:   ["build/kjudge", "build/kjudge_worker.py", "build/kjudge_timer.so",
#             "build/kjudge_template.so", ".anchors"]
# Dry run on a CPU (a tiny stream, (a) and (b) only, (c) imported):
#   DRY=1 PY=.venv/bin/python OUT=/tmp/svk bash bench/serve/serve_vs_kb.sh
#
# Knobs: KB_IDS, CONCURRENCY (8), JOBS (serve's -j, 8), TRIALS, PERF,
# DEADLINE_S (seconds per way, 150), SKIP_SERVE, SKIP_CLI, SKIP_KB, LOAD_INLINE,
# ANCHORS (where .anchors is; the repository's by default).
set -u
# The device lacks libmicrohttpd, which kjudge links (serve): a copy of
# this machine's (Debian's libmicrohttpd12) travels in .anchors/lib.
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/serve_vs_kb.log") 2>&1
PY=${PY:-python3}
DRY=${DRY:-}
ROOT=$PWD
K=$ROOT/build/kjudge
ANCHORS=${ANCHORS:-$ROOT/.anchors}
KB=$ANCHORS/kb
W=${SVK_DIR:-/tmp/svk}
DEVICE=cuda
export KJ_PYTHON=${KJ_PYTHON:-$PY} KJ_TIME_BUDGET=${KJ_TIME_BUDGET:-30} PYTHONUNBUFFERED=1
export TRIALS=${TRIALS:-5} PERF=${PERF:-100} DEADLINE_S=${DEADLINE_S:-150}
export CONCURRENCY=${CONCURRENCY:-8}
JOBS=${JOBS:-8}
IDS=${KB_IDS:-19 21 22 1 2 3 4 5 6 7 8 9}
LEVEL1=$KB/KernelBench/level1
rm -rf "$W"
mkdir -p "$W"

if [ -n "$DRY" ]; then
	# A tiny level-1-like problem on the CPU, with few trials.
	DEVICE=cpu TRIALS=1 PERF=5 JOBS=2 CONCURRENCY=2 DEADLINE_S=${DEADLINE_S:-100}
	export TRIALS PERF CONCURRENCY
	LEVEL1=$W/level1
	mkdir -p "$LEVEL1"
	cat > "$LEVEL1/19_ReLU.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(64, 256) - 0.5]


def get_init_inputs():
    return []
PY
	IDS=19
fi
echo "== serve_vs_kb $(date -u +%FT%TZ)${DRY:+ (dry run)}, device $DEVICE, trials $TRIALS, perf $PERF"
[ -z "$DRY" ] && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
$PY "$ROOT/bench/serve/drive.py" stream "$W/stream" "$LEVEL1" "$IDS" || exit 1

if [ -z "${SKIP_SERVE:-}" ]; then
	echo "== (a) kjudge serve, the Python client at concurrency $CONCURRENCY"
	"$K" serve --db "$W/serve.db" --device "$DEVICE" -j "$JOBS" --input_sets "$TRIALS" \
		--repeats "$PERF" --max_repeats "$PERF" --warmup 5 >"$W/serve.out" 2>"$W/serve.err" &
	spid=$!
	for _ in $(seq 100); do [ -s "$W/serve.out" ] && break; sleep 0.1; done
	url=$(sed -n 's/^listening on //p' "$W/serve.out")
	echo "   $(head -1 "$W/serve.out")"
	if [ -z "$DRY" ]; then
		# Whether warm workers, idle, hold a CUDA context each (device
		# memory the timed phases then lack): what the device shows
		# 20 s after the start, before any request.
		sleep 20
		ctx=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null)
		echo "   idle, 20 s after the start: $(printf '%s' "$ctx" | grep -c .) processes on the GPU, $(printf '%s\n' "$ctx" | awk -F, '{s += $2} END {print s + 0}') MiB; $(pgrep -c -f kjudge_worker) workers"
	fi
	if [ -n "$url" ]; then
		$PY "$ROOT/bench/serve/drive.py" serve "$url" "$W/stream" "$OUT/serve.json"
		curl -s "$url/metrics" 2>/dev/null | grep -v "^#" | sed 's/^/   /'
	fi
	kill -TERM $spid
	wait $spid
	echo "   [serve exit $?]"
	tail -5 "$W/serve.err"
	"$K" report "$W/serve.db" --json "$W/serve_report.json" >/dev/null && echo "   kjudge report reads the store"
fi

if [ -z "${SKIP_CLI:-}" ]; then
	echo "== (b) kjudge verify + benchmark per candidate"
	$PY "$ROOT/bench/serve/drive.py" cli "$K" "$W/stream" "$OUT/cli.json"
fi

if [ -z "${SKIP_KB:-}" ]; then
	echo "== (c) KernelBench's eval_kernel_against_ref in a loop"
	if [ -n "$DRY" ]; then
		# tqdm and requests, which the GPU machine has, as stand-ins that
		# only let the modules import here.
		mkdir -p "$W/dryshims/tqdm" "$W/dryshims/requests"
		printf 'def tqdm(it=None, *a, **k):\n    return it\n' >"$W/dryshims/tqdm/__init__.py"
		: >"$W/dryshims/requests/__init__.py"
		PYTHONPATH=$ANCHORS/shims:$W/dryshims:$KB/src $PY -c "import kernelbench.eval as e; print('   imports:', e.eval_kernel_against_ref.__name__)" ||
			echo "!! KernelBench does not import"
	else
		PYTHONPATH=$ANCHORS/shims $PY "$ROOT/bench/serve/drive.py" kb "$KB/src" "$W/stream" "$OUT/kb.json"
	fi
fi

echo "== summary"
$PY - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = {}
for m in ("serve", "cli", "kb"):
    p = os.path.join(out, m + ".json")
    if os.path.exists(p):
        s = json.load(open(p))
        rows[m] = {k: s[k] for k in ("evaluations", "wall_s", "per_hour", "latency_p50_s", "latency_p95_s")}
        verdicts = {}
        for r in s["rows"]:
            verdicts.setdefault(r["kind"], {}).setdefault(str(r["status"]), 0)
            verdicts[r["kind"]][str(r["status"])] += 1
        rows[m]["verdicts"] = verdicts
        judge = [r["judge_s"] for r in s["rows"] if r.get("judge_s")]
        if judge:
            rows[m]["judge_s_mean"] = sum(judge) / len(judge)
for m, r in rows.items():
    print("%-6s %4d evaluations, %8.0f an hour, p50 %s s, p95 %s s, %s" % (
        m, r["evaluations"], r["per_hour"] or 0, r["latency_p50_s"], r["latency_p95_s"], r["verdicts"]))
if "serve" in rows and "kb" in rows and rows["kb"]["per_hour"]:
    print("serve / KernelBench's loop: %.1f times the evaluations an hour" % (
        rows["serve"]["per_hour"] / rows["kb"]["per_hour"]))
json.dump(rows, open(os.path.join(out, "serve_vs_kb.json"), "w"), indent=1)
PY
