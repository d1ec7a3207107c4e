#!/bin/sh
# Compiles the CUDA emulator (libinfer/src/engine/backend/cuda/emulator) and its tests with the
# host C++ compiler, as the backend is compiled for `make CUDA_EMU=1`, and runs them.
#   tests/cuda/emulator/run.sh [substring...]   run the tests (all, or those whose name matches)
#   tests/cuda/emulator/run.sh --bench          time launches of a block reduction instead
# BUILD (default build) picks the output folder, CXX/CC the compilers.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
out="${BUILD:-$root/build}/cuda-emulator"
CXX=${CXX:-g++}
CC=${CC:-gcc}
CXXFLAGS="-std=c++17 -O2 -g -Wall -Wextra -Werror -ffp-contract=off -fPIC -fvisibility=hidden -pthread
          -DINF_CUDA_EMULATION -I$root/libinfer/src/engine/backend/cuda -I$root/tests"
mkdir -p "$out"

# Compile each source when it (or any emulator header) is newer than its object.
headers=$(ls "$root"/libinfer/src/engine/backend/cuda/emulator/*.h "$root"/libinfer/src/engine/backend/cuda/cuda_compat.cuh "$root"/tests/cuda/emulator/*.h 2>/dev/null)
compile() { # source object compiler flags...
    src=$1 obj=$2
    shift 2
    if [ ! -f "$obj" ] || [ -n "$(find "$src" $headers -newer "$obj" 2>/dev/null | head -n 1)" ]; then
        "$@" -c "$src" -o "$obj"
    fi
}

objs=""
for src in "$root"/libinfer/src/engine/backend/cuda/emulator/*.cpp; do
    obj="$out/$(basename "$src" .cpp).o"
    compile "$src" "$obj" $CXX $CXXFLAGS
    objs="$objs $obj"
done
compile "$root/tests/test_main.c" "$out/test_main.o" $CC -std=c11 -O2
tests=""
for src in "$root"/tests/cuda/emulator/test_*.cpp; do
    obj="$out/$(basename "$src" .cpp).o"
    compile "$src" "$obj" $CXX $CXXFLAGS
    tests="$tests $obj"
done
$CXX -pthread -o "$out/run_emulator_tests" $objs $tests "$out/test_main.o"
compile "$root/tests/cuda/emulator/bench_emulator.cpp" "$out/bench_emulator.o" $CXX $CXXFLAGS
$CXX -pthread -o "$out/bench_emulator" $objs "$out/bench_emulator.o"

if [ "${1:-}" = "--bench" ]; then
    exec "$out/bench_emulator"
fi
exec "$out/run_emulator_tests" "$@"
