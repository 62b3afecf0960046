#!/usr/bin/env bash
# t0842-report-html-layout.sh - the report's HTML page as a person reads it,
# laid out by headless Chromium at 800 and at 1920 px: no element out of
# its box (the page never scrolls sideways; a wide table scrolls in its
# own frame, the models' tables fit), no word of a table broken across
# lines, no two labels of a plot overlapping, every plot titled, the
# fast_p curve spread over the data (speedups of 0.0002x to 40x), and the
# kernels-disabled run of a clean pass shown as failed, as it must (not
# red).  The store: tests/cli/report_store.py.
. "$(dirname "$0")/lib.sh"
CHROMIUM=${KJ_CHROMIUM:-chromium}

# The check, run in the page: a <pre id="kj-verdict"> holding KJ-OK or
# KJ-FAIL and what failed.
cat >"$kj_root/check.js" <<'JS'
(function () {
  var errs = [], W = document.documentElement.clientWidth;
  function where(el) {
    return el.tagName + (el.id ? "#" + el.id : "") + " " + (el.textContent || "").slice(0, 40);
  }
  // Every row's details open: their tables are laid out too.
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  if (window.innerWidth !== EXPECT_W) errs.push("window is " + window.innerWidth + " px");
  // The page never scrolls sideways; nothing outside a table's frame
  // leaves the page.
  if (document.documentElement.scrollWidth > W) errs.push("the page scrolls sideways: " + document.documentElement.scrollWidth);
  document.querySelectorAll("body *").forEach(function (el) {
    if (el.parentElement.closest(".wrap")) return;
    var r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    if (r.left < -0.5 || r.right > W + 0.5) errs.push("outside the page: " + where(el) + " " + r.left + ".." + r.right);
  });
  // A frame that scrolls says so; the models' tables need none.
  document.querySelectorAll(".wrap").forEach(function (w) {
    if (w.scrollWidth > w.clientWidth + 1 && getComputedStyle(w).overflowX !== "auto") errs.push("a table cut off: " + where(w));
  });
  document.querySelectorAll("table.models").forEach(function (t) {
    var w = t.parentElement;
    if (w.scrollWidth > w.clientWidth + 1) errs.push(t.id + " does not fit: " + w.scrollWidth + " > " + w.clientWidth);
  });
  // Nothing spills out of its cell.
  document.querySelectorAll("td, th").forEach(function (c) {
    if (c.scrollWidth > c.clientWidth + 1) errs.push("spills out of its cell: " + where(c));
  });
  // No word of a cell broken across two lines (messages may cut a word
  // longer than their cell: they are not checked).
  var words = 0;
  document.querySelectorAll("td, th").forEach(function (c) {
    if (c.closest(".m, .msg")) return;
    var it = document.createNodeIterator(c, NodeFilter.SHOW_TEXT), n;
    while ((n = it.nextNode())) {
      if (n.parentElement.closest("td, th") !== c || n.parentElement.closest(".m, .msg")) continue;
      var re = /\S+/g, m;
      while ((m = re.exec(n.data))) {
        var rg = document.createRange(), lines = {};
        rg.setStart(n, m.index);
        rg.setEnd(n, m.index + m[0].length);
        Array.prototype.forEach.call(rg.getClientRects(), function (b) {
          if (b.width > 0) lines[Math.round(b.top)] = 1;
        });
        words++;
        if (Object.keys(lines).length > 1) errs.push("a word broken: " + JSON.stringify(m[0]) + " in " + where(c));
      }
    }
  });
  if (words < 200) errs.push("only " + words + " words checked");
  // Plots: titled, and no two labels' boxes intersecting.
  var svgs = document.querySelectorAll(".plot svg");
  if (svgs.length !== 3) errs.push(svgs.length + " plots");
  svgs.forEach(function (s) {
    var h = s.parentElement.querySelector("h3");
    if (!h || h.textContent.length < 10 || h.getBoundingClientRect().bottom > s.getBoundingClientRect().top + 1 || !h.checkVisibility())
      errs.push(s.id + ": no visible title above it");
    var t = Array.prototype.filter.call(s.querySelectorAll("text"), function (e) {
      return e.getBoundingClientRect().width > 0;
    });
    if (s.querySelectorAll("text.tick").length < 5) errs.push(s.id + ": " + s.querySelectorAll("text.tick").length + " ticks");
    for (var i = 0; i < t.length; i++)
      for (var j = i + 1; j < t.length; j++) {
        var a = t[i].getBoundingClientRect(), b = t[j].getBoundingClientRect();
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
          errs.push(s.id + ": labels overlap: " + JSON.stringify(t[i].textContent) + " and " + JSON.stringify(t[j].textContent));
      }
  });
  // The fast_p curves spread over the data: each drop (one per best
  // speedup) at its own place, the lowest well right of p = 0.
  var fp = document.getElementById("plot-fast-p"), ctm = fp.getScreenCTM();
  var zero = ctm.a * 50 + ctm.e, left = Infinity, right = -Infinity;
  fp.querySelectorAll("path.curve").forEach(function (p) {
    var xs = [], re = /H([-0-9.]+)V/g, m;
    while ((m = re.exec(p.getAttribute("d")))) xs.push(ctm.a * parseFloat(m[1]) + ctm.e);
    for (var i = 1; i < xs.length; i++)
      if (xs[i] - xs[i - 1] < 8) errs.push("fast_p: two drops " + (xs[i] - xs[i - 1]) + " px apart");
    xs.forEach(function (x) { left = Math.min(left, x); right = Math.max(right, x); });
  });
  if (!(left - zero > 40 && right - left > fp.getBoundingClientRect().width / 2))
    errs.push("fast_p: the data spans " + left + ".." + right + " (p = 0 at " + zero + ")");
  // The kernels-disabled run of a clean pass: failed, as it must, not red.
  var dis = Array.prototype.filter.call(document.querySelectorAll("tr.case"), function (r) {
    return r.cells[0].textContent === "disabled";
  });
  var expected = dis.filter(function (r) { return r.cells[3].textContent === "failed, as it must"; });
  if (expected.length !== 6) errs.push(expected.length + " disabled runs shown as failed, as they must");
  expected.forEach(function (r) {
    var c = getComputedStyle(r.cells[3]).color;
    if (c === "rgb(170, 17, 17)" || r.cells[3].classList.contains("fail")) errs.push("an expected failure in red");
  });
  if (dis.filter(function (r) { return r.cells[3].textContent === "passed: it must fail"; }).length !== 1)
    errs.push("the disabled run that passed is not shown as the failure");
  var out = document.createElement("pre");
  out.id = "kj-verdict";
  out.textContent = errs.length ? "KJ-FAIL\n" + errs.join("\n") : "KJ-OK";
  document.body.appendChild(out);
})();
JS

