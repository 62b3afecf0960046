#!/usr/bin/env bash
# t0620-report.sh - kjudge report: its exit codes and files (Markdown, HTML,
# JSON), a store that is missing, not SQLite, another program's, empty or
# corrupt refused with exit 2, and the HTML page as a browser lays it out
# (headless Chromium at 1280 px: every plot drawn, nothing cut off, the
# cells holding the JSON's numbers, a row's details showing its cases).
. "$(dirname "$0")/lib.sh"
CHROMIUM=${KJ_CHROMIUM:-chromium}

test_expect 'report --help and bad command lines' '
	"$KJUDGE" report --help >help.txt &&
	grep -q "usage: kjudge report" help.txt && grep -q -- "--html FILE" help.txt &&
	"$KJUDGE" help --man report | grep -q "^.TH" &&
	expect_exit 2 "$KJUDGE" report &&
	expect_exit 2 "$KJUDGE" report a.db b.db &&
	expect_exit 2 "$KJUDGE" report --md 2>/dev/null
'

test_expect 'a store that is missing, not one, empty or corrupt: exit 2, nothing written' '
	expect_exit 2 "$KJUDGE" report nothere.db --md out.md 2>err &&
	grep -q "no such results store" err && test ! -e out.md &&
	echo "not a database, just some text long enough to be read as a header" >text.db &&
	expect_exit 2 "$KJUDGE" report text.db --md out.md 2>err && grep -q "text.db" err &&
	: >empty.db &&
	expect_exit 2 "$KJUDGE" report empty.db 2>err && grep -q "empty file" err &&
	py "import sqlite3; d = sqlite3.connect(\"foreign.db\"); d.execute(\"CREATE TABLE t (x)\"); d.execute(\"PRAGMA application_id = 42\"); d.commit()" &&
	expect_exit 2 "$KJUDGE" report foreign.db --json out.json 2>err &&
	grep -q "another program" err && test ! -e out.json &&
	make_store good.db && cp good.db bad.db &&
	py "
