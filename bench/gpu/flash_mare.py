"""Why KernelBench's flash-attention prompt example fails a timed input set.

On many random input sets (torch.manual_seed(s), then the task's
get_inputs(), on the GPU), the rule the seed's comparison applies to a
float32 output (docs/cli.md, "Comparison": rel = |a - g| / max(|g|, t),
t = 2^-13, pass iff mean(rel) < t and max(rel) < 10 t) for:
  - the example's kernel against the float32 reference (what kjudge judges),
  - torch's own scaled_dot_product_attention against the same reference
    (another honest float32 implementation),
  - the kernel and the float32 reference each against the reference
    computed in float64 (how far each is from the exact result).
Prints one JSON object: per pairing the share of sets that fail and the
quantiles of MERE and MARE; and where the kernel's worst element lies.

Usage: python3 bench/gpu/flash_mare.py TASK.py CANDIDATE.py [N_SETS]
"""
import importlib.util
import json
import statistics
import sys

import torch

T = 2.0 ** -13


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rule(a, g):
    a, g = a.double(), g.double()
    rel = (a - g).abs() / g.abs().clamp_min(T)
    i = int(rel.argmax())
    return float(rel.mean()), float(rel.max()), float(g.flatten()[i]), float(a.flatten()[i])


def main():
    task, cand = load(sys.argv[1], "task"), load(sys.argv[2], "cand")
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    dev = torch.device("cuda")
    ref = task.Model(*task.get_init_inputs()).to(dev)
    new = cand.ModelNew(*task.get_init_inputs()).to(dev)
    rows = {"kernel_vs_ref32": [], "sdpa_vs_ref32": [], "kernel_vs_ref64": [],
            "ref32_vs_ref64": []}
    worst = []
    with torch.no_grad():
        for s in range(n):
            torch.manual_seed(s)
            x = [v.to(dev) for v in task.get_inputs()]
            g = ref(*x)
            a = new(*x)
            g64 = ref.double()(*[v.double() for v in x]).float()
            ref.float()
            sd = torch.nn.functional.scaled_dot_product_attention(*x)
            rows["kernel_vs_ref32"].append(rule(a, g))
            rows["sdpa_vs_ref32"].append(rule(sd, g))
            rows["kernel_vs_ref64"].append(rule(a, g64))
            rows["ref32_vs_ref64"].append(rule(g, g64))
            worst.append(rows["kernel_vs_ref32"][-1][2:])
    out = {"sets": n, "t": T, "mare_limit": 10 * T}
    for k, v in rows.items():
        mere = sorted(r[0] for r in v)
        mare = sorted(r[1] for r in v)
        out[k] = {"fail_share": sum(r[0] >= T or r[1] >= 10 * T for r in v) / n,
                  "mere_median": statistics.median(mere), "mere_max": mere[-1],
                  "mare_min": mare[0], "mare_median": statistics.median(mare),
                  "mare_max": mare[-1]}
    out["kernel_worst_elements_golden_actual"] = worst[:5]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
