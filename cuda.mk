# cuda.mk - the CUDA builds of libinfer, included by the Makefile (docs/cuda.md).
#   make CUDA=1      the backend's .cu files compiled by nvcc, linked with the CUDA runtime and
#                    cuBLAS; objects in build-cuda/ (build-san-cuda/ with SAN=1).
#   make CUDA_EMU=1  the same .cu files compiled as C++ against the CPU-side emulator
#                    (backend/cuda/emulator/), so every kernel runs without a GPU; build-cuda-emu/.
# Neither: cuda_absent.c gives the public CUDA functions that answer "built without CUDA".
# CUDA_ARCHS lists what nvcc generates: sm_XY is machine code for that GPU, compute_XY is PTX the
# driver compiles for newer GPUs; CUDA_ARCHS=sm_80 makes a quick build for checking.

CUDA      ?= 0
CUDA_EMU  ?= 0
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CUDA_ARCHS ?= sm_80 sm_86 sm_89 sm_90 compute_90

CUDA_CU_SRC  := $(sort $(shell find libinfer/src -name '*.cu'))
CUDA_EMU_SRC := $(sort $(shell find libinfer/src/engine/backend/cuda/emulator/ -name '*.cpp' 2>/dev/null))
CUDA_ABSENT_SRC := libinfer/src/engine/backend/cuda_absent.c libinfer/src/engine/backend/cuda_score_absent.c
cuda_obj = $(patsubst %,$(BUILD)/obj/%.o,$(basename $(1)))

ifeq ($(CUDA)$(CUDA_EMU),11)
$(error CUDA=1 and CUDA_EMU=1 exclude each other: pick one)
endif

# Device code as the GPU runs it: fused multiply-adds are nvcc's default there, and results are
# compared with the CPU backend's within a tolerance (not bit for bit).
cuda_gencode = $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(subst compute_,,$(subst sm_,,$(a))),code=$(a))
NVCC_FLAGS := -std=c++17 -O3 -g -Werror all-warnings $(cuda_gencode) \
              -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra,-ffp-contract=off \
              -MMD -MP -Ilibgguf/include -Ilibinfer/include -Ilibinfer/src $(NVCCFLAGS)
# The emulator build: the same sources as host C++. Stack-clash protection makes a kernel frame
# larger than a fiber stack hit the stack's guard page (docs/cuda_emulator.md).
CUDA_EMU_FLAGS := -std=c++17 $(OPT) -g -DINF_CUDA_EMULATION -Wall -Wextra -Werror -ffp-contract=off \
                  -fstack-clash-protection -D_GNU_SOURCE -fPIC -fvisibility=hidden -pthread -MMD -MP \
                  -Ilibgguf/include -Ilibinfer/include -Ilibinfer/src $(CXXFLAGS)

ifeq ($(CUDA),1)
BUILD          := $(BUILD)-cuda
INFER_EXCLUDE  := $(CUDA_ABSENT_SRC)
CUDA_OBJ        = $(call cuda_obj,$(CUDA_CU_SRC))
CUDA_LDLIBS    := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
else ifeq ($(CUDA_EMU),1)
BUILD          := $(BUILD)-cuda-emu
INFER_EXCLUDE  := $(CUDA_ABSENT_SRC)
CUDA_OBJ        = $(call cuda_obj,$(CUDA_CU_SRC) $(CUDA_EMU_SRC))
CUDA_LDLIBS    := -lstdc++
ifeq ($(SAN),1)
CUDA_EMU_FLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
endif
ifneq ($(CUDA_OBJ),)
INFER_LDLIBS += -Wl,--version-script=libinfer/src/engine/backend/cuda/cxx_exports.ver
endif
LIB_LDLIBS += $(CUDA_LDLIBS)
LDLIBS_ALL += $(CUDA_LDLIBS)

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
ifeq ($(CUDA),1)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@
else
	$(CXX) -x c++ $(CUDA_EMU_FLAGS) -c $< -o $@
endif

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CUDA_EMU_FLAGS) -c $< -o $@

# make test CUDA_EMU=1 also runs the emulator's own tests (tests/cuda/emulator/run.sh).
ifeq ($(CUDA_EMU),1)
.PHONY: test-cuda-emulator
test: test-cuda-emulator
test-cuda-emulator:
	BUILD=$(BUILD) SAN=$(SAN) sh tests/cuda/emulator/run.sh
endif
