#!/usr/bin/env bash
# t0832-eval-terminal.sh - eval's progress in a real terminal: a tmux pane of
# 80 columns, read back with capture-pane.  The progress line fits the
# width (and a narrower one after a resize), leaves no broken line behind,
# its clock moves between two attempts' ends, and each finished attempt has
# its line above it.  Needs tmux (scripts/install-deps) and $KJ_PYTHON with
# torch (CPU).
. "$(dirname "$0")/lib.sh"

suite=$KJ_TESTS/eval/suite
sock=kj-t0832-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$kj_root"' EXIT

# pane FILE: the pane as it shows, wrapped lines joined (-J): a line wider
# than the pane is one line here, not two.
pane() {
	tmux -L "$sock" capture-pane -p -J -t eval >"$1"
}

test_expect 'an 80-column pane, then 50: the line fits, ticks, and the attempts have their lines above it' '
	command -v tmux >/dev/null || { echo "tmux is missing (scripts/install-deps installs it)"; exit 1; }
	mkdir -p gens/m1/1_Add gens/m2/1_Add
	cp "$KJ_TESTS/eval/cands/add_torch.py" gens/m1/1_Add/0.py
	cp "$KJ_TESTS/eval/cands/add_wrong.py" gens/m1/1_Add/1.py
	cp "$KJ_TESTS/eval/cands/add_torch.py" gens/m2/1_Add/0.py
	tmux -L "$sock" -f /dev/null new-session -d -s eval -x 80 -y 30 \
		"cd $SCRATCH && $KJUDGE eval $suite gens --db s.db --verify-only -j 1; echo EXIT=\$?; sleep 300"
	# Until the first attempt has its line: the bar must tick while the
	# second runs (the same count, another time).
	for i in $(seq 1 240); do
		pane p.txt
		grep -q "^1_Add m1/0: " p.txt && break
		sleep 0.5
	done
	grep "spent" p.txt >bar1.txt
	sleep 2.2
	pane p2.txt
	grep "spent" p2.txt >bar2.txt
	test "$(wc -l <bar1.txt)" = 1 && test "$(wc -l <bar2.txt)" = 1
	cat bar1.txt bar2.txt
	if [ "$(grep -c "^1_Add m" p.txt)" = "$(grep -c "^1_Add m" p2.txt)" ]; then
		! cmp -s bar1.txt bar2.txt
	fi
	# Each line at most 79 columns wide: the last column is never used.
	awk "length > 79 && /spent/ { print \"too wide: \" \$0; bad = 1 } END { exit bad }" p.txt p2.txt
	tmux -L "$sock" resize-window -t eval -x 50
	for i in $(seq 1 240); do
		pane p.txt
		grep -q "^EXIT=" p.txt && break
		sleep 0.5
	done
	cat p.txt
	grep -qx "EXIT=0" p.txt
	# One line per attempt, above the closing line.
	test "$(grep -c "^1_Add m[12]/[01]: \(pass\|fail\)" p.txt)" = 3
	grep -qx "1_Add m1/1: fail AccuracyError" p.txt
	# One progress line left, the final one, in 49 columns; no fragment
	# of an earlier one.
	test "$(grep -c "spent\|\[#" p.txt)" = 1
	bar=$(grep "spent" p.txt)
	test ${#bar} -le 49
	case "$bar" in "["*"] 3/3"*) ;; *) echo "not the final bar: $bar"; false ;; esac
'

test_expect 'not on a terminal: no progress line, one plain line per attempt, all on stderr' '
	mkdir -p gens/m1/1_Add
	cp "$KJ_TESTS/eval/cands/add_wrong.py" gens/m1/1_Add/1.py
	timeout 300 "$KJUDGE" eval "$suite" gens --db s.db --verify-only >out 2>err || { cat err; false; }
	test ! -s out
	! grep -q "spent\|\[#" err
	grep -qx "1_Add m1/1: fail AccuracyError" err
	grep -q "^kjudge eval: 1 attempts: 0 passed (0 clean), 1 failed" err
'

test_done
