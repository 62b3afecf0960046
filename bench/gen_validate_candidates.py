#!/usr/bin/env python3
"""Generate N candidate files for `make bench-validate` from the corpus of
tests/validate/.

Each candidate is a corpus file (Triton or CUDA, clean or degraded, in
turn) made into a distinct file of typical size: its names get a suffix,
and it grows by a few helper functions, comments and a docstring, as
generated candidates do (the corpus files are short; KernelBench-style
candidates run to a few KB).  Deterministic: the same N gives the same
files.

    gen_validate_candidates.py OUT_DIR [--count N] [--corpus tests/validate]
"""
import argparse
import os
import random

PY_FILLER = '''

def _shape_helper_{i}_{k}(shape, block=128):
    """Round every dimension up to a multiple of the block (host only)."""
    out = []
    for d in shape:
        out.append((d + block - 1) // block * block)
    return tuple(out)


# Notes on tuning ({i}, {k}): BLOCK sizes 128 to 1024 were tried; the grid is
# one program per row; masks cover the tail.  torch.matmul is what the
# reference calls, which is why it must not appear in forward.
_CONFIG_{i}_{k} = {{"BLOCK": {b}, "num_warps": {w}, "name": "cand_{i}_{k}"}}
'''

CU_FILLER = '''

// Tuning notes ({i}, {k}): {b} threads per block; {w} warps.
static inline int div_up_{i}_{k}(int a, int b) {{ return (a + b - 1) / b; }}
template <typename T>
__device__ __forceinline__ T clamp_{i}_{k}(T v, T lo, T hi) {{ return v < lo ? lo : (v > hi ? hi : v); }}
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "tests", "validate"))
    args = ap.parse_args()
    sources = []
    for sub in ("triton", "cuda"):
        d = os.path.join(args.corpus, sub)
        for name in sorted(os.listdir(d)):
            if name.endswith((".py", ".cu")) and not name.startswith("clean_load_files"):
                sources.append((name, open(os.path.join(d, name)).read()))
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(7)
    total = 0
    for i in range(args.count):
        name, text = sources[i % len(sources)]
        stem, ext = os.path.splitext(name)
        filler = PY_FILLER if ext == ".py" else CU_FILLER
        extra = "".join(filler.format(i=i, k=k, b=rng.choice([128, 256, 512, 1024]),
                                      w=rng.choice([2, 4, 8]))
                        for k in range(rng.randint(4, 10)))
        if ext == ".py":
            head = '"""Generated candidate %d (from %s)."""\n' % (i, name)
            # extra helpers go before the classes, so that forward stays last
            text = head + extra + "\n" + text
        else:
            text = "// Generated candidate %d (from %s).\n" % (i, name) + extra + "\n" + text
        path = os.path.join(args.out, "cand_%04d_%s%s" % (i, stem, ext))
        with open(path, "w") as f:
            f.write(text)
        total += len(text)
    print(f"{args.count} candidates, {total / args.count / 1024:.1f} KiB on average, in {args.out}")


if __name__ == "__main__":
    main()
