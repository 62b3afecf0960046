#!/usr/bin/env bash
# warm_gpu.sh - where a warm evaluation's time goes in kjudge serve on one
# GPU (issue 27's target: a warm task's evaluation, its reference already
# computed, under 2 s at p50 for kernels of milliseconds).  KernelBench
# level-1 references as candidates, each task REPS times, through the
# Python client: first one at a time (CONCURRENCY 1: each evaluation's own
# latency), then the same stream again at CONCURRENCY 8 on a fresh server.
# The store's attempts are dumped with their judge_phases (env), so the
# figures say which phase took the time.
#
# Outputs under $OUT: warm_gpu.log, warm_c1.json, warm_c8.json (drive.py's
# summaries) and warm_c1_phases.tsv, warm_c8_phases.tsv.
# Needs build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so and
# .anchors (KernelBench's level-1 tasks, libmicrohttpd).  Knobs: KB_IDS
# (default "1 2 16"), REPS (4), JOBS (serve's -j, 8), DEADLINE_S (seconds
# per pass, 110), PERF (100), TRIALS (5).
set -u
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/warm_gpu.log") 2>&1
PY=${PY:-python3}
ROOT=$PWD
K=$ROOT/build/kjudge
W=${WARM_DIR:-/tmp/warmgpu}
IDS=${KB_IDS:-1 2 16}
REPS=${REPS:-4}
JOBS=${JOBS:-8}
DEVICE=${DEVICE:-cuda}
LEVEL1=${LEVEL1:-$ROOT/.anchors/kb/KernelBench/level1}
export KJ_PYTHON=${KJ_PYTHON:-$PY} PYTHONUNBUFFERED=1
export TRIALS=${TRIALS:-5} PERF=${PERF:-100} DEADLINE_S=${DEADLINE_S:-110}
rm -rf "$W" && mkdir -p "$W"
ids=
for id in $IDS; do for _ in $(seq "$REPS"); do ids="$ids $id"; done; done
$PY "$ROOT/bench/serve/drive.py" stream "$W/stream" "$LEVEL1" "$ids" || exit 1
for c in 1 8; do
	echo "== kjudge serve -j $JOBS, the client at concurrency $c"
	"$K" serve --db "$W/c$c.db" --device "$DEVICE" -j "$JOBS" --input_sets "$TRIALS" \
		--repeats "$PERF" --max_repeats "$PERF" --warmup 5 >"$W/c$c.out" 2>"$W/c$c.err" &
	spid=$!
	for _ in $(seq 100); do [ -s "$W/c$c.out" ] && break; sleep 0.1; done
	url=$(sed -n 's/^listening on //p' "$W/c$c.out")
	# The warm workers' start (torch imported) before the first request.
	sleep 8
	[ -n "$url" ] && CONCURRENCY=$c $PY "$ROOT/bench/serve/drive.py" serve "$url" "$W/stream" "$OUT/warm_c$c.json"
	kill -TERM $spid; wait $spid; echo "   [serve exit $?]"; tail -3 "$W/c$c.err"
	$PY - "$W/c$c.db" "$OUT/warm_c${c}_phases.tsv" <<'PYX'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT t.name, a.status, a.error_type, a.speedup, a.judge_s, a.env, a.started_at "
                  "FROM attempts a JOIN tasks t USING (task_key) ORDER BY a.started_at").fetchall()
def flat(env):
    """judge_phases' figures, one level down: {run.phase: seconds}."""
    ph = (json.loads(env) if env else {}).get("judge_phases") or {}
    out = {}
    for run, v in ph.items():
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, (int, float)):
                    out[run + "." + k] = x
            # The start's steps and the attempt's own figures (prestart_s).
            for k, x in (v.get("detail") or {}).items():
                if isinstance(x, (int, float)) and (k.startswith("start_") or k == "prestart_s"):
                    out[run + "." + k] = x
        elif isinstance(v, (int, float)):
            out[run] = v
    return out
keys = []
for r in rows:
    for k in flat(r[5]):
        if k not in keys:
            keys.append(k)
with open(sys.argv[2], "w") as f:
    f.write("\t".join(["task", "status", "error_type", "speedup", "judge_s"] + keys) + "\n")
    for r in rows:
        ph = flat(r[5])
        f.write("\t".join([str(r[0]), str(r[1]), str(r[2]), "%.3f" % (r[3] or 0), "%.2f" % (r[4] or 0)]
                          + ["%.2f" % ph[k] if k in ph else "" for k in keys]) + "\n")
print(open(sys.argv[2]).read())
PYX
done
