#!/usr/bin/env bash
# eval_vs_kb.sh - `kjudge eval` against KernelBench's own batch evaluator,
# scripts/eval_from_generations.py, side by side on one H200.
#
# What it measures.  A study of KernelBench level-1 tasks with one candidate
# each, the reference itself (`class ModelNew(Model): pass` after the
# problem's source, as .anchors/kb_anchor.py makes them), so every attempt
# runs to its end.  With the same trials on both sides (5 correctness trials:
# KernelBench's num_correct_trials=5, kjudge's --input_sets 5; 100 timing
# trials: num_perf_trials=100, kjudge's --repeats 100 --max_repeats 100), it
# times, wall clock around each command:
#   1. kjudge eval on a subset (KB_SUBSET, default problems 1-12),
#   2. KernelBench's eval_from_generations.py on the same subset (one GPU,
#      measure_performance=True; it also times the reference, its
#      check_for_excessive_speedup being on by default),
#   3. kjudge eval on all 100 level-1 problems (a second store),
# each kjudge step with a golden cache of its own (KJ_CACHE_DIR, removed
# after it: no reference output is reused from the earlier step), after a
# warm-up that starts CUDA once (torch's libraries then in the page cache),
# and reports per side the wall seconds, tasks, seconds per task, the ratio
# KernelBench / kjudge on the subset, kjudge's all-100 time, and each task's
# verdicts from both.  Every step is capped (see the knobs) so the whole call
# ends before ~9.5 minutes; a step that fails or is cut is said so in the log
# and the JSON, and the later steps still run.  When KernelBench's side is
# cut, the ratio given is a lower bound (KB_CAP / kjudge's subset time).
#
# Outputs under $OUT: eval_vs_kb.log, eval_vs_kb.json (the summary) and
# eval_vs_kb.tar.gz (both stores, KernelBench's eval_results.json and its
# full output, kjudge's output).
#
# Needs, beside the repository: build/kjudge, build/kjudge_worker.py and
# build/kjudge_timer.so (built here with `make -j2 all`; the whole build/ is
# too big to carry), and .anchors/ (ignored, never committed) holding
# .anchors/kb/{src,KernelBench,scripts} exported from KernelBench's public
# repository (`git archive HEAD src KernelBench scripts | tar x -C
# .anchors/kb`) and .anchors/shims/ (stand-ins for pydantic, python-dotenv,
# openai, litellm, and for pydra and modal, which eval_from_generations.py
# imports and the GPU machine lacks; tqdm, requests and numpy are there;
# .anchors/shims_dry/ has tqdm and requests for the dry run only).
#
# Run through the device tool, from the repository root:
#   command: bash bench/gpu/eval_vs_kb.sh
#   carry:   ["build/kjudge", "build/kjudge_worker.py", "build/kjudge_timer.so",
#             "build/kjudge_template.so", ".anchors"]
# If step 3 is cut for time, a second call with SKIP_KJ_SUB=1 SKIP_KB=1
# gives it the whole call.
# Dry run here (no GPU: builds the directories, checks KernelBench's script
# parses its arguments and finds every generation, runs kjudge eval on a tiny
# CPU task to exercise the store read-out, prints the commands):
#   DRY=1 PY=.venv/bin/python OUT=/tmp/evk-out bash bench/gpu/eval_vs_kb.sh
#
# Knobs (environment):
#   KB_SUBSET     problem ids for the side-by-side part (spaces or commas;
#                 default the first 12 ids).  A non-contiguous list is given
#                 to KernelBench as subset=(min,max) with the other ids of
#                 that range pre-marked as done in its eval_results.json
#                 (it skips problems already there), those entries removed
#                 after (its problem_ids field is not read by its main()).
#   KB_CAP        seconds for KernelBench's side (default 270)
#   KB_TIMEOUT    its per-problem timeout= (default 300)
#   KJ_SUB_CAP    seconds for kjudge on the subset (default 150)
#   KJ_ALL_CAP    seconds for kjudge on all 100 (default: what is left until
#                 DEADLINE)
#   DEADLINE      seconds after the start by which every step ends (default
#                 545; a cut step gets 15 s more to end, then the summary)
#   JOBS          kjudge's -j (default 8)
#   SKIP_KJ_SUB, SKIP_KB, SKIP_KJ_ALL   non-empty: leave that step out
#   PY            the Python with torch (default python3); KJ_PYTHON follows it
#   WARM_MEM_GB   touch this much memory once before anything is timed (a
#                 fresh Firecracker machine backs memory as it is first used)
#   KJ_ALL_FROM   a store of an earlier call's step 3 (from its tarball,
#                 carried): step 3 resumes it (kjudge eval skips what is done)
set -u
# The device lacks libmicrohttpd, which kjudge links (serve): a copy of
# this machine's (Debian's libmicrohttpd12) travels in .anchors/lib.
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T0=$(date +%s.%N)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/eval_vs_kb.log") 2>&1
TEE=$!
PY=${PY:-python3}
DRY=${DRY:-}
ROOT=$PWD
K=$ROOT/build/kjudge
KB=$ROOT/.anchors/kb
SRC=$KB/KernelBench/level1
W=${EVK_DIR:-/tmp/evk}
JOBS=${JOBS:-8}
DEADLINE=${DEADLINE:-545}
KB_CAP=${KB_CAP:-270}
KB_TIMEOUT=${KB_TIMEOUT:-300}
KJ_SUB_CAP=${KJ_SUB_CAP:-150}
export KJ_PYTHON=${KJ_PYTHON:-$PY} KJ_STATE_DIR=${KJ_STATE_DIR:-/tmp/kjstate}
export KJ_TIME_BUDGET=${KJ_TIME_BUDGET:-30} PYTHONUNBUFFERED=1
# KernelBench's imports: the shims first; the dry run adds tqdm and requests.
KBPATH=$ROOT/.anchors/shims
[ -n "$DRY" ] && KBPATH=$KBPATH:$ROOT/.anchors/shims_dry
KBPATH=$KBPATH:$KB/src
KJ_ARGS=(--input_sets 5 --repeats 100 --max_repeats 100 --warmup 5 -j "$JOBS" --gpus 0)

