"""Honest corpus: returns non-contiguous results (a buffer of transposed
layout, and a strided slice of a larger buffer).  The judge writes the
data in logical order, whatever the strides.

Expected verdict: pass.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        if x.dim() == 2:
            out = torch.empty(x.shape[1], x.shape[0], dtype=x.dtype, device=x.device).t()
            torch.add(x * y, x, out=out)            # a transposed layout
            assert not out.is_contiguous()
            return out
        big = torch.empty(2 * x.numel(), dtype=x.dtype, device=x.device)
        view = big[::2]                            # stride 2
        torch.add(x * y, x, out=view)
        return view
