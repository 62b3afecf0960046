#!/usr/bin/env python3
"""bench/overhead/overhead.py - the judge's own overhead, two kjudge binaries
side by side (`make bench-overhead`; method in docs/PERFORMANCE.md, "The
judge's own overhead").

    overhead.py run --a BIN_A --b BIN_B [--runs N] [--device cpu|cuda]
                    [--task DIR[:OP[:IMPL]]]... [--raw FILE] [--max-seconds S]
    overhead.py report RAW.json... [--json FILE]

`run` judges each task with both binaries, round after round.  A round makes
a new copy of every task whose task file ends in a comment naming the round,
so its hash is new to the golden cache, and then runs four steps on it, each
with A and with B before the next step (the order of the two alternates from
round to round, so neither always runs first):

    verify-cold   kjudge verify: the task is new to the cache (the reference
                  runs and its goldens are stored)
    verify-warm   the same command again: goldens from the cache
    bench-first   kjudge benchmark --warmup W --repeats R, gated on that
                  verify: the reference is timed and its latency stored
    bench-warm    the same command again: the reference's goldens (an older
                  judge: its latency) from the
                  cache

Each binary has its own KJ_CACHE_DIR and KJ_STATE_DIR, new for the run, so
neither sees the other's goldens, latencies, bytecode or seed key.  A
warm-up round that is not recorded comes first (it fills each cache's
bytecode tree and the page cache).  Each run records:

  judge_cpu_s   the judge process's own user + system CPU time, children
                excluded: getrusage(RUSAGE_SELF) written at exit by the
                LD_PRELOAD shim selfusage.so (bench/overhead/selfusage.c),
                which works with any kjudge binary unchanged;
  tree_cpu_s    the CPU time of the judge and every process it waited for
                (wait4 on the judge), for scale;
  wall_s        the whole command, from spawn to exit;
  start_s, compute_s, rest_s
                wall time split with the judge's kjudge.timings record:
                start_s is its start_s (the workers started and their
                modules loaded); compute_s the workers' phases on the
                critical path (verify runs both sides at once, so the larger
                side's sum; benchmark runs them one after the other, so both
                sums); rest_s = wall_s - start_s - compute_s, the judge's
                share of the critical path (comparisons, cache, records,
                protocol, process start and exit, worker shutdown);
  outside_s     wall_s - total_s: the part of rest_s outside the judge's
                own record (its process start, and after the record is
                complete: the workers' exit, the scratch folder's removal,
                writing the result);
  others_cpu_s  CPU time the machine spent on anything but this run while
                it ran (busy time of /proc/stat, all CPUs, less tree_cpu_s):
                the contention the figures were taken under;
  load1         the one-minute load average when the run started (on a
                small machine the benchmark's own runs raise it).

A run that exits with another status than expected (0), or leaves no usage
file or no timings record, stops the benchmark: a figure is never taken
from a run that went wrong.  The raw file (--raw) is rewritten after every
run, so an interrupted run keeps what it measured.

`report` reads one or more raw files (several calls on the GPU machine, for
instance) and prints, per task and step, the median and p10-p90 of each
binary and the ratio B/A of the medians with a 95 % bootstrap interval:
rounds are resampled with replacement, A's and B's runs of a round together
(the design pairs them in time).  The row "all" sums each round over every
task and step.  A ratio whose interval excludes 1.0 is marked "*"; in an A/A
run (the same binary twice) about one cell in twenty is marked by chance.

Standard library only, so that the GPU machine's python3 runs it as it is.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STEPS = ("verify-cold", "verify-warm", "bench-first", "bench-warm")
METRICS = ("judge_cpu_s", "wall_s", "rest_s", "start_s", "compute_s", "outside_s",
           "tree_cpu_s", "others_cpu_s")
BOOTSTRAP = 4000


class BenchError(Exception):
    """A run that went wrong or an input that is unusable: the message says
    which, and the benchmark stops."""


# --- the tasks ------------------------------------------------------------------

def default_tasks(impl):
    """The examples with the candidate `impl`, and the two tasks of
    bench/overhead/tasks/ with their plain-torch candidate."""
    specs = []
    ex = os.path.join(ROOT, "examples")
    for name in sorted(os.listdir(ex)):
        d = os.path.join(ex, name)
        if not os.path.isdir(d):
            continue
        ops = [f[:-len("_torch.py")] for f in os.listdir(d) if f.endswith("_torch.py")]
        if len(ops) == 1 and os.path.isfile(os.path.join(d, "%s_%s.py" % (ops[0], impl))):
            specs.append("%s:%s:%s" % (d, ops[0], impl))
    for name in ("many", "bigout"):
        specs.append(os.path.join(HERE, "tasks", name) + "::cpu_impl")
    return specs


def parse_task(spec, impl):
    """DIR[:OP[:IMPL]] as a dict; OP is the one *_torch.py in DIR when not
    given, IMPL the --impl default."""
    parts = spec.split(":")
    d = os.path.abspath(parts[0])
    op = parts[1] if len(parts) > 1 and parts[1] else None
    im = parts[2] if len(parts) > 2 and parts[2] else impl
    if not os.path.isdir(d):
        raise BenchError("task '%s': no such directory" % spec)
    if not op:
        ops = [f[:-len("_torch.py")] for f in os.listdir(d) if f.endswith("_torch.py")]
        if len(ops) != 1:
            raise BenchError("task '%s': %d *_torch.py files, name the op" % (spec, len(ops)))
        op = ops[0]
    for f in ("%s_torch.py" % op, "%s_%s.py" % (op, im)):
        if not os.path.isfile(os.path.join(d, f)):
            raise BenchError("task '%s': no %s" % (spec, f))
    return {"name": os.path.basename(d.rstrip("/")), "dir": d, "op": op, "impl": im}


def gate_name(impl):
    """The verify record benchmark's gate reads for `impl` (docs/cli.md)."""
    if impl == "triton_ascend_impl":
        return "verify_result.json"
    if impl.startswith("triton_"):
        return "verify_result_%s.json" % impl[len("triton_"):]
    return "verify_result_%s.json" % impl


