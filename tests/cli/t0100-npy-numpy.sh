#!/usr/bin/env bash
# t0100-npy-numpy.sh - the .npy reader and writer against numpy itself.
#
# numpy (tests/helpers/npy_fixtures.py) writes files of every format version,
# dtype, byte order, order and a range of shapes; npy_check
# (tests/helpers/npy_check.c, on the library) loads each one and compares
# every element with the formula both sides share.  Then the other way:
# npy_check writes, numpy loads, compares every element, and checks that the
# file is byte for byte what numpy writes for the same array.  Needs
# $KJ_PYTHON with numpy.
. "$(dirname "$0")/lib.sh"

helpers=${KJ_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}/helpers
npy_check=${KJ_BUILD:?run through tests/run}/tests/npy_check
# numpy's files, written once by the first test and read by the others; it
# lives in lib.sh's scratch root, which is removed on exit.
fixtures=$kj_root/fixtures

dtypes="bool int8 int16 int32 int64 uint8 uint16 uint32 uint64
	float16 float32 float64 bfloat16 float8_e4m3fn float8_e5m2"

# check_fixtures VERSION DTYPE: npy_check every numpy file of that format
# version and dtype listed in the manifest (NAME DTYPE ORDER ENDIAN VERSION
# DIM...).  Fails if there are none.
check_fixtures() {
	local n=0 name dtype order endian version dims
	while read -r name dtype order endian version dims; do
		[ "$version" = "$1" ] && [ "$dtype" = "$2" ] || continue
		# $dims is deliberately unquoted: one argument per dimension.
		"$npy_check" check "$fixtures/$name" "$dtype" "$order" \
			"$endian" "$version" $dims || return 1
		n=$((n + 1))
	done < "$fixtures/MANIFEST"
	echo "$n files checked"
	[ "$n" -gt 0 ]
}

# write_and_verify DTYPE: npy_check writes the test tensor in both orders,
# both byte orders and every shape; numpy verifies each file.
write_and_verify() {
	local order endian shape name hdr_endian
	for order in C F; do
		for endian in '<' '>'; do
			for shape in "" "0" "3 0" "7" "2 3" "3 4 5" "2 1 3 2" "64 33"; do
				name=$1-$order-$([ "$endian" = '<' ] && echo le || echo be)
				name=$name-$(echo "${shape:-scalar}" | tr ' ' x).npy
				# $shape unquoted: one argument per dimension.
				"$npy_check" write "$name" "$1" "$order" "$endian" $shape ||
					return 1
				case $1 in
				bool | int8 | uint8 | float8_*) hdr_endian='|' ;;
				*) hdr_endian=$endian ;;
				esac
				echo "$name $1 $order $hdr_endian 1.0 $shape" >> MANIFEST
			done
		done
	done
	"$KJ_PYTHON" "$helpers/npy_fixtures.py" verify . MANIFEST
}

test_expect 'numpy writes the fixtures (formats 1.0, 2.0 and 3.0)' '
	"$KJ_PYTHON" "$helpers/npy_fixtures.py" gen "$fixtures"
	test "$(wc -l < "$fixtures/MANIFEST")" -gt 1000
	grep -q " 3.0 " "$fixtures/MANIFEST"
'

for version in 1.0 2.0 3.0; do
	for dtype in $dtypes; do
		test_expect "reads numpy's $dtype files of format $version (both byte orders, C and F, 0-d to 4-d, empty)" '
			check_fixtures "$version" "$dtype"
		'
	done
done

test_expect "reads numpy's 32-dimension Fortran-order big-endian file" '
	line=$(grep "^many_dims.npy " "$fixtures/MANIFEST")
	set -- $line
	test "$3" = F
	"$npy_check" check "$fixtures/$1" $2 $3 $4 $5 $(echo "$line" | cut -d" " -f6-)
'

