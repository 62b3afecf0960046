# opencl.mk - the build of an OpenCL variant's host, included by its
# Makefile after it sets KERNEL (the program's name; the kernel file
# $(KERNEL).cl is compiled by the OpenCL driver when the program runs).
# CC, CFLAGS and LDLIBS may be given on make's command line.
CC = gcc
CFLAGS = -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra
LDLIBS = -lOpenCL -lm
COMMON = ../../common

$(KERNEL): main.c $(COMMON)/ps_util.h $(COMMON)/ps_cl.h $(COMMON)/ps_$(KERNEL).h
	$(CC) $(CFLAGS) -I$(COMMON) -o $@ main.c $(LDLIBS)

clean:
	rm -f $(KERNEL) $(OUTPUTS)

.PHONY: clean
