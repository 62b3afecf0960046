"""Honest corpus: returns a stride-0 (broadcast) view, as the reference does.

Expected verdict: pass (on tasks/rowbcast_torch.py).
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        s = x.sum(dim=1, keepdim=True)
        out = s.expand(-1, 48)
        assert out.stride(1) == 0
        return out
