"""Type 1: a @triton.jit kernel that uses nothing of triton.language."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, n):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        kernel[(1,)](x, out, x.numel())
        return out
