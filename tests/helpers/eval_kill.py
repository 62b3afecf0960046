#!/usr/bin/env python3
"""eval_kill.py KJUDGE SUITE GENERATIONS DB KILLS SEED - for t0610: runs
`kjudge eval SUITE GENERATIONS --db DB --verify-only -j 2` KILLS times, each
killed with SIGKILL after a random delay (seeded), checks after each kill that
nothing the judge started outlives it and that the store passes SQLite's
integrity check, then runs the same command to the end.  Prints what went
wrong; exits 1 if anything did."""
import os, random, signal, sqlite3, subprocess, sys, time
kjudge, suite, gens, db, kills, seed = sys.argv[1:7]
rng = random.Random(int(seed))
bad = []

# A subreaper: whatever the killed judge leaves running becomes a child of
# this process, and is found here.
import ctypes
if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")

def children():
    me, pids = os.getpid(), []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            rest = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(rest[1]) != me:
            continue
        if rest[0] == "Z":
            try:
                os.waitpid(int(p), os.WNOHANG)
            except ChildProcessError:
                pass
        else:
            pids.append(int(p))
    return pids

for k in range(int(kills)):
    p = subprocess.Popen([kjudge, "eval", suite, gens, "--db", db, "--verify-only", "-j", "2", "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # From the store's first write to the middle of an attempt.
    time.sleep(rng.uniform(0.05, 4.0))
    p.send_signal(signal.SIGKILL)
    p.wait()
    err = p.stderr.read().decode(errors="replace")
    left = []
    for _ in range(50):
        left = children()
        if not left:
            break
        time.sleep(0.1)
    if left:
        bad.append(f"kill {k}: processes left: {left}")
        for q in left:
            try:
                os.kill(q, signal.SIGKILL)
            except OSError:
                pass
    check = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] if os.path.exists(db) else "ok"
    if check != "ok":
        bad.append(f"kill {k}: integrity_check says {check}")
    if "Traceback" in err or "corrupt" in err:
        bad.append(f"kill {k}: {err[-300:]}")
# The same command, to the end.
r = subprocess.run([kjudge, "eval", suite, gens, "--db", db, "--verify-only", "-j", "2", "-q"],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
if r.returncode != 0:
    bad.append(f"the last run exited {r.returncode}: {r.stderr[-500:]}")
runs = sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]
print(f"runs recorded: {runs}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
