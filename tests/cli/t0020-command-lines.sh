#!/usr/bin/env bash
# t0020-command-lines.sh - command lines as people type them, for every
# command: options before or after operands, --opt=value and --opt value,
# -- ending the options, and the bad forms refused with exit 2 and one line
# that names the option as typed.  verify and benchmark run a small real task
# (examples/softmax, its CPU candidate) on the CPU.
. "$(dirname "$0")/lib.sh"
export KJ_STATE_DIR=$kj_root/state KJ_CACHE_DIR=$kj_root/cache
corpus=$KJ_TESTS/validate
examples=$KJ_TESTS/../examples

# refused MESSAGE CMD...: CMD exits 2 and its stderr is exactly MESSAGE.
refused() {
	local want=$1 rc=0
	shift
	"$@" > out.txt 2> err.txt || rc=$?
	if [ $rc -ne 2 ] || [ "$(cat err.txt)" != "$want" ]; then
		echo "expected exit 2 and: $want"
		echo "got exit $rc and: $(cat err.txt)"
		return 1
	fi
}

commands="validate compare verify benchmark doctor skill"

test_expect 'every command: an unknown option, a value given to a flag, a missing value' '
	for c in $commands; do
		refused "kjudge $c: unknown option '"'"'--bogus'"'"'" $KJUDGE $c --bogus=1
		refused "kjudge $c: unknown option '"'"'-Z'"'"'" $KJUDGE $c -Z
		refused "kjudge $c: option '"'"'--help'"'"' takes no value" $KJUDGE $c --help=yes
	done
	refused "kjudge validate: option '"'"'--json'"'"' takes no value" $KJUDGE validate --json=1 x.py
	refused "kjudge compare: option '"'"'--json'"'"' takes no value" $KJUDGE compare --json=1 g.npy a.npy
	refused "kjudge doctor: option '"'"'--json'"'"' takes no value" $KJUDGE doctor --json=true
	refused "kjudge benchmark: option '"'"'--skip_framework'"'"' takes no value" \
		$KJUDGE benchmark --op_name x --skip_framework=1
	refused "kjudge skill: option '"'"'--force'"'"' takes no value" $KJUDGE skill --force=1 d
	refused "kjudge verify: option '"'"'--timeout'"'"' needs a value (S)" $KJUDGE verify --op_name x --timeout
	refused "kjudge benchmark: option '"'"'--output'"'"' needs a value (FILE)" \
		$KJUDGE benchmark --op_name x --output --json
	refused "kjudge validate: option '"'"'--rules'"'"' needs a value (FILE)" $KJUDGE validate x.py --rules
	refused "kjudge compare: option '"'"'--dtype'"'"' needs a value (NAME)" $KJUDGE compare g a --dtype
	refused "kjudge doctor: option '"'"'--group'"'"' needs a value (NAME)" $KJUDGE doctor --group
	refused "kjudge verify: unknown option '"'"'--op'"'"' (names are not abbreviated: did you mean '"'"'--op_name'"'"'?)" \
		$KJUDGE verify --op scale
'

test_expect 'numbers: the whole text, finite, in range; the message gives the range' '
	t="kjudge verify: option '"'"'--timeout'"'"' wants a number of seconds from 0.001 to 2147483"
	for v in 2147484 0 -1 nan inf 1e309 5s " 5" 0x10 ""; do
		if [ -z "$v" ]; then
			refused "$t, not an empty string" $KJUDGE verify --op_name x --timeout=
		else
			refused "$t, not '"'"'$v'"'"'" $KJUDGE verify --op_name x --timeout "$v"
		fi
	done
	b="kjudge benchmark: option '"'"'--framework_latency_ms'"'"' wants a number of milliseconds from 0 to 86400000"
	for v in nan NaN inf -inf 1e309 -1 -0.001 1ms; do
		refused "$b, not '"'"'$v'"'"'" $KJUDGE benchmark --op_name x --skip_framework \
			--framework_latency_ms "$v" --verify_not_required --output p.json
	done
	test ! -e p.json
	refused "kjudge verify: option '"'"'--seed'"'"' wants a whole number from 0 to 9007199254740991, not '"'"'9007199254740992'"'"'" \
		$KJUDGE verify --op_name x --seed 9007199254740992
	refused "kjudge verify: option '"'"'--seed'"'"' wants a whole number from 0 to 9007199254740991, not '"'"'-1'"'"'" \
		$KJUDGE verify --op_name x --seed=-1
	refused "kjudge verify: option '"'"'--input_sets'"'"' wants a whole number from 1 to 100, not '"'"'0'"'"'" \
		$KJUDGE verify --op_name x --input_sets 0
	refused "kjudge benchmark: option '"'"'--repeats'"'"' wants a whole number from 1 to 1000000, not '"'"'2.5'"'"'" \
		$KJUDGE benchmark --op_name x --repeats 2.5
	refused "kjudge benchmark: option '"'"'--warmup'"'"' wants a whole number from 0 to 1000000, not '"'"'-1'"'"'" \
		$KJUDGE benchmark --op_name x --warmup -1
	refused "kjudge compare: option '"'"'--threads'"'"' wants a whole number from 0 to 1024, not '"'"'1e3'"'"'" \
		$KJUDGE compare --threads 1e3 g a
	refused "kjudge doctor: option '"'"'--timeout'"'"' wants a whole number of seconds from 1 to 3600, not '"'"'3601'"'"'" \
		$KJUDGE doctor --timeout 3601
	refused "kjudge verify: option '"'"'--device'"'"' wants cpu, cuda or cuda:N, not '"'"'gpu'"'"'" \
		$KJUDGE verify --op_name x --device gpu
