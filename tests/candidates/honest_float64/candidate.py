"""Honest corpus: computes in float64 inside, returns float32.

Expected verdict: pass.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        xd, yd = x.double(), y.double()
        return (xd * yd + xd).to(torch.float32)
