# kjudge - GNU Make build.
#
#   make                        build/kjudge and build/libkjudge.a
#   make check                  unit tests, CLI tests (needs scripts/install-deps)
#   make SANITIZE=address,undefined check
#                               the same under sanitizers, in build/san-*/
#   make FAULT=1                the fault-injection build of tests/fault/, in
#                               build/fault/ (make check builds it too)
#   make fuzz [FUZZ_SECONDS=N]  libFuzzer on the .npy header parser, the
#                               validator, then the strict JSON reader and the
#                               JSON Schema validator, N seconds each (clang)
#   make bench                  comparator throughput vs numpy and memory bandwidth
#   make bench-validate         kjudge validate over 1,000 generated candidates
#   make bench-jschema BENCH_SCHEMA=F BENCH_SPECS="F..."
#                               reading and schema-checking a suite's specs
#   make bench-overhead [OVERHEAD_A=BIN] [OVERHEAD_B=BIN] [OVERHEAD_RUNS=N]
#                               the judge's own CPU and wall time, two binaries
#                               side by side (default both $(BUILD)/kjudge)
#   make demo                   kjudge compare on the bundled example tensors
#   make install [PREFIX=/usr/local] [DESTDIR=] [PYTHON=...]
#                               PREFIX/bin/kjudge, PREFIX/libexec/kjudge/
#                               kjudge_worker.py (and kjudge_python.txt, the
#                               workers' Python: PYTHON, by default this
#                               checkout's .venv), PREFIX/share/man/man1/kjudge*.1
#   make uninstall              removes what install put there
#
# System libraries come from pkg-config.  The tree-sitter runtime and the
# Python and CUDA grammars that `kjudge validate` parses with are compiled
# into libkjudge.a from sources that scripts/fetch-third-party downloads
# (pinned by version and SHA-256 in scripts/third-party.lock) into
# third_party/; nothing from other projects lives in git.

.DEFAULT_GOAL := all

# Every core, unless the command line gave -j (the README's `make check`
# and `make demo` are typed without one): a clean build on two cores takes
# half the time.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

CC      ?= cc
PKG_CONFIG ?= pkg-config
PYTHON  ?= $(CURDIR)/.venv/bin/python

VERSION := $(shell cat VERSION)

comma := ,
ifeq ($(SANITIZE),)
BASE_BUILD := build
OPT     ?= -O2
else
BASE_BUILD := build/san-$(subst $(comma),-,$(SANITIZE))
OPT     ?= -O1
SANFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
ifeq ($(FAULT),1)
# The fault-injection build (tests/fault/): a directory of its own inside
# the plain (or sanitized) build's, and the kjudge binary linked with the
# allocation interposer.
BUILD   ?= $(BASE_BUILD)/fault
CPPFLAGS += -DKJ_FAULT
# tree-sitter's allocations are not fault points (its runtime aborts on a
# failed one by design, and its grammars' scanners do not check): its
# objects call the real allocator, under the names --wrap leaves alone.
TS_REAL_ALLOC = objcopy --redefine-sym malloc=__real_malloc --redefine-sym calloc=__real_calloc \
	--redefine-sym realloc=__real_realloc $@
else
BUILD   ?= $(BASE_BUILD)
endif

PKGS    := jansson libcrypto sqlite3 libpcre2-8 libmicrohttpd
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

# --- third-party sources (tree-sitter) -----------------------------------------
# Versions come from the lock file, so that it is the one place to change.
TP      := third_party
tp_ver   = $(shell awk '$$1 == "$(1)" { print $$2 }' scripts/third-party.lock)
TS_RT   := $(TP)/tree-sitter-$(call tp_ver,tree-sitter)/tree_sitter/core/lib
TS_PY   := $(TP)/tree-sitter-python-$(call tp_ver,tree-sitter-python)/src
TS_CU   := $(TP)/tree-sitter-cuda-$(call tp_ver,tree-sitter-cuda)/src
# The grammars include "tree_sitter/parser.h" (and array.h, alloc.h), which
# their sdists do not ship: the runtime's own copies are the ones they were
# generated against (ABI 14).
TS_INC  := $(BUILD)/third_party/include
TS_HDRS := $(addprefix $(TS_INC)/tree_sitter/,parser.h array.h alloc.h ts_assert.h)
TS_OBJ  := $(addprefix $(BUILD)/third_party/,ts_runtime.o ts_python_parser.o \
             ts_python_scanner.o ts_cuda_parser.o ts_cuda_scanner.o)
