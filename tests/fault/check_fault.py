#!/usr/bin/env python3
"""Fault injection over `kjudge verify` and `kjudge benchmark`, in the style
of SQLite's out-of-memory tests: the judge's allocations (and every one of
jansson's, so every JSON construction) fail in turn, and after each
injected failure no case may count as passed and the run must end as a
recorded failure or a judge error.

The binary is the fault-injection build (make FAULT=1: build/fault/kjudge,
tests/fault/fault.c): KJ_FAULT_AT=N fails its N-th allocation,
KJ_FAULT_MODE=from every one from the N-th on, and KJ_FAULT_REPORT=FILE
gets "calls C injected I" at exit.

The task is tests/candidates/addmul_torch.py (three cases); the candidates
are tests/candidates/pass (correct) and tests/candidates/one_case_fails
(wrong on case 2 only).  A scenario is a command (verify, or benchmark with
--warmup 1 --repeats 3: of the correct candidate through the L1 gate on a
real verify record, of the wrong one with --verify_not_required), a
candidate and a golden cache (off, a fresh directory, or a warm one made by
a clean run).  Each scenario is first calibrated: a clean run (no failure)
gives its number C of allocation points and must give the right verdict.
Then points are chosen deterministically (1..FIRST, the last LAST, SPREAD
spread evenly in between) plus SEEDED drawn from a seed (printed; CI may vary
it with KJ_FAULT_SEED), each run once failing only that allocation and once
failing every one from it on.  Every run has its own verify directory,
state directory (a copy of one seed key), cache, scratch directory and
TMPDIR, and runs with the sandbox, as the other tests do.  After each run:

  * it did not crash (no signal, no sanitizer report) and did not hang
    (it ended within 3 x its clean time + 60 s), and it wrote its report;
  * if the failure was injected: the exit status is not a pass (verify: 2
    with the correct candidate, 1 or 2 with the wrong one; benchmark: 1, the
    seed's "crashed"); a verify_result.json or perf JSON that was written is
    valid JSON, its kjudge.status is not "pass", its counts agree with its
    cases, and no case counts as passed in it;
  * in every record: case 2 of the wrong candidate is not passed, and no
    case of a perf JSON is passed without its timings;
  * if it was not (the run has fewer points than its calibration): the
    verdict is the clean one;
  * nothing is left running (this runner's pool processes are child
    subreapers), no cgroup of the judge's, nothing in its scratch directory
    or TMPDIR, no stage or temporary directory in its cache, nothing
    unexpected in its verify directory (tests/helpers/check_verify.py's
    checks).

Prints "ok   fault: ..." per calibration and per scenario and mode, "FAIL
fault: ..." per failing run with its reasons and the command line that
replays it, and a closing "# done: ..." line; exits 1 if anything failed.
"""
import argparse
import ctypes
import json
import multiprocessing
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
CANDIDATES = os.path.join(TESTS, "candidates")
sys.path.insert(0, os.path.join(TESTS, "helpers"))
from check_verify import PR_SET_CHILD_SUBREAPER, leftovers, stray_cgroups, stray_files  # noqa: E402

CANDS = {"pass": "pass", "wrong": "one_case_fails"}
WRONG_CASE = 2  # the one case tests/candidates/one_case_fails gets wrong
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
             "WARNING: ThreadSanitizer", "SUMMARY: UndefinedBehaviorSanitizer")

# The scenarios, by name: command, candidate, cache.
ALL_SCENARIOS = [f"{cmd}-{cand}-{cache}" for cmd in ("verify", "benchmark")
                 for cand in ("pass", "wrong") for cache in ("off", "cold", "warm")]

# What `tests/run` runs (about six minutes on a loaded two-core machine: each
# run past the workers' start costs a Python that imports torch, twice).
# --profile full is the whole selection over every scenario.
PROFILES = {
    "ci": {"scenarios": ["verify-pass-off", "verify-wrong-warm", "benchmark-pass-cold"],
           "first": 40, "last": 3, "spread": 2, "seeded": 1, "sites": False},
    "full": {"scenarios": ALL_SCENARIOS, "first": 40, "last": 40, "spread": 60, "seeded": 5,
             "sites": True},
}


def parse_scenario(name):
    cmd, cand, cache = name.split("-")
    return cmd, cand, cache


