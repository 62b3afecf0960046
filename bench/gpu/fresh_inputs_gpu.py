"""fresh_inputs_gpu.py - what a call on inputs never seen costs on the GPU,
against one on inputs cycled: a Triton ReLU (tests/eval/cands/relu_triton.py)
and torch.relu on 4 x 256 float32, each call after a cache flush, timed with
CUDA events, the fresh inputs made (and synchronized) just before their call
the ways the worker makes them (variants: randn alone; after seeding torch's
generators; inside set_default_device; with a copy of the inputs).  Prints
the medians and the fastest fresh call of each, in microseconds."""
import statistics
import sys

import torch

sys.path.insert(0, "tests/eval/cands")
import relu_triton  # noqa: E402

dev = torch.device("cuda")
flush = torch.empty(64 << 20, dtype=torch.int32, device=dev)
tri = relu_triton.ModelNew()


def timed(fn, x):
    flush.fill_(0)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn(x)
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3


def make(seeded, default_dev, copy, i):
    if seeded:
        torch.manual_seed(1000 + i)
        torch.cuda.manual_seed_all(1000 + i)
    if default_dev:
        torch.set_default_device(dev)
        try:
            x = torch.randn(4, 256)
        finally:
            torch.set_default_device(torch.device("cpu"))
    else:
        x = torch.randn(4, 256, device=dev)
    snap = x.clone() if copy else None
    return x, snap


for variant in ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)):
    for name, fn in (("triton", tri), ("torch", torch.relu)):
        sets = [torch.randn(4, 256, device=dev) for _ in range(4)]
        for _ in range(20):
            fn(sets[0])
        torch.cuda.synchronize()
        cyc = [timed(fn, sets[i % 4]) for i in range(100)]
        fresh = []
        for i in range(30):
            x, snap = make(*variant, i)
            torch.cuda.synchronize()
            fresh.append(timed(fn, x))
            cyc.append(timed(fn, sets[i % 4]))
        print(f"seeded,default_device,copy={variant} {name}: cycled median "
              f"{statistics.median(cyc):.2f} us, fresh median {statistics.median(fresh):.2f} us, "
              f"fastest {min(fresh):.2f} us")
