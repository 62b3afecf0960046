"""Honest corpus: keeps one output buffer per shape and returns that same
tensor from every call, overwritten each time (the judge takes each call's
outputs before the next call).

Expected verdict: pass; benchmark passes too.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bufs = {}

    def forward(self, x, y):
        buf = self.bufs.get(x.shape)
        if buf is None:
            buf = self.bufs[x.shape] = torch.empty_like(x)
        torch.mul(x, y, out=buf)
        buf.add_(x)
        return buf
