"""Hostile corpus: a tail bug.  It computes in blocks of 16 elements and, like
a kernel launched with n // BLOCK programs instead of cdiv(n, BLOCK), never
writes the last partial block (left at 0).  (64,) and (8, 128) are multiples
of 16; (33, 17) = 561 elements is not, so its last element is wrong.

Expected verdict: case 2 fails with AccuracyError, cases 1 and 3 pass, exit 1.
"""
import torch
import torch.nn as nn

BLOCK = 16


class ModelNew(nn.Module):
    def forward(self, x, y):
        full = (x * y + x).reshape(-1)
        out = torch.zeros_like(full)
        n = full.numel() // BLOCK * BLOCK
        out[:n] = full[:n]
        return out.view(x.shape)