def describe(name):
    cmd, cand, cache = parse_scenario(name)
    return f"{cmd} {'correct' if cand == 'pass' else 'wrong'} candidate, cache {cache}"


class Setup:
    """The shared, read-only material of a whole session."""

    def __init__(self, work, kjudge, device):
        self.work, self.kjudge, self.device = work, kjudge, device
        self.state = os.path.join(work, "state")          # the one seed key
        self.gate_record = os.path.join(work, "gate-record.json")
        self.warm = {}     # (cmd, cand) -> cache template (jobs carry it: the
                           # pool's processes are forked before it is filled)

    def vdir_template(self, cand):
        return os.path.join(self.work, "tpl-" + cand)


def make_templates(setup):
    for cand, src in CANDS.items():
        d = setup.vdir_template(cand)
        os.makedirs(d)
        shutil.copy(os.path.join(CANDIDATES, "addmul_torch.py"), os.path.join(d, "addmul_torch.py"))
        shutil.copy(os.path.join(CANDIDATES, src, "candidate.py"),
                    os.path.join(d, "addmul_triton_ascend_impl.py"))
    os.makedirs(setup.state)


def command(setup, scenario, vdir, rdir):
    cmd, cand, _ = parse_scenario(scenario)
    argv = setup.kjudge + [cmd, "--op_name", "addmul", "--verify_dir", vdir,
                           "--device", setup.device]
    if cmd == "benchmark":
        argv += ["--warmup", "1", "--repeats", "3", "--time_budget", "0.3"]
        # The correct candidate's perf JSON goes to a file, the wrong one's
        # to stdout: both ways of writing it are judged.
        if cand == "pass":
            argv += ["--output", os.path.join(rdir, "perf.json")]
        else:
            argv.append("--verify_not_required")
    return argv


def prepare_run(setup, scenario, rdir, warm, own_state=False):
    """A run's own directories; returns (vdir, env additions)."""
    cmd, cand, cache = parse_scenario(scenario)
    vdir = os.path.join(rdir, "v")
    shutil.copytree(setup.vdir_template(cand), vdir)
    if cmd == "benchmark" and cand == "pass" and os.path.exists(setup.gate_record):
        shutil.copy(setup.gate_record, os.path.join(vdir, "verify_result.json"))
    state = setup.state if own_state else os.path.join(rdir, "state")
    if not own_state:
        shutil.copytree(setup.state, state)
    cache_dir = os.path.join(rdir, "cache")
    if cache == "off":
        cache_dir = "off"
    elif cache == "warm":
        shutil.copytree(warm, cache_dir)
    for sub in ("scratch", "tmp"):
        os.makedirs(os.path.join(rdir, sub))
    env = {"KJ_STATE_DIR": state, "KJ_CACHE_DIR": cache_dir,
           "KJ_SCRATCH_DIR": os.path.join(rdir, "scratch"), "TMPDIR": os.path.join(rdir, "tmp"),
           "KJ_FAULT_REPORT": os.path.join(rdir, "report"),
           "KJ_FAULT_TRACE": os.path.join(rdir, "trace"),
           "KJ_PYTHON": os.environ.get("KJ_PYTHON", sys.executable)}
    return vdir, env


