#!/usr/bin/env python3
"""Kill `kjudge verify` with SIGKILL, SIGTERM and SIGINT at several moments
and check that nothing of the run outlives it, then that the next run is
right and leaves nothing behind.

This runner makes itself a child subreaper (prctl 36), so every process the
judge leaves without a parent becomes its child.  Each run gets a token that
the candidate and task files pass to the processes they start (in their
command lines), so such a process is found wherever it ended up.

Moments (each with the three signals):
  start-up   the workers exist and are starting Python and torch
  mid-case   the candidate's forward has started children, a grandchild and
             a daemon in a session of its own, and spins
  reference  the task's own Model.forward has started a child and sleeps

After each kill: within 1 s no process of the run is left (children of this
runner, processes carrying the token, processes in the judge's cgroups
kjudge-PID-*); the judge exits with 128 + the signal (SIGTERM 143, SIGINT 130;
SIGKILL kills it) within 20 s and writes no verify_result.json; SIGTERM and
SIGINT leave no scratch directory, no cgroup, no stage directory in the
golden cache; no process anywhere still has a mount under the run's scratch
parent.  After the three kills of a moment, the same verify with a correct
candidate passes (exit 0, every case) and leaves nothing: no process, no
cgroup and no scratch directory of its own or of the killed judges (the
next run sweeps what a SIGKILL left).

Prints "ok   kill: MOMENT SIGNAL" or "FAIL kill: ..." with the reasons, one
line per check group, as tests/run counts them; exits 1 if any failed.
"""
import argparse
import ctypes
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = os.path.join(HERE, "..", "candidates")
PR_SET_CHILD_SUBREAPER = 36

# The candidate of the mid-case moment: its forward starts a child and a
# daemon (new session) that sleep, forks a copy of itself that starts a
# grandchild, and spins.  TOKEN marks every process it starts.
SPINNER = '''
import os
import subprocess
import sys
import time

import torch.nn as nn

TOKEN = "{token}"


def sleeper(**kw):
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", TOKEN],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, **kw)


class ModelNew(nn.Module):
    def forward(self, x, y):
        sleeper()
        sleeper(start_new_session=True)
        if os.fork() == 0:
            sleeper()
            time.sleep(600)
            os._exit(0)
        while True:
            pass
'''

# The task of the reference moment: addmul, whose reference starts a child
# and sleeps in forward.
SLOW_REFERENCE = '''
import subprocess
import sys
import time

import torch
import torch.nn as nn

TOKEN = "{token}"


class Model(nn.Module):
    def forward(self, x, y):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", TOKEN + "-ref"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        time.sleep(600)
        return x * y + x


def get_input_groups():
    return [[torch.randn(64), torch.randn(64)], [torch.randn(33, 17), torch.randn(33, 17)],
            [torch.randn(8, 128), torch.randn(8, 128)]]


def get_init_inputs():
    return []
'''


def read(path, binary=False):
    try:
        with open(path, "rb" if binary else "r") as f:
            return f.read()
    except OSError:
        return None


def processes():
    """{pid: (ppid, state, cmdline)} of every process now."""
    table = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        stat = read(f"/proc/{p}/stat")
        cmd = read(f"/proc/{p}/cmdline", binary=True)
        if stat is None or cmd is None:
            continue
        rest = stat.rsplit(")", 1)[1].split()
        table[int(p)] = (int(rest[1]), rest[0], cmd.replace(b"\0", b" ").decode(errors="replace"))
    return table


def reap(table, keep):
    """Reap this runner's children that have ended (orphans of the judge),
    but not `keep` (the judge, whose status its Popen reads)."""
    me = os.getpid()
    for pid, (ppid, state, _) in table.items():
        if ppid == me and state == "Z" and pid != keep:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def own_v2_group():
    for line in (read("/proc/self/cgroup") or "").splitlines():
        if line.startswith("0::"):
            return "/sys/fs/cgroup" + line[3:].rstrip("/")
    return None


def cgroups(judge_pid):
    """The cgroups a judge made (kjudge-PID-N), wherever kjudge makes them."""
    name = f"kjudge-{judge_pid}-*"
    found = set(glob.glob(f"/sys/fs/cgroup/*/{name}") + glob.glob(f"/sys/fs/cgroup/{name}"))
    v2 = own_v2_group()
    if v2 and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        found |= set(glob.glob(f"{v2}/{name}"))
    return sorted(p for p in found if os.path.isdir(p))


