"""Type 1: @jit is a local no-op decorator, not triton.jit."""
import torch
import torch.nn as nn
import triton.language as tl


def jit(fn):
    return fn


@jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        kernel[(1,)](x, out, x.numel(), BLOCK=1024)
        return out