'

test_expect 'operand counts and required options' '
	refused "kjudge compare: expected GOLDEN.npy and ACTUAL.npy, got 3 operands" $KJUDGE compare a b c
	refused "kjudge compare: expected GOLDEN.npy and ACTUAL.npy, got 1 operand" $KJUDGE compare a --json
	refused "kjudge verify: takes no operands, got '"'"'extra'"'"'" $KJUDGE verify --op_name x extra
	refused "kjudge benchmark: takes no operands, got '"'"'extra'"'"'" $KJUDGE benchmark extra --op_name x
	refused "kjudge doctor: takes no operands, got '"'"'-'"'"'" $KJUDGE doctor -
	refused "kjudge skill: expected one DIR, the skill directory, got 0 operands" $KJUDGE skill
	refused "kjudge skill: expected one DIR, the skill directory, got 2 operands" $KJUDGE skill a b
	refused "kjudge verify: option '"'"'--op_name'"'"' is required" $KJUDGE verify --verify_dir .
	refused "kjudge validate: expected at least one FILE or DIR" $KJUDGE validate --json
'

test_expect 'validate: options before or after the files, and -- before a file named like an option' '
	cp "$corpus/triton/t3_functional.py" ./-t3.py
	cp "$corpus/triton/clean_basic.py" ok.py
	expect_exit 1 $KJUDGE validate --json ok.py -- -t3.py > a.json
	expect_exit 1 $KJUDGE validate ok.py --json -- -t3.py > b.json
	expect_exit 1 $KJUDGE validate -- ok.py -t3.py --json > c.txt 2>&1
	cmp a.json b.json
	test "$(wc -l < a.json)" -eq 2
	py "
