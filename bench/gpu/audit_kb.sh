#!/usr/bin/env bash
# audit_kb.sh - `kjudge audit` over KernelBench's level-1 and level-2 tasks,
# and the speed-of-light fraction of each level-1 reference, on one GPU.
#
# What it measures.
#   1. For each level (LEVELS, default "1 2"): kjudge audit of every task
#      (or SUBSET), in chunks of CHUNK tasks (each a `kjudge audit --json`
#      of its own, audit_level<L>_<chunk>.json), capped at CAP seconds a
#      level: a cut chunk is said so and only finished chunks count; they
#      are merged into audit_level<L>.json.  The summary lists the weak
#      tasks, each with the canaries that passed and the first reason, and
#      the float32 tasks whose float16 or bfloat16 reference is within the
#      thresholds (lowp_limit_used under 1).
#   2. For level 1: this script's own peak rates on the device (a float32
#      matmul of 8192^3 and a bfloat16 one, the best of 5; a 1 GiB
#      device-to-device copy, read + write bytes over the best time), and
#      each reference timed with CUDA events (median of 20 after 3 warm-up
#      calls) on get_inputs() of seed 0; the speed of light of a task is
#      max(FLOPs / matmul peak of its dtype, bytes / copy bandwidth), the
#      FLOPs and bytes those of the audit's measurement step (FlopCounterMode;
#      every input, parameter and output once), and its fraction
#      sol_ms / reference_ms.  Beside it, the audit's own sol_ms and peak
#      rates (smaller matmuls and copies, kept once per device), so the two
#      measurements of the peaks can be compared.
# Outputs under $OUT: audit_kb.log, audit_level<L>.json, sol_level1.json,
# audit_kb.json (the summary).
#
# Needs build/kjudge, build/kjudge_worker.py, build/kjudge_timer.so,
# build/kjudge_audit.py and .anchors/kb/KernelBench (KernelBench's public
# repository's KernelBench/ folder, as bench/gpu/eval_vs_kb.sh has it).
# Run through the device tool, from the repository root:
#   command: bash bench/gpu/audit_kb.sh
#   carry:   ["build/kjudge", "build/kjudge_worker.py", "build/kjudge_timer.so",
#             "build/kjudge_audit.py", "build/kjudge_template.so", ".anchors"]
# (kjudge_template.so: every canary's workers forked from one torch import
# per canary's judge instead of importing torch each.)
# Dry run on the CPU (tests/audit/suite in KernelBench's place, two
# canaries, small peaks and timings):
#   DRY=1 PY=.venv/bin/python OUT=/tmp/audkb bash bench/gpu/audit_kb.sh
#
# Knobs: LEVELS, SUBSET (problem ids, spaces or commas), JOBS (default 8),
# CAP (seconds a level, default 240), CHUNK (tasks per audit, default 10),
# CANARIES (default all), DEVICE
# (default cuda), KB (the KernelBench folder), PY (the Python with torch).
set -u
# The device lacks libmicrohttpd, which kjudge links (serve): a copy of
# this machine's travels in .anchors/lib.
[ -d "$PWD/.anchors/lib" ] && export LD_LIBRARY_PATH="$PWD/.anchors/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/audit_kb.log") 2>&1
PY=${PY:-python3}
export KJ_PYTHON=${KJ_PYTHON:-$PY}
ROOT=$PWD
KB=${KB:-$ROOT/.anchors/kb/KernelBench}
DRY=${DRY:-}
LEVELS=${LEVELS:-1 2}
JOBS=${JOBS:-8}
CAP=${CAP:-240}
CHUNK=${CHUNK:-10}
DEVICE=${DEVICE:-cuda}
CANARIES=${CANARIES:-}
SUBSET=${SUBSET:-}
if [ -n "$DRY" ]; then
	# KernelBench's tasks are sized for a GPU (19_ReLU's input is 1.6e9
	# elements): the dry run audits tests/audit's small suite in their
	# place, through the same steps.
	KB=${DRY_KB:-$ROOT/tests/audit/suite}
	LEVELS=1; DEVICE=cpu; JOBS=2; CANARIES=${CANARIES:-zeros,input}
