"""Type 4: the kernel writes zeros."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zeros_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    z = tl.zeros((BLOCK,), dtype=tl.float32)
    tl.store(out_ptr + offs, z, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        zeros_kernel[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
        return out
