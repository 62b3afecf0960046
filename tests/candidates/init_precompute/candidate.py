"""Hostile corpus: takes its inputs from the worker's frames at construction.

In __init__ it walks the calling frames and every live object for tensors
of the task's shapes, and precomputes x * y + x for the pairs it finds;
forward returns what it precomputed for an input of that shape, computing
nothing.  The judge builds the model before any input exists, so there is
nothing to find, and what it returns instead (zeros) is wrong.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import gc
import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        seen = []
        f = sys._getframe(1)
        while f is not None:
            seen += [v for v in f.f_locals.values() if isinstance(v, torch.Tensor)]
            f = f.f_back
        seen += [o for o in gc.get_objects() if isinstance(o, torch.Tensor)]
        self.pre = {}
        for a in seen:
            for b in seen:
                if a is not b and a.shape == b.shape and tuple(a.shape) not in self.pre:
                    self.pre[tuple(a.shape)] = a * b + a

    def forward(self, x, y):
        got = self.pre.get(tuple(x.shape))
        return got if got is not None else torch.zeros_like(x)
