"""Type 4: both launched kernels are placeholders (a load-store pair through a wrapper)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def load_store(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def gather_rows(src, dst, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(src + row * stride + cols)
    tl.store(dst + row * stride + cols, v)


def move(x, out):
    load_store[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    gather_rows[(x.shape[0],)](out, out, x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        move(x, out)
        return out
