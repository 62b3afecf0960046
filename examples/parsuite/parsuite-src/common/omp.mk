# omp.mk - the build of an OpenMP variant, included by its Makefile after it
# sets KERNEL (the program's name).  CC, CFLAGS and LDLIBS may be given on
# make's command line.
CC = gcc
CFLAGS = -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -fopenmp
LDLIBS = -lm
COMMON = ../../common

$(KERNEL): main.c $(COMMON)/ps_util.h $(COMMON)/ps_$(KERNEL).h
	$(CC) $(CFLAGS) -I$(COMMON) -o $@ main.c $(LDLIBS)

clean:
	rm -f $(KERNEL) $(OUTPUTS)

.PHONY: clean