# Third-party code is compiled with its own flags: C11, no -Werror, and
# warnings off (they are the upstream's to fix); sanitizers as for the rest.
TS_CFLAGS = -std=c11 $(OPT) -w $(SANFLAGS) -D_DEFAULT_SOURCE
CPPFLAGS += -isystem $(TS_RT)/include

$(TP)/.stamp: scripts/third-party.lock scripts/fetch-third-party
	scripts/fetch-third-party

.PRECIOUS: $(TS_INC)/tree_sitter/%.h
$(TS_INC)/tree_sitter/%.h: $(TP)/.stamp
	@mkdir -p $(dir $@)
	cp $(TS_RT)/src/$*.h $@

$(BUILD)/third_party/ts_runtime.o: $(TP)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(TS_CFLAGS) -g -I$(TS_RT)/include -I$(TS_RT)/src -c -o $@ $(TS_RT)/src/lib.c
	$(TS_REAL_ALLOC)
$(BUILD)/third_party/ts_python_%.o: $(TP)/.stamp $(TS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TS_CFLAGS) -I$(TS_INC) -c -o $@ $(TS_PY)/$*.c
	$(TS_REAL_ALLOC)
$(BUILD)/third_party/ts_cuda_%.o: $(TP)/.stamp $(TS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TS_CFLAGS) -I$(TS_INC) -c -o $@ $(TS_CU)/$*.c
	$(TS_REAL_ALLOC)

# Files compiled in as byte arrays: $(call embed,SYMBOL) makes $@ from $<,
# a NUL-terminated array SYMBOL and its length SYMBOL_len.
define embed
	@mkdir -p $(dir $@)
	{ echo '/* generated from $< by the Makefile */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const char $(1)[];'; \
	  echo 'extern const size_t $(1)_len;'; \
	  echo 'const char $(1)[] = {'; \
	  od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00 };'; \
	  echo 'const size_t $(1)_len = sizeof($(1)) - 1;'; \
	} > $@.tmp && mv $@.tmp $@
endef
# The default validate rules (rules/validate-default.json) and the results
# store's schema (lib/store/schema.sql).
$(BUILD)/gen/validate_rules_default.c: rules/validate-default.json
	$(call embed,kj__vrules_default)
$(BUILD)/gen/store_schema.c: lib/store/schema.sql
	$(call embed,kj__store_schema)
# The suite schemas `kjudge spec validate` and `spec pairs` check against.
$(BUILD)/gen/spec_schema.c: schema/spec_schema.json
	$(call embed,kj__spec_schema)
$(BUILD)/gen/manifest_schema.c: schema/manifest_schema.json
	$(call embed,kj__manifest_schema)
$(BUILD)/gen/pair_contract_schema.c: schema/pair_contract_schema.json
	$(call embed,kj__pair_contract_schema)
$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) -c -o $@ $<

