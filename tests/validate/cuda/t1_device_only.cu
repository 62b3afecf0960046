// Type 1: only __device__ functions, no __global__ kernel.
#include <torch/extension.h>

__device__ float square(float v) { return v * v; }

__device__ __forceinline__ float twice(float v) { return 2.0f * v; }

torch::Tensor noop(torch::Tensor x) {
    return x;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("noop", &noop);
}