import json
recs = [json.loads(l) for l in open(\"a.json\")]
assert [r[\"regression_type\"] for r in recs] == [None, 3], recs
"
	# After --, --json is a file, which does not exist: its record says so.
	grep -q "'"'"'--json'"'"'" c.txt
	echo "{\"forward\": {\"allow\": [\"torch.matmul\"]}}" > r.json
	$KJUDGE validate ok.py --rules=r.json
	$KJUDGE validate --rules r.json ok.py
'

test_expect 'compare: --json after the files, --opt=value, the last repeat wins' '
	py "import numpy as np; np.save(\"g.npy\", np.ones(8, np.float32)); np.save(\"a.npy\", np.ones(8, np.float32))"
	cp g.npy ./-g.npy
	$KJUDGE compare g.npy a.npy --json > x.json
	$KJUDGE compare --json g.npy a.npy > y.json
	$KJUDGE compare --threads=2 g.npy --json a.npy > z.json
	cmp x.json y.json
	cmp x.json z.json
	test "$(jget x.json "d[\"pass\"]")" = True
	$KJUDGE compare --json -- -g.npy a.npy > w.json
	cmp x.json w.json
	$KJUDGE compare --dtype=float16 --dtype float32 g.npy a.npy --json > v.json
	test "$(jget v.json "d[\"golden\"][\"dtype\"]")" = float32
'

# groups FILE: the groups of a doctor report, comma-separated.
groups() {
	jget "$1" "\",\".join(sorted(set(c[\"group\"] for c in d[\"checks\"])))"
}

test_expect 'doctor: --group=NAME, repeats add up, options in any order' '
	# Exit 1 would be a probe that fails on this machine: not the point here.
	$KJUDGE doctor --group=timing --json > a.json || test $? -eq 1
	$KJUDGE doctor --json --group timing > b.json || test $? -eq 1
	test "$(groups a.json)" = timing
	test "$(groups b.json)" = timing
	$KJUDGE doctor --group timing --timeout=5 --group=runtimes --json > c.json || test $? -eq 1
	test "$(groups c.json)" = runtimes,timing
'

test_expect 'verify: both orders and both forms give the same verdict; --timeout 2147483 works' '
	mkdir d
	cp "$examples"/softmax/softmax_torch.py "$examples"/softmax/softmax_cpu_impl.py d/
	$KJUDGE verify --op_name softmax --verify_dir d --triton_impl_name cpu_impl --device cpu \
		--timeout 2147483 --output a.json > out.txt
	$KJUDGE verify --output=b.json --device=cpu --triton_impl_name=cpu_impl --verify_dir=d \
		--op_name=softmax --timeout=2147483 > out2.txt
	for f in a.json b.json; do
		test "$(jget $f "d[\"total_cases\"] > 0 and d[\"passed_cases\"] == d[\"total_cases\"]")" = True
	done
	test "$(jget a.json "d[\"total_cases\"]")" = "$(jget b.json "d[\"total_cases\"]")"
	$KJUDGE verify --op_name softmax --verify_dir d --triton_impl_name cpu_impl --device cpu \
		--seed 9007199254740991 --output c.json > /dev/null
	test "$(jget c.json "d[\"kjudge\"][\"seeds\"]")" = fixed
'

test_expect 'benchmark: --opt=value forms, the latency given is the one reported' '
	mkdir d
	cp "$examples"/softmax/softmax_torch.py "$examples"/softmax/softmax_cpu_impl.py d/
	$KJUDGE verify --op_name softmax --verify_dir d --triton_impl_name cpu_impl --device cpu \
		--output d/verify_result_cpu_impl.json > /dev/null
	$KJUDGE benchmark --op_name=softmax --verify_dir=d --triton_impl_name=cpu_impl \
		--device=cpu --warmup=1 --repeats=2 --skip_framework --framework_latency_ms=1.5 \
		--output=p.json > /dev/null
	test "$(jget p.json "d[\"framework\"][\"avg_latency_ms\"]")" = 1.5
	test "$(jget p.json "(d[\"warmup\"], d[\"repeats\"])")" = "(1, 2)"
'

test_expect 'eval'"'"'s environment: a bad KJ_PUBLISH_S or KJ_SLURM_POLL_S is refused by name' '
	e="kjudge eval: environment variable"
	for v in abc -1 1e309 5s; do
		KJ_PUBLISH_S=$v refused "$e KJ_PUBLISH_S='"'"'$v'"'"' is not valid: it wants a number from 0 to 86400" \
			$KJUDGE eval nosuch nogens --db e.db
	done
	for v in -1 abc nan 86401; do
		KJ_SLURM_POLL_S=$v refused "$e KJ_SLURM_POLL_S='"'"'$v'"'"' is not valid: it wants a number from 0 to 86400" \
			$KJUDGE eval nosuch nogens --db e.db
	done
	# Valid values pass the environment: the next complaint is the suite.
	KJ_PUBLISH_S=0 KJ_SLURM_POLL_S=0.01 refused "kjudge eval: '"'"'nosuch'"'"': the suite is not a directory" \
		$KJUDGE eval nosuch nogens --db e.db &&
	test ! -e e.db
'

test_expect 'every option of --help is in the man page and known to the parser' '
	for c in $commands; do
		$KJUDGE $c --help > h.txt
		$KJUDGE help $c | cmp - h.txt
		$KJUDGE help --man $c > m.1
		py "
import re
h = open(\"h.txt\").read().split(\"\\noptions:\\n\")[1].split(\"\\n\\n\")[0]
hopts = re.findall(r\"^  (?:-., |    )(--[a-z0-9_-]+)\", h, re.M)
m = open(\"m.1\").read().replace(\"\\\\-\", \"-\")
mopts = re.findall(r\"^(?:\\\\fB-.\\\\fR, )?\\\\fB(--[a-z0-9_-]+)\\\\fR\", m, re.M)
assert hopts and hopts == mopts, (hopts, mopts)
open(\"opts.txt\", \"w\").write(\"\\n\".join(hopts) + \"\\n\")
"
		while read -r o; do
			[ "$o" = --help ] && continue
			$KJUDGE $c "$o=x" --help > /dev/null 2> e.txt || true
			if grep -q "unknown option" e.txt; then echo "$c $o: $(cat e.txt)"; false; fi
		done < opts.txt
	done
'
test_done
