# kjudge - GNU Make build.
#
#   make                        build/kjudge and build/libkjudge.a
#   make check                  unit tests, CLI tests (needs scripts/install-deps)
#   make SANITIZE=address,undefined check
#                               the same under sanitizers, in build/san-*/
#   make fuzz [FUZZ_SECONDS=N]  libFuzzer on the .npy header parser (clang)
#   make bench                  comparator throughput vs numpy and memory bandwidth
#   make demo                   kjudge compare on the bundled example tensors
#
# System libraries come from pkg-config; nothing from other projects lives in
# the tree.

CC      ?= cc
PKG_CONFIG ?= pkg-config
PYTHON  ?= $(CURDIR)/.venv/bin/python

VERSION := $(shell cat VERSION)

ifeq ($(SANITIZE),)
BUILD   ?= build
OPT     ?= -O2
else
BUILD   ?= build/san-$(subst $(comma),-,$(SANITIZE))
OPT     ?= -O1
SANFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
comma := ,

PKGS    := jansson
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wwrite-strings \
           -Wformat=2 -Wvla -Wundef -Wold-style-definition -Wnull-dereference \
           -Wdouble-promotion -Wimplicit-fallthrough
CPPFLAGS += -Iinclude -Ilib -D_GNU_SOURCE -DKJ_VERSION='"$(VERSION)"' $(KJ_DEFS)
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 $(WARN) $(SANFLAGS) $(PKG_CFLAGS) -pthread -MMD -MP
LDFLAGS += $(SANFLAGS) -pthread
LDLIBS  += $(PKG_LIBS) -lm

LIB_SRC := $(wildcard lib/*.c)
CLI_SRC := $(wildcard src/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
HELPER_SRC := $(wildcard tests/helpers/*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)
HELPERS  := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/%)

all: $(BUILD)/kjudge $(BUILD)/libkjudge.a $(BUILD)/kjudge_worker.py

# The torch worker is installed beside the binary, where kjudge looks for it.
$(BUILD)/kjudge_worker.py: worker/kjudge_worker.py
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# compare.c's static inline helpers pass 32-byte vectors by value; they are
# always inlined, so the calling convention GCC notes (-Wpsabi) never exists.
$(BUILD)/lib/compare.o: CFLAGS += -Wno-psabi

$(BUILD)/libkjudge.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/kjudge: $(CLI_OBJ) $(BUILD)/libkjudge.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit-tests: $(UNIT_OBJ) $(BUILD)/libkjudge.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/helpers/%.o $(BUILD)/libkjudge.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The test driver: unit tests, then the CLI tests against the built binary.
# It prints one closing line 'N passed, N failed'.
check: all $(BUILD)/tests/unit-tests $(HELPERS)
	@KJ_BUILD=$(CURDIR)/$(BUILD) KJ_PYTHON=$(PYTHON) tests/run

# The README's first command ends here: verify and benchmark of the softmax
# example (its Triton candidate: on the GPU when there is one, else on the CPU
# through Triton's interpreter), then one comparison of example tensors.
DEMO_DIR := $(BUILD)/demo
demo: all
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp examples/softmax/*.py $(DEMO_DIR)/
	KJ_PYTHON=$(PYTHON) $(BUILD)/kjudge verify --op_name softmax --verify_dir $(DEMO_DIR)
	KJ_PYTHON=$(PYTHON) $(BUILD)/kjudge benchmark --op_name softmax --verify_dir $(DEMO_DIR) \
	  --warmup 2 --repeats 10 --output $(DEMO_DIR)/perf_result.json
	@$(PYTHON) -c "import json; d = json.load(open('$(DEMO_DIR)/perf_result.json')); \
	  print('speedup_vs_torch:', d['speedup_vs_torch'], ' implementation:', d['implementation'])"
	@echo
	$(BUILD)/kjudge compare examples/compare/golden.npy examples/compare/actual_bad.npy; \
	  test $$? -eq 1

# --- fuzzing (clang + libFuzzer) -------------------------------------------
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
FUZZ_DIR := build/fuzz
FUZZ_LIB_SRC := lib/npy.c lib/fileio.c lib/tensor.c lib/dtype.c lib/error.c

# UBSan must abort, not just print, for libFuzzer to count undefined
# behaviour as a crash.  The headers are prerequisites so that a change to
# them rebuilds the target; only the .c files are compiled.
FUZZ_HDR := $(wildcard include/kjudge/*.h) lib/internal.h lib/banned.h

$(FUZZ_DIR)/fuzz_npy_header: tests/fuzz/fuzz_npy_header.c $(FUZZ_LIB_SRC) $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -Iinclude -Ilib -D_GNU_SOURCE \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $(filter %.c,$^) -lm

fuzz: $(FUZZ_DIR)/fuzz_npy_header
	@mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/fuzz_npy_header -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=4096 -dict=tests/fuzz/npy.dict $(FUZZ_DIR)/corpus tests/fuzz/seeds

# --- benchmark ----------------------------------------------------------------
BENCH_CFLAGS := -std=c11 -O2 -g $(WARN) -Iinclude -Ilib -D_GNU_SOURCE -pthread

build/bench/bench_compare: bench/bench_compare.c build/libkjudge.a
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $^ -pthread -lm

bench: build/bench/bench_compare
	PYTHON=$(PYTHON) bench/run_compare_bench

clean:
	rm -rf build

.PHONY: all check demo fuzz bench clean

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) \
	 $(HELPER_SRC:%.c=$(BUILD)/%.d)
