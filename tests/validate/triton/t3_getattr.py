"""Type 3: getattr hides torch calls, with a constant name and a computed one."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        copy_add_kernel[(triton.cdiv(a.numel(), 256),)](a, out, a.numel(), BLOCK=256)
        mm = getattr(torch, "mat" + "mul")
        out = mm(out, b)
        relu = getattr(torch.nn.functional, "relu")
        dtype = getattr(torch, "float32")
        return relu(out).to(dtype)