# (The messages quote names in single quotes; the patterns match them with
# "?", since the bodies are single-quoted strings themselves.)
test_expect 'refuses the dtypes numpy has and kjudge lacks, by name' '
	n=0
	while read -r name; do
		out=$("$npy_check" error "$fixtures/$name")
		echo "$out"
		case $out in
		KJ_EDTYPE:*"$name"?": unsupported dtype"*) ;;
		*) exit 1 ;;
		esac
		n=$((n + 1))
	done < "$fixtures/UNSUPPORTED"
	test $n -ge 9
	"$npy_check" error "$fixtures/complex64.npy" | grep -q "dtype .<c8. "
	"$npy_check" error "$fixtures/unicode.npy" | grep -q "dtype .<U3. "
	"$npy_check" error "$fixtures/structured.npy" | grep -q "structured"
'

# The checks must be able to fail: a changed element, a wrong byte order or
# a wrong version in the expectation are all caught.
test_expect 'npy_check catches a changed element, byte order or version' '
	cp "$fixtures/v1_float32_le_C_2x3.npy" f.npy
	"$npy_check" check f.npy float32 C "<" 1.0 2 3
	expect_exit 1 "$npy_check" check f.npy float32 C ">" 1.0 2 3
	expect_exit 1 "$npy_check" check f.npy float32 F "<" 1.0 2 3
	expect_exit 1 "$npy_check" check f.npy float32 C "<" 2.0 2 3
	expect_exit 1 "$npy_check" check f.npy float32 C "<" 1.0 3 2
	expect_exit 1 "$npy_check" check f.npy int32 C "<" 1.0 2 3
	size=$(wc -c < f.npy)
	printf "\001" | dd of=f.npy bs=1 seek=$((size - 5)) conv=notrunc 2>/dev/null
	expect_exit 1 "$npy_check" check f.npy float32 C "<" 1.0 2 3 2> e.txt
	grep -q "element \[1, 1\]" e.txt
'

test_expect 'numpy verification catches a changed byte' '
	"$npy_check" write a.npy int16 F ">" 4 5
	echo "a.npy int16 F > 1.0 4 5" > MANIFEST
	"$KJ_PYTHON" "$helpers/npy_fixtures.py" verify . MANIFEST
	printf "\001" | dd of=a.npy bs=1 seek=140 conv=notrunc 2>/dev/null
	expect_exit 1 "$KJ_PYTHON" "$helpers/npy_fixtures.py" verify . MANIFEST
'

for dtype in $dtypes; do
	test_expect "numpy reads kjudge's $dtype files, byte for byte as its own" '
		write_and_verify "$dtype"
	'
done

# The convention of dtype.h, with the bits written out by hand: numpy sees
# bfloat16 as uint16 and the float8 types as uint8, bits unchanged.
test_expect 'bfloat16 and float8 files load in numpy as their bits' '
	"$npy_check" write bf.npy bfloat16 C "<" 5
	"$npy_check" write bfbe.npy bfloat16 C ">" 5
	"$npy_check" write e4.npy float8_e4m3fn C "|" 5
	"$npy_check" write e5.npy float8_e5m2 C "|" 5
	py "
import numpy as np
for f in (\"bf.npy\", \"bfbe.npy\"):
    a = np.load(f)
    assert a.dtype.kind == \"u\" and a.dtype.itemsize == 2, a.dtype
    assert a.tolist() == [0xc0e0, 0xc0d8, 0xc0d0, 0xc0c8, 0xc0c0], a
assert np.load(\"bfbe.npy\").dtype.str == \">u2\"
a = np.load(\"e4.npy\")
assert a.dtype == np.uint8 and a.tolist() == [0xc6, 0xc4, 0xc2, 0xc0, 0xbc], a
a = np.load(\"e5.npy\")
assert a.dtype == np.uint8 and a.tolist() == [0xc3, 0xc2, 0xc1, 0xc0, 0xbe], a
"
'
test_done
