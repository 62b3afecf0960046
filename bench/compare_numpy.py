#!/usr/bin/env python3
"""The comparator's formula written in numpy, timed on tensors like bench_compare's.

    compare_numpy.py [--mib N] [--repeats R]

This is the way a Python harness computes the rule of triton-op-verifier
without torch: promote both sides to float32, check the NaN masks, the Inf
masks and signs, keep the finite elements, and take the mean and max of
|a - g| / max(|g|, t).  numpy has no bfloat16: bfloat16 data is uint16 and is
widened by a shift, as a numpy user would do it.

Prints lines in bench_compare's format:
    result name=numpy_float32 gbps_median=... gbps_min=... gbps_max=... ms_median=...
"""
import argparse
import sys
import time

import numpy as np

THRESHOLD = {"float32": 2.0 ** -13, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def to_f32(x, dtype):
    if dtype == "bfloat16":
        return (x.astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float32, copy=False)


def compare(g, a, dtype):
    t = np.float32(THRESHOLD[dtype])
    g32 = to_f32(g, dtype)
    a32 = to_f32(a, dtype)
    gn, an = np.isnan(g32), np.isnan(a32)
    if not np.array_equal(gn, an):
        return False, None, None
    gi, ai = np.isinf(g32), np.isinf(a32)
    if not np.array_equal(gi, ai):
        return False, None, None
    if gi.any() and not np.array_equal(np.sign(g32[gi]), np.sign(a32[ai])):
        return False, None, None
    fin = np.isfinite(g32) & np.isfinite(a32)
    gf, af = g32[fin], a32[fin]
    if gf.size == 0:
        return True, None, None
    rel = np.abs(af - gf) / np.maximum(np.abs(gf), t)
    mere, mare = float(rel.mean()), float(rel.max())
    return bool(mere < t and mare < 10 * t), mere, mare


def make(dtype, nbytes, rng):
    """Finite values that differ in the last mantissa bit, as bench_compare makes."""
    if dtype == "float32":
        n = nbytes // 4
        r = rng.integers(0, 2 ** 32, size=n, dtype=np.uint32)
        v = (r & np.uint32(0x807FFFFF)) | ((np.uint32(120) + ((r >> np.uint32(27)) & np.uint32(15))) << np.uint32(23))
        return v.view(np.float32), (v ^ np.uint32(1)).view(np.float32)
    n = nbytes // 2
    r = rng.integers(0, 2 ** 32, size=n, dtype=np.uint32)
    if dtype == "bfloat16":
        v = ((r & np.uint32(0x807F)) | ((np.uint32(120) + ((r >> np.uint32(20)) & np.uint32(15))) << np.uint32(7))).astype(np.uint16)
        return v, v ^ np.uint16(1)
    v = ((r & np.uint32(0x83FF)) | ((np.uint32(8) + ((r >> np.uint32(20)) & np.uint32(15))) << np.uint32(10))).astype(np.uint16)
    return v.view(np.float16), (v ^ np.uint16(1)).view(np.float16)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    print(f"config numpy={np.__version__} python={sys.version.split()[0]}", flush=True)
    for dtype in ("float32", "float16", "bfloat16"):
        g, a = make(dtype, args.mib << 20, rng)
        compare(g, a, dtype)  # warm-up
        secs = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            ok, mere, mare = compare(g, a, dtype)
            secs.append(time.perf_counter() - t0)
        secs.sort()
        nbytes = 2.0 * (args.mib << 20)
        print(f"verdict dtype={dtype} pass={int(ok)} mere={mere:.3g} mare={mare:.3g}")
        print(f"result name=numpy_{dtype} gbps_median={nbytes / secs[len(secs) // 2] / 1e9:.2f} "
              f"gbps_min={nbytes / secs[-1] / 1e9:.2f} gbps_max={nbytes / secs[0] / 1e9:.2f} "
              f"ms_median={secs[len(secs) // 2] * 1e3:.1f} repeats={len(secs)}", flush=True)
        del g, a


if __name__ == "__main__":
    main()
