"""Type 2: the wrapper that launches exists, but forward calls another one."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def exp_triton(x):
    out = torch.empty_like(x)
    exp_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out


def exp_fast(x):
    return x.clone()


class ModelNew(nn.Module):
    def forward(self, x):
        return exp_fast(x)
