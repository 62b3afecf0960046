#!/usr/bin/env bash
# t0005-layers.sh - the library's folders depend on each other one way only:
# base, tensor, validate, sandbox, core, runner, spec, store, audit, eval, doctor, serve, each using only
# itself and the folders before it (docs/ARCHITECTURE.md, "Layers").  The
# public headers belong to the folder that implements them.  Checked twice:
# on the #include lines of the sources, and on the symbols of the built
# objects, which also see a function declared in one layer's header and
# defined in a higher layer's file.
. "$(dirname "$0")/lib.sh"
root=$(cd "$KJ_TESTS/.." && pwd)
build=${KJ_BUILD:-$root/build}
# The layers, lowest first.
layers="base tensor validate sandbox core runner spec store audit eval doctor serve"

test_expect 'every include in lib/ goes to the same layer or one below it' '
	"$KJ_PYTHON" - "$root" $layers <<PY
import os, re, sys
root = sys.argv[1]
order = sys.argv[2:]
public = {
    "error.h": "base", "fileio.h": "base",
    "dtype.h": "tensor", "tensor.h": "tensor", "compare.h": "tensor", "report.h": "tensor",
    "validate.h": "validate",
    "proc.h": "sandbox", "sandbox.h": "sandbox",
    "config.h": "core", "verdict.h": "core", "value.h": "core", "runner.h": "core",
    "pipeline.h": "core", "anticheat.h": "core",
    "torch.h": "runner",
    "jschema.h": "spec", "spec.h": "spec", "spec_check.h": "spec",
    "doctor.h": "doctor",
    "store.h": "store", "metrics.h": "store", "audit.h": "audit", "eval.h": "eval", "serve.h": "serve",
}
inc = os.path.join(root, "include", "kjudge")
missing = sorted(set(os.listdir(inc)) - set(public))
assert not missing, f"public headers without a layer: {missing}"
bad = []
def check(path, layer):
    for n, line in enumerate(open(path), 1):
        m = re.match(r"\s*#\s*include\s+\"([^\"]+)\"", line)
        if not m:
            continue
        target = m.group(1)
        if target.startswith("kjudge/"):
            to = public.get(target[7:])
        else:
            to = target.split("/")[0] if "/" in target else layer
        if to not in order:
            bad.append(f"{path}:{n}: {target}: unknown layer")
        elif order.index(to) > order.index(layer):
            bad.append(f"{path}:{n}: {layer} includes {target} ({to})")
for layer in order:
    d = os.path.join(root, "lib", layer)
    for f in sorted(os.listdir(d)):
        if f.endswith((".c", ".h")):
            check(os.path.join(d, f), layer)
for f, layer in public.items():
    check(os.path.join(inc, f), layer)
assert os.listdir(os.path.join(root, "lib")) and sorted(os.listdir(os.path.join(root, "lib"))) == sorted(order), os.listdir(os.path.join(root, "lib"))
assert not bad, "\n".join(bad)
PY
'

# An include line says what a file may use; the symbols say what it does
# use: a function declared in a lower layer's header (runner.h is core's)
# but defined in a higher layer's file is an upward edge no include shows.
test_expect 'every kj_ symbol an object of lib/ uses is defined in its layer or one below it' '
	"$KJ_PYTHON" - "$root" "$build" $layers <<PY
import os, subprocess, sys
root, build = sys.argv[1], sys.argv[2]
order = sys.argv[3:]
# The files the Makefile generates into the library (embedded texts), by
# the layer that owns their source.
generated = {
    "validate_rules_default.o": "validate", "store_schema.o": "store",
    "spec_schema.o": "spec", "manifest_schema.o": "spec", "pair_contract_schema.o": "spec",
}
objects = []  # (layer, path)
problems = []
for layer in order:
    for f in sorted(os.listdir(os.path.join(root, "lib", layer))):
        if not f.endswith(".c"):
            continue
        src = os.path.join(root, "lib", layer, f)
        obj = os.path.join(build, "lib", layer, f[:-2] + ".o")
        # A missing or stale object would check other code than the source.
        if not os.path.isfile(obj):
            problems.append(f"{obj}: not built (make first)")
        elif os.path.getmtime(obj) < os.path.getmtime(src):
            problems.append(f"{obj}: older than {src} (make first)")
        else:
            objects.append((layer, obj))
gen = os.path.join(build, "gen")
for f in sorted(os.listdir(gen)) if os.path.isdir(gen) else []:
    if f.endswith(".o"):
        if f not in generated:
            problems.append(f"{gen}/{f}: a generated object without a layer")
        else:
            objects.append((generated[f], os.path.join(gen, f)))
assert not problems, "\n".join(problems)
assert len(objects) > 50, f"only {len(objects)} objects in {build}"
defined, used = {}, []
for layer, obj in objects:
    out = subprocess.run(["nm", "-g", "-P", obj], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[0].startswith("kj_"):
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.append((layer, obj, name))
        elif name in defined:
            problems.append(f"{name}: defined in {defined[name][1]} and in {obj}")
        else:
            defined[name] = (layer, obj)
for layer, obj, name in used:
    if name not in defined:
        problems.append(f"{os.path.relpath(obj, build)}: uses {name}, which no object of "
                        "the library defines")
    elif order.index(defined[name][0]) > order.index(layer):
        problems.append(f"{os.path.relpath(obj, build)} ({layer}) uses {name}, defined in "
                        f"{os.path.relpath(defined[name][1], build)} ({defined[name][0]})")
assert used and defined, "nm found no kj_ symbols"
assert not problems, "\n".join(problems)
print(f"{len(objects)} objects, {len(defined)} kj_ symbols defined, {len(used)} uses")
PY
'
test_done
