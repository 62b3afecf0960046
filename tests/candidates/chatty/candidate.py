"""Honest corpus: a correct candidate that prints a lot of debug output.

Every forward prints about 6.5 KB (shapes, a few values, progress lines) to
stdout and stderr, as a candidate left with its debugging prints does.  The
limit on a worker's output is per request, so however many calls the judge
makes -- the two input sets of each case here, 55 or more timed calls in
benchmark (tests/cli/t0160) -- this is never OutputLimitExceeded; a single
call that prints past the limit (print_flood, noisy_forger) still is.

Expected verdict: all three cases pass, exit 0.
"""
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x, y):
        self.calls += 1
        out = x * y + x
        for i in range(75):
            print(f"debug: call {self.calls} step {i:2d} shape {tuple(x.shape)} "
                  f"x[0]={x.flatten()[0].item():+.6f} out[0]={out.flatten()[0].item():+.6f}")
        for i in range(30):
            print(f"trace: call {self.calls} block {i:2d} of 30 done ........................",
                  file=sys.stderr)
        return out
