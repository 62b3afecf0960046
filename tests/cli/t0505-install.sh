#!/usr/bin/env bash
# t0505-install.sh - `make install` and `make uninstall` into a temporary
# DESTDIR and PREFIX; make install records the workers' Python, which the
# installed kjudge runs without KJ_PYTHON; the installed kjudge finds its worker in
# PREFIX/libexec/kjudge/ with the build directory hidden (a tmpfs mounted
# over it in a mount namespace of our own), verifies a real task and passes
# the doctor's worker probe; every installed man page reads cleanly with
# man -l and groff -ww.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=$kj_root/cache
src=$(cd "$KJ_TESTS/.." && pwd)
prefix=/opt/kjudge-test

# inst DEST: make install into DEST with $prefix, from the build under test.
# The make that runs the tests is not this one's parent in the jobserver
# sense: its variables are dropped.
inst() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" BUILD="$KJ_BUILD" \
		PREFIX="$prefix" DESTDIR="$1" install
}

# hidden CMD...: run CMD with the build directory (and the source tree's
# worker/) empty, as on a machine where kjudge was installed and its tree
# is gone.
hidden() {
	unshare --user --map-root-user --mount sh -c '
		mount -t tmpfs kj-hidden "$0" && mount -t tmpfs kj-hidden "$1/worker" &&
		shift && exec "$@"' "$KJ_BUILD" "$src" "$@"
}

test_expect 'make install puts the binary, the worker and a man page per command under DESTDIR/PREFIX' '
	inst "$SCRATCH/dest"
	d=$SCRATCH/dest$prefix
	test -x "$d/bin/kjudge"
	test "$(stat -c %a "$d/bin/kjudge")" = 755
	cmp "$d/libexec/kjudge/kjudge_worker.py" "$src/worker/kjudge_worker.py"
	test "$(stat -c %a "$d/libexec/kjudge/kjudge_worker.py")" = 644
	ls "$d/share/man/man1" > pages.txt
	{ echo kjudge.1; for c in $("$d/bin/kjudge" help --commands); do echo "kjudge-$c.1"; done; } |
		sort > want.txt
	sort pages.txt | cmp - want.txt
	test "$(wc -l < want.txt)" -ge 7
'

test_expect 'every installed man page reads with man -l, without a groff warning' '
	inst "$SCRATCH/dest"
	for p in "$SCRATCH/dest$prefix"/share/man/man1/*.1; do
		groff -man -Tutf8 -ww -z "$p" 2> warn.txt
		test ! -s warn.txt || { echo "$p:"; cat warn.txt; false; }
		MANWIDTH=80 man -l "$p" > page.txt 2> err.txt
		test ! -s err.txt || { echo "$p:"; cat err.txt; false; }
		for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
			grep -q "^$s" page.txt || { echo "$p: no $s"; false; }
		done
	done
	man1=$SCRATCH/dest$prefix/share/man/man1
	MANWIDTH=80 man -l "$man1/kjudge-verify.1" > v.txt
	grep -q "^OPTIONS" v.txt
	grep -q "^EXIT STATUS" v.txt
	grep -q "^ENVIRONMENT" v.txt
	grep -q -- "--timeout S" v.txt
	grep -q "0.001 to 2147483" v.txt
	grep -q "验证超时" v.txt
	MANWIDTH=80 man -l "$man1/kjudge-compare.1" > c.txt
	! grep -q "^ENVIRONMENT" c.txt
	MANWIDTH=80 man -l "$man1/kjudge.1" > k.txt
	grep -q "^COMMAND LINES" k.txt
	grep -q "kjudge-skill(1)" k.txt
'

test_expect 'the installed kjudge, with build/ hidden, finds its worker: doctor says ok, verify passes' '
	inst "$SCRATCH/dest"
	k=$SCRATCH/dest$prefix/bin/kjudge
	worker=$SCRATCH/dest$prefix/libexec/kjudge/kjudge_worker.py
	mkdir t
	cp "$src"/examples/softmax/softmax_torch.py "$src"/examples/softmax/softmax_cpu_impl.py t/
	# The build really is out of reach inside.
	hidden sh -c "test ! -e \"$KJUDGE\" && test ! -e \"$src/worker/kjudge_worker.py\""
	hidden "$k" doctor --json --group runtimes > r.json || test $? -eq 1
	test "$(jget r.json "[c[\"status\"] + \" \" + c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"worker\"][0]")" = \
		"ok $worker" ||
		{ jget r.json "[c for c in d[\"checks\"] if c[\"name\"] == \"worker\"]"; false; }
	hidden "$k" doctor --group runtimes > out.txt || test $? -eq 1
	grep -q "^  ok    worker  *$worker$" out.txt
	hidden "$k" verify --op_name softmax --verify_dir t --triton_impl_name cpu_impl --device cpu > v.txt
	grep -q "softmax: [0-9]*/[0-9]* cases passed" v.txt
	test "$(jget t/verify_result_cpu_impl.json "d[\"passed_cases\"] == d[\"total_cases\"] > 0")" = True