# check_page PAGE WIDTH: the check above run on PAGE in a WIDTH px window.
check_page() {
	sed "s/EXPECT_W/$2/" "$kj_root/check.js" >check.js
	"$KJ_PYTHON" - "$1" check.js "check-$2.html" <<-"PY"
	import sys
	page, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
	assert page.count("</body>") == 1
	open(sys.argv[3], "w").write(page.replace("</body>", "<script>" + js + "</script></body>"))
	PY
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size="$2",1000 --virtual-time-budget=5000 \
		--dump-dom "file://$SCRATCH/check-$2.html" >"dom-$2.html" 2>chromium.err ||
		{ cat chromium.err; return 1; }
	"$KJ_PYTHON" - "dom-$2.html" <<-"PY"
	import html, re, sys
	t = open(sys.argv[1]).read()
	m = re.search(r"<pre id=\"kj-verdict\">(.*?)</pre>", t, re.S)
	assert m, "no verdict in the DOM (did the script run?)"
	v = html.unescape(m.group(1))
	assert v == "KJ-OK", v[:3000]
	PY
}

test_expect 'at 800 px and at 1920 px: in its box, words whole, labels apart, plots titled, data spread' '
	command -v "$CHROMIUM" >/dev/null || { echo "chromium is missing (scripts/install-deps installs it)"; exit 1; }
	"$KJ_PYTHON" "$KJ_TESTS/cli/report_store.py" "$KJ_TESTS/../lib/store/schema.sql" s.db &&
	"$KJUDGE" report s.db --html r.html >/dev/null &&
	check_page r.html 800 && check_page r.html 1920
'

# The same page for other k and p, as a user asks for them: their columns,
# the points of the fast_p curve, still in their boxes.
test_expect '--k and --p change the columns and the points, the page still lays out at 800 px' '
	command -v "$CHROMIUM" >/dev/null || { echo "chromium is missing"; exit 1; }
	"$KJ_PYTHON" "$KJ_TESTS/cli/report_store.py" "$KJ_TESTS/../lib/store/schema.sql" s.db &&
	"$KJUDGE" report s.db --html r.html --k 1,3 --p 0.0003,0.001,3 >/dev/null &&
	grep -q "<th>pass@3</th>" r.html && ! grep -q "<th>pass@2</th>" r.html &&
	grep -q "<th>fast_0.0003</th>" r.html && ! grep -q "<th>fast_0.5</th>" r.html &&
	test "$(grep -o "<circle class=\"mark\" r=\"4\"" r.html | wc -l)" = 9 &&
	check_page r.html 800
'

test_done
