# lib.sh - helpers for the CLI tests (sourced by tests/cli/tNNNN-*.sh).
#
# A test file is a sequence of
#     test_expect 'what a user would check' '
#         shell commands; the last status decides
#     '
# Each body runs in a subshell inside a fresh scratch directory ($SCRATCH).
# Output: "ok   FILE: title" or "FAIL FILE: title" plus the body's output,
# which tests/run counts.  $KJUDGE is the binary under test, $KJ_PYTHON a
# python with numpy, $KJ_TESTS the tests/ directory.
set -u
: "${KJUDGE:?run through tests/run}"
# eval's audit of its tasks (docs/AUDIT.md) judges ten canaries a task,
# about half a minute a task on a CPU: off in every file but those that
# test it (t0871-eval-audit.sh sets KJ_AUDIT=on), which keeps CI's time.
export KJ_AUDIT=off
kj_test_file=$(basename "$0" .sh)
kj_root=$(mktemp -d "${TMPDIR:-/tmp}/kj-cli-XXXXXX")
trap 'rm -rf "$kj_root"' EXIT

# The lock of the host's shared trees (/etc, /root): held exclusively by
# the tests that put private files there (t0210, kj_host_lock -x in the
# body), shared by the runs of candidates that look for them (the hostile
# corpora of t0200 and t0205, kj_host_locked -s CMD).  tests/run runs those
# in two lanes at once, and a sandbox masks what /etc keeps private when it
# starts: a file made there after that is in its view (docs/ARCHITECTURE.md,
# "What the host keeps private").  Each wait is bounded (20 minutes); the
# shared holder is flock(1), which keeps the descriptor from the command's
# processes.
kj_host_lock_file=${KJ_HOST_LOCK:-/tmp/kjudge-tests-host.lock}
kj_host_lock() {
	exec 7>>"$kj_host_lock_file" && flock -w 1200 "$1" 7 ||
		{ echo "kj_host_lock: $kj_host_lock_file not taken within 20 minutes"; return 1; }
}
kj_host_locked() {
	local mode=$1
	shift
	flock -o -w 1200 "$mode" "$kj_host_lock_file" "$@"
}

test_expect() {
	local title=$1 body=$2 out rc
	SCRATCH=$(mktemp -d "$kj_root/t-XXXXXX")
	# The body's commands are traced to a file of the test's own, shown
	# on failure with the ends of the files the body sent output to, so
	# that a failure in CI says which command failed and what it printed.
	out=$(cd "$SCRATCH" && export SCRATCH && exec 9>"$kj_root/trace" &&
		(BASH_XTRACEFD=9; set -e; set -x; eval "$body") 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok   $kj_test_file: $title"
	else
		echo "FAIL $kj_test_file: $title"
		printf '%s\n' "$out" | sed 's/^/    | /' | tail -n 40
		echo "    | -- the last commands:"
		tail -n 12 "$kj_root/trace" | cut -c1-300 | sed 's/^/    | /'
		kj_show_outputs "$SCRATCH"
	fi
}

# kj_show_outputs DIR: the ends of the small text files a failed body
# wrote its commands' output to (out, err, *.log and the like).
kj_show_outputs() {
	local f
	for f in "$1"/*; do
		case ${f##*/} in out* | err* | *out | *err | *.log) ;; *) continue ;; esac
		[ -f "$f" ] && [ -s "$f" ] || continue
		echo "    | -- ${f##*/}:"
		tail -n 8 "$f" | cut -c1-300 | sed 's/^/    | /'
	done
}

# test_done: the last line of every test file.  tests/run fails a file
# that ends without it (a file that died half-way through, or exited early).
test_done() {
	echo "# done: $kj_test_file"
}

# expect_exit N cmd...: run cmd, succeed iff it exits with status N.
expect_exit() {
	local want=$1 got
	shift
	"$@" && got=0 || got=$?
	if [ "$got" -ne "$want" ]; then
		echo "expected exit $want, got $got: $*"
		return 1
	fi
}