now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.2f\", $(now) - $1}"; }
left() { awk "BEGIN{s = $DEADLINE - ($(now) - $T0); printf \"%d\", s < 0 ? 0 : s}"; }
min() { [ "$1" -lt "$2" ] && echo "$1" || echo "$2"; }
# capped SECONDS CMD...: CMD in a process group of its own, which is sent
# TERM when SECONDS have passed (KILL 15 s later); returns CMD's status
# (124 when it was cut).
capped() {
	local s=$1 pid rc w
	shift
	if [ "$s" -le 0 ]; then echo "   [no time left for: $*]"; return 124; fi
	setsid "$@" &
	pid=$!
	(
		t=0
		while [ $t -lt "$s" ]; do sleep 1; kill -0 $pid 2>/dev/null || exit 0; t=$((t + 1)); done
		echo "   [cap of $s s reached: ending process group $pid]"
		touch "$W/cut.$pid"
		kill -TERM -- -$pid 2>/dev/null
		for _ in $(seq 15); do sleep 1; kill -0 -- -$pid 2>/dev/null || exit 0; done
		kill -KILL -- -$pid 2>/dev/null
	) &
	w=$!
	wait $pid
	rc=$?
	if [ -e "$W/cut.$pid" ]; then
		rc=124
		wait $w  # until the group is gone
	else
		kill $w 2>/dev/null  # the watcher's last `sleep 1` ends by itself
		wait $w 2>/dev/null
	fi
	return $rc
}
show() { printf '+'; printf ' %q' "$@"; printf '\n'; }

echo "== eval_vs_kb $(date -u +%FT%TZ)${DRY:+ (dry run)}"
rm -rf "$W"
mkdir -p "$W"
if [ -z "$DRY" ]; then
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
	df -h /dev/shm /tmp | sed 's/^/  /'
	echo "cpus $(nproc)"; free -g | head -2
	for f in enabled shmem_enabled; do
		echo "transparent_hugepage/$f: $(cat /sys/kernel/mm/transparent_hugepage/$f 2>/dev/null)"
	done
fi
$PY -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"
for f in "$K" "$ROOT/build/kjudge_worker.py" "$SRC/1_Square_matrix_multiplication_.py" "$KB/scripts/eval_from_generations.py" \
	"$ROOT/.anchors/shims/pydra/__init__.py" "$ROOT/.anchors/shims/modal/__init__.py"; do
	[ -e "$f" ] || echo "!! missing: $f (see the comment at the top of this script)"
