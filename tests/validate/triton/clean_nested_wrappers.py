"""Clean: forward -> method -> module function -> function -> the launch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


def _launch(x, out, s):
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, out, n, s, BLOCK=256)


def _scale(x, s):
    out = torch.empty_like(x)
    _launch(x, out, s)
    return out


def scale(x, s):
    return _scale(x.contiguous(), s)


class ModelNew(nn.Module):
    def __init__(self, s=2.0):
        super().__init__()
        self.s = s

    def _run(self, x):
        return scale(x, self.s)

    def forward(self, x):
        return self._run(x)
