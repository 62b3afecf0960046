"""Wrong candidate: the Triton kernel of softmax_triton_ascend_impl.py without
the max subtraction.  Fine for small logits, but exp() overflows to inf for
logits above ~88.7, and inf / inf gives NaN rows: the judge must fail it
(NaN where the reference has none)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def naive_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x.to(tl.float32))  # BUG: no "- max(x)", overflows
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty_like(x2)
        rows, cols = x2.shape
        naive_softmax_kernel[(rows,)](x2, out, cols, x2.stride(0), out.stride(0),
                                      BLOCK=triton.next_power_of_2(cols))
        return out.view(x.shape)
