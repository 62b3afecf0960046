"""Type 3: the extension's kernel runs, then PyTorch finishes in forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void exp_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __expf(x[i]);
}
torch::Tensor exp_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    exp_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

ext = load_inline(name="e", cpp_sources="torch::Tensor exp_cuda(torch::Tensor x);",
                  cuda_sources=SRC, functions=["exp_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        e = ext.exp_cuda(x)
        s = torch.sum(e, dim=-1, keepdim=True)
        return F.normalize(e / s, dim=-1)