def task_copy(task, dst, rnd):
    """A copy of the task's directory whose task file is new to any cache:
    its last line names the round."""
    os.makedirs(dst)
    for f in os.listdir(task["dir"]):
        if f.endswith(".py"):
            shutil.copy(os.path.join(task["dir"], f), dst)
    with open(os.path.join(dst, "%s_torch.py" % task["op"]), "a") as fh:
        fh.write("\n# bench/overhead round %d: a task file hash no cache has seen\n" % rnd)


# --- one run ------------------------------------------------------------------------

def timings_split(timings, command, wall):
    """start_s, compute_s and rest_s from a kjudge.timings record (see the
    file's header), or BenchError when the record is missing."""
    if not isinstance(timings, dict) or not isinstance(timings.get("start_s"), (int, float)):
        raise BenchError("no kjudge.timings.start_s in the result")
    sides = [sum(v for v in t.values() if isinstance(v, (int, float)))
             for t in timings.values() if isinstance(t, dict)]
    if command == "verify":
        compute = max(sides) if sides else 0.0
    else:
        compute = sum(sides)
    start = float(timings["start_s"])
    return start, compute, wall - start - compute


def cpu_busy_s():
    """Seconds all CPUs have been busy since boot (/proc/stat: everything
    but idle and iowait; steal counts, as time the VM did not get)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    busy = sum(f[:8]) - f[3] - f[4]
    return busy / os.sysconf("SC_CLK_TCK")


def run_one(binary, shim, env, argv, result_path, command, logbase):
    """Run one kjudge command; its record (a dict of the figures above).
    stdout and stderr go to logbase.out / .err."""
    usage = logbase + ".usage.json"
    e = dict(env)
    e["LD_PRELOAD"] = shim
    e["KJ_SELFUSAGE_FILE"] = usage
    for p in (usage, result_path):
        if os.path.exists(p):
            os.unlink(p)
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, logbase + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, logbase + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    load1 = os.getloadavg()[0]
    busy0 = cpu_busy_s()
    t0 = time.perf_counter()
    pid = os.posix_spawn(binary, [binary] + argv, e, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    busy = cpu_busy_s() - busy0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        with open(logbase + ".err", errors="replace") as fh:
            tail = fh.read()[-2000:]
        raise BenchError("%s exited %d (expected 0): %s\n%s" % (binary, rc, " ".join(argv), tail))
    try:
        with open(usage) as fh:
            u = json.load(fh)
    except (OSError, ValueError) as ex:
        raise BenchError("%s left no usage record (%s): does it exit through a path "
                         "that skips destructors?" % (binary, ex))
    if u.get("pid") != pid:
        raise BenchError("usage record of pid %s, the judge was %d" % (u.get("pid"), pid))
    try:
        with open(result_path) as fh:
            res = json.load(fh)
    except (OSError, ValueError) as ex:
        raise BenchError("%s left no result (%s): %s" % (binary, ex, " ".join(argv)))
    if not res.get("total_cases") or res.get("passed_cases") != res.get("total_cases"):
        raise BenchError("%s: %s of %s cases passed; the benchmark needs candidates that pass"
                         % (result_path, res.get("passed_cases"), res.get("total_cases")))
    kj = res.get("kjudge") or {}
    try:
        start, compute, rest = timings_split(kj.get("timings"), command, wall)
    except BenchError as ex:
        raise BenchError("%s: %s" % (result_path, ex))
    judge = u["utime_s"] + u["stime_s"]
    tree = ru.ru_utime + ru.ru_stime
    total = kj["timings"].get("total_s")
    if judge > tree + 0.01:
        raise BenchError("judge CPU %.3f s above the whole tree's %.3f s" % (judge, tree))
    return {
        "rc": rc, "wall_s": wall, "judge_cpu_s": judge, "judge_user_s": u["utime_s"],
        "judge_sys_s": u["stime_s"], "judge_life_s": u["life_s"],
        "judge_maxrss_kb": u["maxrss_kb"], "tree_cpu_s": tree, "load1": load1,
        "start_s": start, "compute_s": compute, "rest_s": rest,
        "outside_s": wall - total if isinstance(total, (int, float)) else None,
        "others_cpu_s": max(0.0, busy - tree),
        "timings": kj.get("timings"),
        "from_cache": kj.get("golden_from_cache", kj.get("reference_from_cache")),
        "torch": kj.get("torch"), "device_name": kj.get("device_name"),
    }


def check_cache_state(rec, result_path):
    """A cold step must have found nothing in the cache and a warm one
    something, or the steps do not measure what they are named for (the
    cache off, a key that changed between runs)."""
    n = rec["from_cache"]
    if not isinstance(n, (int, float)):
        return
    if rec["step"] == "verify-cold" and n != 0:
        raise BenchError("%s: %s entries from the cache on a task new to it" % (result_path, n))
    if rec["step"].endswith("-warm") and n == 0:
        raise BenchError("%s: nothing from the cache on the second run" % result_path)


def parse_steps(text, warmup_rounds):
    """The measured steps, in STEPS order, or BenchError for a set whose
    steps would not measure what they are named for."""
    steps = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in steps if x not in STEPS]
    if bad or not steps:
        raise BenchError("--steps: '%s' is not one of %s" % (",".join(bad), ", ".join(STEPS)))
    cold = "verify-cold" in steps
    if "bench-first" in steps and not cold:
        raise BenchError("--steps: bench-first needs verify-cold (a task new to the cache)")
    if cold and "bench-warm" in steps and "bench-first" not in steps:
        raise BenchError("--steps: bench-warm after verify-cold needs bench-first before it")
    if not cold and warmup_rounds < 1:
        raise BenchError("--steps without verify-cold needs a warm-up round")
    return [x for x in STEPS if x in steps]


_FIXED = {}


def fixed_seed_flags(binary, command):
    """A judge that draws fresh secret seeds for every run shares goldens
    across runs only with fixed seeds (`--seed`; benchmark's gate then needs
    `--allow_fixed_seeds`): the flags this binary takes for that, from its
    help, or none (an older judge whose seeds were the same in every run)."""
    key = (binary, command)
    if key not in _FIXED:
        try:
            text = subprocess.run([binary, command, "--help"], capture_output=True, text=True,
                                  timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            text = ""
        flags = ["--seed", "20261201"] if "--seed" in text else []
        if command == "benchmark" and flags and "--allow_fixed_seeds" in text:
            flags.append("--allow_fixed_seeds")
        _FIXED[key] = flags
    return _FIXED[key]


def step_argv(step, task, d, args, binary=None):
    """The command line of one step in the task copy d, and its result file."""
    common = ["--op_name", task["op"], "--verify_dir", d, "--triton_impl_name", task["impl"],
              "--device", args.device]
    if step.startswith("verify"):
        out = os.path.join(d, gate_name(task["impl"]))
        return "verify", (["verify"] + common + ["--output", out] +
                          (fixed_seed_flags(binary, "verify") if binary else [])), out
    out = os.path.join(d, "perf_%s.json" % task["impl"])
    return "benchmark", (["benchmark"] + common + ["--warmup", str(args.warmup), "--repeats",
                                                  str(args.repeats), "--output", out] +
                         (fixed_seed_flags(binary, "benchmark") if binary else [])), out


def run_step(args, side, binary, shim, env, task, d, step, logdir, rnd):
    """One step of one task with binary `side`, checked; its record."""
    command, argv, out = step_argv(step, task, d, args, binary)
    log = os.path.join(logdir, "r%d-%s-%s" % (rnd, task["name"], step))
    rec = run_one(binary, shim, env, argv, out, command, log)
    rec.update({"side": side, "task": task["name"], "step": step})
    check_cache_state(rec, out)
    return rec


# --- the run command ------------------------------------------------------------------

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def binary_info(path):
    """What identifies a binary under test: its path, hashes, --version."""
    worker = os.path.join(os.path.dirname(path), "kjudge_worker.py")
    try:
        ver = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as ex:
        ver = "unknown (%s)" % ex
    return {"path": path, "sha256": sha256(path), "version": ver,
            "worker_sha256": sha256(worker) if os.path.isfile(worker) else None}


def machine_info():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "host": platform.node()}


def write_raw(path, raw):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(raw, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


def lived_in_cache(cache, n):
    """Fill a new cache folder with n golden entries as a judge leaves them
    (g-KEY/ with a meta.json and one small .npy each), keys drawn at random:
    the cache of a machine that has judged for a while, which the judge
    finds at every start and every put (--cache-entries)."""
    os.makedirs(cache, exist_ok=True)
    npy = (b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (16,), }"
           .ljust(10 + 0x76 - 1, b" ") + b"\n" + bytes(64))
    meta = json.dumps({"version": 1, "outputs": {"kind": "tensor", "file": "ref_o0.npy"},
                       "input_desc": None,
                       "files": {"ref_o0.npy": {"size": len(npy), "sum": "0" * 16}}})
    for i in range(n):
        d = os.path.join(cache, "g-" + hashlib.sha256(b"lived-in %d" % i).hexdigest())
        os.mkdir(d)
        with open(os.path.join(d, "ref_o0.npy"), "wb") as f:
            f.write(npy)
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write(meta)


def cmd_run(args):
    shim = os.path.abspath(args.shim)
    if not os.path.isfile(shim):
        raise BenchError("'%s': no shim; build it with `make build/bench/selfusage.so`" % shim)
    bins = {}
    for side, path in (("a", args.a), ("b", args.b)):
        p = os.path.abspath(path)
        if not (os.path.isfile(p) and os.access(p, os.X_OK)):
            raise BenchError("--%s '%s': not an executable file" % (side, path))
        bins[side] = p
    tasks = [parse_task(s, args.impl) for s in (args.task or default_tasks(args.impl))]
    names = [t["name"] for t in tasks]
    if len(set(names)) != len(names):
        raise BenchError("two tasks of the same directory name: %s" % ", ".join(names))
    work = tempfile.mkdtemp(prefix="kj-overhead-", dir=args.work)
    raw_path = os.path.abspath(args.raw)
    raw = {
        "format": "kjudge-overhead-1",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine_info(), "device": args.device,
        "settings": {"runs": args.runs, "warmup": args.warmup, "repeats": args.repeats,
                     "cache_entries": args.cache_entries,
                     "warmup_rounds": args.warmup_rounds, "steps": args.steps},
        "labels": {"a": args.label_a, "b": args.label_b},
        "binaries": {s: binary_info(p) for s, p in bins.items()},
        "tasks": tasks, "rounds_complete": 0, "runs": [],
    }
    write_raw(raw_path, raw)
    env = dict(os.environ)
    if args.python:
        env["KJ_PYTHON"] = args.python
    side_env = {}
    for s in ("a", "b"):
        base = os.path.join(work, s)
        os.makedirs(os.path.join(base, "logs"))
        side_env[s] = dict(env, KJ_CACHE_DIR=os.path.join(base, "cache"),
                           KJ_STATE_DIR=os.path.join(base, "state"))
        if args.cache_entries:
            lived_in_cache(os.path.join(base, "cache"), args.cache_entries)
    t_begin = time.monotonic()
    longest = 0.0
    copies = {}
    try:
        for rnd in range(args.warmup_rounds + args.runs):
            recorded = rnd >= args.warmup_rounds
            if args.max_seconds and rnd > args.warmup_rounds and \
                    time.monotonic() - t_begin + longest > args.max_seconds:
                print("stopping after %d rounds: --max-seconds %g" %
                      (raw["rounds_complete"], args.max_seconds), flush=True)
                break
            t_round = time.monotonic()
            # The order of A and B alternates, so that neither always runs
            # first (after the other's runs have warmed or loaded the
            # machine).
            order = ("a", "b") if rnd % 2 == 0 else ("b", "a")
            steps = args.steps if recorded else STEPS
            for task in tasks:
                # A task new to the cache every round when a cold step is
                # measured; else the warm-up round's copy, warm already.
                if "verify-cold" in steps or task["name"] not in copies:
                    for s in ("a", "b"):
                        if copies.get(task["name"]):
                            shutil.rmtree(copies[task["name"]][s], ignore_errors=True)
                    copies[task["name"]] = {}
                    for s in ("a", "b"):
                        d = os.path.join(work, s, "r%d-%s" % (rnd, task["name"]))
                        task_copy(task, d, rnd)
                        copies[task["name"]][s] = d
                for step in steps:
                    for s in order:
                        rec = run_step(args, s, bins[s], shim, side_env[s], task,
                                       copies[task["name"]][s], step,
                                       os.path.join(work, s, "logs"), rnd)
                        rec["round"] = rnd - args.warmup_rounds
                        print("%s %-5s %-10s %-11s judge %.3f s wall %.2f s rest %.2f s load %.1f"
                              % ("   " if recorded else "(w)", s, task["name"], step,
                                 rec["judge_cpu_s"], rec["wall_s"], rec["rest_s"], rec["load1"]),
                              flush=True)
                        if recorded:
                            raw["runs"].append(rec)
                            write_raw(raw_path, raw)
            longest = max(longest, time.monotonic() - t_round)
            if recorded:
                raw["rounds_complete"] += 1
                write_raw(raw_path, raw)
    except BenchError as ex:
        # The raw file keeps what was measured, and says why it ends there.
        raw["error"] = str(ex)
        write_raw(raw_path, raw)
        raise
    finally:
        if args.keep:
            print("work folder kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    write_raw(raw_path, raw)
    print("raw numbers: %s (%d rounds)" % (raw_path, raw["rounds_complete"]))
    print(report([raw]))
    return 0


# --- statistics -------------------------------------------------------------------------

def quantile(xs, q):
    """The q-quantile of xs by linear interpolation (numpy's default)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(xs):
    return quantile(xs, 0.5)


def ratio_ci(pairs, rng, n=BOOTSTRAP):
    """Ratio of medians B/A over (a, b) pairs of one round each, and its 95 %
    percentile bootstrap interval, rounds resampled with replacement."""
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    ma = median(a)
    if not pairs or ma <= 0:
        return float("nan"), float("nan"), float("nan")
    stats = []
    k = len(pairs)
    for _ in range(n):
        idx = [rng.randrange(k) for _ in range(k)]
        ra = median([a[i] for i in idx])
        if ra > 0:
            stats.append(median([b[i] for i in idx]) / ra)
    return median(b) / ma, quantile(stats, 0.025), quantile(stats, 0.975)


def pair_runs(raws):
    """{(task, step): {round key: {side: record}}} over every raw file; a
    round key is (file index, round)."""
    cells = {}
    for fi, raw in enumerate(raws):
        for r in raw["runs"]:
            cells.setdefault((r["task"], r["step"]), {}).setdefault((fi, r["round"]), {})[r["side"]] = r
    return cells


def summarise(raws, seed=1):
    """The report's figures as data: one row per task and step and one for
    all, each metric with both sides' median, p10, p90 and the ratio."""
    rng = random.Random(seed)
    cells = pair_runs(raws)
    order = []
    for raw in raws:
        for t in raw["tasks"]:
            for step in STEPS:
                if (t["name"], step) in cells and (t["name"], step) not in order:
                    order.append((t["name"], step))
    rows = []
    totals = {}
    for key in order:
        rounds = {k: v for k, v in cells[key].items() if "a" in v and "b" in v}
        row = {"task": key[0], "step": key[1], "n": len(rounds)}
        for m in METRICS:
            pairs = [(v["a"].get(m), v["b"].get(m)) for v in rounds.values()]
            row[m] = figures(pairs, rng)
        row["load1"] = {s: median([v[s]["load1"] for v in rounds.values()]) for s in ("a", "b")}
        rows.append(row)
        for rk, v in rounds.items():
            totals.setdefault(rk, []).append(v)
    # "all": rounds that have both sides of every cell, summed.
    full = {rk: vs for rk, vs in totals.items() if len(vs) == len(order)}
    if full:
        row = {"task": "all", "step": "(sum)", "n": len(full)}
        for m in METRICS:
            pairs = [(total(v["a"].get(m) for v in vs), total(v["b"].get(m) for v in vs))
                     for vs in full.values()]
            row[m] = figures(pairs, rng)
        row["load1"] = {s: median([v[s]["load1"] for vs in full.values() for v in vs])
                        for s in ("a", "b")}
        rows.append(row)
    return rows


def total(xs):
    """The sum of xs, None when one is missing."""
    xs = list(xs)
    return None if any(x is None for x in xs) else sum(xs)


def figures(pairs, rng):
    """Both sides' median, p10 and p90 and the ratio of the medians, over the
    pairs in which both sides have the figure."""
    pairs = [p for p in pairs if all(isinstance(x, (int, float)) and x == x for x in p)]
    out = {"n": len(pairs)}
    for i, s in enumerate(("a", "b")):
        xs = [p[i] for p in pairs]
        out[s] = {"median": median(xs), "p10": quantile(xs, 0.1), "p90": quantile(xs, 0.9)}
    r, lo, hi = ratio_ci(pairs, rng)
    out["ratio"], out["lo"], out["hi"] = r, lo, hi
    return out


def fmt_s(x):
    if x != x:
        return "n/a"
    return "%.3f" % x if abs(x) < 10 else "%.2f" % x


def fmt_cell(f):
    return "%s (%s–%s)" % (fmt_s(f["median"]), fmt_s(f["p10"]), fmt_s(f["p90"]))


def fmt_ratio(f):
    if f["ratio"] != f["ratio"]:
        return "n/a"
    mark = "" if f["lo"] <= 1.0 <= f["hi"] else " *"
    return "%.3f [%.3f, %.3f]%s" % (f["ratio"], f["lo"], f["hi"], mark)


# The report's tables: each a list of (metric, column title).
TABLES = (
    (("judge_cpu_s", "judge CPU"), ("wall_s", "wall"), ("rest_s", "judge's share")),
    (("start_s", "start-up"), ("compute_s", "worker compute"), ("outside_s", "outside the record")),
    (("tree_cpu_s", "judge + workers CPU"), ("others_cpu_s", "other processes' CPU")),
)


def report(raws):
    """The report as Markdown: where the figures come from, then the tables
    of TABLES, each metric as A, B and B/A."""
    rows = summarise(raws)
    lines = []
    labels = raws[0]["labels"]
    for raw in raws:
        m = raw["machine"]
        lines.append("- %s, %s: %s, %s CPUs, Linux %s, device %s; %d rounds (warm-up %d, "
                     "benchmark --warmup %d --repeats %d)" % (
                         raw["date"], m["host"], m["cpu"], m["cpus"], m["kernel"], raw["device"],
                         raw["rounds_complete"], raw["settings"]["warmup_rounds"],
                         raw["settings"]["warmup"], raw["settings"]["repeats"]))
        for s in ("a", "b"):
            b = raw["binaries"][s]
            lines.append("  - %s = %s: %s (%s, sha256 %s)" % (
                s.upper(), raw["labels"][s], b["path"], b["version"], b["sha256"][:12]))
        if raw.get("error"):
            lines.append("  - stopped by an error: %s" % raw["error"].splitlines()[0])
    lines.append("")
    lines.append("Seconds: median (p10–p90) of A = %s and B = %s over n rounds; B/A is the "
                 "ratio of the medians [95 %% bootstrap interval], * where it excludes 1.0."
                 % (labels["a"], labels["b"]))
    for k, table in enumerate(TABLES):
        head = "| task | step | n |"
        for _, title in table:
            head += " %s A | %s B | B/A |" % (title, title)
        if k == 0:
            head += " load A / B |"
        lines += ["", head, "| --- | --- |" + " ---: |" * (head.count("|") - 3)]
        for r in rows:
            line = "| %s | %s | %d |" % (r["task"], r["step"], r["n"])
            for m, _ in table:
                f = r[m]
                line += " %s | %s | %s |" % (fmt_cell(f["a"]), fmt_cell(f["b"]), fmt_ratio(f))
            if k == 0:
                line += " %.1f / %.1f |" % (r["load1"]["a"], r["load1"]["b"])
            lines.append(line)
    return "\n".join(lines)


def cmd_report(args):
    raws = []
    for p in args.raw:
        try:
            with open(p) as fh:
                raw = json.load(fh)
        except (OSError, ValueError) as ex:
            raise BenchError("'%s': cannot read a raw file: %s" % (p, ex))
        if raw.get("format") != "kjudge-overhead-1":
            raise BenchError("'%s': not a raw file of overhead.py" % p)
        raws.append(raw)
    print(report(raws))
    if args.json:
        write_raw(args.json, {"format": "kjudge-overhead-summary-1", "rows": summarise(raws)})
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="overhead.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure two binaries side by side")
    r.add_argument("--a", required=True, help="kjudge binary A (before)")
    r.add_argument("--b", required=True, help="kjudge binary B (after)")
    r.add_argument("--label-a", default="before")
    r.add_argument("--label-b", default="after")
    r.add_argument("--runs", type=int, default=10, help="recorded rounds (default 10)")
    r.add_argument("--warmup-rounds", type=int, default=1, help="rounds not recorded (default 1)")
    r.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    r.add_argument("--impl", default=None,
                   help="the examples' candidate (default cpu_impl on the CPU, "
                        "triton_ascend_impl on cuda)")
    r.add_argument("--task", action="append", metavar="DIR[:OP[:IMPL]]",
                   help="a task to judge (repeatable; default the examples and "
                        "bench/overhead/tasks/)")
    r.add_argument("--steps", default=",".join(STEPS),
                   help="the steps measured, comma-separated (default all four; without "
                        "verify-cold every round judges the warm-up round's copy)")
    r.add_argument("--warmup", type=int, default=2, help="benchmark --warmup (default 2)")
    r.add_argument("--repeats", type=int, default=20, help="benchmark --repeats (default 20)")
    r.add_argument("--python", default=None, help="KJ_PYTHON for the judges")
    r.add_argument("--shim", default=os.path.join(ROOT, "build", "bench", "selfusage.so"))
    r.add_argument("--work", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                   help="where the work folder is made (default /dev/shm)")
    r.add_argument("--raw", default="overhead-raw.json", help="raw numbers (JSON)")
    r.add_argument("--max-seconds", type=float, default=0,
                   help="start no round that would end past this many seconds")
    r.add_argument("--keep", action="store_true", help="keep the work folder")
    r.add_argument("--cache-entries", type=int, default=0, metavar="N",
                   help="start each side's cache with N golden entries of earlier runs "
                        "(a cache a machine has used for a while; default 0, a new one)")
    p = sub.add_parser("report", help="tables from raw files")
    p.add_argument("raw", nargs="+")
    p.add_argument("--json", help="also write the summary as JSON")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "run":
            if args.runs < 1 or args.warmup_rounds < 0:
                raise BenchError("--runs must be at least 1, --warmup-rounds at least 0")
            args.steps = parse_steps(args.steps, args.warmup_rounds)
            if args.impl is None:
                args.impl = "cpu_impl" if args.device == "cpu" else "triton_ascend_impl"
            return cmd_run(args)
        return cmd_report(args)
    except BenchError as ex:
        print("overhead: %s" % ex, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
