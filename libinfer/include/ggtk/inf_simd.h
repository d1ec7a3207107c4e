/* inf_simd.h - which SIMD instruction sets this CPU offers and which one libinfer's kernels use.
 *
 * Detection runs once (cpuid plus the OS's xgetbv check of saved register state, through the
 * compiler's cpu-support builtins) on the first call of any function here. Every kernel table
 * in libinfer is chosen by inf_simd_active(); tests and benchmarks call inf_simd_force() to
 * compare the levels on one machine.
 *
 * Environment: INF_SIMD=scalar|avx2|avx512|neon read once at detection lowers the active level
 * (a level this CPU cannot run is ignored).
 *
 * Errors: nothing here can fail (see <ggtk/error.h> for the rest of libinfer).
 *
 * Thread-safety: all functions may be called from any thread. inf_simd_force() changes the level
 * for the whole process; kernels already running keep the level they started with.
 */
#ifndef INF_CPU_H
#define INF_CPU_H

#include <ggtk/export.h>

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel families. Within one architecture they are ordered (a higher x86 level implies the CPU
 * supports every lower one); NEON is the arm64 level and stands beside the x86 ones: an x86 CPU
 * never runs it and an arm64 CPU never runs AVX2 or AVX-512. */
typedef enum inf_simd_level {
    INF_SIMD_SCALAR = 0, /* portable C; the reference every other level must equal bit for bit */
    INF_SIMD_AVX2 = 1,   /* x86-64 AVX2 + FMA + F16C */
    INF_SIMD_AVX512 = 2, /* AVX-512 F, BW, VL, DQ (plus AVX2 level) */
    INF_SIMD_NEON = 3,   /* arm64 Advanced SIMD (always present there) */
    INF_SIMD_LEVEL_COUNT
} inf_simd_level;

/* Instruction-set features of the running CPU, each true only when both the CPU and the OS
 * (saved register state) support it. Extensions beyond the SIMD levels are for kernels that
 * pick a faster path inside one level (e.g. VNNI dot products, BF16 conversion). */
typedef struct inf_cpu_features {
    bool avx2;
    bool fma;
    bool f16c;
    bool avx512f;
    bool avx512bw;
    bool avx512vl;
    bool avx512dq;
    bool avx512vnni; /* vpdpbusd on 512-bit vectors */
    bool avx512bf16; /* vcvtne2ps2bf16, vdpbf16ps */
    bool avx_vnni;   /* VEX-encoded vpdpbusd on 256-bit vectors */
    bool neon;       /* Arm Advanced SIMD (always true on arm64) */
} inf_cpu_features;

/* Features of this CPU, detected on the first call. Never NULL; static storage. */
GGTK_API const inf_cpu_features *inf_cpu_features_get(void);

/* Best level this CPU supports (ignores INF_SIMD and inf_simd_force()). */
GGTK_API inf_simd_level inf_simd_detect(void);

/* Level the kernels use now: inf_simd_detect() lowered by INF_SIMD, or what inf_simd_force()
 * last set. */
GGTK_API inf_simd_level inf_simd_active(void);

/* Make the kernels use `level` from now on, or inf_simd_detect() when this CPU cannot run
 * `level` (forcing AVX-512 on a CPU without it, or any x86 level on arm64, gives the best level
 * it has). Returns the level actually set. */
GGTK_API inf_simd_level inf_simd_force(inf_simd_level level);

/* Lower-case name of a level ("scalar", "avx2", "avx512", "neon"); "unknown" for a bad value. */
GGTK_API const char *inf_simd_level_name(inf_simd_level level);

/* Level named by `name` (as inf_simd_level_name() spells it, case ignored), or -1. */
GGTK_API int inf_simd_level_from_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif
