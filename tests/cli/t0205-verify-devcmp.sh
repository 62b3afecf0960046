#!/usr/bin/env bash
# t0205-verify-devcmp.sh - the path of outputs compared on the device
# (pipeline.c), on the CPU: with KJ_DEVICE_COMPARE=all every tensor output
# of the candidate goes out as an exported memory file, the reference's
# worker keeps its own, takes a copy of the candidate's and computes the
# figures, and the judge decides or judges the set again through host
# memory.  The verdicts of the hostile candidates of tests/candidates/ must
# be the ones the host path gives (expect.json), except for the four whose
# subject is the sealed-file path itself, which 'all' does not use for their
# outputs (they return right values: under 'all' they pass); then
# benchmark's timing cheats and honest candidates the same way (the copies
# of timed outputs taken inside the judge's clock).
#
# The whole file runs with the golden cache off (KJ_CACHE_DIR=off), so that
# the verify corpus runs once that way without a third copy of t0200 (ten
# minutes on CI's two cores); t0220 runs benchmark's corpus with it off.
# The two settings do not mix up what this file checks: a golden kept on
# the device is never cached, and what the device does not decide (every
# failing candidate's sets, the sets near a limit) is judged again through
# host memory against goldens that the run keeps in its own cache in its
# scratch directory, where a run with the cache keeps them in the cache.
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
export KJ_DEVICE_COMPARE=all KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=off
# KJ_DEVCMP_NAMES: the verify candidates to run.  CI's sanitizer pass gives
# a set that reaches every branch of the device comparison's C (right
# values, wrong values, NaN, shapes and dtypes, nested and non-tensor
# outputs, sets near a limit).  The plain pass runs every candidate with an
# expect.json whose outputs reach a comparison (--reach-outputs): those
# expected to fail every case before any output exists (a load or forward
# error, a crash, a timeout, a CPU, memory or output limit: the same code
# on both paths, judged by t0200) are left out, about a quarter of the
# corpus.
reach=
[ -n "${KJ_DEVCMP_NAMES:-}" ] || reach=--reach-outputs
names=${KJ_DEVCMP_NAMES:-$(cd "$tests/candidates" && for d in */; do
	d=${d%/}
	[ -f "$d/expect.json" ] || continue
	case $d in symlinked_output_dir | unsealed_files | unsealed_memfd | export_unasked) continue ;; esac
	echo "$d"
done)}
kj_host_locked -s "$KJ_PYTHON" "$tests/helpers/check_verify.py" --kjudge "$(printf '%q' "$KJUDGE")" \
	--jobs "${KJ_HOSTILE_JOBS:-2}" --device cpu $reach $names 2>&1 | tee "$kj_root/devcmp.log" |
	grep -v '^# done: ' | sed 's/^\(ok  \|FAIL\) hostile:/\1 devcmp:/'
grep -q '^# done: [0-9]* candidates' "$kj_root/devcmp.log" ||
	echo "FAIL devcmp: the verify runner died before its closing line"
# The four under 'all': right values through exported files, a pass.
"$KJ_PYTHON" - "$KJUDGE" "$tests/candidates" "$kj_root" <<'PY'
import json, os, shutil, subprocess, sys
kj, cands, root = sys.argv[1:]
for name in ("symlinked_output_dir", "unsealed_files", "unsealed_memfd", "export_unasked"):
    d = os.path.join(root, "dc_" + name)
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(cands, "addmul_torch.py"), d)
    shutil.copy(os.path.join(cands, name, "candidate.py"), os.path.join(d, "addmul_dc.py"))
    p = subprocess.run([kj, "verify", "--op_name", "addmul", "--triton_impl_name", "dc",
                        "--device", "cpu", "--output", "r.json"], cwd=d,
                       capture_output=True, text=True, timeout=300)
    try:
        r = json.load(open(os.path.join(d, "r.json")))
    except Exception as e:
        print(f"FAIL devcmp: {name}: no result ({e}); exit {p.returncode}: {p.stderr[-300:]}")
        continue
    ok = p.returncode == 0 and r.get("passed_cases") == r.get("total_cases") == 3
    print(("ok   devcmp: " if ok else "FAIL devcmp: ") + f"{name} under all: exit {p.returncode}, "
          f"{r.get('passed_cases')}/{r.get('total_cases')} passed")
PY
# The path is taken, not skipped: outputs the device decides (counted in
# timings.device_compared_n) for a right candidate, in verify and in
# benchmark's timed rounds; a set near a limit judged again through host
# memory (device_redo_n), with the host's verdict.
"$KJ_PYTHON" - "$KJUDGE" "$tests/candidates" "$kj_root" <<'PY'
import json, os, shutil, subprocess, sys
kj, cands, root = sys.argv[1:]
d = os.path.join(root, "dc_counts")
os.makedirs(d, exist_ok=True)
shutil.copy(os.path.join(cands, "addmul_torch.py"), d)
def run(name, *cmd):
    shutil.copy(os.path.join(cands, name, "candidate.py"), os.path.join(d, "addmul_dc.py"))
    p = subprocess.run([kj, *cmd, "--op_name", "addmul", "--triton_impl_name", "dc", "--device", "cpu",
                        "--output", "r.json"], cwd=d, capture_output=True, text=True, timeout=300)
    r = json.load(open(os.path.join(d, "r.json")))
    return p.returncode, r, r.get("kjudge", {}).get("timings", {})
def say(ok, what):
    print(("ok   devcmp: " if ok else "FAIL devcmp: ") + what)
rc, r, t = run("pass", "verify")
say(rc == 0 and t.get("device_compared_n", 0) >= 3 and not t.get("device_redo_n"),
    f"pass: verify decided on the device (exit {rc}, timings {t.get('device_compared_n')} "
    f"compared, {t.get('device_redo_n')} again on the host)")
shutil.copy(os.path.join(d, "r.json"), os.path.join(d, "verify_result_dc.json"))
rc, r, t = run("pass", "benchmark")
say(rc == 0 and t.get("device_compared_n", 0) >= 3 and not t.get("device_redo_n") and
    not r.get("failures"), f"pass: benchmark's timed outputs decided on the device (exit {rc}, "
    f"{t.get('device_compared_n')} compared, failures {r.get('failures')})")
rc, r, t = run("just_under", "verify")
say(rc == 0 and t.get("device_redo_n", 0) >= 1 and r.get("passed_cases") == 3,
    f"just_under: near the limit, judged again through host memory and passed (exit {rc}, "
    f"{t.get('device_redo_n')} again)")
PY
"$KJ_PYTHON" "$tests/helpers/check_bench.py" --kjudge "$(printf '%q' "$KJUDGE")" --device cpu \
	honest_matmul honest_reused_buffer lazy_output cache_first_output output_planter 2>&1 |
	tee "$kj_root/devcmp-bench.log" | grep -v '^# done: ' | sed 's/^\(ok  \|FAIL\) bench:/\1 devcmp:/'
grep -q '^# done: [0-9]* candidates' "$kj_root/devcmp-bench.log" ||
	echo "FAIL devcmp: the benchmark runner died before its closing line"
test_done
