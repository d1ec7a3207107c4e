/* inf_cpu.c - detect the CPU's SIMD features once and keep the process-wide active level.
 * The level is an atomic so that inf_simd_force() from a test thread and kernel lookups from
 * worker threads never race. */
#include <ggtk/inf_simd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

static inf_cpu_features features;
static inf_simd_level detected_level;
static _Atomic int active_level;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static const char *const level_names[INF_SIMD_LEVEL_COUNT] = {
    [INF_SIMD_SCALAR] = "scalar",
    [INF_SIMD_AVX2] = "avx2",
    [INF_SIMD_AVX512] = "avx512",
    [INF_SIMD_NEON] = "neon",
};

#if defined(__x86_64__) || defined(__i386__)
/* The builtins read cpuid and, for AVX and AVX-512, check with xgetbv that the OS saves the
 * wider registers, so a feature reported here is usable. */
static void read_features(inf_cpu_features *f)
{
    __builtin_cpu_init();
    f->avx2 = __builtin_cpu_supports("avx2");
    f->fma = __builtin_cpu_supports("fma");
    f->f16c = __builtin_cpu_supports("f16c");
    f->avx512f = __builtin_cpu_supports("avx512f");
    f->avx512bw = __builtin_cpu_supports("avx512bw");
    f->avx512vl = __builtin_cpu_supports("avx512vl");
    f->avx512dq = __builtin_cpu_supports("avx512dq");
    f->avx512vnni = __builtin_cpu_supports("avx512vnni");
    f->avx512bf16 = __builtin_cpu_supports("avx512bf16");
    f->avx_vnni = __builtin_cpu_supports("avxvnni");
}

static inf_simd_level best_level(const inf_cpu_features *f)
{
    bool avx2 = f->avx2 && f->fma && f->f16c;
    if (avx2 && f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq)
        return INF_SIMD_AVX512;
    return avx2 ? INF_SIMD_AVX2 : INF_SIMD_SCALAR;
}

/* x86 levels are ordered, and NEON (numbered above them) is never runnable here. */
static bool level_runnable(inf_simd_level level, inf_simd_level best)
{
    return level <= best;
}
#else
/* Other architectures: only NEON is reported (the x86 kernels are not built there). */
static void read_features(inf_cpu_features *f)
{
#if defined(__ARM_NEON) || defined(__aarch64__)
    f->neon = true;
#else
    (void)f;
#endif
}

static inf_simd_level best_level(const inf_cpu_features *f)
{
#if defined(__ARM_NEON) && defined(__aarch64__)
    return f->neon ? INF_SIMD_NEON : INF_SIMD_SCALAR; /* the NEON kernels are built for arm64 */
#else
    (void)f;
    return INF_SIMD_SCALAR;
#endif
}

/* Here the only levels are scalar and the best one (NEON on arm64). */
static bool level_runnable(inf_simd_level level, inf_simd_level best)
{
    return level == INF_SIMD_SCALAR || level == best;
}
#endif

static void detect(void)
{
    read_features(&features);
    detected_level = best_level(&features);
    inf_simd_level level = detected_level;
    const char *env = getenv("INF_SIMD");
    if (env && *env) {
        int wanted = inf_simd_level_from_name(env);
        if (wanted >= 0 && level_runnable((inf_simd_level)wanted, level))
            level = (inf_simd_level)wanted;
    }
    atomic_store(&active_level, (int)level);
}

const inf_cpu_features *inf_cpu_features_get(void)
{
    pthread_once(&detect_once, detect);
    return &features;
}

inf_simd_level inf_simd_detect(void)
{
    pthread_once(&detect_once, detect);
    return detected_level;
}

inf_simd_level inf_simd_active(void)
{
    pthread_once(&detect_once, detect);
    return (inf_simd_level)atomic_load_explicit(&active_level, memory_order_relaxed);
}

inf_simd_level inf_simd_force(inf_simd_level level)
{
    pthread_once(&detect_once, detect);
    if ((int)level < 0)
        level = INF_SIMD_SCALAR;
    if ((unsigned)level >= INF_SIMD_LEVEL_COUNT || !level_runnable(level, detected_level))
        level = detected_level;
    atomic_store(&active_level, (int)level);
    return level;
}

const char *inf_simd_level_name(inf_simd_level level)
{
    return (unsigned)level < INF_SIMD_LEVEL_COUNT ? level_names[level] : "unknown";
}

int inf_simd_level_from_name(const char *name)
{
    for (int l = 0; l < INF_SIMD_LEVEL_COUNT; l++)
        if (strcasecmp(level_names[l], name) == 0)
            return l;
    return -1;
}
