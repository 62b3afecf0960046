"""Type 3: a device value copied to the host decides the launch grid."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def prefix_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, lengths):
        n = lengths.max().item()
        prefix_kernel[(triton.cdiv(int(n), 256),)](x, n, BLOCK=256)
        return x
