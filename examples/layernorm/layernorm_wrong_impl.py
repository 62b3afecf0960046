"""Wrong candidate: the Triton LayerNorm dividing the sum of squares by N - 1
(the unbiased variance, torch.var's default) instead of N, as LayerNorm does.
With 768 columns that scales every normalised value by sqrt(767/768) (a
relative error of 6.5e-4 before the bias is added); the mean relative error
comes out near 9.5e-4, about eight times the float32 limit: the judge must
fail it."""
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
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / (n_cols - 1)  # BUG: LayerNorm uses the biased variance
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * row_stride + cols, diff * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty_like(x2)
        rows, cols = x2.shape
        layernorm_kernel[(rows,)](x2, self.norm.weight, self.norm.bias, out, cols, x2.stride(0),
                                  self.norm.eps, BLOCK=triton.next_power_of_2(cols))
        return out.view(x.shape)