LIB_SRC := $(wildcard lib/*/*.c)
SCHEMA_OBJ := $(BUILD)/gen/spec_schema.o $(BUILD)/gen/manifest_schema.o \
	$(BUILD)/gen/pair_contract_schema.o
CLI_SRC := $(wildcard src/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
HELPER_SRC := $(wildcard tests/helpers/*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)
HELPERS  := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/%)

all: $(BUILD)/kjudge $(BUILD)/libkjudge.a $(BUILD)/kjudge_worker.py $(BUILD)/kjudge_timer.so \
	$(BUILD)/kjudge_template.so \
	$(BUILD)/kjudge_audit.py \
	$(BUILD)/man/.stamp

# The torch worker is installed beside the binary, where kjudge looks for it.
$(BUILD)/kjudge_worker.py: worker/kjudge_worker.py
	@mkdir -p $(dir $@)
	cp $< $@

# The audit's canaries and measurement step, beside the worker.
$(BUILD)/kjudge_audit.py: worker/kjudge_audit.py
	@mkdir -p $(dir $@)
	cp $< $@

# Its native timing harness, loaded into the workers' Python: built without
# the sanitizers (their run-time library is not in that process).
$(BUILD)/kjudge_timer.so: worker/kjudge_timer.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -fPIC -shared -o $@ $< -ldl

# The worker template's native half (spawn.h, "Templates"): the child's
# side of a sandboxed start, from the library's own files, loaded into the
# template's Python (built without the sanitizers, as the timer).
TEMPLATE_SRC := worker/kjudge_template.c lib/sandbox/child.c lib/sandbox/view.c
$(BUILD)/kjudge_template.so: $(TEMPLATE_SRC) lib/sandbox/child.h lib/sandbox/sandbox_internal.h \
		include/kjudge/sandbox.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -Iinclude -Ilib -D_GNU_SOURCE -fPIC -shared \
		-Wl,--version-script=worker/kjudge_template.map -o $@ $(TEMPLATE_SRC)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The validator includes tree-sitter's api.h, which must be fetched first.
$(filter $(BUILD)/lib/validate/%,$(LIB_OBJ)) $(BUILD)/lib/runner/task_view.o: $(TP)/.stamp

# kjudge doctor reports the tree-sitter versions compiled in: the lock's.
$(BUILD)/lib/doctor/doctor_runtimes.o: scripts/third-party.lock
$(BUILD)/lib/doctor/doctor_runtimes.o: CPPFLAGS += -DKJ_TS_VERSIONS='"tree-sitter \
  $(call tp_ver,tree-sitter), tree-sitter-python $(call tp_ver,tree-sitter-python), \
  tree-sitter-cuda $(call tp_ver,tree-sitter-cuda)"'

# The workers' Python without KJ_PYTHON: the .venv that scripts/install-deps
# fills in this checkout (lib/base/locate.c checks at run time that it is
# there).
$(BUILD)/lib/base/locate.o: CPPFLAGS += -DKJ_CHECKOUT_PYTHON='"$(CURDIR)/.venv/bin/python"'

# compare.c's static inline helpers pass 32-byte vectors by value; they are
# always inlined, so the calling convention GCC notes (-Wpsabi) never exists.
$(BUILD)/lib/tensor/compare.o: CFLAGS += -Wno-psabi

$(BUILD)/libkjudge.a: $(LIB_OBJ) $(TS_OBJ) $(BUILD)/gen/validate_rules_default.o $(BUILD)/gen/store_schema.o \
	$(SCHEMA_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

ifeq ($(FAULT),1)
FAULT_OBJ := $(BUILD)/tests/fault/fault.o
$(BUILD)/kjudge: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup \
	-Wl,--wrap=strndup,--wrap=asprintf,--wrap=vasprintf
endif

$(BUILD)/kjudge: $(CLI_OBJ) $(FAULT_OBJ) $(BUILD)/libkjudge.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The unit tests include the CLI's option parser and man page writer
# (tests/unit/test_cli.c), which need nothing else of src/, and run some
# helpers (tests/helpers/segv.c) as workers.
# test_eval.c reads tests/eval/ (when $KJ_TESTS does not say where).
$(BUILD)/tests/unit/test_eval.o: CPPFLAGS += -DKJ_TESTS_DIR='"$(CURDIR)/tests"'
$(BUILD)/tests/unit/test_eval_spec.o: CPPFLAGS += -DKJ_TESTS_DIR='"$(CURDIR)/tests"'
$(BUILD)/tests/unit/test_study.o: CPPFLAGS += -DKJ_TESTS_DIR='"$(CURDIR)/tests"'
$(BUILD)/tests/unit-tests: $(UNIT_OBJ) $(BUILD)/src/cli.o $(BUILD)/src/man.o $(BUILD)/libkjudge.a | $(HELPERS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The man pages: kjudge.1 and one kjudge-CMD.1 per command, written by the
# binary from the option tables that its --help prints (`kjudge help --man`).
$(BUILD)/man/.stamp: $(BUILD)/kjudge
	@rm -rf $(BUILD)/man && mkdir -p $(BUILD)/man
	$(BUILD)/kjudge help --man > $(BUILD)/man/kjudge.1
	@for c in $$($(BUILD)/kjudge help --commands); do \
	  echo "$(BUILD)/kjudge help --man $$c > $(BUILD)/man/kjudge-$$c.1"; \
	  $(BUILD)/kjudge help --man $$c > $(BUILD)/man/kjudge-$$c.1 || exit 1; \
	done
	@touch $@

# --- install ---------------------------------------------------------------------
# The binary finds the worker beside itself (build/) or, installed, in
# ../libexec/kjudge/ from its real path (lib/base/locate.c).
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(PREFIX)/bin
LIBEXECDIR := $(PREFIX)/libexec/kjudge
MAN1DIR := $(PREFIX)/share/man/man1

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(MAN1DIR)
	install -m 755 $(BUILD)/kjudge $(DESTDIR)$(BINDIR)/kjudge
	install -m 644 worker/kjudge_worker.py $(DESTDIR)$(LIBEXECDIR)/kjudge_worker.py
	install -m 644 worker/kjudge_audit.py $(DESTDIR)$(LIBEXECDIR)/kjudge_audit.py
	install -m 644 $(BUILD)/kjudge_timer.so $(DESTDIR)$(LIBEXECDIR)/kjudge_timer.so
	install -m 644 $(BUILD)/kjudge_template.so $(DESTDIR)$(LIBEXECDIR)/kjudge_template.so
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MAN1DIR)/
	@# The Python the installed kjudge's workers run without KJ_PYTHON
	@# (PYTHON, the checkout's .venv by default), when there is one.
	@py=$$(command -v "$(PYTHON)" 2>/dev/null) || py=; \
	rec=$(DESTDIR)$(LIBEXECDIR)/kjudge_python.txt; \
	case "$$py" in \
	/*) test -x "$$py" || { echo "install: PYTHON=$$py is not executable" >&2; exit 1; }; \
	    echo "install: the workers' Python: $$py" && \
	    printf '%s\n' "$$py" > "$$rec" && chmod 644 "$$rec";; \
	*) echo "install: no $(PYTHON): the installed kjudge runs KJ_PYTHON, else python3"; \
	   rm -f "$$rec";; \
	esac

# The pages are removed by name pattern, so that uninstall needs no build.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/kjudge $(DESTDIR)$(LIBEXECDIR)/kjudge_worker.py \
	      $(DESTDIR)$(LIBEXECDIR)/kjudge_timer.so $(DESTDIR)$(LIBEXECDIR)/kjudge_python.txt \
	      $(DESTDIR)$(LIBEXECDIR)/kjudge_audit.py $(DESTDIR)$(LIBEXECDIR)/kjudge_template.so
	rm -f $(DESTDIR)$(MAN1DIR)/kjudge.1 $(DESTDIR)$(MAN1DIR)/kjudge-*.1
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null

$(BUILD)/tests/%: $(BUILD)/tests/helpers/%.o $(BUILD)/libkjudge.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The test driver: unit tests, then the CLI tests against the built binary.
# It prints one closing line 'N passed, N failed'.
# The fault-injection build is made too (in $(BUILD)/fault), so that
# tests/cli/t0260 runs.
# NO_FAULT=1 leaves the fault build out (CI's sanitizer pass, which skips
# tests/cli/t0260).
check: all $(BUILD)/tests/unit-tests $(HELPERS) $(BUILD)/bench/selfusage.so $(if $(NO_FAULT),,fault)
	@KJ_BUILD=$(CURDIR)/$(BUILD) KJ_PYTHON=$(PYTHON) tests/run

# $(BUILD)/fault/kjudge: the binary of tests/fault/ (see FAULT above).
fault:
	@$(MAKE) --no-print-directory FAULT=1 SANITIZE=$(SANITIZE) BUILD=$(BUILD)/fault all

# The README's first command ends here: verify and benchmark of the softmax
# example (its Triton candidate: on the GPU when there is one, else on the CPU
# through Triton's interpreter), then one comparison of example tensors.  The
# commands are the README's, with no KJ_PYTHON (the binary finds this
# checkout's .venv; PYTHON=... on make's command line is passed on), and a
# line says which results are expected and why: a speedup far below 1 on the
# CPU, and the FAIL of a tensor made bad on purpose.
DEMO_DIR := $(BUILD)/demo
DEMO_ENV := $(if $(filter command line,$(origin PYTHON)),KJ_PYTHON=$(PYTHON) )
demo: all
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp examples/softmax/*.py $(DEMO_DIR)/
	@echo "== demo 1/2: verify, then benchmark, the Triton candidate of examples/softmax (copied to $(DEMO_DIR)/)"
	$(DEMO_ENV)$(BUILD)/kjudge verify --op_name softmax --verify_dir $(DEMO_DIR)
	$(DEMO_ENV)$(BUILD)/kjudge benchmark --op_name softmax --verify_dir $(DEMO_DIR) \
	  --warmup 2 --repeats 10 --output $(DEMO_DIR)/perf_result.json
	@$(PYTHON) -c "import json; d = json.load(open('$(DEMO_DIR)/perf_result.json')); \
	  dev = d['kjudge']['device']; \
	  print('speedup_vs_torch: %s (candidate %.4g ms, torch %.4g ms per call, device %s)' % \
	    (d['speedup_vs_torch'], d['implementation']['avg_latency_ms'], \
	     d['framework']['avg_latency_ms'], dev)); \
	  print('== demo: expected: every case passed; with no GPU the speedup is far below 1 because' \
	        ' Triton runs the kernel in its CPU interpreter (TRITON_INTERPRET=1), in Python:' \
	        ' it shows the judge at work, not the kernel\'s speed (a GPU measures that)' \
	        if dev == 'cpu' else \
	        '== demo: expected: every case passed; the speedup is the compiled kernel\'s over torch on ' + dev)"
	@echo
	@echo "== demo 2/2: kjudge compare on a tensor made bad on purpose (examples/compare/actual_bad.npy: 128 NaNs the golden lacks)"
	@echo "== demo: expected: the FAIL block below and exit status 1, the comparator saying why and where"
	$(BUILD)/kjudge compare examples/compare/golden.npy examples/compare/actual_bad.npy; \
	  test $$? -eq 1
	@echo "== demo: the FAIL above is the expected result (exit 1, as it must); the demo passed."
	@echo "== demo: next, the README's commands: build/kjudge verify --op_name softmax --verify_dir examples/softmax"

# --- fuzzing (clang + libFuzzer) -------------------------------------------
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
FUZZ_DIR := build/fuzz
FUZZ_LIB_SRC := lib/tensor/npy.c lib/base/fileio.c lib/tensor/tensor.c lib/tensor/dtype.c lib/base/error.c

# UBSan must abort, not just print, for libFuzzer to count undefined
# behaviour as a crash.  The headers are prerequisites so that a change to
# them rebuilds the target; only the .c files are compiled.
FUZZ_HDR := $(wildcard include/kjudge/*.h) lib/base/internal.h lib/base/banned.h tests/fuzz/fuzz.h

$(FUZZ_DIR)/fuzz_npy_header: tests/fuzz/fuzz_npy_header.c $(FUZZ_LIB_SRC) $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -Iinclude -Ilib -D_GNU_SOURCE \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $(filter %.c,$^) -lm

# The validator's fuzzer: kjudge's own files and the tree-sitter runtime
# instrumented, the grammars' generated parse tables optimised and not
# (instrumenting them costs minutes of compile time and says little).
FUZZ_V_SRC := $(wildcard lib/validate/*.c) lib/base/error.c lib/base/json.c lib/base/text.c \
	      lib/base/vec.c lib/base/fs.c lib/base/fileio.c
FUZZ_TS_OBJ := $(addprefix $(FUZZ_DIR)/ts/,ts_runtime.o ts_python_parser.o \
                 ts_python_scanner.o ts_cuda_parser.o ts_cuda_scanner.o)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all

$(FUZZ_DIR)/ts/ts_runtime.o: $(TP)/.stamp
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -w -D_DEFAULT_SOURCE $(FUZZ_SAN) \
	  -fsanitize-coverage=inline-8bit-counters,pc-table \
	  -I$(TS_RT)/include -I$(TS_RT)/src -c -o $@ $(TS_RT)/src/lib.c
$(FUZZ_DIR)/ts/ts_python_%.o: $(TP)/.stamp $(TS_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -O2 -w -I$(TS_INC) -c -o $@ $(TS_PY)/$*.c
$(FUZZ_DIR)/ts/ts_cuda_%.o: $(TP)/.stamp $(TS_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -O2 -w -I$(TS_INC) -c -o $@ $(TS_CU)/$*.c

$(FUZZ_DIR)/fuzz_validate: tests/fuzz/fuzz_validate.c $(FUZZ_V_SRC) $(FUZZ_HDR) \
		lib/validate/validate_internal.h $(BUILD)/gen/validate_rules_default.c $(FUZZ_TS_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -Iinclude -Ilib -isystem $(TS_RT)/include -D_GNU_SOURCE \
	  $(PKG_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) \
	  -o $@ $(filter %.c,$^) $(filter %.o,$^) $(PKG_LIBS) -lm

# The strict JSON reader and the JSON Schema validator: seeds are
# tests/fuzz/jschema-seeds/ (a schema, a NUL byte, an instance).
FUZZ_J_SRC := lib/spec/jsonx.c lib/spec/jschema.c lib/spec/jschema_check.c lib/base/error.c lib/base/fs.c \
	      lib/base/fileio.c lib/base/vec.c
$(FUZZ_DIR)/fuzz_jschema: tests/fuzz/fuzz_jschema.c $(FUZZ_J_SRC) $(FUZZ_HDR) lib/spec/jschema_internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -Iinclude -Ilib -D_GNU_SOURCE $(PKG_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) \
	  -o $@ $(filter %.c,$^) $(PKG_LIBS) -lm

# Seeds: the corpus of tests/validate/, each file behind its language byte.
$(FUZZ_DIR)/validate-seeds/.stamp: $(wildcard tests/validate/*/*)
	@rm -rf $(dir $@) && mkdir -p $(dir $@)
	@for f in $^; do case $$f in *.py) p=p ;; *) p=c ;; esac; \
	  { printf $$p; cat $$f; } > $(dir $@)$$(basename $$f); done
	touch $@

