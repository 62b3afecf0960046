"""Type 2: the launch is in a C++ comment and a C++ string only."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = """
__global__ void copy_scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i];
}

torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    // copy_scale<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    const char* note = "copy_scale<<<1, 1>>>(x, y, n);";
    (void)note;
    return y;
}
"""

ext = load_inline(name="cs", cpp_sources="", cuda_sources=SRC, functions=["run"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.run(x)