def read_json(path):
    """(True, value), (True, None) when absent or empty, or (False, reason)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return True, None
    try:
        with open(path, encoding="utf-8") as f:
            return True, json.load(f)
    except (OSError, ValueError) as e:
        return False, f"{os.path.basename(path)} is not valid JSON: {e}"


def check_verify_record(rec, cand, injected):
    """Reasons a verify_result.json is wrong for the run it came from."""
    bad = []
    kj = rec.get("kjudge") if isinstance(rec, dict) else None
    if not isinstance(kj, dict):
        return ["verify_result.json has no kjudge object"]
    cases = kj.get("cases")
    if not isinstance(cases, list) or len(cases) != rec.get("total_cases"):
        return [f"verify_result.json lists cases {cases!r} for total_cases {rec.get('total_cases')!r}"]
    passed = [c.get("case_idx") for c in cases if c.get("status") == "pass"]
    if rec.get("passed_cases") != len(passed):
        bad.append(f"passed_cases {rec.get('passed_cases')!r} but cases {passed} passed")
    failures = rec.get("failures")
    if not isinstance(failures, list) or len(failures) != len(cases) - len(passed) or \
            rec.get("failed_cases") != len(failures):
        bad.append(f"failed_cases {rec.get('failed_cases')!r} and "
                   f"{len(failures) if isinstance(failures, list) else failures!r} failures "
                   f"for {len(cases) - len(passed)} cases not passed")
    if cand == "wrong" and WRONG_CASE in passed:
        bad.append(f"case {WRONG_CASE}, which the candidate gets wrong, is counted passed")
    if injected and kj.get("status") == "pass":
        bad.append("kjudge.status is 'pass' after an injected failure")
    if injected and passed:
        bad.append(f"cases {passed} count as passed after an injected failure")
    return bad


def check_perf_record(rec, cand, injected):
    """Reasons a perf JSON is wrong for the run it came from."""
    bad = []
    kj = rec.get("kjudge") if isinstance(rec, dict) else None
    rows = rec.get("per_shape_results") if isinstance(rec, dict) else None
    if not isinstance(kj, dict) or not isinstance(rows, list):
        return ["the perf JSON has no kjudge object or no per_shape_results"]
    passed = [r.get("case_idx") for r in rows if r.get("status") == "pass"]
    if rec.get("passed_cases") != len(passed) or rec.get("total_cases") != len(rows):
        bad.append(f"counts {rec.get('passed_cases')!r}/{rec.get('total_cases')!r} but "
                   f"{len(passed)} of {len(rows)} rows passed")
    for r in rows:
        if r.get("status") == "pass" and not (isinstance(r.get("framework"), dict) and
                                              isinstance(r.get("implementation"), dict)):
            bad.append(f"case {r.get('case_idx')} is passed without its timings")
    if cand == "wrong" and WRONG_CASE in passed:
        bad.append(f"case {WRONG_CASE}, whose timed outputs are wrong, is counted passed")
    if injected and kj.get("status") == "pass":
        bad.append("kjudge.status is 'pass' after an injected failure")
    if injected and passed:
        bad.append(f"cases {passed} count as passed after an injected failure")
    return bad


def clean_verdict(cmd, cand, rc, rec):
    """Reasons a run without an injected failure did not judge as it should."""
    want = (0 if cand == "pass" else 1) if cmd == "verify" else 0
    bad = [] if rc == want else [f"exit status {rc}, expected {want} (no failure was injected)"]
    if rec is None:
        return bad + ["no " + ("verify_result.json" if cmd == "verify" else "perf JSON")]
    if cmd == "verify":
        passed = rec.get("passed_cases")
    else:
        passed = sum(1 for r in rec.get("per_shape_results", []) if r.get("status") == "pass")
    if passed != (3 if cand == "pass" else 2):
        bad.append(f"{passed} of 3 cases passed (no failure was injected)")
        # Which cases did not, and why: a failure nobody injected is a
        # verdict the judge must explain.
        rows = ((rec.get("kjudge") or {}).get("cases") if cmd == "verify"
                else rec.get("per_shape_results")) or []
        for r in rows if isinstance(rows, list) else []:
            if isinstance(r, dict) and r.get("status") != "pass":
                bad.append("case %s: %s: %s" % (r.get("case_idx"), r.get("error_type"),
                                                str(r.get("error_msg") or r.get("message") or "")[:400]))
    return bad


def run_one(setup, scenario, point, mode, limit, warm=None, keep=False):
    """Run one judge; returns a dict with its figures and `bad`, the reasons
    it failed (empty when it held)."""
    global _JUDGE
    cmd, cand, cache = parse_scenario(scenario)
    rdir = tempfile.mkdtemp(prefix=f"{scenario}-{mode}-{point}-", dir=setup.work)
    calibrating = point == 0
    vdir, env = prepare_run(setup, scenario, rdir, warm,
                            own_state=calibrating and not os.listdir(setup.state))
    if calibrating:
        env["KJ_FAULT_SITES"] = os.path.join(rdir, "sites")
    else:
        env.update(KJ_FAULT_AT=str(point), KJ_FAULT_MODE=mode)
    argv = command(setup, scenario, vdir, rdir)
    out = {"scenario": scenario, "point": point, "mode": mode, "rdir": rdir, "bad": []}
    bad = out["bad"]
    t0 = time.monotonic()
    with open(os.path.join(rdir, "stdout"), "w+b") as so, open(os.path.join(rdir, "stderr"), "w+b") as se:
        proc = _JUDGE = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=so, stderr=se,
                                         env=dict(os.environ, **env), start_new_session=True)
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            bad.append(f"the judge did not finish within {limit:.0f} s (it hung)")
        out["took"] = time.monotonic() - t0
        se.seek(0)
        err = se.read().decode(errors="replace")
    out["rc"] = rc
    if rc < 0:
        bad.append(f"the judge was killed by signal {-rc} ({signal.Signals(-rc).name})")
    if any(s in err for s in SANITIZER):
        bad.append("a sanitizer report")
    try:
        with open(env["KJ_FAULT_REPORT"]) as f:
            words = f.read().split()
        calls, injected = int(words[1]), int(words[3])
    except (OSError, ValueError, IndexError):
        calls, injected = None, None
        if not bad:
            bad.append("no fault report: the judge did not exit through exit()")
    out["calls"], out["injected"] = calls, injected
    rec_path = os.path.join(vdir, "verify_result.json") if cmd == "verify" \
        else os.path.join(rdir, "perf.json" if cand == "pass" else "stdout")
    ok, rec = read_json(rec_path)
    if not ok:
        bad.append(rec)
        rec = None
    if injected:
        want = ((2,) if cand == "pass" else (1, 2)) if cmd == "verify" else (1,)
        if rc not in want:
            bad.append(f"exit status {rc} after an injected failure, expected "
                       f"{' or '.join(map(str, want))}")
        if rec is not None:
            bad += (check_verify_record if cmd == "verify" else check_perf_record)(rec, cand, True)
    elif injected == 0:
        bad += clean_verdict(cmd, cand, rc, rec)
        if rec is not None:
            bad += (check_verify_record if cmd == "verify" else check_perf_record)(rec, cand, False)
    # What the run left behind.
    bad += [f"left running: {p}" for p in leftovers()]
    bad += [f"cgroup left behind: {p}" for p in stray_cgroups(proc.pid)]
    bad += [f"left in the scratch directory: {p}" for p in sorted(os.listdir(env["KJ_SCRATCH_DIR"]))]
    bad += [f"left in TMPDIR: {p}" for p in sorted(os.listdir(env["TMPDIR"]))]
    if env["KJ_CACHE_DIR"] != "off" and os.path.isdir(env["KJ_CACHE_DIR"]):
        bad += [f"left in the cache: {p}" for p in sorted(os.listdir(env["KJ_CACHE_DIR"]))
                if p.startswith(("stage-", ".trash-")) or ".tmp-" in p]
    bad += [f"unexpected in the verify dir: {p}" for p in stray_files(vdir)]
    if bad:
        # How far the run went after its point tells a failure that was
        # worked around from one that was never reached.
        bad.append(f"the judge's report: {calls} allocations, {injected} injected")
        tail = err.strip()[-700:]
        if tail:
            bad.append("judge stderr ends: " + tail)
        out["where"] = where(env["KJ_FAULT_TRACE"], argv[0])
    if calibrating:
        out["sites"] = read_sites(env["KJ_FAULT_SITES"], argv[0])
    out["cache"] = env["KJ_CACHE_DIR"]
    out["record"] = rec_path if rec is not None else None
    if not keep and not bad and not calibrating:
        shutil.rmtree(rdir, ignore_errors=True)
    return out


# --- the pool: each worker process is a child subreaper, so what a judge
# leaves running is re-parented to the process that ran it, and
# check_verify.leftovers() there sees it and nothing of other runs. ---

_SETUP = None
_JUDGE = None  # the judge a pool process is running, for _pool_stop


def _pool_stop(signum, frame):
    """The pool is terminated (the run was interrupted): the judge in flight
    and its workers go too, then this process."""
    if _JUDGE is not None and _JUDGE.poll() is None:
        try:
            os.killpg(_JUDGE.pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(1)


def _pool_init(setup):
    global _SETUP
    _SETUP = setup
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _pool_stop)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def end_pool(pool, done):
    """The pool's end, bounded.  A finished run closes it (each process takes
    a sentinel and exits: no signal to lose); an interrupted one terminates
    it (SIGTERM: _pool_stop).  Either way, processes still there after 60 s
    are killed: once CI waited 15 minutes on a worker idle in its queue's
    lock that had outlived Pool.terminate()'s SIGTERM."""
    procs = [p for p in multiprocessing.active_children()]

    def finish():
        if done:
            pool.close()
        else:
            pool.terminate()
        pool.join()
    t = threading.Thread(target=finish, daemon=True)
    t.start()
    t.join(60)
    if t.is_alive():
        left = [p for p in procs if p.exitcode is None]
        print(f"# fault: {len(left)} of the pool's processes had not ended after 60 s: "
              "killed", flush=True)
        for p in left:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except OSError:
                pass
        t.join(60)


