"""Clean: ModelNew derives from a class of this file whose forward launches; a callback."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add1_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def run_add1(x, out):
    add1_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)


class Base(nn.Module):
    def __init__(self, fn=run_add1):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        out = torch.empty_like(x)
        apply = self.fn
        apply(x, out)
        return out


class ModelNew(Base):
    pass