def cgroup_machine():
    """What cgroup access this machine gives, in words."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return "cgroup v2 (" + (read("/sys/fs/cgroup/cgroup.subtree_control") or "").strip() + ")"
    v1 = [c for c in ("memory", "pids") if os.access(f"/sys/fs/cgroup/{c}", os.W_OK)]
    return "cgroup v1, writable: " + (", ".join(v1) if v1 else "none")


def run_processes(judge_pid, token, alive_judge):
    """Every process of the run: descendants of this runner (the judge
    itself left out while it lives), processes carrying the token, and
    processes in the judge's cgroups."""
    table = processes()
    reap(table, judge_pid)
    me = os.getpid()
    kids = {}
    for pid, (ppid, state, _) in table.items():
        if state != "Z":
            kids.setdefault(ppid, []).append(pid)
    found, todo = set(), list(kids.get(me, []))
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo += kids.get(pid, [])
    if alive_judge:
        found.discard(judge_pid)
    found |= {pid for pid, (_, state, cmd) in table.items()
              if token in cmd and state != "Z" and pid != me}
    for group in cgroups(judge_pid):
        for line in (read(os.path.join(group, "cgroup.procs")) or "").split():
            if line.isdigit() and table.get(int(line), (0, "Z"))[1] != "Z":
                found.add(int(line))
    return {pid: table.get(pid, (0, "?", "?"))[2][:160] for pid in found}


def gone_within(judge_pid, token, alive_judge, seconds):
    """[] when no process of the run is left within `seconds`; else the
    survivors, which are then killed."""
    end = time.monotonic() + seconds
    while True:
        left = run_processes(judge_pid, token, alive_judge)
        if not left or time.monotonic() > end:
            break
        time.sleep(0.02)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return [f"pid {pid}: {cmd}" for pid, cmd in sorted(left.items())]


def mounts_under(path):
    """Mounts under path that any process still has (in any namespace)."""
    found = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        for line in (read(f"/proc/{p}/mountinfo") or "").splitlines():
            fields = line.split()
            if len(fields) > 4 and fields[4].startswith(path + "/"):
                found.add(f"{fields[4]} (seen by pid {p})")
    return sorted(found)


def default_signals():
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


class Run:
    """One verify directory and the environment of the judges run on it."""

    def __init__(self, work, name, task_src, cand_src, op):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        self.op = op
        with open(os.path.join(self.dir, f"{op}_torch.py"), "w") as f:
            f.write(task_src)
        with open(os.path.join(self.dir, f"{op}_triton_ascend_impl.py"), "w") as f:
            f.write(cand_src)
        self.result = os.path.join(self.dir, "verify_result.json")

    def start(self, kjudge, device, env, logname):
        cmd = kjudge + ["verify", "--op_name", self.op, "--verify_dir", self.dir,
                        "--output", self.result, "--device", device]
        self.err = open(logname, "w+")
        # The judge as a terminal starts it: SIGINT and SIGQUIT at their
        # defaults, whatever this test inherited (a script's background job,
        # nohup and CI runners start it with SIGINT ignored, and a judge
        # started so keeps ignoring it, as any program must).
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=self.err, env=env, preexec_fn=default_signals)

    def stderr(self):
        self.err.seek(0)
        return self.err.read()[-800:]


