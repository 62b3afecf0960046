#!/usr/bin/env bash
# kb_level1.sh - every KernelBench level-1 problem judged against itself on
# the GPU machine: `kjudge verify` with the reference as the candidate
# (`class ModelNew(Model): pass`), which must pass every case.
#
# Run by the device tool from the repository root, with build/ and .anchors/
# (KernelBench's KernelBench/ folder in .anchors/kb; see
# ../shared/anchors/kernelbench) carried.  Problems run P at a time (default
# 4): this is a check of verdicts, not of timings, and the GPU has room for
# several.  Writes kb_level1.json (per problem: exit code, seconds, passed and
# total cases, error types) and run.log under $OUT.
#   KB_LEVEL1_P      problems at a time (default 4)
#   KB_LEVEL1_ONLY   a list of problem files to run instead of all
#   KB_LEVEL1_SETS   --input_sets (default 1: one secret input set per case)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/kb1"
export KJ_PYTHON=${KJ_PYTHON:-python3} KJ_STATE_DIR=/tmp/kjstate PYTHONUNBUFFERED=1
K=$PWD/build/kjudge
src=$PWD/.anchors/kb/KernelBench/level1
P=${KB_LEVEL1_P:-4}
SETS=${KB_LEVEL1_SETS:-1}

one() {
	local p=$1 d=/tmp/kb1/${1%.py} t0 t1 rc
	mkdir -p "$d"
	cp "$src/$p" "$d/kb_torch.py"
	{ cat "$src/$p"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$d/kb_triton_ascend_impl.py"
	t0=$(date +%s.%N)
	"$K" verify --op_name kb --verify_dir "$d" --input_sets "$SETS" --timeout 600 \
		> "$OUT/kb1/${p%.py}.out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	cp "$d/verify_result.json" "$OUT/kb1/${p%.py}.json" 2>/dev/null
	echo "$p $rc $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" >> "$OUT/kb1/status.txt"
	echo "   $p: exit $rc, $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s"
	rm -rf "$d"
}
export -f one
export K src SETS OUT

echo "== KernelBench level 1: each problem against itself, $P at a time"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
(cd "$src" && ls ${KB_LEVEL1_ONLY:-*.py}) | xargs -P "$P" -I{} bash -c 'one "$@"' _ {}
echo "   all problems: $(( $(date +%s) - t0 )) s"
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = {}
for line in open(os.path.join(out, "kb1", "status.txt")):
    p, rc, s = line.split()
    r = {"exit": int(rc), "seconds": float(s)}
    try:
        d = json.load(open(os.path.join(out, "kb1", p[:-3] + ".json")))
        r.update(passed=d["passed_cases"], total=d["total_cases"],
                 errors=sorted({f["error_type"] for f in d["failures"]}),
                 status=d["kjudge"]["status"])
    except (OSError, ValueError, KeyError):
        r["tail"] = open(os.path.join(out, "kb1", p[:-3] + ".out")).read()[-400:]
    rows[p] = r
json.dump(rows, open(os.path.join(out, "kb_level1.json"), "w"), indent=1, sort_keys=True)
ok = [p for p, r in rows.items() if r["exit"] == 0]
print(f"   {len(ok)} of {len(rows)} problems pass")
for p, r in sorted(rows.items()):
    if r["exit"] != 0:
        print(f"   {p}: {r}")
PY
