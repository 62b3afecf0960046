"""Honest corpus: the candidate imports a helper module of its own that sits
beside it (neither the task file nor another candidate).

Expected verdict: pass, exit 0.
"""
import torch.nn as nn

from kj_helper_ops import addmul


class ModelNew(nn.Module):
    def forward(self, x, y):
        return addmul(x, y)
