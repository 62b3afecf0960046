"""Hostile corpus: answers precomputed for seed 0.

At import time it seeds torch with 0 and generates every input group the way
the original verify.py does (seed once, then get_input_groups()), computes
the answers, and in forward returns the stored answer for the input's shape
without looking at the values.  Against verify.py, which always uses seed 0,
this passes; a judge that draws its input seeds in secret must fail it.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import torch
import torch.nn as nn

from addmul_torch import get_input_groups

with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    ANSWERS = {tuple(x.shape): x * y + x for x, y in get_input_groups()}


class ModelNew(nn.Module):
    def forward(self, x, y):
        return ANSWERS[tuple(x.shape)].to(x.device).clone()