def _pool_run(job):
    scenario, point, mode, limit, warm, keep = job
    try:
        return run_one(_SETUP, scenario, point, mode, limit, warm, keep)
    except Exception as e:  # a bug of this runner: reported, never a pass
        return {"scenario": scenario, "point": point, "mode": mode, "rc": None, "calls": None,
                "injected": None, "took": 0.0, "bad": [f"the runner failed: {e!r}"]}


def symbolize(binary, offsets):
    """{offset: (function, "file.c:line")} of return addresses in binary (the
    call is the byte before each), through one addr2line."""
    offsets = sorted(set(offsets))
    try:
        out = subprocess.run(["addr2line", "-e", binary, "-f", "-s"] +
                             [hex(o - 1) for o in offsets], capture_output=True, text=True,
                             timeout=120).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        out = []
    return {o: (out[2 * i], out[2 * i + 1].split(" ")[0]) if 2 * i + 1 < len(out) else ("??", "??")
            for i, o in enumerate(offsets)}


# Frames that say nothing of where the judge allocated: the interposer's and
# the counting allocator that jansson's allocations go through.
def _plumbing(fn, loc):
    return loc.startswith("fault.c") or fn.startswith("__wrap_") or fn == "counting_malloc"


def read_sites(path, binary):
    """The places a clean run allocates at (fault.c's KJ_FAULT_SITES file):
    {place: [points]}, a place being the two innermost frames of kjudge's own
    code ("parse_node value.c:108 < kj_value_parse value.c:222")."""
    try:
        with open(path) as f:
            rows = [line.split() for line in f if line.strip()]
    except OSError:
        return {}
    sym = symbolize(binary, [int(o, 16) for r in rows for o in r[1:]])
    sites = {}
    for r in rows:
        frames = [f"{fn} {loc}" for fn, loc in (sym[int(o, 16)] for o in r[1:])
                  if not _plumbing(fn, loc)]
        sites.setdefault(" < ".join(frames[:2]) or "?", []).append(int(r[0]))
    return sites


