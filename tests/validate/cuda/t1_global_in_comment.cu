// Type 1: "__global__" appears only in comments and strings.
// __global__ void add_kernel(const float* a, float* out) { out[0] = a[0]; }
#include <torch/extension.h>

/* __global__ void mul_kernel(float* x) { x[0] *= 2; } */
static const char* doc = "__global__ void fake(float* x) { x[0] = 1; }";

torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    return a.add(b);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("add", &add, doc);
}