f = open(\"bad.db\", \"r+b\")
f.seek(4096); f.write(b\"\\x5a\" * 8192)
" &&
	expect_exit 2 "$KJUDGE" report bad.db --html out.html 2>err &&
	grep -qi "corrupt\|malformed\|not a readable" err && test ! -e out.html &&
	expect_exit 2 "$KJUDGE" report good.db --md nodir/out.md 2>err
'

# A slip of the user's (the store named as an output) loses no study: the
# store, however it is spelled or linked, its companions, any SQLite file,
# a FIFO: exit 2, a line naming it, nothing written, the study intact.
test_expect 'an output that is the store, its log, a link to it or any SQLite file: exit 2, nothing written' '
	make_store s.db && sum=$(md5sum <s.db) &&
	ln -s s.db link.db && ln s.db hard.db && mkdir sub && ln -s ../s.db sub/up.db &&
	py "import sqlite3; d = sqlite3.connect(\"other.sqlite\"); d.execute(\"CREATE TABLE t (x)\"); d.commit()" &&
	mkfifo fifo &&
	for o in s.db ./s.db "$SCRATCH/s.db" link.db hard.db sub/up.db s.db-wal s.db-shm \
		 s.db-journal other.sqlite fifo; do
		for flag in --md --html --json; do
			expect_exit 2 timeout 10 "$KJUDGE" report s.db $flag "$o" >out 2>err &&
			grep -q "^kjudge report: .*: the output would .*: refused, name another file$" err &&
			test ! -s out || { echo "report s.db $flag $o"; cat err; exit 1; }
		done
	done &&
	expect_exit 2 "$KJUDGE" report s.db --md good.md --html s.db 2>err &&
	test ! -e good.md && grep -q "would replace a kjudge results store" err &&
	test "$(md5sum <s.db)" = "$sum" && test -L link.db && test -p fifo &&
	test ! -e s.db-wal && test ! -e s.db-shm && test ! -e s.db-journal &&
	test -z "$(ls -A | grep tmp)" &&
	"$KJUDGE" report s.db --json r.json >/dev/null 2>&1 && jget r.json "len(d[\"attempts\"])" | grep -qx 12 &&
	expect_exit 2 "$KJUDGE" verify --op_name x --output link.db 2>err &&
	grep -q "would replace a kjudge results store" err &&
	expect_exit 2 "$KJUDGE" benchmark --op_name x --output s.db-wal 2>err &&
	grep -q "the .wal. file of .s.db." err
'

# The atomic writer replaces the entry it is given: a link planted at the
# output is replaced, never written through.
test_expect 'a symbolic link at the output is replaced by the report, its target left alone' '
	make_store s.db && echo keep >victim.txt && ln -s victim.txt out.md &&
	"$KJUDGE" report s.db --md out.md >/dev/null &&
	test ! -L out.md && grep -q "^# kjudge report" out.md && test "$(cat victim.txt)" = keep
'

test_expect 'report writes the three files, and the Markdown to stdout without them' '
	make_store r.db &&
	"$KJUDGE" report r.db >stdout.md &&
	grep -q "^# kjudge report" stdout.md &&
	"$KJUDGE" report r.db --md r.md --html r.html --json r.json >out &&
	grep -q "markdown report written to r.md" out &&
	grep -q "html report written to r.html" out &&
	cmp stdout.md r.md &&
	test -z "$(ls -A | grep -v "^\(r\.db\|r\.md\|r\.html\|r\.json\|out\|stdout\.md\)$")" &&
	jget r.json "d[\"suite\"][\"run_id\"]" | grep -qx 2 &&
	jget r.json "sorted(d[\"models\"])" | grep -qx "\[.m1., .m<2>.\]" &&
	jget r.json "d[\"models\"][\"m1\"][\"accuracy\"]" | grep -qx 0.75 &&
	jget r.json "d[\"models\"][\"m1\"][\"pass_at_k_operators\"]" | grep -qx "{.1.: 3, .2.: 2, .5.: 1, .10.: 0}" &&
	jget r.json "d[\"models\"][\"m1\"][\"fast_p\"][\"1\"]" | grep -qx 0.5 &&
	jget r.json "d[\"models\"][\"m<2>\"][\"clean_pass_rate\"]" | grep -qx 0.0 &&
	grep -q "| m1 | 2 | 4 | 0.750 \[" r.md &&
	grep -q "m&lt;2&gt;" r.md && ! grep -q "<script" r.md
'

test_expect 'speedups of two GPU models: counted per model, a warning in every rendering; one GPU model: none' '
	make_store two.db && "$KJUDGE" report two.db --md two.md --html two.html --json two.json >out 2>err &&
	jget two.json "sorted(d[\"models\"][\"m1\"][\"gpu_models\"].items())" |
		grep -qx "\[(.NVIDIA A100-SXM4-80GB., 1), (.NVIDIA H200., 2), (.cpu., 1)\]" &&
	jget two.json "d[\"warnings\"]" | grep -q "different GPU models: NVIDIA H200 (2 attempts), NVIDIA A100-SXM4-80GB (1 attempt)" &&
	jget two.json "[(a[\"node\"], a[\"gpu\"], a[\"driver\"]) for a in d[\"attempts\"] if a[\"task\"] == \"19_ReLU\" and a[\"model\"] == \"m1\"][0]" |
		grep -qx "(.node-a1., .NVIDIA H200., .550.54.)" &&
	grep -q "warning: speedups measured on different GPU models" err &&
	grep -q "^> \*\*Warning:\*\* speedups measured on different GPU models" two.md &&
	grep -F "| m1 | 19\\_ReLU | 0 | pass | - | " two.md | grep -qF " | 2.00 | 2 | node-a1 | NVIDIA H200 |" &&
	grep -q "<div id=\"warnings\" class=\"warn\"" two.html &&
	make_store one.db one-gpu && "$KJUDGE" report one.db --md one.md --html one.html --json one.json >out 2>err &&
	jget one.json "d[\"warnings\"], d[\"models\"][\"m1\"][\"gpu_models\"]" | grep -qx "\[\] {.NVIDIA H200.: 3, .cpu.: 1}" &&
	! grep -q "warning" err && ! grep -q "Warning" one.md one.html
'

test_expect 'the page references nothing outside itself and escapes the store text' '
	make_store r.db && "$KJUDGE" report r.db --html r.html >/dev/null &&
	! grep -qi "http:\|https:\|url(\|@import" r.html &&
	"$KJ_PYTHON" - r.html <<-PY
	import re, sys
	t = open(sys.argv[1]).read()
	tags = re.findall(r"<[^>]*>", t)
	bad = [g for g in tags if re.search(r"\\s(src|href|xlink:href)\\s*=", g, re.I)]
	assert not bad, bad
	assert not re.search(r"<script", t, re.I), "a script in the page"
	assert "&lt;script&gt;document.title" in t
	assert "7_&lt;b&gt;Gemm&lt;/b&gt;" in t and "<b>Gemm" not in t
	assert t.count("<svg") == 3, t.count("<svg")
	PY
'

test_expect 'headless Chromium: plots drawn, nothing cut off, the JSON'"'"'s numbers, details open' '
	command -v "$CHROMIUM" >/dev/null || { echo "chromium is missing (scripts/install-deps installs it)"; exit 1; }
	make_store r.db && "$KJUDGE" report r.db --html r.html --json r.json >/dev/null &&
	"$KJ_PYTHON" - r.html r.json check.html <<-"PY"
	import json, sys
	html, m = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
	def fmt(v):
	    if v is None: return "-"
	    if isinstance(v, bool): raise ValueError(v)
	    if isinstance(v, int): return str(v)
	    if v == 0: return "0"
	    e = int(("%.2e" % abs(v)).split("e")[1])
	    return "%.2e" % v if e < -9 else "%.*f" % (max(0, 2 - e), v)
	def ci(a): return "[%s, %s]" % (fmt(a[0]), fmt(a[1])) if a else ""
	cells = []
	for name, f in m["models"].items():
	    row = "table.models tr[data-model=%s] " % json.dumps(name)
	    cell = lambda k: row + "td[data-k=\"%s\"]" % k
	    cells += [(cell("operators"), fmt(f["operators"])),
	              (cell("accuracy"), fmt(f["accuracy"])), (cell("accuracy"), ci(f["accuracy_ci"]), "ci"),
	              (cell("clean_pass_rate"), fmt(f["clean_pass_rate"])),
	              (cell("clean_pass_rate"), ci(f["clean_pass_rate_ci"]), "ci"),
	              (cell("speedup"), fmt(f["speedup"])),
	              (cell("tokens_total"), fmt(f["tokens_total"])),
	              (cell("tokens_per_success"), fmt(f["tokens_per_success"])),
	              (cell("runtime_s"), fmt(f["runtime_s"])),
	              (cell("attempt_pass_rate"), fmt(f["attempt_pass_rate"])),
		              (cell("attempt_pass_rate"), ci(f["attempt_pass_rate_ci"]), "ci")]
	    for k, v in f["pass_at_k"].items():
	        cells.append((cell("pass_at_k." + k), fmt(v)))
	    for k, v in f["fast_p"].items():
	        cells += [(cell("fast_p." + k), fmt(v)), (cell("fast_p." + k), ci(f["fast_p_ci"][k]), "ci")]
	    frow = "#failures tr[data-model=%s] " % json.dumps(name)
	    for k, v in f["failures"].items():
	        cells.append((frow + "td[data-k=\"failures.%s\"]" % k, fmt(v)))
	# The operator whose m1 attempts have cases: 23_Softmax.
	op = next(i for i, o in enumerate(m["operators"]) if o["task"] == "23_Softmax")
	ncases = sum(len(r["cases"]) for r in m["operators"][op]["models"]["m1"]["records"])
	assert ncases == 3, ncases
	expect = {"cells": cells, "op": op, "model": "m1", "cases": ncases,
	          "models": len(m["models"])}
	check = """<script>
	(function () {
	  var E = %s, errs = [];
	  function boxes(when) {
	    var W = document.documentElement.clientWidth;
	    /* A table wider than the page scrolls in its wrapper: what is in
	       one is reachable, the wrapper itself must be in the page. */
	    document.querySelectorAll(".wrap").forEach(function (w, i) {
	      if (w.scrollWidth > w.clientWidth && getComputedStyle(w).overflowX !== "auto") errs.push(when + ": table wrapper " + i + " cut off: " + w.scrollWidth + " > " + w.clientWidth);
	    });
	    if (document.body.scrollWidth > document.body.clientWidth) errs.push(when + ": body scrolls: " + document.body.scrollWidth + " > " + document.body.clientWidth);
	    if (document.documentElement.scrollWidth > W) errs.push(when + ": page scrolls sideways");
	    document.querySelectorAll("body *").forEach(function (el) {
	      if (el.parentElement.closest(".wrap")) return;
	      var r = el.getBoundingClientRect();
	      if (r.width === 0 && r.height === 0) return;
	      if (r.left < -0.5 || r.right > W + 0.5 || r.top + window.scrollY < -0.5)
	        errs.push(when + ": outside the page: " + el.tagName + " " + (el.id || el.className.baseVal || el.className) + " " + r.left + ".." + r.right);
	    });
	  }
	  if (window.innerWidth !== 1280) errs.push("window is " + window.innerWidth + " px");
	  var svgs = document.querySelectorAll("svg");
	  if (svgs.length !== 3) errs.push(svgs.length + " plots");
	  svgs.forEach(function (s) {
	    var r = s.getBoundingClientRect(), drawn = 0, vb = s.viewBox.baseVal;
	    if (!(r.width > 50 && r.height > 50)) errs.push(s.id + ": box " + r.width + "x" + r.height);
	    s.querySelectorAll("path, circle, rect").forEach(function (e) {
	      var b = e.getBBox();
	      if (b.width > 0 || b.height > 0) drawn++;
	      if (b.x < vb.x - 1 || b.y < vb.y - 1 || b.x + b.width > vb.x + vb.width + 1 || b.y + b.height > vb.y + vb.height + 1)
	        errs.push(s.id + ": a mark outside the plot " + e.tagName + " " + b.x + "," + b.y);
	    });
	    if (drawn < 5) errs.push(s.id + ": " + drawn + " marks drawn");
	  });
	  var curves = document.querySelectorAll("#plot-fast-p path.curve").length;
	  var points = document.querySelectorAll("#plot-fast-p circle.mark").length;
	  if (curves !== E.models || points !== 6 * E.models) errs.push("fast_p: " + curves + " curves, " + points + " points");
	  if (document.querySelectorAll("#plot-speedup circle.mark").length < 1) errs.push("no speedup drawn");
	  if (document.querySelectorAll("#plot-rates path.err").length < 1) errs.push("no error bars");
	  boxes("closed");
	  E.cells.forEach(function (c) {
	    var el = document.querySelector(c[0]), ci = el && el.querySelector(".ci");
	    var got = !el ? null : c[2] === "ci" ? (ci ? ci.textContent : "") : el.firstChild ? el.firstChild.textContent : "";
	    if (!el) errs.push("no cell " + c[0]);
	    else if (got !== c[1]) errs.push(c[0] + " holds " + JSON.stringify(got) + ", not " + c[1]);
	  });
	  if (document.title !== "kjudge report") errs.push("title changed: " + document.title);
	  var w = document.getElementById("warnings"), mt = document.getElementById("models");
	  if (!w) errs.push("no warning shown");
	  else {
	    var wr = w.getBoundingClientRect();
	    if (!w.checkVisibility() || wr.height < 20 || wr.width < 400) errs.push("the warning is not visible: " + wr.width + "x" + wr.height);
	    if (!(wr.bottom <= mt.getBoundingClientRect().top && wr.top < 400)) errs.push("the warning is not near the top: " + wr.top);
	    if (w.textContent.indexOf("different GPU models") < 0) errs.push("the warning says " + w.textContent);
	    if (getComputedStyle(w).backgroundColor === "rgba(0, 0, 0, 0)") errs.push("the warning is not styled");
	  }
	  var d = document.querySelector("details[data-op=\\"" + E.op + "\\"]");
	  var rows = d ? d.querySelectorAll(".model[data-model=\\"" + E.model + "\\"] tr.case") : [];
	  var shown = function () { var n = 0; rows.forEach(function (r) { if (r.checkVisibility() && r.getBoundingClientRect().height > 0) n++; }); return n; };
	  if (!d) errs.push("no details");
	  else {
	    if (shown() !== 0) errs.push("closed details shows " + shown() + " cases");
	    var h0 = d.getBoundingClientRect().height;
	    d.open = true;
	    if (!(d.getBoundingClientRect().height > h0 + 40)) errs.push("details did not open: " + h0 + " -> " + d.getBoundingClientRect().height);
	    if (shown() !== E.cases) errs.push("open details shows " + shown() + " cases, not " + E.cases);
	    if (d.textContent.indexOf("AccuracyError") < 0) errs.push("the failure is not shown");
	    boxes("open");
	  }
	  var out = document.createElement("pre");
	  out.id = "kj-verdict";
	  out.textContent = errs.length ? "KJ-FAIL\\n" + errs.join("\\n") : "KJ-OK";
	  document.body.appendChild(out);
	})();
	</script>""" % json.dumps(expect)
	assert html.count("</body>") == 1
	open(sys.argv[3], "w").write(html.replace("</body>", check + "</body>"))
	PY
	flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900"
	"$CHROMIUM" $flags --virtual-time-budget=5000 --dump-dom "file://$SCRATCH/check.html" >dom.html 2>chromium.err ||
		{ cat chromium.err; exit 1; }
	"$KJ_PYTHON" - dom.html <<-"PY"
	import html, re, sys
	t = open(sys.argv[1]).read()
	m = re.search(r"<pre id=\"kj-verdict\">(.*?)</pre>", t, re.S)
	assert m, "no verdict in the DOM (did the script run?)"
	v = html.unescape(m.group(1))
	assert v == "KJ-OK", v
	PY
	"$CHROMIUM" $flags --screenshot="$SCRATCH/shot.png" "file://$SCRATCH/r.html" >/dev/null 2>chromium.err ||
		{ cat chromium.err; exit 1; }
	py "
d = open(\"$SCRATCH/shot.png\", \"rb\").read()
assert d[:8] == b\"\\x89PNG\\r\\n\\x1a\\n\", \"not a PNG\"
assert len(d) > 20000, len(d)
"
'

test_done
