#!/usr/bin/env bash
# t0625-full-disk.sh - a full file system, for real: a small tmpfs mounted
# in a mount namespace of the test's own (nothing leaks out of it), filled,
# then merge, report, eval and verify asked to write there.  Each says "no
# space left on MOUNT (SOURCE, tmpfs)" and exits 1 (verify 2: its exit 1
# says the candidate failed, and a full disk is the machine's failure, as
# its docs say), and nothing is half-written: the store merged into is byte
# for byte as it was and takes the merge once there is room, a report's old
# file is as it was, no new store or temporary file is left.
#
# Mounting needs root, or a user namespace of its own: where neither is
# allowed the tests say so on a line of their own and pass.
. "$(dirname "$0")/lib.sh"

# in_full_fs FILE: run the bash script FILE (-e: one check a line, never in
# an && list, where -e does not stop; with fill() and $nospace)
# in a mount namespace of its own, where a 512 KiB tmpfs named kjtest-full
# is mounted on $SCRATCH/full; status 77 when no such namespace or mount
# can be made.
in_full_fs() {
	mkdir -p "$SCRATCH/full"
	local ns
	for ns in "-m" "-rm"; do
		if unshare $ns --propagation private sh -c \
			'mount -t tmpfs -o size=512k kjtest-full "$1"' sh "$SCRATCH/full" 2>/dev/null; then
			unshare $ns --propagation private bash -ec \
				'mount -t tmpfs -o size=512k kjtest-full "$SCRATCH/full"
				nospace="no space left on $SCRATCH/full (kjtest-full, tmpfs)"
				# fill [KIB]: every block of the tmpfs taken, but for KIB.
				fill() {
					local avail
					avail=$(df -k --output=avail "$SCRATCH/full" | tail -n 1)
					dd if=/dev/zero of="$SCRATCH/full/fill" bs=1k \
						count=$((avail - ${1:-0})) 2>/dev/null || true
					test "$(df -k --output=avail "$SCRATCH/full" | tail -n 1)" -le "${1:-0}"
				}
				. "$1"' bash "$1"
			return
		fi
	done
	return 77
}

skip=0
if ! (export SCRATCH=$(mktemp -d "$kj_root/probe-XXXXXX") && : >"$SCRATCH/true.sh" &&
      in_full_fs "$SCRATCH/true.sh") 2>/dev/null; then
	echo "# t0625-full-disk: skipped: no tmpfs can be mounted here (not root, and no user" \
	     "namespace of our own); its tests pass without running"
	skip=1
fi
export skip

test_expect 'merge onto a full disk: exit 1, no space left on the mount, the store as it was' '
	[ "$skip" = 0 ] || exit 0
	make_store shard.db
	cp shard.db small.db
	py "import sqlite3; d = sqlite3.connect(\"small.db\"); d.execute(\"DELETE FROM timings\"); d.execute(\"DELETE FROM case_results\"); d.execute(\"DELETE FROM attempts WHERE attempt_key != \x27a1\x27\"); d.commit()"
	cat >ns.sh <<"EOF"
"$KJUDGE" merge small.db --db full/study.db -q
sum=$(md5sum <full/study.db)
# Full to the last block: the store cannot even be opened for writing.
fill
rc=0; "$KJUDGE" merge shard.db --db full/study.db 2>err || rc=$?
test $rc = 1
grep -qx "kjudge merge: full/study.db: $nospace" err
test "$(md5sum <full/study.db)" = "$sum"
# Room to open it, not for the merge: rolled back.
rm full/fill; fill 48
rc=0; "$KJUDGE" merge shard.db --db full/study.db 2>err || rc=$?
test $rc = 1
grep -q "$nospace" err
test "$(md5sum <full/study.db)" = "$sum"
# A new store on the full disk is not left behind, empty.
rm full/fill; fill
rc=0; "$KJUDGE" merge shard.db --db full/new.db 2>err || rc=$?
test $rc = 1
grep -q "$nospace" err
test ! -e full/new.db
# Room again: the same merge goes through, onto the store as it was.
rm full/fill
"$KJUDGE" merge shard.db --db full/study.db >out
grep -q "11 attempts new, 0 replacing judge errors, 1 already there" out
EOF
	in_full_fs ns.sh
'

test_expect 'report onto a full disk: exit 1, no space left on the mount, the old file as it was' '
	[ "$skip" = 0 ] || exit 0
	make_store s.db
	cat >ns.sh <<"EOF"
echo old >full/r.html
fill
rc=0; "$KJUDGE" report s.db --html full/r.html 2>err || rc=$?
test $rc = 1
grep -qx "kjudge report: .full/r.html.: cannot write: $nospace" err
test "$(cat full/r.html)" = old
rc=0; "$KJUDGE" report s.db --md full/new.md --json full/new.json 2>err || rc=$?
test $rc = 1
grep -q "$nospace" err
test -z "$(ls full | grep -v -x -e fill -e r.html)"
EOF
	in_full_fs ns.sh
'

test_expect 'eval onto a full disk: exit 1, no space left on the mount, the store as it was' '
	[ "$skip" = 0 ] || exit 0
	make_store s.db
	cat >ns.sh <<"EOF"
cp s.db full/study.db
sum=$(md5sum <full/study.db)
fill
rc=0; "$KJUDGE" eval "$KJ_TESTS/eval/suite" "$KJ_TESTS/eval/cands/generations.jsonl" \
	--db full/study.db --verify-only -q >out 2>err || rc=$?
test $rc = 1
grep -q "$nospace" err
test "$(md5sum <full/study.db)" = "$sum"
EOF
	in_full_fs ns.sh
'

test_expect 'verify --output onto a full disk: exit 2 (the machine, not the candidate), the old file as it was' '
	[ "$skip" = 0 ] || exit 0
	mkdir d
	printf "%s\n" "import torch" "class Model(torch.nn.Module):" \
		"    def forward(self, x):" "        return x * 2" \
		"def get_inputs():" "    return [torch.randn(8)]" \
		"def get_init_inputs():" "    return []" >d/op_torch.py
	printf "%s\n" "import torch" "class ModelNew(torch.nn.Module):" \
		"    def forward(self, x):" "        return x + x" >d/op_cpu_impl.py
	cat >ns.sh <<"EOF"
echo old >full/out.json
fill
rc=0; "$KJUDGE" verify --op_name op --verify_dir d --triton_impl_name cpu_impl \
	--device cpu --output full/out.json >out 2>err || rc=$?
test $rc = 2
grep -qx "kjudge verify: .full/out.json.: cannot write: $nospace" err
test "$(cat full/out.json)" = old
test -z "$(ls full | grep -v -x -e fill -e out.json)"
EOF
	in_full_fs ns.sh
'
test_done
