#!/usr/bin/env bash
# bench/timing/aa_cpu.sh - A/A of the judge's clock on the CPU: the matmul
# task of tests/candidates/tasks/ timed against itself (honest_matmul) N
# times, serially; for each run and case, the speedup (the ratio of the
# judge's clock figures), the ratio of the samples' medians beside it, and
# the samples' cross-check (each side's samples per round over its judge's
# figure).  What docs/ARCHITECTURE.md's bounds for the CPU come from.
#
#   bench/timing/aa_cpu.sh [N] [BUDGET_S]      (defaults 5 runs, 10 s)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-5}
budget=${2:-10}
export KJ_PYTHON=${KJ_PYTHON:-$root/.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/tests/candidates/tasks/matmul_torch.py" "$work/mm_torch.py"
cp "$root/tests/candidates/honest_matmul/candidate.py" "$work/mm_triton_ascend_impl.py"
for i in $(seq 1 "$n"); do
	"$root/build/kjudge" benchmark --op_name mm --verify_dir "$work" --device cpu \
		--verify_not_required --time_budget "$budget" --output "$work/p$i.json" >/dev/null
done
"$KJ_PYTHON" - "$work" "$n" <<'PY'
import json, math, sys
work, n = sys.argv[1], int(sys.argv[2])
sp, med, cr, js = [], [], [], []
print("run case  speedup  judge   [ci95]             medians  rounds  ratio(ref, impl, least)")
for i in range(1, n + 1):
    d = json.load(open(f"{work}/p{i}.json"))
    for c in d["per_shape_results"]:
        if c["status"] != "pass":
            print(f"{i:3} {c['case_idx']:4}  {c['error_type']}: {c['error_msg'][:120]}")
            continue
        f, m, t = c["framework"], c["implementation"], c["timing_check"]
        s, r = c["speedup_vs_torch"], f["median_ms"] / m["median_ms"]
        sp.append(s); med.append(r); cr.append(t["implementation_ratio"] / t["reference_ratio"]); js.append(c["judge_speedup"])
        print(f"{i:3} {c['case_idx']:4}  {s:7.4f}  {c['judge_speedup']:7.4f} {str(c.get('speedup_ci95')):18} {r:7.4f}  "
              f"{m['rounds']:6}  {t['reference_ratio']:.4f} {t['implementation_ratio']:.4f} "
              f"{t['least_allowed']:.4f}")
def summ(name, v):
    v = sorted(v)
    print(f"{name}: n {len(v)}, min {v[0]:.4f}, median {v[len(v)//2]:.4f}, max {v[-1]:.4f}, "
          f"within 5 %: {sum(abs(x - 1) <= 0.05 for x in v)}/{len(v)}")
summ("speedup (reported)", sp)
summ("judge_speedup", js)
summ("ratio of sample medians", med)
summ("impl/ref sample ratio", cr)
PY
