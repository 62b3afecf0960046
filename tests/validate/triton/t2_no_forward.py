"""Type 2: ModelNew has no forward; the kernel is launched from another method."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def inc_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


class ModelNew(nn.Module):
    def run(self, x):
        inc_kernel[(1,)](x, x.numel(), BLOCK=1024)
        return x