def select_points(calls, sites, prof, rng):
    """The points of one scenario: the deterministic ones (1..first, the last
    `last`, `spread` spread evenly between, and with `sites` the first point
    of every place that allocates), then `seeded` drawn from the seed: a
    place, then one of its points, so that a draw is not nearly always one
    of the few places that allocate most."""
    first, last, spread = prof["first"], prof["last"], prof["spread"]
    pts = set(range(1, min(first, calls) + 1))
    pts |= set(range(max(1, calls - last + 1), calls + 1))
    lo, hi = min(first, calls) + 1, max(1, calls - last)
    if spread and hi > lo:
        step = (hi - lo) / (spread + 1)
        pts |= {lo + round(step * (i + 1)) for i in range(spread)}
    if prof.get("sites"):
        pts |= {v[0] for v in sites.values()}
    places = sorted(sites)
    drawn = sorted(rng.choice(sites[rng.choice(places)]) for _ in range(prof["seeded"])) \
        if places else []
    return sorted(pts), drawn


def replay_line(args, scenario, point, mode):
    return (f"replay: {shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(__file__))} "
            f"--kjudge {shlex.quote(args.kjudge)} --scenarios {scenario} --points {point} "
            f"--modes {mode} --keep")


def where(trace, binary):
    """The stack of the injected failure (fault.c's KJ_FAULT_TRACE file) as
    "json_dumps < kj_proc_send (proc.c:398) < ...": kjudge's frames through
    addr2line, a library's by the name it gives; None when there is none."""
    try:
        with open(trace) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    frames = []  # (offset in the binary, or None; a library function's name)
    for line in lines:
        name, _, rest = line.partition("(")
        sym = rest.split(")", 1)[0]
        if os.path.basename(name) == os.path.basename(binary) and sym.startswith("+0x"):
            frames.append((int(sym[1:], 16), None))
        elif sym and not sym.startswith("+"):
            # With its offset: a library's internal functions take the
            # name of the exported one before them.
            frames.append((None, sym))
    sym = symbolize(binary, [o for o, _ in frames if o is not None])
    names = []
    for off, lib in frames:
        if off is None:
            names.append(lib)
            continue
        fn, loc = sym[off]
        if not _plumbing(fn, loc) and fn not in ("main", "_start"):
            names.append(f"{fn} ({loc})")
    return " < ".join(names[:8]) if names else None


