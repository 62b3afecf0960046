#!/usr/bin/env bash
# t0240-ext-cache.sh - torch extensions (load_inline) built once, by the
# judge, in a sandbox of its own, and kept in its cache
# (lib/runner/extcache.c): verify builds a C++ candidate, benchmark loads it
# without compiling, a damaged entry is built again, a build that writes
# outside its directory fails and leaves the cache as it was, and without a
# cache the candidate builds by itself (the same hostile one, then free to
# write its own directories, passes).  Three C++ builds in all (20-40 s
# each on a CI machine).
. "$(dirname "$0")/lib.sh"

tests=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
export KJ_STATE_DIR=$kj_root/state
export KJ_CACHE_DIR=$kj_root/cache

# setup DIR CANDIDATE: the addmul task and tests/candidates/CANDIDATE.
setup() {
	mkdir -p "$1"
	cp "$tests/candidates/addmul_torch.py" "$1/"
	cp "$tests/candidates/$2/candidate.py" "$1/addmul_triton_ascend_impl.py"
}

# The entries of the build cache, one per line.
entries() {
	ls -d "$KJ_CACHE_DIR"/ext/x-* 2>/dev/null
}

# manifest_ok ENTRY: every file of the entry matches the judge's manifest.
manifest_ok() {
	py "
import hashlib, os, sys
d = '$1'
for line in open(os.path.join(d, '.manifest')):
    sha, size, name = line.split()
    data = open(os.path.join(d, name), 'rb').read()
    assert len(data) == int(size) and hashlib.sha256(data).hexdigest() == sha, name
"
}

test_expect 'a load_inline candidate is built once: by verify, then loaded by benchmark without a build' '
	setup d ext_inline
	$KJUDGE verify --op_name addmul --verify_dir d --device cpu > out.txt
	grep -q "3/3 cases passed" out.txt
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"timings\"][\"build_n\"]")" = 1.0
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"timings\"][\"build_cached_n\"]")" = 0.0
	test "$(entries | wc -l)" -eq 1
	manifest_ok "$(entries)"
	ls "$(entries)" | grep -qx kj_addmul.so
	# The cache is the judge'"'"'s: read-only, never the candidate'"'"'s own files.
	test ! -w "$(entries)/kj_addmul.so" || test "$(id -u)" -eq 0
	test "$(stat -c %a "$(entries)")" = 555
	$KJUDGE benchmark --op_name addmul --verify_dir d --device cpu --output perf.json \
		--repeats 20 --time_budget 1 > /dev/null
	test "$(jget perf.json "d[\"passed_cases\"]")" = 3
	test "$(jget perf.json "d[\"kjudge\"][\"timings\"][\"build_n\"]")" = 0.0
	test "$(jget perf.json "d[\"kjudge\"][\"timings\"][\"build_cached_n\"]")" = 1.0
	test "$(entries | wc -l)" -eq 1
'

test_expect 'a damaged entry is noticed, removed and built again; the verdict stays right' '
	e=$(entries)
	test -n "$e"
	chmod u+w "$e/kj_addmul.so"
	py "
p = \"$e/kj_addmul.so\"
b = bytearray(open(p, \"rb\").read())
b[len(b) // 2] ^= 0x40
open(p, \"wb\").write(bytes(b))
"
	! manifest_ok "$e" 2> /dev/null
	setup d ext_inline
	$KJUDGE verify --op_name addmul --verify_dir d --device cpu > out.txt
	grep -q "3/3 cases passed" out.txt
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"timings\"][\"build_damaged_n\"]")" = 1.0
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"timings\"][\"build_n\"]")" = 1.0
	test "$(entries | wc -l)" -eq 1
	manifest_ok "$(entries)"
'

test_expect 'a build that writes outside its directory fails and leaves the cache as it was' '
	victim=$(entries)/kj_addmul.so
	test -f "$victim"
	before=$(sha256sum < "$victim")
	setup d ext_escape
	echo "$victim" > d/victim.txt
	expect_exit 1 $KJUDGE verify --op_name addmul --verify_dir d --device cpu > out.txt
	grep -q "0/3 cases passed" out.txt
	jget d/verify_result.json "d[\"failures\"][0][\"error_msg\"]" > msg.txt
	grep -q "kjudge-escape-refused" msg.txt
	test "$(sha256sum < "$victim")" = "$before"
	test "$(entries | wc -l)" -eq 1
	test -z "$(find "$KJ_CACHE_DIR" -name planted.so)"
	test -z "$(ls -d "$KJ_CACHE_DIR"/ext/stage-* 2>/dev/null)"
'

# The same candidate, in its own process: its writes land in its own
# directories, so it builds and passes; what failed above was the judge's
# builder refusing them.
test_expect 'without a cache (KJ_CACHE_DIR=off) the candidate builds by itself' '
	setup d ext_escape
	KJ_CACHE_DIR=off $KJUDGE verify --op_name addmul --verify_dir d --device cpu > out.txt
	grep -q "3/3 cases passed" out.txt
	test "$(jget d/verify_result.json "d[\"kjudge\"][\"timings\"].get(\"build_n\", 0)")" = 0
'

test_done