def wait_for(moment, judge, token, limit=240):
    """Wait until the run reaches the moment; False when the judge ended or
    the limit passed first."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if judge.poll() is not None:
            return False
        table = processes()
        if moment == "start-up":
            if any(ppid == judge.pid and "kjudge_worker.py" in cmd for ppid, _, cmd in table.values()):
                return True
        elif moment == "mid-case":
            if any(token in cmd and not cmd.rstrip().endswith("-ref") for _, _, cmd in table.values()):
                time.sleep(0.2)  # the candidate is spinning by now
                return True
        elif any((token + "-ref") in cmd for _, _, cmd in table.values()):
            return True
        time.sleep(0.02)
    return False


def leftovers_of(pids, scratch):
    bad = []
    for pid in pids:
        bad += [f"scratch directory of judge {pid} left: {p}"
                for p in glob.glob(os.path.join(scratch, f"kjudge-{pid}-*"))]
        bad += [f"cgroup of judge {pid} left: {p}" for p in cgroups(pid)]
    return bad


def stages(env):
    return set(glob.glob(os.path.join(env["KJ_CACHE_DIR"], "stage-*")))


def kill_one(args, kjudge, work, env, moment, sig, n):
    token = f"kj-kill-{uuid.uuid4().hex[:12]}"
    addmul = read(os.path.join(CANDIDATES, "addmul_torch.py"))
    correct = read(os.path.join(CANDIDATES, "pass", "candidate.py"))
    if moment == "reference":
        run = Run(work, f"run{n}", SLOW_REFERENCE.format(token=token), correct, "addmul")
    else:
        run = Run(work, f"run{n}", addmul, SPINNER.format(token=token), "addmul")
    before = stages(env)
    judge = run.start(kjudge, args.device, env, os.path.join(work, f"run{n}.stderr"))
    if not wait_for(moment, judge, token):
        judge.kill()
        judge.wait()
        return judge.pid, [f"the run never reached the {moment} moment: " + run.stderr()]
    os.kill(judge.pid, sig)
    alive = sig != signal.SIGKILL
    bad = [f"left running 1 s after the signal: {p}" for p in gone_within(judge.pid, token, alive, 1.0)]
    try:
        rc = judge.wait(timeout=20)
    except subprocess.TimeoutExpired:
        judge.kill()
        rc = judge.wait()
        bad.append("the judge did not end within 20 s of the signal")
    bad += [f"left running after the judge ended: {p}" for p in gone_within(judge.pid, token, False, 1.0)]
    want = -signal.SIGKILL if sig == signal.SIGKILL else 128 + sig
    if rc != want:
        bad.append(f"exit status {rc}, expected {want}: " + run.stderr())
    if os.path.exists(run.result):
        bad.append("a verify_result.json was written: " + (read(run.result) or "")[:300])
    if sig != signal.SIGKILL:
        if f"interrupted by {signal.Signals(sig).name}" not in run.stderr():
            bad.append("stderr does not say it was interrupted: " + run.stderr())
        bad += leftovers_of([judge.pid], env["KJ_SCRATCH_DIR"])
        bad += [f"stage directory left in the cache: {p}" for p in sorted(stages(env) - before)]
    else:
        # A judge killed by SIGKILL cannot remove its stage directory: the
        # next judge's start sweeps it (stage-PID, a PID no longer alive).
        LEFT_STAGES.update(stages(env) - before)
    bad += [f"mount left: {m}" for m in mounts_under(env["KJ_SCRATCH_DIR"])]
    return judge.pid, bad


LEFT_STAGES = set()


def correct_after(args, kjudge, work, env, killed, n):
    """The same verify with a correct candidate: it passes, and nothing of
    it or of the killed judges is left."""
    run = Run(work, f"run{n}", read(os.path.join(CANDIDATES, "addmul_torch.py")),
              read(os.path.join(CANDIDATES, "pass", "candidate.py")), "addmul")
    before = stages(env)
    judge = run.start(kjudge, args.device, env, os.path.join(work, f"run{n}.stderr"))
    try:
        rc = judge.wait(timeout=600)
    except subprocess.TimeoutExpired:
        judge.kill()
        rc = judge.wait()
    bad = [] if rc == 0 else [f"exit status {rc}, expected 0: " + run.stderr()]
    try:
        with open(run.result) as f:
            res = json.load(f)
        if res.get("passed_cases") != res.get("total_cases") or not res.get("total_cases"):
            bad.append(f"{res.get('passed_cases')}/{res.get('total_cases')} cases passed")
    except (OSError, ValueError):
        bad.append("no readable verify_result.json")
    bad += [f"left running: {p}" for p in gone_within(judge.pid, "kj-kill-none", False, 1.0)]
    bad += leftovers_of(killed + [judge.pid], env["KJ_SCRATCH_DIR"])
    bad += [f"stage directory of its own left in the cache: {p}" for p in sorted(stages(env) - before)]
    bad += [f"stage directory of a killed judge not swept by the next run: {p}"
            for p in sorted(LEFT_STAGES) if os.path.exists(p)]
    LEFT_STAGES.clear()
    bad += [f"mount left: {m}" for m in mounts_under(env["KJ_SCRATCH_DIR"])]
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kjudge", default=os.environ.get("KJUDGE", "kjudge"),
                    help="the judge's command line (default $KJUDGE)")
    ap.add_argument("--device", default=os.environ.get("KJ_DEVICE", "cpu"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("moments", nargs="*", default=["start-up", "mid-case", "reference"])
    args = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("FAIL kill: setup: prctl(PR_SET_CHILD_SUBREAPER) failed", flush=True)
        return 1
    print(f"# {cgroup_machine()}", flush=True)
    kjudge = shlex.split(args.kjudge)
    work = tempfile.mkdtemp(prefix="kj-kill-")
    env = dict(os.environ)
    for var, sub in (("KJ_SCRATCH_DIR", "scratch"), ("KJ_CACHE_DIR", "cache"),
                     ("KJ_STATE_DIR", "state"), ("TMPDIR", "tmp")):
        env[var] = os.path.join(work, sub)
        os.makedirs(env[var])
    failed, n = 0, 0

    def report(title, bad):
        print(f"{'FAIL' if bad else 'ok  '} kill: {title}")
        for b in bad:
            print("    | " + b.replace("\n", "\n    | "))
        sys.stdout.flush()
        return bool(bad)

    try:
        for moment in args.moments:
            killed = []
            for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
                n += 1
                pid, bad = kill_one(args, kjudge, work, env, moment, sig, n)
                killed.append(pid)
                failed += report(f"{moment} {signal.Signals(sig).name}", bad)
            n += 1
            failed += report(f"after {moment}, a correct candidate passes and nothing is left",
                             correct_after(args, kjudge, work, env, killed, n))
    finally:
        if args.keep:
            print(f"scratch kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
