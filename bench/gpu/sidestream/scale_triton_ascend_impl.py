"""The same work on the current stream (the honest twin of the side-stream candidate)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        for _ in range(8):
            torch.mul(x, 2, out=out)
            out.add_(1)
        return out
