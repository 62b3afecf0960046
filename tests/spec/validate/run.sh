#!/bin/sh
# run.sh KJUDGE ROOT CASE.json: validate one case of this table as t0770
# does and print what NAME.expected must hold: the exit status, then the
# report with the spec's name as SPEC and the project root as ROOT.
#
# The case is copied into ROOT/cases/ under its unique_id (so that only
# the case named name-mismatch breaks the file-name rule) and validated
# from ROOT, the copy of examples/parsuite its paths resolve in.
kj=$1 root=$2 case=$3
name=$(basename "$case" .json)
id=$(sed -n 's/.*"unique_id": *"\([^"]*\)".*/\1/p' "$case" | head -n 1)
[ "$name" = name-mismatch ] && id=$name
mkdir -p "$root/cases"
rm -f "$root"/cases/*.json
cp "$case" "$root/cases/$id.json"
out=$(cd "$root" && "$kj" spec validate --spec "cases/$id.json" 2>&1)
rc=$?
echo "exit $rc"
printf '%s\n' "$out" | sed "s|cases/$id.json|SPEC|g; s|$(cd "$root" && pwd -P)|ROOT|g"
