#!/usr/bin/env python3
"""Run `kjudge benchmark` on the candidates of tests/candidates/ that have a
bench.json, and check each verdict.

The timing cheats of the corpus (samples rewritten, clocks patched, busy
loops while the other side is timed, lazy outputs, replayed outputs, a
patched writer) only show in benchmark.  Each runs with
--verify_not_required on the shared task (tests/candidates/addmul_torch.py,
three cases) with a short time budget; the candidate's verify is
check_verify.py's business.

bench.json: {"cases": "pass" | "fail", "error_type": [names] (for "fail":
every case must fail with one of them), "speedup_max": X, "speedup_min": Y
(for "pass": bounds on the overall speedup, the geometric mean of the
cases'), "may_fail_with": [names] (for "pass": a case may instead fail with
one of these, e.g. a candidate whose own busy loops slow its harness past
what its samples account for), "args": [extra benchmark arguments]
(optional), "task": FILE of tests/candidates/tasks/ to time on instead of
addmul_torch.py (optional), "n_cases": its number of cases (3 unless
given), "files": [files copied beside the candidate,
paths relative to its directory] (optional), "twin": NAME, "twin_within":
F (optional: a candidate that passes must not claim more than (1 + F)
times the speedup of its honest twin, timed in the same run: a timing
forgery may fail or gain nothing), "devices": ["cuda", ...] (optional: the
devices it is judged on; elsewhere it is skipped, with a "# skipped"
line), "on": {DEVICE: {keys}} (optional: keys that replace the ones
above when judged on DEVICE, e.g. a cheat that gains nothing on a GPU)}.

Prints "ok   bench: NAME" or "FAIL bench: NAME" with the reasons, one per
candidate, and a closing "# done: N candidates, K failed" line.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = os.path.join(HERE, "..", "candidates")


def check(exp, rc, perf, twin_speedup=None):
    bad = []
    if rc != 0:
        bad.append(f"exit status {rc}, expected 0 (a benchmark that ran)")
    if perf is None:
        return bad + ["no readable perf JSON"]
    rows = perf.get("per_shape_results") or []
    if len(rows) != exp.get("n_cases", 3):
        bad.append(f"{len(rows)} result rows, expected {exp.get('n_cases', 3)}")
    if exp["cases"] == "fail":
        want = exp["error_type"]
        for r in rows:
            if r.get("status") == "pass" or r.get("error_type") not in want:
                bad.append(f"case {r.get('case_idx')}: {r.get('status')} {r.get('error_type')}, "
                           f"expected a failure of type {' or '.join(want)}")
        if perf.get("passed_cases"):
            bad.append(f"passed_cases {perf.get('passed_cases')}, expected 0")
        if perf.get("speedup_vs_torch") is not None:
            bad.append(f"a speedup was reported: {perf.get('speedup_vs_torch')}")
    else:
        for r in rows:
            if r.get("status") != "pass" and r.get("error_type") not in exp.get("may_fail_with", []):
                bad.append(f"case {r.get('case_idx')}: {r.get('error_type')}: "
                           f"{(r.get('error_msg') or '')[:200]}")
        sp = perf.get("speedup_vs_torch")
        if sp is None and exp.get("may_fail_with") and perf.get("passed_cases") == 0:
            pass
        elif not isinstance(sp, (int, float)):
            bad.append(f"no speedup: {sp!r}")
        else:
            if "speedup_max" in exp and sp > exp["speedup_max"]:
                bad.append(f"speedup {sp}, more than {exp['speedup_max']} (its honest twin's is about 1)")
            if "speedup_min" in exp and sp < exp["speedup_min"]:
                bad.append(f"speedup {sp}, less than {exp['speedup_min']}")
            if twin_speedup is not None and sp > twin_speedup * (1 + exp["twin_within"]):
                bad.append(f"speedup {sp}, more than {1 + exp['twin_within']:g} times its "
                           f"honest twin's {twin_speedup}: the forgery paid")
    return bad


def load_exp(name, device):
    """A candidate's bench.json, with its keys for this device applied."""
    with open(os.path.join(CANDIDATES, name, "bench.json")) as f:
        exp = json.load(f)
    exp.update(exp.pop("on", {}).get(device.split(":")[0], {}))
    return exp


def run_one(name, kjudge, device, work, twins):
    cdir = os.path.join(CANDIDATES, name)
    exp = load_exp(name, device)
    twin_speedup = None
    if exp.get("twin"):
        twin_speedup = twins.get(exp["twin"])
        if twin_speedup is None:
            return [f"its honest twin {exp['twin']} did not pass"], None
    vdir = os.path.join(work, name)
    os.makedirs(vdir)
    for f in exp.get("files", []):
        shutil.copy(os.path.join(cdir, f), os.path.join(vdir, os.path.basename(f)))
    task = exp.get("task")
    shutil.copy(os.path.join(CANDIDATES, "tasks", task) if task
                else os.path.join(CANDIDATES, "addmul_torch.py"),
                os.path.join(vdir, "addmul_torch.py"))
    shutil.copy(os.path.join(cdir, "candidate.py"), os.path.join(vdir, "addmul_triton_ascend_impl.py"))
    out = os.path.join(vdir, "perf.json")
    cmd = kjudge + ["benchmark", "--op_name", "addmul", "--verify_dir", vdir, "--output", out,
                    "--device", device, "--verify_not_required", "--repeats", "20",
                    "--time_budget", "2"] + exp.get("args", [])
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return ["the judge did not end within 600 s"], None
    try:
        with open(out) as f:
            perf = json.load(f)
    except (OSError, ValueError):
        perf = None
    bad = check(exp, rc, perf, twin_speedup)
    if bad and err.strip():
        bad.append("judge stderr ends: " + err.strip()[-300:])
    return bad, perf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kjudge", default=os.environ.get("KJUDGE", "kjudge"))
    ap.add_argument("--device", default=os.environ.get("KJ_DEVICE", "cpu"))
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    names = args.names or sorted(n for n in os.listdir(CANDIDATES)
                                 if os.path.exists(os.path.join(CANDIDATES, n, "bench.json")))
    for n in list(names):  # the twins of those named come too
        twin = load_exp(n, args.device).get("twin")
        if twin and twin not in names:
            names.append(twin)
    kjudge = shlex.split(args.kjudge)
    work = tempfile.mkdtemp(prefix="kj-bench-")
    failed = 0
    twins = {}
    # The honest twins first: the forgeries are compared with them.
    wanted = set()
    for n in names:
        wanted.add(load_exp(n, args.device).get("twin"))
    names = [n for n in names if n in wanted] + [n for n in names if n not in wanted]
    kept = []
    for n in names:
        devices = load_exp(n, args.device).get("devices")
        if devices and args.device.split(":")[0] not in devices:
            print(f"# skipped: bench: {n} (judged on {', '.join(devices)} only)", flush=True)
        else:
            kept.append(n)
    names = kept
    try:
        for n in names:
            bad, perf = run_one(n, kjudge, args.device, work, twins)
            twins[n] = None if bad else (perf or {}).get("speedup_vs_torch")
            print(("FAIL" if bad else "ok  ") + f" bench: {n}", flush=True)
            for b in bad:
                print(f"    | {b}", flush=True)
            failed += bool(bad)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"# done: {len(names)} candidates, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
