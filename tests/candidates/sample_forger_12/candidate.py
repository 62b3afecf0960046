"""Hostile corpus (benchmark): the matmul task's own computation, honest,
and after every call each timing sample the native harness recorded since
the last call divided by 12, found through /proc/self/maps and the
harness's ELF symbol table (kj_forge_samples.py).  The speedup rests on the
judge's clock, never on these samples: the candidate fails the samples'
cross-check (TimingMismatch), or passes with its honest twin's speedup
(honest_matmul's, within 20 %).
"""
import torch.nn as nn

from kj_forge_samples import Forger


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.forger = Forger(12)

    def forward(self, x, y):
        out = x @ y
        self.forger.forge()
        return out
