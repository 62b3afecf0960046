#!/usr/bin/env bash
# t0830-option-spellings.sh - options as people type them: every long option
# of every command takes '_' and '-' alike (--input-sets, --verify_only),
# --help keeps the table's spelling, and a slip is refused (exit 2) with the
# nearest name.  Nothing is judged.
. "$(dirname "$0")/lib.sh"

commands=$("$KJUDGE" help --commands)

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

test_expect 'every option of every command, written with the other separator, is the same option' '
	n=0
	for c in $commands; do
		"$KJUDGE" $c --help | sed -n "/^options:/,/^\$/p" |
			grep -oE "^  (-., |    )--[a-z0-9_-]+" | sed "s/.*--//" | grep "[-_]" >names.txt || true
		while read -r o; do
			other=$(printf "%s" "$o" | tr "_-" "-_")
			"$KJUDGE" $c "--$other=x" --help >/dev/null 2>e.txt || true
			if grep -q "unknown option" e.txt; then echo "$c --$other: $(cat e.txt)"; false; fi
			n=$((n + 1))
		done <names.txt
	done
	# The seed options and the new ones (verify --input_sets, eval
	# --verify-only, spec --build-timeout) are all among them.
	test $n -ge 20
	# --help shows the table spelling, not a mixture.
	"$KJUDGE" verify --help | grep -q -- "--input_sets N"
	"$KJUDGE" eval --help | grep -q -- "--verify-only"
'

test_expect 'the other spelling takes effect: its value is read and checked as the option' '
	"$KJUDGE" validate --print-rules >a.txt
	"$KJUDGE" validate --print_rules >b.txt
	test -s a.txt && cmp a.txt b.txt
	# The message names the option as typed.
	refused "kjudge verify: option '"'"'--input-sets'"'"' wants a whole number from 1 to 100, not '"'"'0'"'"'" \
		"$KJUDGE" verify --op-name x --input-sets 0
	refused "kjudge verify: '"'"'nowhere/verify_result.json'"'"': cannot write the output there: '"'"'nowhere'"'"' is not a directory" \
		"$KJUDGE" verify --op-name x --verify-dir nowhere
	# eval with --verify_only and --input-sets goes as far as its input.
	mkdir -p suite/ops gens
	cp "$KJ_TESTS/eval/suite/ops/relu_torch.py" suite/ops/
	expect_exit 2 "$KJUDGE" eval suite gens --db s.db --verify_only --input-sets 2 --retry_failed 2>err
	grep -q "no candidate found" err
'

test_expect 'a slip names the nearest option; a prefix names the options it starts; else only the word' '
	refused "kjudge eval: unknown option '"'"'--timout'"'"'; did you mean '"'"'--timeout'"'"'?" \
		"$KJUDGE" eval suite gens --db s.db --timout 3
	refused "kjudge verify: unknown option '"'"'--op_nmae'"'"'; did you mean '"'"'--op_name'"'"'?" \
		"$KJUDGE" verify --op_nmae x
	refused "kjudge benchmark: unknown option '"'"'--time-bugdet'"'"'; did you mean '"'"'--time_budget'"'"'?" \
		"$KJUDGE" benchmark --op_name x --time-bugdet=3
	refused "kjudge report: unknown option '"'"'--hepl'"'"'; did you mean '"'"'--help'"'"'?" \
		"$KJUDGE" report --hepl
	refused "kjudge verify: unknown option '"'"'--op'"'"' (names are not abbreviated: did you mean '"'"'--op_name'"'"'?)" \
		"$KJUDGE" verify --op x
	for c in $commands; do
		refused "kjudge $c: unknown option '"'"'--bogus'"'"'" "$KJUDGE" $c --bogus
	done
'

test_done
