#!/usr/bin/env bash
# t0770-spec-validate.sh - kjudge spec validate (the table of specs that
# each break one rule, tests/spec/validate/), the bundled suite with --all,
# --json's shape, a bad manifest line named by its number; spec pairs (the
# bundled suite's 24, pair contracts refused or unresolved); spec argc.
. "$(dirname "$0")/lib.sh"
suite="$KJ_TESTS/../examples/parsuite"
table="$KJ_TESTS/spec/validate"

# A copy of the bundled suite to change.
copy() {
	cp -r "$suite" s
}

test_expect 'every case of the table gives its expected report and exit status' '
	copy
	for c in "$table"/*.json; do
		sh "$table/run.sh" "$KJUDGE" s "$c" >got
		if ! cmp -s got "${c%.json}.expected"; then
			echo "case $(basename "$c"):"
			diff "${c%.json}.expected" got
			exit 1
		fi
	done
'

test_expect 'the bundled suite is valid with --all; its warnings are the weak oracles' '
	(cd "$suite" && "$KJUDGE" spec validate --all) >out
	grep -c ": valid$" out | grep -qx 12
	grep ": warning: " out >warn
	cat >want <<-EOF
	specs/parsuite-jacobi-omp.json: warning: verification.oracle_strength: oracle_strength='"'"'weak'"'"'
	specs/parsuite-jacobi-cuda.json: warning: verification.oracle_strength: oracle_strength='"'"'weak'"'"'
	specs/parsuite-jacobi-opencl.json: warning: verification.oracle_strength: oracle_strength='"'"'weak'"'"'
	EOF
	diff want warn
	tail -n 1 out | grep -qx "12 specs, 0 errors, 3 warnings"
	"$KJUDGE" spec validate --all --root "$suite" >out2
	cmp out out2
'

test_expect '--json has exactly the documented shape' '
	copy
	cp "$table/api-mismatch.json" s/specs/parsuite-dot-omp.json
	(cd s && expect_exit 1 "$KJUDGE" spec validate --all --json) >out.json
	py "
import json
d = json.load(open(\"out.json\"))
assert set(d) == {\"specs\", \"manifest\"}, d.keys()
assert set(d[\"manifest\"]) == {\"errors\", \"warnings\"}
for s in d[\"specs\"]:
    assert set(s) == {\"spec\", \"errors\", \"warnings\"}, s.keys()
    for i in s[\"errors\"] + s[\"warnings\"]:
        assert set(i) == {\"path\", \"message\"} and all(isinstance(v, str) for v in i.values())
dot = [s for s in d[\"specs\"] if s[\"spec\"] == \"specs/parsuite-dot-omp.json\"]
assert dot[0][\"errors\"] == [{\"path\": \"implementation.api\",
    \"message\": \"'"'"'cuda'"'"' != identity.parallel_api '"'"'omp'"'"'\"}], dot
assert dot[0][\"warnings\"] == []
assert len(d[\"specs\"]) == 12
"
'

test_expect 'a bad manifest line is named by its number, the good ones still read' '
	copy
	{ echo "{\"kernel_name\": \"dot\", \"kernel_name\": \"dot\"}"
	  echo "{\"kernel_name\": \"dot\", \"parallel_api\": \"omp\", \"source_suite\": \"parsuite\", \"spec_file\": \"specs/nonesuch.json\", \"source_dir\": \"parsuite-src/omp/dot\", \"x\": NaN}"
	  echo "{\"kernel_name\": \"dot\", \"parallel_api\": \"omp\", \"source_suite\": \"parsuite\", \"spec_file\": \"specs/nonesuch.json\", \"source_dir\": \"parsuite-src/omp/dot\"}"
	} >>s/manifest.jsonl
	(cd s && expect_exit 1 "$KJUDGE" spec validate --manifest manifest.jsonl) >out
	grep -qx "manifest: error: (root): line 13: manifest.jsonl:13:24: duplicate key '"'"'kernel_name'"'"' in an object" out
	grep -q "^manifest: error: (root): line 14: manifest.jsonl:14:.*NaN" out
	grep -qx "manifest: error: spec_file: line 15: '"'"'specs/nonesuch.json'"'"' does not exist on disk" out
	test "$(grep -c ": error: " out)" -eq 3
	(cd s && expect_exit 1 "$KJUDGE" spec validate --all) >all
	grep -q "line 15: '"'"'specs/nonesuch.json'"'"' does not exist" all
'

test_expect 'validate --all: a spec the manifest does not name, and one that disagrees' '
	copy
	cp s/specs/parsuite-dot-omp.json s/specs/parsuite-dot-serial.json
	sed -i "s/\"kernel_name\": \"dot\", \"parallel_api\": \"cuda\"/\"kernel_name\": \"dotp\", \"parallel_api\": \"cuda\"/" s/manifest.jsonl
	(cd s && expect_exit 1 "$KJUDGE" spec validate --all) >out
	grep -qx "manifest: error: (root): specs/parsuite-dot-serial.json: spec file has no corresponding manifest entry" out
	grep -qx "manifest: error: kernel_name: line 5: specs/parsuite-dot-cuda.json: manifest kernel_name '"'"'dotp'"'"' != spec identity.kernel_name '"'"'dot'"'"'" out
	grep -q "parsuite/dotp has only 1 API(s)" out
'

test_expect 'validate: usage errors exit 2' '
	expect_exit 2 "$KJUDGE" spec validate --root "$suite" 2>err
	grep -q "wants one of --spec F..., --all or --manifest F" err
	expect_exit 2 "$KJUDGE" spec validate --all --spec x.json --root "$suite" 2>err
	expect_exit 2 "$KJUDGE" spec validate --all --root /nonesuch 2>err
	expect_exit 2 "$KJUDGE" spec validate --spec a.json --spec b.json 2>err
	grep -qx "kjudge spec: --spec given 2 times: name the further spec files after the first (--spec A.json B.json)" err
	expect_exit 2 "$KJUDGE" spec validate --all --config x --root "$suite" 2>err
	grep -q "an option of '"'"'spec verify'"'"'" err
'

test_expect 'pairs: the bundled suite has 4 kernels x 3 APIs = 24 ordered pairs' '
	"$KJUDGE" spec pairs --root "$suite" --json >p.json
	test "$(jget p.json "len(d[\"pairs\"])")" = 24
	jget p.json "sorted((p[\"source_spec\"], p[\"target_spec\"]) for p in d[\"pairs\"] if p[\"kernel_name\"] == \"dot\")" >dot
	grep -qx "\[('"'"'parsuite-dot-cuda'"'"', '"'"'parsuite-dot-omp'"'"'), ('"'"'parsuite-dot-cuda'"'"', '"'"'parsuite-dot-opencl'"'"'), ('"'"'parsuite-dot-omp'"'"', '"'"'parsuite-dot-cuda'"'"'), ('"'"'parsuite-dot-omp'"'"', '"'"'parsuite-dot-opencl'"'"'), ('"'"'parsuite-dot-opencl'"'"', '"'"'parsuite-dot-cuda'"'"'), ('"'"'parsuite-dot-opencl'"'"', '"'"'parsuite-dot-omp'"'"')\]" dot
	"$KJUDGE" spec pairs --root "$suite" | tail -n 1 | grep -qx "24 pairs"
'

test_expect 'pairs: a manifest entry whose spec file is missing is ignored, and said so' '
	copy
	rm s/specs/parsuite-dot-cuda.json
	"$KJUDGE" spec pairs --root s >out 2>err
	grep -qx "kjudge spec: manifest line 5: specs/parsuite-dot-cuda.json: its spec file does not exist (ignored)" err
	tail -n 1 out | grep -qx "20 pairs"
'

# contracts FILE STATEMENTS: a contract file for the bundled suite's two dot
# pairs omp <-> cuda, resolved, changed by Python statements over d.
contracts() {
	mkdir -p s/evidence && echo witnessed >s/evidence/w.txt
	py "
import json
def c(src, tgt):
    return {\"source_spec\": src, \"target_spec\": tgt,
            \"shared_input\": {\"source_args\": [\"1048576\", \"3\"], \"target_args\": [\"1048576\", \"3\"]},
            \"translated_run\": {\"args\": [\"1048576\", \"3\"]},
            \"target_oracle\": {\"strategies\": [{\"type\": \"exit_code\", \"expected\": 0}]},
            \"baseline_witness\": {\"status\": \"pass\", \"evidence\": \"evidence/w.txt\"},
            \"comparability\": \"eligible\",
            \"comparator\": {\"type\": \"declared-strategy\", \"evidence\": \"evidence/w.txt\"}}
d = {\"contract_version\": \"parbench-final-v1\",
     \"pairs\": [c(\"parsuite-dot-omp\", \"parsuite-dot-cuda\"), c(\"parsuite-dot-cuda\", \"parsuite-dot-omp\")]}
$2
open(\"$1\", \"w\").write(json.dumps(d, indent=1))
"
}

test_expect 'pairs --contracts: resolved pairs said so; the others have none' '
	copy
	contracts c.json ""
	expect_exit 1 "$KJUDGE" spec pairs --root s --contracts c.json --json >p.json
	test "$(jget p.json "sorted(set(p[\"contract\"] for p in d[\"pairs\"]))")" = "['"'"'none'"'"', '"'"'resolved'"'"']"
	test "$(jget p.json "sum(p[\"contract\"] == \"resolved\" for p in d[\"pairs\"])")" = 2
	"$KJUDGE" spec pairs --root s --contracts c.json >out || true
	grep -qx "parsuite-dot-omp -> parsuite-dot-cuda \[resolved\]" out
	grep -qx "parsuite-dot-omp -> parsuite-dot-opencl \[no contract\]" out
'

test_expect 'pairs --contracts: an unresolved pair lists every unmet condition' '
	copy
	contracts c.json "d[\"pairs\"][0][\"comparability\"] = \"incomparable\"; d[\"pairs\"][0][\"baseline_witness\"][\"evidence\"] = \"../outside.txt\"; d[\"pairs\"][0][\"shared_input\"][\"target_args\"] = [\"1\"]"
	expect_exit 1 "$KJUDGE" spec pairs --root s --contracts c.json >out
	grep -A4 -x "parsuite-dot-omp -> parsuite-dot-cuda \[unresolved\]" out >u
	grep -qx "  comparability is '"'"'incomparable'"'"', not '"'"'eligible'"'"'" u
	grep -qx "  baseline witness evidence path escapes the repository: ../outside.txt" u
	grep -qx "  declared target_args do not match the target spec'"'"'s correctness arguments" u
	grep -qx "parsuite-dot-cuda -> parsuite-dot-omp \[resolved\]" out
'

test_expect 'pairs --contracts fails closed: NaN, a duplicate pair, a schema violation' '
	copy
	contracts c.json ""
	sed "0,/\"expected\": 0/s//\"expected\": NaN/" c.json >nan.json
	expect_exit 2 "$KJUDGE" spec pairs --root s --contracts nan.json 2>err
	grep -q "^kjudge spec: nan.json:[0-9]*:[0-9]*: NaN is not JSON" err
	contracts dup.json "d[\"pairs\"].append(d[\"pairs\"][0])"
	expect_exit 2 "$KJUDGE" spec pairs --root s --contracts dup.json 2>err
	grep -qx "kjudge spec: '"'"'dup.json'"'"': pairs\[2\]: duplicate pair key parsuite-dot-omp -> parsuite-dot-cuda (first at pairs\[0\])" err
	contracts bad.json "d[\"contract_version\"] = \"v3\""
	expect_exit 2 "$KJUDGE" spec pairs --root s --contracts bad.json 2>err
	grep -q "violates the pair-contract schema: contract_version: " err
	printf "{\"contract_version\": \"parbench-final-v1\", \"pairs\": [], \"x\": 1e999}" >big.json
	expect_exit 2 "$KJUDGE" spec pairs --root s --contracts big.json 2>err
	grep -q "big.json:1:" err
	printf "{\"contract_version\": \"parbench-final-v1\", \"pairs\": [], \"x\": 1e-999}" >tiny.json
	expect_exit 2 "$KJUDGE" spec pairs --root s --contracts tiny.json 2>err
	grep -q "tiny.json:1:" err
	printf "{\"contract_version\": \"parbench-final-v1\", \"pairs\": [], \"pairs\": []}" >twice.json
	expect_exit 2 "$KJUDGE" spec pairs --root s --contracts twice.json 2>err
	grep -q "twice.json:1:.*duplicate key '"'"'pairs'"'"'" err
'

test_expect 'argc: the bundled suite is OK; a dropped argument is a MISMATCH' '
	"$KJUDGE" spec argc --all --root "$suite" >out
	test "$(grep -c "^OK " out)" = 12
	tail -n 1 out | grep -qx "OK=12"
	copy
	py "
import json
p = \"s/specs/parsuite-dot-omp.json\"
d = json.load(open(p)); d[\"run\"][\"input_configurations\"][\"correctness\"][\"arguments\"] = [\"1048576\"]
open(p, \"w\").write(json.dumps(d))
"
	(cd s && expect_exit 1 "$KJUDGE" spec argc --spec specs/parsuite-dot-omp.json specs/parsuite-dot-cuda.json) >out
	grep -qx "MISMATCH specs/parsuite-dot-omp.json: main.c checks \`argc != 3\` but spec provides 1 arguments (argc=2)" out
	grep -qx "OK specs/parsuite-dot-cuda.json: argc=3 satisfies 1 check(s)" out
	(cd s && expect_exit 1 "$KJUDGE" spec argc --spec specs/nonesuch.json --json) >m.json
	test "$(jget m.json "d[\"specs\"][0][\"outcome\"]")" = SPEC-MISSING
	expect_exit 2 "$KJUDGE" spec argc --root "$suite" 2>err
'

test_expect 'argc: < and <= are minimums, > and >= are not enforced, argc_x is not argc' '
	copy
	src=s/parsuite-src/omp/dot/main.c
	echo "/* argc < 3, argc<=2, argc > 9, argc >= 9, argc_max == 7, myargc == 1 */" >>"$src"
	"$KJUDGE" spec argc --root s --spec s/specs/parsuite-dot-omp.json >out
	grep -qx "OK s/specs/parsuite-dot-omp.json: argc=3 satisfies 5 check(s)" out
	echo "/* argc < 4 */" >>"$src"
	expect_exit 1 "$KJUDGE" spec argc --root s --spec s/specs/parsuite-dot-omp.json >out
	grep -q "main.c checks \`argc < 4\` but spec provides 2 arguments (argc=3)" out
	echo "/* argc <= 3 */" >"$src"
	expect_exit 1 "$KJUDGE" spec argc --root s --spec s/specs/parsuite-dot-omp.json >out
	grep -q "checks \`argc <= 3\`" out
	echo "int main(void) { return 0; }" >"$src"
	"$KJUDGE" spec argc --root s --spec s/specs/parsuite-dot-omp.json | grep -qx "SKIP (no-argc) s/specs/parsuite-dot-omp.json: no literal argc comparison"
	rm "$src"
	"$KJUDGE" spec argc --root s --spec s/specs/parsuite-dot-omp.json | grep -q "^SKIP (source-missing) "
'

test_done