'

test_expect 'make install records the workers Python; without KJ_PYTHON the installed kjudge runs it' '
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" BUILD="$KJ_BUILD" \
		PREFIX="$prefix" DESTDIR="$SCRATCH/dest" PYTHON="$KJ_PYTHON" install > out.txt
	rec=$SCRATCH/dest$prefix/libexec/kjudge/kjudge_python.txt
	test "$(cat "$rec")" = "$KJ_PYTHON"
	test "$(stat -c %a "$rec")" = 644
	grep -q "^install: the workers. Python: $KJ_PYTHON$" out.txt
	k=$SCRATCH/dest$prefix/bin/kjudge
	env -u KJ_PYTHON "$k" doctor --json --group runtimes > r.json || test $? -eq 1
	test "$(jget r.json "[c[\"status\"] + \" \" + c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"python\"][0]")" = \
		"ok Python $("$KJ_PYTHON" -c "import platform; print(platform.python_version())") at $KJ_PYTHON (chosen: recorded by make install in $rec)"
	# A recorded interpreter that is gone is said, and the next rule chosen.
	echo /nonexistent/python > "$rec"
	env -u KJ_PYTHON "$k" doctor --group runtimes > out.txt || true
	grep -q "^  [a-zA-Z]* *python .*(chosen: /nonexistent/python, recorded by make install in $rec, is gone; " out.txt
	# A PYTHON that does not exist records nothing, and says so.
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" BUILD="$KJ_BUILD" \
		PREFIX="$prefix" DESTDIR="$SCRATCH/dest" PYTHON=/nonexistent/python3 install > out.txt
	test ! -e "$rec"
	grep -q "^install: no /nonexistent/python3: the installed kjudge runs KJ_PYTHON, else python3$" out.txt
'

test_expect 'the installed kjudge reached through a link finds the worker of its real place' '
	inst "$SCRATCH/dest"
	mkdir bin
	ln -s "$SCRATCH/dest$prefix/bin/kjudge" bin/kjudge
	bin/kjudge doctor --json --group runtimes > r.json || test $? -eq 1
	test "$(jget r.json "[c[\"detail\"] for c in d[\"checks\"] if c[\"name\"] == \"worker\"][0]")" = \
		"$SCRATCH/dest$prefix/libexec/kjudge/kjudge_worker.py"
'

test_expect 'make uninstall removes every file install put there' '
	inst "$SCRATCH/dest"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" BUILD="$KJ_BUILD" \
		PREFIX="$prefix" DESTDIR="$SCRATCH/dest" uninstall
	test -z "$(find "$SCRATCH/dest" -type f)"
	test ! -e "$SCRATCH/dest$prefix/libexec/kjudge"
'
test_done
