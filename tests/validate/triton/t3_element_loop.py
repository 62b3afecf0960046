"""Type 3: the 'kernel' is a Python loop over elements."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zero_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 0.0, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        zero_kernel[(1,)](out, out.numel(), BLOCK=1024)
        for i in range(x.shape[0]):
            out[i] = x[i] * 2.0
        return out
