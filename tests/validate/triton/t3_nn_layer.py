"""Type 3: an nn.Linear layer called in forward, and F anywhere in the file."""
import torch
import torch.nn as nn
from torch.nn import functional
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * tl.sigmoid(1.702 * x), mask=mask)


def reference_check(x):
    return functional.gelu(x)


class ModelNew(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.proj = nn.Linear(k, n)

    def forward(self, x):
        y = self.proj(x)
        gelu_kernel[(triton.cdiv(y.numel(), 256),)](y, y.numel(), BLOCK=256)
        return y
