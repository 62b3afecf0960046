// Clean: `n` is a tensor in one function and an int in another; arithmetic
// on the int is index math, not ATen.
#include <torch/extension.h>

__global__ void axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

static int blocks_for(int n) {
    return (n + 255) / 256;
}

torch::Tensor run(torch::Tensor n, torch::Tensor y, double a) {
    int count = n.numel();
    axpy<<<blocks_for(count), 256>>>(n.data_ptr<float>(), y.data_ptr<float>(), (float)a, count);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("run", &run);
}
