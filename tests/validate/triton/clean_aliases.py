"""Clean: every import under another name, the kernel decorated through an alias."""
import torch as th
import triton as tr
import triton.language as lang
from triton import jit as J
from torch import empty_like as alloc_like
from torch import nn


@J
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: lang.constexpr):
    offs = lang.program_id(0) * BLOCK + lang.arange(0, BLOCK)
    mask = offs < n
    a = lang.load(a_ptr + offs, mask=mask)
    b = lang.load(b_ptr + offs, mask=mask)
    lang.store(out_ptr + offs, a + b, mask=mask)


@tr.jit
def scale_kernel(x_ptr, n, s, BLOCK: lang.constexpr):
    offs = lang.program_id(0) * BLOCK + lang.arange(0, BLOCK)
    mask = offs < n
    lang.store(x_ptr + offs, lang.load(x_ptr + offs, mask=mask) * s, mask=mask)


launch = add_kernel


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = alloc_like(a)
        n = a.numel()
        grid = (tr.cdiv(n, 1024),)
        launch[grid](a, b, out, n, BLOCK=1024)
        scale_kernel[grid](out, n, 0.5, BLOCK=1024)
        return out.view(th.Size(a.shape))
