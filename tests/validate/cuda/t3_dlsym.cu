// Type 3: cuBLAS looked up at run time with dlopen and dlsym.
#include <dlfcn.h>
#include <torch/extension.h>

__global__ void copy_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 1.0001f;
}

typedef int (*gemm_fn)(void*, int, int, int, int, int, const float*, const float*, int,
                       const float*, int, const float*, float*, int);

torch::Tensor mm(torch::Tensor a, torch::Tensor b) {
    void* lib = dlopen("libcublas.so", RTLD_NOW);
    gemm_fn gemm = (gemm_fn)dlsym(lib, "cublasSgemm_v2");
    auto y = torch::empty({a.size(0), b.size(1)}, a.options());
    (void)gemm;
    copy_kernel<<<1, 256>>>(a.data_ptr<float>(), y.data_ptr<float>(), 1);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("mm", &mm);
}
