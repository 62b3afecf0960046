"""Type 2: the kernel runs once in __init__ (a warm-up); forward never launches it."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fill_kernel(x_ptr, v, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        buf = torch.ones(16)
        fill_kernel[(1,)](buf, 2.0, 16, BLOCK=16)
        self.buf = buf

    def forward(self, x):
        return x * 2.0
