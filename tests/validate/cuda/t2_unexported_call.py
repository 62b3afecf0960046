"""Type 2: forward calls a name the extension does not export; the exported
function that launches is never called."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void sq(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    sq<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

ext = load_inline(name="sqx", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=SRC, functions=["run"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run_fast(x)