fuzz: $(FUZZ_DIR)/fuzz_npy_header $(FUZZ_DIR)/fuzz_validate $(FUZZ_DIR)/validate-seeds/.stamp \
		$(FUZZ_DIR)/fuzz_jschema
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/corpus-validate $(FUZZ_DIR)/corpus-jschema
	$(FUZZ_DIR)/fuzz_npy_header -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=4096 -dict=tests/fuzz/npy.dict $(FUZZ_DIR)/corpus tests/fuzz/seeds
	$(FUZZ_DIR)/fuzz_validate -max_total_time=$(FUZZ_SECONDS) -max_len=16384 \
	  -timeout=30 -dict=tests/fuzz/validate.dict $(FUZZ_DIR)/corpus-validate \
	  $(FUZZ_DIR)/validate-seeds
	$(FUZZ_DIR)/fuzz_jschema -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=30 \
	  -dict=tests/fuzz/jschema.dict $(FUZZ_DIR)/corpus-jschema tests/fuzz/jschema-seeds

# --- benchmark ----------------------------------------------------------------
BENCH_CFLAGS := -std=c11 -O2 -g $(WARN) -Iinclude -Ilib -D_GNU_SOURCE -pthread

build/bench/bench_compare: bench/bench_compare.c build/libkjudge.a
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $^ -pthread -lm

