"""Type 3: torch functions hidden in containers and called through them."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

OPS = [torch.relu, torch.sigmoid]


@triton.jit
def half_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        half_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
        x = OPS[0](x)
        for op in OPS:
            x = op(x)
        return (torch.tanh,)[0](x)
