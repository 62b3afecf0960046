"""Honest corpus: the tensor and its sum, computed in float32 (the task
computes it in float64): within the float rule's threshold.

Expected verdict: pass, exit 0.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = x * y + x
        return (out, float(out.pow(2).sum()))
