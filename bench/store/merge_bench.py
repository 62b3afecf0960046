#!/usr/bin/env python3
"""merge_bench.py KJUDGE [N_ATTEMPTS] - how long `kjudge merge` takes.

Writes a shard store as kjudge's schema has it (lib/store/schema.sql) with
N attempts (default 20,000) of a study's shape: 3 case results of about 1 KB
of record each, one timing, over 200 tasks; then times `kjudge merge` of it
into an empty store, the same merge again (every attempt already there),
and `kjudge report` of the result.  Prints one line per figure.
"""
import os, re, sqlite3, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
schema = open(os.path.join(here, "..", "..", "lib", "store", "schema.sql")).read()
# The schema's own version: a source of an older one would be upgraded in
# a copy first, which is not what this measures.
version = int(re.search(r"schema version (\d+)", schema).group(1))
kjudge = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
d = tempfile.mkdtemp(prefix="kj-merge-bench-")
src = os.path.join(d, "shard.db")
db = sqlite3.connect(src)
db.executescript(schema)
db.executescript("""INSERT INTO meta VALUES ('schema', 'kjudge-results');
INSERT INTO meta VALUES ('schema_version', '%d'); INSERT INTO meta VALUES ('created_by', 'bench');
PRAGMA application_id = %d; PRAGMA user_version = %d;""" % (version, 0x6b6a6467, version))
db.execute("INSERT INTO runs (run_id, started_at, judge_version, command, suite, candidates, settings)"
           " VALUES (1, '2026-12-02T00:00:00Z', '0.1.0', '[]', 's', 'c', '{}')")
for t in range(200):
    db.execute("INSERT INTO tasks VALUES (?, ?, ?, 1, ?, 'x', NULL, ?, NULL)",
               (f"t{t:064d}"[-64:], f"{t}_T", f"level1/{t}_T.py", t, "x" * 2000))
    db.execute("INSERT INTO suite_tasks VALUES (1, ?)", (f"t{t:064d}"[-64:],))
record = '{"case": 1, "status": "pass", "outputs": [' + ",".join(['{"max_abs": 0.0}'] * 40) + "]}"
for i in range(n):
    key = f"a{i:064d}"[-64:]
    cand = f"c{i:064d}"[-64:]
    task = f"t{i % 200:064d}"[-64:]
    db.execute("INSERT INTO candidates VALUES (?, ?)", (cand, "import torch\n" * 100))
    db.execute("INSERT INTO attempts (attempt_key, run_id, task_key, task, model, attempt, cand_sha256,"
               " origin, device, state, status, clean, started_at, finished_at, speedup, env)"
               " VALUES (?, 1, ?, 'T', ?, ?, ?, 'x', 'cuda:0', 'done', 'pass', 1, 'a', 'b', 1.5, ?)",
               (key, task, f"m{i % 5}", str(i), cand, '{"node": "n1", "device_name": "H200"}'))
    for c in range(1, 4):
        db.execute("INSERT INTO case_results (attempt_key, phase, case_idx, status, record)"
                   " VALUES (?, 'verify', ?, 'pass', ?)", (key, c, record))
    db.execute("INSERT INTO timings (attempt_key, case_idx, impl_ms, ref_ms, speedup, record)"
               " VALUES (?, 1, 1.0, 1.5, 1.5, ?)", (key, record))
db.commit()
db.close()
size = os.path.getsize(src)
target = os.path.join(d, "study.db")

def timed(args):
    t0 = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0

first = timed([kjudge, "merge", src, "--db", target])
again = timed([kjudge, "merge", src, "--db", target])
report = timed([kjudge, "report", target, "--json", os.path.join(d, "r.json")])
print(f"shard store: {n} attempts, {3 * n} case results, {size / 1e6:.1f} MB")
print(f"kjudge merge into an empty store: {first:.2f} s ({n / first:.0f} attempts/s)")
print(f"kjudge merge again (nothing new): {again:.2f} s")
print(f"kjudge report --json of the merged store: {report:.2f} s")
subprocess.run(["rm", "-rf", d])