def report_fail(title, res, args):
    print(f"FAIL fault: {title}")
    for b in res["bad"]:
        print("    | " + b.replace("\n", "\n    | "))
    if res.get("where"):
        print("    | the failed allocation: " + res["where"])
    if res.get("point"):
        print("    | " + replay_line(args, res["scenario"], res["point"], res["mode"]))
    if args.keep and res.get("rdir"):
        print(f"    | kept in {res['rdir']}")
    sys.stdout.flush()


def calibrate(pool, setup, scenarios, args):
    """Clean runs, in the order their dependencies need: the first verify makes
    the seed key, verify-pass's record is benchmark-pass's gate, and a cold
    run's cache is its warm scenario's template.  Returns ({scenario: result},
    failures)."""

    def warm_of(name):
        cmd, cand, cache = parse_scenario(name)
        return setup.warm.get((cmd, cand)) if cache == "warm" else None
    cal = {}
    failed = 0

    def take(results):
        nonlocal failed
        for r in results:
            s = r["scenario"]
            cal[s] = r
            title = f"calibrate {describe(s)}"
            if r["bad"]:
                failed += 1
                report_fail(title, r, args)
            else:
                print(f"ok   fault: {title}: {r['calls']} allocation points at "
                      f"{len(r['sites'])} places, {r['took']:.1f} s")
            sys.stdout.flush()

    def run(names):
        jobs = [(s, 0, "none", args.limit_clean, warm_of(s), args.keep) for s in names]
        take(pool.map(_pool_run, jobs, chunksize=1))

    # 1. The seed key and the gate's record: a clean verify of the correct
    #    candidate with a fresh cache, its state directory the shared one.
    first = "verify-pass-cold"
    run([first])
    r = cal[first]
    if r["bad"] or not r.get("record"):
        return cal, failed or 1
    shutil.copy(r["record"], setup.gate_record)
    setup.warm[("verify", "pass")] = r["cache"]
    # 2. The other cold and cache-off runs side by side, with the cold runs
    #    that the warm scenarios need.
    second = [s for s in ALL_SCENARIOS if s != first and not s.endswith("-warm") and
              (s in scenarios or s.replace("-cold", "-warm") in scenarios)]
    run(second)
    for s in second:
        cmd, cand, cache = parse_scenario(s)
        if cache == "cold" and not cal[s]["bad"]:
            setup.warm[(cmd, cand)] = cal[s]["cache"]
    # 3. The warm runs, from copies of the cold runs' caches.
    third = [s for s in scenarios if s.endswith("-warm") and
             (parse_scenario(s)[0], parse_scenario(s)[1]) in setup.warm]
    run(third)
    return cal, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kjudge", default=os.environ.get("KJ_FAULT_KJUDGE", "build/fault/kjudge"),
                    help="the fault-injection build of kjudge")
    ap.add_argument("--device", default=os.environ.get("KJ_DEVICE", "cpu"))
    ap.add_argument("--profile", choices=sorted(PROFILES), default=os.environ.get("KJ_FAULT_PROFILE", "ci"))
    ap.add_argument("--scenarios", help="comma list of scenarios instead of the profile's: "
                    + ", ".join(ALL_SCENARIOS))
    ap.add_argument("--points", help="comma list of points instead of the selection")
    ap.add_argument("--place", help="instead of the selection: the first and last point of "
                    "each place whose name (\"function file.c:line < caller ...\") contains this")
    ap.add_argument("--modes", default="once,from", help="once, from or both (default both)")
    ap.add_argument("--first", type=int, help="points 1..N")
    ap.add_argument("--last", type=int, help="the last N points")
    ap.add_argument("--spread", type=int, help="N points spread evenly between")
    ap.add_argument("--sites", action=argparse.BooleanOptionalAction,
                    help="the first point of every place that allocates")
    ap.add_argument("--seeded", type=int, help="N points drawn from the seed")
    ap.add_argument("--seed", type=int, default=int(os.environ["KJ_FAULT_SEED"])
                    if os.environ.get("KJ_FAULT_SEED") else None)
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("KJ_FAULT_JOBS", "2")))
    ap.add_argument("--keep", action="store_true", help="keep every run's directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line for every run")
    args = ap.parse_args()
    # SIGTERM unwinds as Ctrl-C does, so that the pool (and every judge in
    # flight) is stopped and the scratch removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    prof = dict(PROFILES[args.profile])
    for k in ("first", "last", "spread", "sites", "seeded"):
        if getattr(args, k) is not None:
            prof[k] = getattr(args, k)
    scenarios = args.scenarios.split(",") if args.scenarios else prof["scenarios"]
    for s in scenarios:
        if s not in ALL_SCENARIOS:
            print(f"FAIL fault: unknown scenario '{s}'")
            print("# done: fault, 0 runs, 1 failed")
            return 1
    modes = args.modes.split(",")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    print(f"# fault: profile {args.profile}, seed {seed} (KJ_FAULT_SEED={seed} draws the same "
          f"points), {args.jobs} jobs", flush=True)
    rng = random.Random(seed)
    kjudge = os.path.abspath(args.kjudge)
    if not os.access(kjudge, os.X_OK):
        print(f"FAIL fault: '{kjudge}' is not the fault-injection build (make FAULT=1)")
        print("# done: fault, 0 runs, 1 failed")
        return 1
    args.kjudge = kjudge
    work = tempfile.mkdtemp(prefix="kj-fault-")
    setup = Setup(work, [kjudge], args.device)
    make_templates(setup)
    args.limit_clean = 600
    t_start = time.monotonic()
    runs = failed = 0
    pool = multiprocessing.get_context("fork").Pool(args.jobs, _pool_init, (setup,))
    done = False
    try:
        cal, failed = calibrate(pool, setup, scenarios, args)
        runs = len(cal)
        jobs, groups = [], {}
        for s in scenarios:
            c = cal.get(s)
            if not c or c["bad"] or not c["calls"]:
                continue
            if args.points:
                fixed, drawn = [int(p) for p in args.points.split(",")], []
            elif args.place:
                # The first and the last point of every place that matches.
                fixed = sorted({p for k, v in c["sites"].items() if args.place in k
                                for p in (v[0], v[-1])})
                drawn = []
            else:
                fixed, drawn = select_points(c["calls"], c["sites"], prof, rng)
            limit = 3 * c["took"] + 60
            for m in modes:
                pts = sorted(set(fixed) | set(drawn))
                groups[(s, m)] = {"points": pts, "drawn": drawn, "bad": 0, "injected": 0}
                jobs += [(s, p, m, limit, setup.warm.get(parse_scenario(s)[:2]), args.keep)
                         for p in pts]
        # The cheap points (before the workers' start) first, then the rest in
        # an order that mixes the scenarios, so that the pool stays full.
        jobs.sort(key=lambda j: (j[1] > 40, j[1] % 97, j[0], j[2]))
        for res in pool.imap_unordered(_pool_run, jobs, chunksize=1):
            runs += 1
            g = groups[(res["scenario"], res["mode"])]
            g["injected"] += bool(res.get("injected"))
            title = f"{describe(res['scenario'])}, {res['mode']} at {res['point']}"
            if res["bad"]:
                g["bad"] += 1
                failed += 1
                report_fail(title, res, args)
            elif args.verbose:
                print(f"#    {title}: exit {res['rc']}, {res['calls']} calls, "
                      f"{res['injected']} injected, {res['took']:.1f} s", flush=True)
        for (s, m), g in sorted(groups.items()):
            if g["bad"]:
                continue
            pts = g["points"]
            print(f"ok   fault: {describe(s)}, {m}: {len(pts)} points held "
                  f"({g['injected']} reached, {pts[0]}..{pts[-1]}, drawn {g['drawn']})")
        done = True
    finally:
        end_pool(pool, done)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"# kept in {work}", file=sys.stderr)
    print(f"# done: fault, {runs} runs in {time.monotonic() - t_start:.0f} s, {failed} failed",
          flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
