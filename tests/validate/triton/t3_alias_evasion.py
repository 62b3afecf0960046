"""Type 3: torch.matmul behind aliases: a module-level name, a class
attribute, an instance attribute and a parameter default."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch import matmul as mm

fast_mm = mm
F2 = torch.nn.functional


@triton.jit
def bias_kernel(x_ptr, b_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + tl.load(b_ptr + offs % m, mask=mask), mask=mask)


def epilogue(x, act=torch.tanh):
    return act(x)


class ModelNew(nn.Module):
    op = fast_mm

    def __init__(self):
        super().__init__()
        self.mul = fast_mm

    def forward(self, a, b, bias):
        y = self.op(a, b)
        y = self.mul(y, b.t())
        bias_kernel[(triton.cdiv(y.numel(), 256),)](y, bias, y.numel(), bias.numel(), BLOCK=256)
        y = epilogue(y)
        return F2.silu(y)