fi
[ -x build/kjudge ] && [ -f build/kjudge_audit.py ] || { echo "build/kjudge and build/kjudge_audit.py are needed"; exit 2; }
[ -d "$KB/level1" ] || { echo "no KernelBench tasks at $KB"; exit 2; }
canary_opt=()
[ -n "$CANARIES" ] && canary_opt=(--canaries "$CANARIES")

# Each level is audited in chunks of CHUNK tasks, each its own `kjudge audit`
# with its own JSON, so that a call cut at its cap keeps every chunk that
# finished (the summary merges them into audit_level<L>.json).
for L in $LEVELS; do
	suite=${WORK:-/tmp/audkb_work}/suite$L
	rm -rf "$suite" && mkdir -p "$suite/all"
	for f in "$KB/level$L"/*.py; do
		id=$(basename "$f" | cut -d_ -f1)
		if [ -n "$SUBSET" ]; then
			case " $(echo "$SUBSET" | tr , ' ') " in *" $id "*) ;; *) continue ;; esac
		fi
		cp "$f" "$suite/all/"
	done
	n=$(ls "$suite/all" | wc -l)
	echo "== level $L: $n tasks, device $DEVICE, -j $JOBS, cap $CAP s, chunks of $CHUNK"
	start=$(date +%s)
	ls "$suite/all" | sort -n | split -l "$CHUNK" - "$suite/chunk."
	for c in "$suite"/chunk.*; do
		left=$((CAP - ($(date +%s) - start)))
		if [ "$left" -le 5 ]; then
			echo "== level $L: cap reached, $(cat "$suite"/chunk.* | wc -l) tasks listed, chunks from $(basename "$c") on not audited"
			break
		fi
		d=$suite/tasks_$(basename "$c" | cut -d. -f2)
		mkdir -p "$d/level$L"
		while read -r t; do cp "$suite/all/$t" "$d/level$L/"; done < "$c"
		c0=$(date +%s)
		timeout -k 10 "$left" build/kjudge audit "$d" --device "$DEVICE" -j "$JOBS" \
			"${canary_opt[@]}" --json "$OUT/audit_level${L}_$(basename "$c" | cut -d. -f2).json"
		rc=$?
		echo "== level $L, $(basename "$c"): $(wc -l < "$c") tasks, exit $rc in $(( $(date +%s) - c0 )) s$([ $rc = 124 ] || [ $rc = 137 ] && echo ' (cut at the cap)')"
	done
	echo "== level $L: $(( $(date +%s) - start )) s"
	"$PY" - "$OUT" "$L" <<'PY'
import glob, json, os, sys
out, level = sys.argv[1], sys.argv[2]
tasks = []
for p in sorted(glob.glob(os.path.join(out, "audit_level%s_*.json" % level))):
    try:
        tasks += json.load(open(p))["tasks"]
    except (OSError, ValueError, KeyError) as e:
        print("   %s: %s" % (os.path.basename(p), e))
json.dump({"tasks": tasks}, open(os.path.join(out, "audit_level%s.json" % level), "w"), indent=1)
print("== level %s: %d tasks audited in full" % (level, len(tasks)))
PY
done

"$PY" - "$OUT" "$DEVICE" "${DRY:+dry}" "${WORK:-/tmp/audkb_work}/suite1/all" <<'PY'
import glob, importlib.util, json, os, statistics, sys, time
out, device, dry, tasks_dir = sys.argv[1], sys.argv[2], sys.argv[3] == "dry", sys.argv[4]
summary = {"levels": {}}
for path in sorted(glob.glob(os.path.join(out, "audit_level?.json"))):
    level = path.split("audit_level")[1].split(".")[0]
    tasks = json.load(open(path))["tasks"]
    weak = [{"task": t["task"],
             "passing": sorted(k for k, v in t["canaries"].items() if v == "pass"),
             "reason": (t["reasons"] or [""])[0]} for t in tasks if t["weak"]]
    lowp = [t["task"] for t in tasks
            if any(v is not None and v < 1 for v in t.get("lowp_limit_used", {}).values())]
    summary["levels"][level] = {"tasks": len(tasks), "weak": weak, "lowp_within": lowp,
                                "not_proven": [t["task"] for t in tasks
                                               if not t["weak"] and "error" in t["canaries"].values()]}
    print("level %s: %d tasks, %d weak" % (level, len(tasks), len(weak)))
    for w in weak:
        print("  %-40s %-30s %s" % (w["task"], ",".join(w["passing"]), w["reason"][:120]))

# The speed of light of level 1's references.
import torch
dev = torch.device(device)
def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()
def best(fn, n):
    fn(); sync()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); sync(); ts.append(time.perf_counter() - t0)
    return min(ts)
size = 512 if dry else 8192
peaks = {}
for dt in (torch.float32, torch.bfloat16):
    a = torch.randn(size, size, device=dev, dtype=dt); b = torch.randn(size, size, device=dev, dtype=dt)
    peaks[str(dt).replace("torch.", "")] = 2 * size ** 3 / best(lambda: a @ b, 5)
n = (1 << 24) if dry else (1 << 28)
x = torch.empty(n, device=dev, dtype=torch.float32); y = torch.empty_like(x)
bw = 2 * x.numel() * 4 / best(lambda: y.copy_(x), 5)
name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
print("peaks on %s: matmul %s FLOP/s, copy %.3g B/s" % (
    name, ", ".join("%s %.3g" % kv for kv in peaks.items()), bw))
sol = []
audit1 = os.path.join(out, "audit_level1.json")
by_task = {t["task"]: t for t in json.load(open(audit1))["tasks"]} if os.path.exists(audit1) else {}
for f in sorted(glob.glob(os.path.join(tasks_dir, "*.py"))):
    task = os.path.basename(f)[:-3]
    t = by_task.get(task)
    if not t or not t.get("cases"):
        continue
    c = t["cases"][0]
    try:
        spec = importlib.util.spec_from_file_location("kbtask", f)
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        torch.manual_seed(0)
        model = m.Model(*m.get_init_inputs()).to(dev).eval()
        args = [a.to(dev) if isinstance(a, torch.Tensor) else a for a in m.get_inputs()]
        with torch.no_grad():
            for _ in range(3):
                model(*args)
            sync()
            times = []
            for _ in range(3 if dry else 20):
                t0 = time.perf_counter(); model(*args); sync(); times.append(time.perf_counter() - t0)
        ref_ms = statistics.median(times) * 1e3
    except Exception as e:
        sol.append({"task": task, "error": "%s: %s" % (type(e).__name__, str(e)[:200])})
        continue
    dts = [o["dtype"] for o in c.get("outputs", [])]
    peak = peaks.get(dts[0] if dts else "float32", peaks["float32"])
    flops = c.get("flops") or 0
    sol_ms = max(flops / peak, (c.get("bytes") or 0) / bw) * 1e3
    sol.append({"task": task, "flops": flops, "bytes": c.get("bytes"), "sol_ms": sol_ms,
                "ref_ms": ref_ms, "fraction": sol_ms / ref_ms if ref_ms > 0 else None,
                "audit_sol_ms": c.get("sol_ms"), "audit_peaks": t.get("peaks")})
    print("  %-45s sol %.4g ms, reference %.4g ms, fraction %.3g" % (task, sol_ms, ref_ms,
                                                                    sol_ms / ref_ms))
json.dump({"device": name, "peaks_flops": peaks, "copy_bytes_per_s": bw, "tasks": sol},
          open(os.path.join(out, "sol_level1.json"), "w"), indent=1)
summary["sol_level1"] = {"device": name, "tasks": len(sol)}
json.dump(summary, open(os.path.join(out, "audit_kb.json"), "w"), indent=1)
PY
