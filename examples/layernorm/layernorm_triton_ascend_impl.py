"""Candidate: LayerNorm forward as a Triton kernel, one program per row.

ModelNew keeps an nn.LayerNorm for its parameters, initialised with the same
calls as the task's Model, so the weights match; the kernel reads them.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, row_stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)  # padding lanes must not count
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * row_stride + cols, diff * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():  # the same draws as the task's Model
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty_like(x2)
        rows, cols = x2.shape
        layernorm_kernel[(rows,)](x2, self.norm.weight, self.norm.bias, out, cols, x2.stride(0),
                                  self.norm.eps, BLOCK=triton.next_power_of_2(cols))
        return out.view(x.shape)
