"""Type 4: the CUDA kernel only copies its input."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void identity(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v;
    }
}
torch::Tensor fwd(torch::Tensor x) {
    auto y = torch::empty_like(x);
    identity<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

ext = load_inline(name="id", cpp_sources="torch::Tensor fwd(torch::Tensor x);",
                  cuda_sources=SRC, functions=["fwd"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.fwd(x)
