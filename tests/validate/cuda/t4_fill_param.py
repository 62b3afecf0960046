"""Type 4: the kernel writes a scalar argument everywhere (a constant output)."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void fill(float* y, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = value;
}
torch::Tensor const_out(torch::Tensor x) {
    auto y = torch::empty_like(x);
    fill<<<(x.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), 0.5f, x.numel());
    return y;
}
"""

ext = load_inline(name="fl", cpp_sources="torch::Tensor const_out(torch::Tensor x);",
                  cuda_sources=SRC, functions=["const_out"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.const_out(x)