bench: build/bench/bench_compare
	PYTHON=$(PYTHON) bench/run_compare_bench

build/bench/bench_validate: bench/bench_validate.c build/libkjudge.a
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(PKG_CFLAGS) -o $@ $^ $(PKG_LIBS) -pthread -lm

# Schema checks of a suite's specs (lib/spec/): BENCH_SCHEMA and BENCH_SPECS
# name the files (ParBench's spec schema and specs, for example).
build/bench/bench_jschema: bench/bench_jschema.c build/libkjudge.a
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(PKG_CFLAGS) -o $@ $^ $(PKG_LIBS) -pthread -lm

bench-jschema: build/bench/bench_jschema
	build/bench/bench_jschema --rounds $(or $(BENCH_ROUNDS),20) $(BENCH_SCHEMA) $(BENCH_SPECS)

bench-validate: build/kjudge build/bench/bench_validate
	bench/run_validate_bench

# The judge's own overhead (bench/overhead/overhead.py; the method is in
# docs/PERFORMANCE.md).  The shim is loaded into binaries it was not built
# with, and into sanitizer builds, so it is compiled on its own: no
# sanitizers, no link with the library.
$(BUILD)/bench/selfusage.so: bench/overhead/selfusage.c lib/base/banned.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -Ilib -D_GNU_SOURCE -fPIC -shared -o $@ $<

OVERHEAD_A ?= $(BUILD)/kjudge
OVERHEAD_B ?= $(BUILD)/kjudge
OVERHEAD_RUNS ?= 10
OVERHEAD_RAW ?= $(BUILD)/bench/overhead-raw.json
bench-overhead: $(BUILD)/bench/selfusage.so
	$(PYTHON) bench/overhead/overhead.py run --a $(OVERHEAD_A) --b $(OVERHEAD_B) \
	  --runs $(OVERHEAD_RUNS) --python $(PYTHON) --shim $(BUILD)/bench/selfusage.so \
	  --raw $(OVERHEAD_RAW) $(OVERHEAD_FLAGS)

clean:
	rm -rf build

.PHONY: all check fault demo fuzz bench bench-validate bench-jschema bench-overhead clean install uninstall

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) \
	 $(HELPER_SRC:%.c=$(BUILD)/%.d)
