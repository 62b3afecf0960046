#!/usr/bin/env bash
# t0871-eval-audit.sh - eval audits its tasks before their candidates
# (docs/AUDIT.md), by default (every other CLI file runs with KJ_AUDIT=off,
# lib.sh): over a suite of one weak task (a ReLU of non-negative inputs:
# the identity passes) and one strong one (a softmax), the store keeps each
# canary's end, the report lists the weak task with its canary and figure,
# and --exclude-weak leaves its attempts out of every figure.  A second
# eval takes the audit from the store, a fresh store from the audit's
# cache (no canary judged again); --no-audit judges none; an audit that
# cannot be established is "not proven" and the candidates are judged as
# ever.  One canary only (--audit-canaries input: each canary is a verify
# of its own), one candidate a task (each attempt is one too).
. "$(dirname "$0")/lib.sh"
AUD=$KJ_TESTS/audit/suite/level1

# The suite and the candidates: c/ holds relu's identity (it passes: the
# task is weak) and softmax's zeros (it fails); c1/ softmax's own.
cat >"$kj_root/setup.sh" <<'SH'
mkdir -p suite/level1 c/m/1_ReLU_nonneg c/m/4_Softmax c1/m/4_Softmax
cp "$AUD/1_ReLU_nonneg.py" "$AUD/4_Softmax.py" suite/level1/
cand() { printf 'import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return %s\n' "$2" >"$1.py"; }
cand c/m/1_ReLU_nonneg/0 "x"
cand c/m/4_Softmax/0 "x * 0"
cand c1/m/4_Softmax/0 "torch.softmax(x, dim=-1)"
SH
# sqlite3_count DB SQL: the first column of the first row.
sqlite3_count() {
	"$KJ_PYTHON" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"
}
# ev CANDIDATES --db FILE ...: eval of the suite with the test's options.
ev() {
	"$KJUDGE" eval suite "$@" --device cpu -j 2 --verify-only --audit-canaries input
}

test_expect 'eval audits each task once: the store, the report, --exclude-weak, the cache' '
	. "$kj_root/setup.sh" && export AUD KJ_CACHE_DIR=$PWD/cache KJ_AUDIT=on &&
	ev c --db s.db >out 2>err &&
	grep -q "^kjudge eval: audit: 1_ReLU_nonneg: weak: input passes case 1: 100.0 % of the golden.s 8192 elements are within the threshold of an input" err &&
	grep -q "^kjudge eval: audit: 4_Softmax: strong$" err &&
	grep -q "^kjudge eval: audit: 2 tasks, 1 weak, 0 not proven; 0 in the store, 2 canaries judged$" err &&
	grep -q "2 attempts: 1 passed (0 clean), 1 failed" err &&
	py "
