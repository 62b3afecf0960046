# cuda.mk - the build of a CUDA variant, included by its Makefile after it
# sets KERNEL (the program's name).  NVCC comes from the environment (or
# make's command line), /usr/local/cuda/bin/nvcc by default; ARCH is the GPU
# architecture compiled for (sm_90: the H200).
NVCC ?= /usr/local/cuda/bin/nvcc
ARCH ?= sm_90
NVCCFLAGS = -O2 -arch=$(ARCH)
COMMON = ../../common

$(KERNEL): main.cu $(COMMON)/ps_util.h $(COMMON)/ps_cuda.h $(COMMON)/ps_$(KERNEL).h
	$(NVCC) $(NVCCFLAGS) -I$(COMMON) -o $@ main.cu

clean:
	rm -f $(KERNEL) $(OUTPUTS)

.PHONY: clean
