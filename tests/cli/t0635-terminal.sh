#!/usr/bin/env bash
# t0635-terminal.sh - nothing a study holds reaches a terminal raw: a
# generations file whose model name and attempt label hold ESC sequences,
# BEL, CR, LF, a C1 control (U+009B, which terminals obey as ESC [) and
# markup, a task name and a candidate's exception holding them too.  What
# eval, report (Markdown on stdout, and its files), merge and the error
# messages print holds no control byte (their escapes instead: \x1b, \r,
# \u009b), while the store and the JSON keep the exact text.  Needs
# $KJ_PYTHON with torch (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite

# raw FILE...: fail, showing them, when the files hold a control byte a
# terminal obeys (C0 but newline and tab, DEL, C1 as UTF-8).
raw() {
	local re='[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]'

	if LC_ALL=C grep -q -P "$re" "$@"; then
		echo "raw control bytes in: $*"
		LC_ALL=C grep -n -P "$re" "$@" | cat -v
		return 1
	fi
	return 0
}

test_expect 'eval, report, merge and errors show a hostile study escaped; the store and JSON keep it' '
	"$KJ_PYTHON" - "$KJ_TESTS/eval/cands/add_torch.py" <<"PY"
import json, sys
src = open(sys.argv[1]).read()
bad = ("import torch\n"
       "class ModelNew(torch.nn.Module):\n"
       "    def forward(self, a, b):\n"
       "        raise RuntimeError(\"\\x1b[2J\\x1b]0;owned\\x07 boom\\r\")\n")
model = "m\x1b[31m\x07\r\nX\u009b2J<b>"
label = "a\x1b]0;t\x07"
with open("gens.jsonl", "w") as f:
    f.write(json.dumps({"task": "1_Add", "model": model, "attempt": label, "source": src}) + "\n")
    f.write(json.dumps({"task": "1_Add", "model": model, "attempt": 1, "source": bad}) + "\n")
    f.write(json.dumps({"task": "9\x1b[5m_Nothing", "model": model, "source": "x"}) + "\n")
json.dump({"model": model, "label": label}, open("want.json", "w"))
PY
	"$KJUDGE" eval "$suite" gens.jsonl --db s.db --verify-only -j 2 >out 2>err
	raw out err
	# The lines name them, escaped.
	grep -qF "1_Add m\x1b[31m\x07\r\nX\u009b2J<b>/a\x1b]0;t\x07: pass" err
	grep -qF "1_Add m\x1b[31m\x07\r\nX\u009b2J<b>/1: fail ForwardError" err
	grep -qF "skipped gens.jsonl:3: no task '\''9\x1b[5m_Nothing'\''" err
	# The store keeps the exact bytes; so does the JSON.
	"$KJUDGE" report s.db --json r.json >/dev/null
	py "
import json, sqlite3
w = json.load(open(\"want.json\"))
db = sqlite3.connect(\"s.db\")
assert {r[0] for r in db.execute(\"SELECT model FROM attempts\")} == {w[\"model\"]}
assert w[\"label\"] in {r[0] for r in db.execute(\"SELECT attempt FROM attempts\")}
assert any(m and \"\\x1b[2J\\x1b]0;owned\\x07 boom\" in m for (m,) in db.execute(\"SELECT message FROM attempts\"))
r = json.load(open(\"r.json\"))
assert list(r[\"models\"]) == [w[\"model\"]], list(r[\"models\"])
assert w[\"label\"] in [a[\"attempt\"] for a in r[\"attempts\"]]
assert r[\"left_out\"] == []
"
	# The Markdown, on stdout and in its file; the page, HTML-escaped too.
	"$KJUDGE" report s.db >stdout.md 2>err
	raw stdout.md err
	grep -qF "| m\x1b\[31m\x07\r\nX\u009b2J&lt;b&gt; |" stdout.md
	"$KJUDGE" report s.db --md r.md --html r.html >out 2>err
	raw r.md r.html out err
	cmp stdout.md r.md
	grep -qF "m\x1b[31m\x07\r" r.html && grep -qF "X\u009b2J&lt;b&gt;" r.html
	grep -qF "\x1b[2J\x1b]0;owned\x07 boom\r" r.html
	# A store eval wrote is one merge takes; its name, shown.
	cp s.db "$(printf "s\033[7m.db")"
	"$KJUDGE" merge "$(printf "s\033[7m.db")" --db m.db >out 2>err
	raw out err
	grep -qF "merged s\x1b[7m.db: 2 attempts new" out
	# An error message quoting a name.
	expect_exit 2 "$KJUDGE" report "$(printf "no\033[2Jthere.db")" 2>err
	raw err
	grep -qF "'\''no\x1b[2Jthere.db'\'': no such results store" err
'
test_done