import sqlite3
db = sqlite3.connect(\"s.db\")
v = dict(db.execute(\"SELECT t.name, a.verdict FROM task_audits a JOIN tasks t USING (task_key)\"))
assert v == {\"1_ReLU_nonneg\": \"weak\", \"4_Softmax\": \"strong\"}, v
c = {(n, k): o for n, k, o in db.execute(\"SELECT t.name, c.canary, c.outcome FROM audit_canaries c JOIN tasks t USING (task_key)\")}
assert c[(\"1_ReLU_nonneg\", \"input\")] == \"pass\" and c[(\"4_Softmax\", \"input\")] == \"fail\", c
assert c[(\"4_Softmax\", \"zeros\")] == \"skipped\" and len(c) == 20, c
" &&
	"$KJUDGE" report s.db --md r.md --json r.json --html r.html 2>rerr &&
	grep -q "^kjudge report: weak task 1_ReLU_nonneg (1 attempts counted; --exclude-weak leaves them out): input passes case 1" rerr &&
	grep -q "^## Weak tasks" r.md &&
	grep -q "^- \*\*1\\\\_ReLU\\\\_nonneg\*\*: weak (1 attempts); passed: input. input passes case 1: 100.0 %" r.md &&
	grep -q "<h2 id=\"weak\">Weak tasks</h2>" r.html &&
	"$KJUDGE" report s.db --exclude-weak --md x.md --json x.json 2>xerr &&
	grep -q "weak task 1_ReLU_nonneg (1 attempts left out)" xerr &&
	grep -q "The figures leave the weak tasks out (--exclude-weak)" x.md &&
	py "
import json
a, x = json.load(open(\"r.json\")), json.load(open(\"x.json\"))
w = a[\"suite\"][\"audit\"][\"weak\"]
assert [t[\"task\"] for t in w] == [\"1_ReLU_nonneg\"] and w[0][\"canaries\"][\"input\"] == \"pass\", w
assert w[0][\"reasons\"][0].startswith(\"input passes case 1\") and w[0][\"attempts\"] == 1, w
assert a[\"suite\"][\"audit\"][\"strong\"] == 1 and not a[\"suite\"][\"audit\"][\"exclude_weak\"]
ma, mx = a[\"models\"][\"m\"], x[\"models\"][\"m\"]
# With the weak task: 2 operators, 2 attempts, 1 pass (the weak one);
# without it: 1 operator, 1 attempt, no pass.
assert (a[\"suite\"][\"operators\"], ma[\"attempts\"], ma[\"attempt_pass_rate\"], ma[\"accuracy\"]) == (2, 2, 0.5, 0.5), ma
assert (x[\"suite\"][\"operators\"], mx[\"attempts\"], mx[\"attempt_pass_rate\"], mx[\"accuracy\"]) == (1, 1, 0, 0), mx
assert [t[\"task\"] for t in x[\"attempts\"]] == [\"4_Softmax\"], x[\"attempts\"]
assert [o[\"task\"] for o in x[\"operators\"]] == [\"4_Softmax\"]
assert x[\"suite\"][\"audit\"][\"exclude_weak\"] and x[\"suite\"][\"audit\"][\"weak\"][0][\"attempts\"] == 1
" &&
	# Another candidate of softmax: its audit is the store'"'"'s, nothing judged again.
	ev c1 --db s.db >out 2>err &&
	grep -q "^kjudge eval: audit: 4_Softmax: strong (in the store)$" err &&
	grep -q "^kjudge eval: audit: 1 tasks, 0 weak, 0 not proven; 1 in the store, 0 canaries judged$" err &&
	# A fresh store: the audit'"'"'s cache answers.
	ev c1 --db f.db >out 2>err &&
	grep -q "^kjudge eval: audit: 4_Softmax: strong (cached)$" err &&
	grep -q "; 0 in the store, 0 canaries judged$" err &&
	test "$(sqlite3_count f.db "SELECT count(*) FROM audit_canaries WHERE outcome = '"'"'fail'"'"'")" = 1
'

test_expect '--no-audit and KJ_AUDIT=off judge no canary; an audit not established is said, the candidates judged' '
	. "$kj_root/setup.sh" && export AUD KJ_CACHE_DIR=$PWD/cache &&
	KJ_AUDIT=on ev c1 --db n.db --no-audit >out 2>err &&
	! grep -q "audit" err && grep -q "1 attempts: 1 passed" err &&
	test "$(sqlite3_count n.db "SELECT count(*) FROM task_audits")" = 0 &&
	ev c1 --db o.db >out 2>err && ! grep -q "audit" err &&
	expect_exit 2 env KJ_AUDIT=maybe "$KJUDGE" eval suite c --db e.db 2>err &&
	grep -q "KJ_AUDIT=.maybe. is not valid" err &&
	# A judge without the canaries'"'"' module beside its worker: not proven.
	mkdir bin && cp "$KJUDGE" "$(dirname "$KJUDGE")/kjudge_worker.py" bin/ &&
	{ cp "$(dirname "$KJUDGE")"/kjudge_timer.so bin/ 2>/dev/null || true; } &&
	KJ_AUDIT=on bin/kjudge eval suite c1 --device cpu -j 2 --verify-only --db u.db >out 2>err &&
	grep -q "^kjudge eval: audit: 4_Softmax: not proven: the canaries. module kjudge_audit.py is missing" err &&
	grep -q "^kjudge eval: audit: 1 tasks, 0 weak, 1 not proven" err &&
	grep -q "1 attempts: 1 passed" err &&
	"$KJUDGE" report u.db --md u.md 2>/dev/null &&
	grep -q "found 0 weak, 1 not proven and 0 strong" u.md &&
	test "$(sqlite3_count u.db "SELECT count(*) FROM task_audits WHERE verdict = '"'"'not_proven'"'"'")" = 1
'

test_expect 'report of a store with a weak, a strong and a not proven task: every figure with and without' '
	make_store w.db weak &&
	"$KJUDGE" report w.db --json a.json --md a.md 2>/dev/null &&
	"$KJUDGE" report w.db --json x.json --exclude-weak 2>/dev/null &&
	grep -q "^- \*\*7\\\\_&lt;b&gt;Gemm&lt;/b&gt;\*\*: not proven; not judged: zeros. zeros could not be judged" a.md &&
	py "
import json
a, x = json.load(open(\"a.json\")), json.load(open(\"x.json\"))
assert [t[\"task\"] for t in a[\"suite\"][\"audit\"][\"weak\"]] == [\"23_Softmax\"]
assert [t[\"task\"] for t in a[\"suite\"][\"audit\"][\"not_proven\"]] == [\"7_<b>Gemm</b>\"]
assert a[\"suite\"][\"audit\"][\"unaudited\"] == 1 and a[\"suite\"][\"audit\"][\"strong\"] == 1
assert a[\"suite\"][\"operators\"] == 4 and x[\"suite\"][\"operators\"] == 3
m1a, m1x = a[\"models\"][\"m1\"], x[\"models\"][\"m1\"]
# m1: A 2 attempts, B (weak) 6, C 1: 9 attempts with B, 3 without.
assert (m1a[\"attempts\"], m1x[\"attempts\"]) == (9, 3), (m1a[\"attempts\"], m1x[\"attempts\"])
assert abs(m1a[\"accuracy\"] - 3 / 4) < 1e-12 and abs(m1x[\"accuracy\"] - 2 / 3) < 1e-12
assert not any(t[\"task\"] == \"23_Softmax\" for t in x[\"attempts\"])
assert a[\"suite\"][\"audit\"][\"weak\"][0][\"attempts\"] == 7, a[\"suite\"][\"audit\"][\"weak\"]
"
'

test_done