# py CODE: run python (with numpy) on CODE.
py() {
	"$KJ_PYTHON" -c "$1"
}

# jget FILE EXPR: print EXPR, a Python expression over the JSON file's
# content `d`.
jget() {
	py "import json; d = json.load(open('$1')); print($2)"
}

# eval_verdicts STORE: one line per finished attempt of an eval store, what
# must not depend on how the work was cut or interrupted (the verdict, its
# layers, its cases, and the number of its case rows).
eval_verdicts() {
	"$KJ_PYTHON" - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("""SELECT task, model, attempt, state, status, clean, error_type, category,
                              charged, cases_total, cases_passed, static_ok, disabled_ok,
                              (SELECT count(*) FROM case_results c WHERE c.attempt_key = a.attempt_key)
                       FROM attempts a WHERE state = 'done' ORDER BY task, model, attempt"""):
    print("|".join("" if v is None else str(v) for v in r))
PY
}

# make_store PATH: a store (schema.sql, as kjudge creates it) of two runs, two
# models (one named with markup), an operator with a long unbreakable name,
# one with no attempt, one with six attempts, and a candidate's message
# holding a <script>.  m1's clean speedups were measured on an H200, on an
# A100 (on an H200 too with `make_store PATH one-gpu`) and on the CPU.
make_store() {
	"$KJ_PYTHON" - "$KJ_TESTS/../lib/store/schema.sql" "$1" "${2:-}" <<'PY'
import json, re, sqlite3, sys
schema, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
db = sqlite3.connect(path)
db.execute("PRAGMA application_id = %d" % 0x6b6a6467)
sql = open(schema).read()
# The version of the tables made: a store of its own schema, which merge
# takes as it is (an older version would be brought to this one first).
version = int(re.search(r"schema version (\d+)", sql).group(1))
db.executescript(sql)
db.executescript("""
INSERT INTO meta VALUES ('schema', 'kjudge-results'), ('schema_version', '%d'),
  ('created_by', 'kjudge test');
PRAGMA user_version = %d;
""" % (version, version))
T = "2026-01-02T00:00:00Z"
db.execute("INSERT INTO runs VALUES (1, ?, NULL, '0.1.0', '[]', 'suite', 'c', '{}', NULL, NULL)", (T,))
db.execute("INSERT INTO runs VALUES (2, ?, ?, '0.1.0', '[]', 'suite', 'c', '{\"seed\": 2}', NULL, NULL)", (T, T))
long_name = "level3_" + "x" * 150
tasks = [("kA", "19_ReLU", 1, 19), ("kB", "23_Softmax", 1, 23), ("kC", long_name, 3, 1),
         ("kD", "7_<b>Gemm</b>", 2, 7)]
for key, name, level, prob in tasks:
    db.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, 'h', NULL, 's', NULL)",
               (key, name, f"level{level}/{name}.py", level, prob))
    db.execute("INSERT INTO suite_tasks VALUES (2, ?)", (key,))
db.execute("INSERT INTO candidates VALUES ('c0', 'x')")
def att(key, task, model, label, status, clean, cat, speedup, tok=(10, 20), gen=1.0,
        gpu=None):
    env = None if gpu is None else json.dumps({"node": "node-" + key, "device_name": gpu,
                                               "driver": "550.54", "torch": "2.11.0"})
    db.execute("""INSERT INTO attempts (attempt_key, run_id, task_key, task, model, attempt,
      round, cand_sha256, origin, prompt_tokens, completion_tokens, generation_s, device,
      state, status, clean, error_type, category, charged, message, speedup, judge_s,
      started_at, finished_at, env) VALUES (?, 2, ?, ?, ?, ?, 1, 'c0', 'o', ?, ?, ?, ?,
      'done', ?, ?, ?, ?, 'candidate', ?, ?, 3.0, ?, ?, ?)""",
      (key, task, dict((k, n) for k, n, _, _ in tasks)[task], model, label, tok[0], tok[1],
       gen, "cpu" if gpu is None else "cuda:0", status, clean,
       None if cat is None else "SomeError", cat,
       f"failed: <script>document.title='pwned'</script> & more ({key})", speedup, T, T, env))