done
"$K" --version 2>/dev/null | head -1

echo "== a. generations: the reference as the candidate"
all_ids=$(cd "$SRC" && ls *.py | sed 's/_.*//' | sort -n | tr '\n' ' ')
SUB=$(echo "${KB_SUBSET:-$(echo $all_ids | cut -d' ' -f1-12)}" | tr ',' ' ')
file_of() { (cd "$SRC" && ls "$1"_*.py 2>/dev/null | head -1); }
gen() { # gen ID DIR: DIR/level_1_problem_ID_sample_0_kernel.py
	local f
	f=$(file_of "$1")
	{ cat "$SRC/$f"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$2/level_1_problem_$1_sample_0_kernel.py"
}
mkdir -p "$W/suite_all/level1" "$W/suite_sub/level1" "$W/all/ref" "$W/sub/ref" "$W/kbruns/ref"
for p in $all_ids; do
	cp "$SRC/$(file_of "$p")" "$W/suite_all/level1/"
	gen "$p" "$W/all/ref"
done
SUB_OK=
for p in $SUB; do
	f=$(file_of "$p")
	if [ -z "$f" ]; then echo "!! KB_SUBSET: no level-1 problem $p"; continue; fi
	cp "$SRC/$f" "$W/suite_sub/level1/"
	gen "$p" "$W/sub/ref"
	gen "$p" "$W/kbruns/ref"
	SUB_OK="$SUB_OK $p"
done
SUB=$(echo $SUB_OK)
NSUB=$(echo $SUB | wc -w)
echo "   all: $(ls "$W/all/ref" | wc -l) generations in $W/all/ref, suite $W/suite_all"
echo "   subset ($NSUB): $SUB"
echo "     $(cd "$W/suite_sub/level1" && ls | sort -n | tr '\n' ' ')"
LO=$(echo $SUB | tr ' ' '\n' | sort -n | head -1)
HI=$(echo $SUB | tr ' ' '\n' | sort -n | tail -1)
# Ids in LO..HI that are not in the subset: pre-marked as evaluated.
SKIP_IDS=$(for p in $all_ids; do [ "$p" -ge "$LO" ] && [ "$p" -le "$HI" ] && ! echo " $SUB " | grep -q " $p " && echo "$p"; done | tr '\n' ' ')
if [ -n "$SKIP_IDS" ]; then
	echo "   KernelBench: subset=($LO,$HI), ids pre-marked as done: $SKIP_IDS"
	$PY -c "import json, sys; json.dump({p: [] for p in sys.argv[1:]}, open('$W/kbruns/ref/eval_results.json', 'w'))" $SKIP_IDS
fi

KB_CMD=(env "PYTHONPATH=$KBPATH" "$PY" "$KB/scripts/eval_from_generations.py"
	run_name=ref dataset_src=local level=1 "subset=($LO,$HI)"
	num_correct_trials=5 num_perf_trials=100 measure_performance=True timing_method=cuda_event
	timeout="$KB_TIMEOUT" num_gpu_devices=1 build_cache=False backend=cuda precision=fp32
	"runs_dir=$W/kbruns" "kernel_eval_build_dir=$W/kbcache" "gpu_arch=['Hopper']" verbose=False)
KJ_SUB_CMD=("$K" eval "$W/suite_sub" "$W/sub/ref" --db "$W/kj_sub.sqlite" "${KJ_ARGS[@]}")
KJ_ALL_CMD=("$K" eval "$W/suite_all" "$W/all/ref" --db "$W/kj_all.sqlite" "${KJ_ARGS[@]}")

if [ -n "$DRY" ]; then
	echo "== dry run: the commands"
	show "${KJ_SUB_CMD[@]}"
	show "${KB_CMD[@]}"
	show "${KJ_ALL_CMD[@]}"
	echo "== dry run: KernelBench's script reads its arguments and finds the generations"
	(cd "$KB" && W=$W PYTHONPATH=$KBPATH "$PY" - "${KB_CMD[@]:3}" <<'PY'
import importlib.util, os, sys, json
script, args = sys.argv[1], sys.argv[2:]
spec = importlib.util.spec_from_file_location("efg", script)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
import pydra
c = pydra.apply_overrides(m.EvalConfig(), args)
print("   config:", {k: c.to_dict()[k] for k in ("run_name", "dataset_src", "level", "subset", "num_correct_trials",
      "num_perf_trials", "measure_performance", "timeout", "num_gpu_devices", "build_cache", "runs_dir", "gpu_arch")})
ds = m.construct_kernelbench_dataset(level=c.level, source=c.dataset_src, dataset_name=c.dataset_name)
lo, hi = c.subset
ids = [p for p in ds.get_problem_ids() if lo <= p <= hi]
run_dir = os.path.join(c.runs_dir, c.run_name)
ev = os.path.join(run_dir, "eval_results.json")
todo = [p for p in ids if not m.check_if_eval_exists_local(p, 0, ev)]
print(f"   dataset: {len(ds)} level-{c.level} problems; subset {lo}..{hi}: {len(ids)} ids, to evaluate {todo}")
for p in todo:
    k = m.fetch_kernel_from_disk(run_dir, c.level, p, 0)
    ref = m.fetch_ref_arch_from_problem_id(ds, p, c.dataset_src)
    assert k is not None, f"no generation for problem {p}"
    assert k.startswith(ref) and "class ModelNew(Model)" in k, f"problem {p}: the generation is not its reference + ModelNew"
print("   every generation found, each its problem's source plus ModelNew(Model)")
# For the read-out below: results in the script's own format (its
# add_to_eval_results_file), the last one failed; marked as the dry run's.
with open(os.path.join(os.environ["W"], "kb.out"), "w") as f:
    for i, p in enumerate(todo):
        ok = i < len(todo) - 1
        m.add_to_eval_results_file(p, 0, m.KernelExecResult(compiled=True, correctness=ok,
            metadata={"correctness_trials": "(5 / 5)"} if ok else {"runtime_error": "dry run: a made-up failure"},
            runtime=1.0, runtime_stats={}), ev)
        print(f"[Curr batch] Evaluation took {0.5 + i:.2f} seconds", file=f)
print("   dry run: made-up KernelBench results written for the read-out (not measurements)")
PY
	) || echo "!! the import/plumbing check failed"
	echo "== dry run: KernelBench's script itself (stops at its CUDA check here)"
	(cd "$KB" && "${KB_CMD[@]}" 2>&1 | grep -E "Starting Batch Eval|Error|error" | cut -c1-400 | tail -4)
	echo "== dry run: kjudge eval on a tiny CPU task, twice (two stores), for the read-out"
	mkdir -p "$W/tiny/level1" "$W/tinyruns/ref"
	cat > "$W/tiny/level1/1_TinyAdd.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.rand(64, 64), torch.rand(64, 64)]


def get_init_inputs():
    return []
PY
	{ cat "$W/tiny/level1/1_TinyAdd.py"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$W/tinyruns/ref/level_1_problem_1_sample_0_kernel.py"
	KJ_ARGS=(--input_sets 2 --repeats 5 --max_repeats 5 --warmup 1 -j 2 --device cpu)
	KJ_SUB_CMD=("$K" eval "$W/tiny" "$W/tinyruns/ref" --db "$W/kj_sub.sqlite" "${KJ_ARGS[@]}")
	KJ_ALL_CMD=("$K" eval "$W/tiny" "$W/tinyruns/ref" --db "$W/kj_all.sqlite" "${KJ_ARGS[@]}")
	SKIP_KB=1
fi

KJ_SUB_WALL=null KJ_SUB_RC=null KB_WALL=null KB_RC=null KJ_ALL_WALL=null KJ_ALL_RC=null
[ -n "$DRY" ] && KB_WALL=1.0 KB_RC=0  # the made-up results above
if [ -z "$DRY" ]; then
	if [ "${WARM_MEM_GB:-0}" -gt 0 ]; then
		# A fresh Firecracker machine backs its memory as it is first
		# touched (about 3 s per 8 GB, KINDS.md): every fresh page costs
		# that once, whoever writes it.  Touched once here, for both sides.
		echo "== warm-up: $WARM_MEM_GB GB of memory touched once"
		t0=$(now)
		$PY -c "import numpy as np; a = [np.ones(1 << 30, np.uint8) for _ in range($WARM_MEM_GB)]; print('   touched', len(a), 'GiB')"
		echo "   $(since "$t0") s"
	fi
	echo "== warm-up: CUDA context, torch's libraries in the page cache"
	t0=$(now)
	$PY -c "import torch; x = torch.rand(1024, 1024, device='cuda'); (x @ x).sum().item(); print('   ', torch.cuda.get_device_name(0))"
	echo "   $(since "$t0") s"
fi

if [ -z "${SKIP_KJ_SUB:-}" ]; then
	echo "== c1. kjudge eval, the subset ($NSUB tasks), cap $(min "$KJ_SUB_CAP" "$(left)") s"
	show "${KJ_SUB_CMD[@]}"
	t0=$(now)
	KJ_CACHE_DIR=/dev/shm/evk-cache-sub capped "$(min "$KJ_SUB_CAP" "$(left)")" "${KJ_SUB_CMD[@]}" > >(tee "$W/kj_sub.out") 2>&1
	KJ_SUB_RC=$?
	KJ_SUB_WALL=$(since "$t0")
	rm -rf /dev/shm/evk-cache-sub
	echo "   [kjudge subset: exit $KJ_SUB_RC, $KJ_SUB_WALL s]"
fi

if [ -z "${SKIP_KB:-}" ]; then
	cap=$(min "$KB_CAP" "$(left)")
	echo "== b. KernelBench scripts/eval_from_generations.py, the subset ($NSUB tasks), cap $cap s"
	show "${KB_CMD[@]}"
	t0=$(now)
	(cd "$KB" && capped "$cap" "${KB_CMD[@]}") > "$W/kb.out" 2>&1
	KB_RC=$?
	KB_WALL=$(since "$t0")
	grep -E "Evaluating |Start evaluation|\[Eval Result\] Problem|Evaluation took|WARNING|ERROR|Error|cap of" "$W/kb.out" | grep -v "^compiled=" | cut -c1-300
	if [ "$KB_RC" != 0 ]; then echo "   its last lines:"; tail -25 "$W/kb.out" | cut -c1-300 | sed 's/^/   | /'; fi
	echo "   [KernelBench subset: exit $KB_RC, $KB_WALL s]"
fi

if [ -z "${SKIP_KJ_ALL:-}" ]; then
	cap=$(left)
	[ -n "${KJ_ALL_CAP:-}" ] && cap=$(min "$KJ_ALL_CAP" "$cap")
	if [ -n "${KJ_ALL_FROM:-}" ]; then
		# A store of an earlier call (carried back): the same command resumes it.
		cp "$KJ_ALL_FROM" "$W/kj_all.sqlite" && echo "   resuming $KJ_ALL_FROM"
	fi
	echo "== c2. kjudge eval, all level-1 tasks, cap $cap s"
	show "${KJ_ALL_CMD[@]}"
	t0=$(now)
	KJ_CACHE_DIR=/dev/shm/evk-cache-all capped "$cap" "${KJ_ALL_CMD[@]}" > >(tee "$W/kj_all.out") 2>&1
	KJ_ALL_RC=$?
	KJ_ALL_WALL=$(since "$t0")
	du -sh /dev/shm/evk-cache-all 2>/dev/null | sed 's/^/   golden cache: /'
	rm -rf /dev/shm/evk-cache-all
	echo "   [kjudge all: exit $KJ_ALL_RC, $KJ_ALL_WALL s]"
fi

echo "== d. summary"
$PY - "$W" "$OUT/eval_vs_kb.json" "$KJ_SUB_WALL" "$KJ_SUB_RC" "$KB_WALL" "$KB_RC" "$KJ_ALL_WALL" "$KJ_ALL_RC" \
	"$NSUB" "$KB_CAP" "$SUB" "$SKIP_IDS" "${DRY:-}" <<'PY'
import json, os, re, sqlite3, sys
W, out = sys.argv[1], sys.argv[2]
num = lambda s: None if s in ("null", "") else float(s)
kj_sub_wall, kj_sub_rc, kb_wall, kb_rc, kj_all_wall, kj_all_rc = map(num, sys.argv[3:9])
nsub, kb_cap, sub, skip, dry = int(sys.argv[9]), float(sys.argv[10]), sys.argv[11].split(), set(sys.argv[12].split()), sys.argv[13]

def store(path):
    if not os.path.exists(path):
        return {"error": "no store"}
    try:
        db = sqlite3.connect(path, timeout=30)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute(
            "SELECT task, state, status, clean, error_type, category, charged, message, cases_total, cases_passed,"
            " static_ok, disabled_ok, profile_ok, speedup, judge_s, device FROM attempts ORDER BY task")]
        ntasks = db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
        runs = [dict(r) for r in db.execute("SELECT run_id, started_at, finished_at, settings FROM runs")]
        db.close()
    except sqlite3.Error as e:
        return {"error": f"sqlite: {e}"}
    pid = lambda t: int(re.match(r"\d+", t).group()) if re.match(r"\d+", t) else 0
    rows.sort(key=lambda r: pid(r["task"]))
    done = [r for r in rows if r["state"] == "done"]
    by = lambda k: sum(1 for r in done if r["status"] == k)
    return {"tasks": ntasks, "attempts": len(rows), "done": len(done), "pass": by("pass"),
            "clean": sum(1 for r in done if r["clean"]), "fail": by("fail"),
            "task_error": by("task_error"), "judge_error": by("judge_error"),
            "judge_s_sum": round(sum(r["judge_s"] or 0 for r in done), 2),
            "runs": runs, "per_task": {r["task"]: r for r in rows}}

def kb_side():
    p = os.path.join(W, "kbruns", "ref", "eval_results.json")
    res = {}
    if os.path.exists(p):
        try:
            d = json.load(open(p))
            res = {k: v[0] for k, v in d.items() if v and k not in skip}
            if skip:  # the pre-marked ids out again
                json.dump({k: v for k, v in d.items() if k not in skip}, open(p, "w"), indent=4)
        except (OSError, ValueError, IndexError) as e:
            return {"error": f"eval_results.json: {e}"}
    batches = []
    try:
        batches = [float(x) for x in re.findall(r"\[Curr batch\] Evaluation took ([0-9.]+) seconds", open(os.path.join(W, "kb.out")).read())]
    except OSError:
        pass
    per = {}
    for k in sorted(res, key=int):
        r = res[k]
        md = r.get("metadata") or {}
        per[k] = {"compiled": r.get("compiled"), "correctness": r.get("correctness"),
                  "runtime_us": r.get("runtime"),
                  "trials": md.get("correctness_trials") if isinstance(md, dict) else None,
                  "error": {m: md[m] for m in md if "error" in m} if isinstance(md, dict) else md}
    # Its batches (one problem each, in id order) and what it evaluated line up.
    done_ids = sorted((p for p in sub if p in res), key=int)
    for i, p in enumerate(done_ids):
        if i < len(batches):
            per[p]["batch_s"] = batches[i]
    return {"done": len(res), "correct": sum(1 for r in res.values() if r.get("correctness")),
            "compiled": sum(1 for r in res.values() if r.get("compiled")), "per_task": per}

S = {"settings": {"correctness_trials": 5, "perf_trials": 100, "kjudge": "--input_sets 5 --repeats 100 --max_repeats 100 --warmup 5",
                  "subset": sub, "dry_run": bool(dry)}}
try:
    import torch
    S["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
except Exception as e:
    S["device"] = f"? {e}"
ks = store(os.path.join(W, "kj_sub.sqlite")) if kj_sub_wall is not None else None
ka = store(os.path.join(W, "kj_all.sqlite")) if kj_all_wall is not None else None
kb = kb_side() if kb_wall is not None else None
def side(wall, rc, st, n):
    if wall is None:
        return None
    d = {"wall_s": wall, "exit": None if rc is None else int(rc), "cut": rc == 124, "tasks": n}
    if st:
        d.update(st)
        done = st.get("done", 0)
        d["s_per_task"] = round(wall / done, 3) if done else None
    return d
S["kernelbench_subset"] = side(kb_wall, kb_rc, kb, nsub)
S["kjudge_subset"] = side(kj_sub_wall, kj_sub_rc, ks, nsub)
S["kjudge_all"] = side(kj_all_wall, kj_all_rc, ka, (ka or {}).get("tasks"))
kbs, kjs = S["kernelbench_subset"], S["kjudge_subset"]
if kbs and kjs and kjs["wall_s"]:
    complete_kj = kjs.get("done") == nsub and not kjs["cut"]
    complete_kb = kbs.get("done") == nsub and not kbs["cut"]
    r = kbs["wall_s"] / kjs["wall_s"]
    S["ratio_kb_over_kjudge"] = round(r, 2) if complete_kj and complete_kb else None
    if complete_kj and kbs["cut"]:
        S["ratio_lower_bound"] = round(r, 2)  # KernelBench needs more than its wall for the whole subset
    S["ratio_note"] = ("both sides complete" if complete_kj and complete_kb else
                       f"kernelbench done {kbs.get('done')}/{nsub} (cut={kbs['cut']}), kjudge done {kjs.get('done')}/{nsub} (cut={kjs['cut']})")
json.dump(S, open(out, "w"), indent=1, default=str)

def fmt(x, d=2):
    return "-" if x is None else (f"{x:.{d}f}" if isinstance(x, float) else str(x))
for name, d in (("KernelBench eval_from_generations.py, subset", kbs), ("kjudge eval, subset", kjs), ("kjudge eval, all level 1", S["kjudge_all"])):
    if d is None:
        print(f"   {name}: not run"); continue
    print(f"   {name}: {fmt(d['wall_s'])} s wall, exit {fmt(d['exit'], 0)}{' (CUT)' if d['cut'] else ''}, "
          f"{d.get('done', '?')} of {d['tasks']} tasks done, {fmt(d.get('s_per_task'), 3)} s per task"
          + (f"; {d['correct']} correct, {d['compiled']} compiled" if 'correct' in d else "")
          + (f"; {d['pass']} pass ({d['clean']} clean), {d['fail']} fail, {d['task_error']} task errors, {d['judge_error']} judge errors" if 'pass' in d else "")
          + (f"; {d['error']}" if 'error' in d else ""))
if "ratio_kb_over_kjudge" in S:
    print(f"   ratio KernelBench / kjudge on the subset: {fmt(S['ratio_kb_over_kjudge'])}"
          + (f" (lower bound {S['ratio_lower_bound']})" if "ratio_lower_bound" in S else "") + f"  [{S['ratio_note']}]")
print("   per task (subset):  KernelBench compiled/correct batch_s | kjudge status clean speedup judge_s error_type")
kbp = (kbs or {}).get("per_task", {})
kjp = {re.match(r"\d+", t).group() if re.match(r"\d+", t) else t: r for t, r in ((kjs or {}).get("per_task") or {}).items()}
for p in sorted(set(kbp) | set(kjp) | set(sub), key=lambda x: int(x) if x.isdigit() else 0):
    a, b = kbp.get(p, {}), kjp.get(p, {})
    print(f"     {p:>4} {b.get('task', ''):<44} KB {fmt(a.get('compiled'))}/{fmt(a.get('correctness'))} {fmt(a.get('batch_s'), 1):>6} | "
          f"kj {fmt(b.get('status')):<11} {fmt(b.get('clean'))} {fmt(b.get('speedup'), 3):>6} {fmt(b.get('judge_s'), 1):>6} {fmt(b.get('error_type'))}")
print("   attempts that did not pass:")
n = 0
for side_name, d in (("kernelbench", kbs), ("kjudge subset", kjs), ("kjudge all", S["kjudge_all"])):
    for t, r in ((d or {}).get("per_task") or {}).items():
        if side_name == "kernelbench":
            if not r.get("correctness"):
                n += 1; print(f"     {side_name} {t}: compiled={r.get('compiled')} correctness={r.get('correctness')} {json.dumps(r.get('error'))[:400]}")
        elif r.get("status") != "pass":
            n += 1; print(f"     {side_name} {t}: {r.get('state')} {r.get('status')} {r.get('error_type')} [{r.get('category')}/{r.get('charged')}] {(r.get('message') or '')[:400]}")
if not n:
    print("     none")
if S["kjudge_all"] and S["kjudge_all"].get("per_task"):
    notclean = {}
    for t, r in S["kjudge_all"]["per_task"].items():
        if r.get("status") == "pass" and not r.get("clean"):
            notclean.setdefault(r.get("error_type"), []).append(t)
    for e, ts in notclean.items():
        print(f"   kjudge all: {len(ts)} passes not clean for {e} (the reference holds no kernel of its own)")
print(f"   summary: {out}")
PY
echo "   [summary exit $?]"
tar czf "$OUT/eval_vs_kb.tar.gz" -C "$W" $(cd "$W" && ls -d kj_sub.sqlite kj_all.sqlite kb.out kj_sub.out kj_all.out kbruns/ref/eval_results.json 2>/dev/null) \
	&& ls -la "$OUT" | sed 's/^/   /'
echo "== done in $(since "$T0") s"
exec 1>&- 2>&-
wait $TEE  # the log complete before the device tool takes $OUT
