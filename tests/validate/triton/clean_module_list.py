"""Clean: the kernel is launched by blocks held in nn.ModuleList and nn.Sequential."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_bias_kernel(x_ptr, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + b, mask=mask)


class Block(nn.Module):
    def __init__(self, b):
        super().__init__()
        self.b = b

    def forward(self, x):
        add_bias_kernel[(triton.cdiv(x.numel(), 256),)](x, self.b, x.numel(), BLOCK=256)
        return x


class ModelNew(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(0.5 * i) for i in range(depth)])
        self.tail = nn.Sequential(Block(1.0), Block(2.0))

    def forward(self, x):
        x = x.contiguous()
        for blk in self.blocks:
            x = blk(x)
        return self.tail(x)