# m1: A clean 2.0 and 1.0; B 6 attempts, one clean 1.5; C clean 0.25; D none.
att("a1", "kA", "m1", "0", "pass", 1, None, 2.0, gpu="NVIDIA H200")
att("a2", "kA", "m1", "1", "pass", 1, None, 1.0, gpu="NVIDIA H200")
for i in range(5):
    att(f"b{i}", "kB", "m1", str(i), "fail", 0, "accuracy", None, tok=(None, None))
att("b5", "kB", "m1", "5", "pass", 1, None, 1.5,
    gpu="NVIDIA H200" if mode == "one-gpu" else "NVIDIA A100-SXM4-80GB")
att("c1", "kC", "m1", "0", "pass", 1, None, 0.25)
# m<2>: A not clean (static), B judge error, D build failure.
att("x1", "kA", "m<2>", "0", "pass", 0, "static", 3.0)
att("x2", "kB", "m<2>", "0", "judge_error", 0, "judge", None)
att("x3", "kD", "m<2>", "0", "fail", 0, "build", None)
db.execute("INSERT INTO timings (attempt_key, case_idx, impl_ms, ref_ms, speedup) VALUES "
           "('a1', 1, 1, 2, 2.0), ('a1', 2, 1, 2, 2.0)")
for i, st in enumerate(["pass", "pass", "fail"], 1):
    db.execute("INSERT INTO case_results (attempt_key, phase, case_idx, params, status, "
               "error_type, message) VALUES ('b0', 'verify', ?, ?, ?, ?, ?)",
               (i, '{"n": %d}' % (i * 1024), st, "" if st == "pass" else "AccuracyError",
                None if st == "pass" else "MERE 0.5 <i>above</i> " + "y" * 300))
# "weak": 23_Softmax's audit says weak (input passes), 19_ReLU's strong,
# 7_<b>Gemm</b>'s not proven.
if mode == "weak":
    for key, verdict, why in [("kB", "weak", ["input passes case 1: 100.0 % of it"]),
                              ("kA", "strong", []), ("kD", "not_proven", ["zeros could not be judged"])]:
        db.execute("INSERT INTO task_audits VALUES (?, 'ak', 2, ?, 'cpu', ?, ?)",
                   (key, verdict, json.dumps(why), T))
        for c in ["zeros", "input"]:
            out = "pass" if verdict == "weak" and c == "input" else \
                  "error" if verdict == "not_proven" and c == "zeros" else "fail"
            db.execute("INSERT INTO audit_canaries VALUES (?, 'ak', ?, ?)", (key, c, out))
db.commit()
PY
}

# KernelBench's habits (t0820-t0829): the honest Triton ReLU of eval's
# tests ($relu_triton), and relu_wrong FILE, a wrong one made from it
# (|x| where relu(x) is due).
relu_triton=$KJ_TESTS/eval/cands/relu_triton.py
relu_wrong() {
	sed "s/tl.maximum(x, 0.0)/tl.abs(x)/" "$relu_triton" >"$1" && ! cmp -s "$relu_triton" "$1"
}

# scale_task DIR [GROUP...]: a task "scale" (y = 2x + 1) in DIR, its cases
# two input groups and each GROUP given (a Python list of inputs, e.g.
# "[torch.randn(4)]") after them (t0150, t0160, t0215).
scale_task() {
	local dir=$1 groups="[torch.randn(64, 33)], [torch.randn(1000)]" g
	shift
	for g in "$@"; do groups="$groups, $g"; done
	mkdir -p "$dir"
	cat > "$dir/scale_torch.py" <<PY
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return 2 * x + 1

def get_input_groups():
    return [$groups]

def get_init_inputs():
    return []
PY
}
