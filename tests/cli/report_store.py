"""report_store.py SCHEMA PATH - a results store (schema.sql, as kjudge
creates it) for the tests of kjudge report's renderings (t0841, t0842).

Two runs of the same settings; five operators named as KernelBench names
them; three models:
  tiny     clean passes far below 1x (0.000235, 0.0004, 0.0011) on a GPU,
           each with the kernels-disabled run failing, as it must;
  fast     clean passes above 1x (1.3, 2.5, 40), two attempts on the first
           operator (pass@2), token counts and generation times;
  notoken  no token counts, no generation times: a pass not clean by the
           static check, one not clean by the kernels-disabled layer, a
           failure whose message has two lines.
"""
import json
import re
import sqlite3
import sys

schema, path = sys.argv[1], sys.argv[2]
db = sqlite3.connect(path)
db.execute("PRAGMA application_id = %d" % 0x6B6A6467)
sql = open(schema).read()
version = int(re.search(r"schema version (\d+)", sql).group(1))
db.executescript(sql)
db.executescript("""
INSERT INTO meta VALUES ('schema', 'kjudge-results'), ('schema_version', '%d'),
  ('created_by', 'kjudge test');
PRAGMA user_version = %d;
""" % (version, version))
T = "2026-01-02T00:00:00Z"
settings = json.dumps({"device": "cuda", "verify_only": False, "input_sets": 2})
for run in (1, 2):
    db.execute("INSERT INTO runs VALUES (?, ?, ?, '0.1.0', '[]', 'suite', 'c', ?, NULL, NULL)",
               (run, T, T, settings))
tasks = [("k1", "1_Square_matrix_multiplication_", 1, 1), ("k2", "19_ReLU", 1, 19),
         ("k3", "23_Softmax", 1, 23), ("k4", "36_RMSNorm_", 1, 36),
         ("k5", "97_CosineSimilarityLoss", 1, 97)]
for key, name, level, prob in tasks:
    db.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, 'h', NULL, 's', NULL)",
               (key, name, "level%d/%s.py" % (level, name), level, prob))
    for run in (1, 2):
        db.execute("INSERT INTO suite_tasks VALUES (?, ?)", (run, key))
db.execute("INSERT INTO candidates VALUES ('c0', 'x')")
names = dict((k, n) for k, n, _, _ in tasks)


def att(key, task, model, label, status, clean, speedup=None, error=None, cat=None,
        msg=None, tok=(None, None), gen=None, run=2):
    env = json.dumps({"node": "node-1", "device_name": "NVIDIA H100 80GB HBM3"})
    db.execute("""INSERT INTO attempts (attempt_key, run_id, task_key, task, model, attempt,
      round, cand_sha256, origin, prompt_tokens, completion_tokens, generation_s, device,
      state, status, clean, error_type, category, charged, message, speedup, judge_s,
      started_at, finished_at, env) VALUES (?, ?, ?, ?, ?, ?, 0, 'c0', 'o', ?, ?, ?,
      'cuda:0', 'done', ?, ?, ?, ?, 'candidate', ?, ?, 2.0, ?, ?, ?)""",
               (key, run, task, names[task], model, label, tok[0], tok[1], gen, status,
                clean, error, cat, msg, speedup, T, T, env))
    if status == "pass":
        db.execute("INSERT INTO case_results (attempt_key, phase, case_idx, params, status, "
                   "error_type, message) VALUES (?, 'verify', 1, '{\"n\": 4096}', 'pass', '', "
                   "NULL)", (key,))
    if clean:
        # Its kernels made no-ops, the candidate must fail: it did.
        db.execute("INSERT INTO case_results (attempt_key, phase, case_idx, params, status, "
                   "error_type, message) VALUES (?, 'disabled', 1, '{\"n\": 4096}', 'fail', "
                   "'AccuracyError', 'MERE 1.0 above the tolerance')", (key,))


att("t1", "k1", "tiny", "0", "pass", 1, 0.000235)
att("t2", "k2", "tiny", "0", "pass", 1, 0.0004)
att("t3", "k3", "tiny", "0", "pass", 1, 0.0011)
att("f1", "k1", "fast", "0", "fail", 0, None, "CompileError", "build",
    "nvcc: error: expected a ';'", (900, 400), 12.5)
att("f2", "k1", "fast", "1", "pass", 1, 1.3, tok=(950, 420), gen=11.0)
att("f3", "k4", "fast", "0", "pass", 1, 2.5, tok=(700, 300), gen=9.0)
att("f4", "k5", "fast", "0", "pass", 1, 40.0, tok=(800, 350), gen=10.0, run=1)
att("n1", "k1", "notoken", "0", "pass", 0, 3.0, "StaticCheck", "static",
    "degraded, type 1: no function decorated with @triton.jit")
att("n2", "k2", "notoken", "0", "pass", 0, 5.0, "KernelsNotUsed", "anticheat",
    "with its kernels disabled it still passed: they compute nothing")
db.execute("INSERT INTO case_results (attempt_key, phase, case_idx, params, status, "
           "error_type, message) VALUES ('n2', 'disabled', 1, NULL, 'pass', '', NULL)")
att("n3", "k3", "notoken", "0", "fail", 0, None, "AccuracyError", "accuracy",
    "FAIL out: MERE 0.31 above 0.01\nsecond line: the worst element at [3, 7]")
db.commit()
