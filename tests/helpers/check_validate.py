#!/usr/bin/env python3
"""Run `kjudge validate --json` over the corpus of tests/validate/ and check
every record against tests/validate/expect.json.

One call judges the whole directory (the directory operand and JSON Lines
output are part of what is tested).  For each file it checks:

  - the record's shape: valid, filepath, kind, regression_type, checks (each
    with passed and error, and its list: kernels, called, placeholders or
    violations) and suggestion, non-empty exactly when the file is degraded;
  - regression_type and valid;
  - `lines`: the lines of every finding that fails a check (a finding is
    {line, call, reason}, each line inside the file, call and reason
    non-empty); `warnings`: the lines of findings marked as warnings;
  - `called` and `placeholders` as sets, when expect.json gives them;
  - `error`: words in the error of the check that decided the type;
  - the kind: "triton" under triton/, "cuda" under cuda/.

Every corpus file must have an entry and every entry a file.  Prints
"ok   validate: FILE" or "FAIL validate: FILE" and the reasons, as tests/run
counts them; exits 1 if any failed.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

CHECK_ORDER = [
    "kernel_exists", "kernel_called_from_forward", "no_forbidden_module_wide_ops",
    "no_forbidden_host_library_calls", "kernel_not_placeholder", "no_dynamic_attr_evasion",
    "no_host_math_fallback", "no_host_sync_risk", "no_forbidden_torch_ops",
]


def check_key(name, kind):
    if name == "kernel_exists":
        return "cuda_kernel_exists" if kind == "cuda" else "triton_kernel_exists"
    return name


def shape_errors(rec, nlines):
    errs = []
    for key in ("valid", "filepath", "kind", "regression_type", "checks", "suggestion"):
        if key not in rec:
            errs.append(f"record has no '{key}'")
    if errs:
        return errs
    kind = rec["kind"]
    for name in CHECK_ORDER:
        key = check_key(name, kind)
        if name == "no_forbidden_host_library_calls" and kind != "cuda":
            if key in rec["checks"]:
                errs.append(f"a {kind} record has '{key}'")
            continue
        c = rec["checks"].get(key)
        if c is None:
            errs.append(f"checks has no '{key}'")
            continue
        if not isinstance(c.get("passed"), bool) or "error" not in c:
            errs.append(f"'{key}' lacks passed or error")
        if c["passed"] != (c["error"] is None):
            errs.append(f"'{key}': error must be null exactly when it passed")
        for v in c.get("violations", []):
            if not (1 <= v.get("line", 0) <= nlines) or not v.get("call") or not v.get("reason"):
                errs.append(f"'{key}': malformed finding {v}")
    if bool(rec["suggestion"]) == rec["valid"]:
        errs.append("the suggestion must be empty exactly when the file is valid")
    if rec["valid"] != (rec["regression_type"] is None):
        errs.append("valid must be true exactly when regression_type is null")
    return errs


def deciding_error(rec):
    for name in CHECK_ORDER:
        c = rec["checks"].get(check_key(name, rec["kind"]))
        if c is not None and not c["passed"]:
            return c["error"] or ""
    return ""


def compare(rel, rec, want, nlines):
    errs = shape_errors(rec, nlines)
    if errs:
        return errs
    if rec["regression_type"] != want["type"]:
        errs.append(f"regression_type {rec['regression_type']}, want {want['type']}")
    kind = "cuda" if rel.startswith("cuda/") else "triton"
    if rec["kind"] != kind:
        errs.append(f"kind {rec['kind']}, want {kind}")
    found = [v for c in rec["checks"].values() for v in c.get("violations", [])]
    lines = sorted({v["line"] for v in found if not v.get("warning")})
    warnings = sorted({v["line"] for v in found if v.get("warning")})
    if lines != sorted(want.get("lines", [])):
        errs.append(f"lines {lines}, want {sorted(want.get('lines', []))}")
    if warnings != sorted(want.get("warnings", [])):
        errs.append(f"warnings {warnings}, want {sorted(want.get('warnings', []))}")
    if "called" in want:
        got = set(rec["checks"]["kernel_called_from_forward"]["called"])
        if got != set(want["called"]):
            errs.append(f"called {sorted(got)}, want {sorted(want['called'])}")
    if "placeholders" in want:
        got = set(rec["checks"]["kernel_not_placeholder"]["placeholders"])
        if got != set(want["placeholders"]):
            errs.append(f"placeholders {sorted(got)}, want {sorted(want['placeholders'])}")
    if "error" in want and want["error"] not in deciding_error(rec):
        errs.append(f"error {deciding_error(rec)!r} does not say {want['error']!r}")
    if errs:
        errs.append("record: " + json.dumps(rec)[:2000])
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kjudge", required=True, help="the kjudge command line")
    ap.add_argument("--corpus", required=True, help="tests/validate")
    args = ap.parse_args()

    corpus = os.path.abspath(args.corpus)
    with open(os.path.join(corpus, "expect.json")) as f:
        expect = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    try:
        run = subprocess.run(shlex.split(args.kjudge) + ["validate", "--json", corpus],
                             capture_output=True, text=True)
    except OSError as e:
        print(f"FAIL validate: the corpus: cannot run {args.kjudge}: {e}")
        return 1
    failed = 0
    if run.returncode != 1:
        print(f"FAIL validate: the corpus: exit {run.returncode}, want 1 (some files "
              f"are degraded)\n    | {run.stderr.strip()[:2000]}")
        failed += 1
    records = {}
    for line in run.stdout.splitlines():
        rec = json.loads(line)
        records[os.path.relpath(rec["filepath"], corpus)] = rec
    for rel in sorted(set(records) | set(expect)):
        if rel not in expect:
            errs = ["no entry in expect.json"]
        elif rel not in records:
            errs = ["no record: the file is missing or was not judged"]
        else:
            with open(os.path.join(corpus, rel), "rb") as f:
                nlines = f.read().count(b"\n") + 1
            errs = compare(rel, records[rel], expect[rel], nlines)
        if errs:
            failed += 1
            print(f"FAIL validate: {rel}")
            for e in errs:
                print(f"    | {e}")
        else:
            print(f"ok   validate: {rel}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
