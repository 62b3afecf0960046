"""Type 2: the extension is built, but forward never calls it."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
__global__ void sigmoid_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f / (1.0f + __expf(-x[i]));
}
torch::Tensor sigmoid_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    sigmoid_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(name="sig", cpp_sources="torch::Tensor sigmoid_cuda(torch::Tensor x);",
                  cuda_sources=cuda_src, functions=["sigmoid_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)
