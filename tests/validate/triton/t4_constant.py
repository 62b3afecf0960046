"""Type 4: the kernel stores a constant and a scalar argument."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fill_kernel(out_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, value, mask=mask)
    tl.store(out_ptr + n + offs, -1.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(2 * x.numel(), device=x.device, dtype=x.dtype)
        fill_kernel[(triton.cdiv(x.numel(), 1024),)](out, 0.5, x.numel(), BLOCK=1024)
        return out[: x.numel()].view_as(x)
