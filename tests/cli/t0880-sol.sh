#!/usr/bin/env bash
# t0880-sol.sh - the speed of light in kjudge benchmark's records: a
# matmul's FLOPs (2 M N K) and bytes by hand, sol_ms from the peak rates
# kept for the device (the judge's measurement first, then rates the test
# writes into the cache so that the figure is computable by hand), each
# side's fraction of it, --no-sol; and a candidate faster than its speed
# of light by more than the margin is TimingImpossible with both numbers.
# The files share one cache (the device's rates are kept there).
. "$(dirname "$0")/lib.sh"
CACHE=$(mktemp -d "$kj_root/cache-XXXXXX")
export KJ_CACHE_DIR=$CACHE KJ_SOL=on

# set_peaks FLOPS BW: the kept rates of the device made FLOPS (every
# dtype) and BW, and the kept speeds of light dropped, so that the next
# benchmark computes its figure from them.
set_peaks() {
	py "
import glob, json
n = 0
for f in glob.glob(\"$CACHE/audit/*.json\"):
    d = json.load(open(f))
    if \"matmul_flops_per_s\" in d:
        d[\"matmul_flops_per_s\"] = {k: $1 for k in d[\"matmul_flops_per_s\"]}
        d[\"copy_bytes_per_s\"] = $2
        json.dump(d, open(f, \"w\"))
        n += 1
assert n == 1, n
" && rm -f "$CACHE"/audit/sol-*.json
}

BENCH="--device cpu --verify_not_required --warmup 1 --repeats 5 --time_budget 1"

test_expect 'a matmul on the CPU: sol_ms, its figures and each side'"'"'s fraction' '
	cp "$KJ_TESTS/../examples/matmul/matmul_torch.py" "$KJ_TESTS/../examples/matmul/matmul_cpu_impl.py" . &&
	"$KJUDGE" benchmark --op_name matmul --verify_dir . --triton_impl_name cpu_impl $BENCH \
		--output p1.json >/dev/null 2>err &&
	py "
import json
r = json.load(open(\"p1.json\"))[\"per_shape_results\"][0]
s = r[\"sol\"]
assert r[\"status\"] == \"pass\", r
assert s[\"flops\"] == 2 * 256 * 256 * 256 and s[\"bytes\"] == 3 * 256 * 256 * 4, s
# The fastest rate of any precision the CPU multiplies (bfloat16 where it
# has the instructions): a kernel may compute in any that passes.
assert s[\"device_name\"] == \"cpu\" and s[\"dtype\"] in (\"float32\", \"float16\", \"bfloat16\"), s
assert s[\"peak_flops_per_s\"] > 0 and s[\"copy_bytes_per_s\"] > 0, s
if r[\"sol_ms\"] is None:
    # The judge measured rates the reference beat: no figure, said why.
    assert \"reference\" in s[\"why\"], s
else:
    want = max(s[\"flops\"] / s[\"peak_flops_per_s\"], s[\"bytes\"] / s[\"copy_bytes_per_s\"]) * 1e3
    assert abs(r[\"sol_ms\"] - want) <= 1e-9 * want, (r[\"sol_ms\"], want)
" &&
	set_peaks 1e13 1e12 &&
	"$KJUDGE" benchmark --op_name matmul --verify_dir . --triton_impl_name cpu_impl $BENCH \
		--output p2.json >/dev/null 2>err &&
	ls "$CACHE"/audit/sol-*.json >/dev/null &&
	py "
import json
r = json.load(open(\"p2.json\"))[\"per_shape_results\"][0]
sol = 2 * 256 ** 3 / 1e13 * 1e3
assert abs(r[\"sol_ms\"] - sol) <= 1e-12, r[\"sol_ms\"]
assert r[\"sol\"][\"peak_flops_per_s\"] == 1e13 and r[\"sol\"][\"copy_bytes_per_s\"] == 1e12, r[\"sol\"]
for side in (\"framework\", \"implementation\"):
    f, med = r[side][\"sol_fraction\"], r[side][\"median_ms\"]
    assert abs(f - round(sol / med, 6)) <= 1e-6, (side, f, sol, med)
" &&
	"$KJUDGE" benchmark --op_name matmul --verify_dir . --triton_impl_name cpu_impl $BENCH \
		--no-sol --output p3.json >/dev/null 2>err &&
	py "
import json
r = json.load(open(\"p3.json\"))[\"per_shape_results\"][0]
assert r[\"sol_ms\"] is None and r[\"sol\"][\"why\"] == \"not measured (--no-sol)\", r
assert r[\"framework\"][\"sol_fraction\"] is None and r[\"implementation\"][\"sol_fraction\"] is None, r
"
'

test_expect 'a candidate faster than its speed of light is TimingImpossible, both numbers said' '
	cp "$KJ_TESTS/sol/waste_torch.py" "$KJ_TESTS/sol/waste_relu.py" . &&
	set_peaks 1e12 1e12 &&
	"$KJUDGE" benchmark --op_name waste --verify_dir . --triton_impl_name relu $BENCH \
		--output p.json >/dev/null 2>err &&
	py "
import json
r = json.load(open(\"p.json\"))[\"per_shape_results\"][0]
assert r[\"status\"] == \"fail\" and r[\"error_type\"] == \"TimingImpossible\", r
assert r[\"sol\"][\"flops\"] == 2 * 1024 ** 3, r[\"sol\"]
assert abs(r[\"sol_ms\"] - 2 * 1024 ** 3 / 1e12 * 1e3) <= 1e-9, r[\"sol_ms\"]
m = r[\"error_msg\"]
assert \"median call took\" in m and \"less than 50 % of its speed of light of 2.147 ms\" in m, m
"
'

test_expect 'eval keeps each case'"'"'s sol_ms; the report scores the attempt and the model' '
	set_peaks 1e13 1e12 &&
	mkdir -p suite gens/m/matmul &&
	cp "$KJ_TESTS/../examples/matmul/matmul_torch.py" suite/ &&
	cp "$KJ_TESTS/../examples/matmul/matmul_cpu_impl.py" gens/m/matmul/0.py &&
	"$KJUDGE" eval suite gens --db s.db --device cpu --time_budget 1 2>out &&
	py "
import sqlite3
rows = sqlite3.connect(\"s.db\").execute(\"SELECT sol_ms FROM timings\").fetchall()
assert rows and all(abs(r[0] - 2 * 256 ** 3 / 1e13 * 1e3) <= 1e-12 for r in rows), rows
" &&
	"$KJUDGE" report s.db --json r.json --md r.md >/dev/null &&
	grep -q "^## Speed of light" r.md &&
	py "
import json, sqlite3
d = json.load(open(\"r.json\"))
a = d[\"attempts\"][0]
t = sqlite3.connect(\"s.db\").execute(\"SELECT impl_ms, ref_ms, sol_ms FROM timings\").fetchall()
want = sum(1 / (1 + (k - s) / (b - s)) for k, b, s in t) / len(t)
assert abs(a[\"sol_score\"] - want) <= 1e-9, (a, t)
m = d[\"models\"][\"m\"]
if a[\"clean\"]:
    assert abs(m[\"sol_score\"] - want) <= 1e-9 and m[\"sol_score_attempts\"] == 1, m
else:
    assert m[\"sol_score\"] is None and m[\"sol_score_attempts\"] == 0, m
"
'

test_done
