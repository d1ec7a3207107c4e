/* Tests of SIMD level detection and forcing. */
#include <stdlib.h>

#include <ggtk/inf_simd.h>
#include "test.h"

TEST(test_simd_force_clamps_to_detected_level)
{
    inf_simd_level best = inf_simd_detect();
    CHECK(inf_simd_force(INF_SIMD_SCALAR) == INF_SIMD_SCALAR);
    CHECK(inf_simd_active() == INF_SIMD_SCALAR);
    CHECK(inf_simd_force(INF_SIMD_AVX512) == best);
    CHECK(inf_simd_active() == best);
    /* A level of the other architecture is never set: NEON on x86, AVX2 on arm64. */
#if defined(__x86_64__)
    CHECK(inf_simd_force(INF_SIMD_NEON) == best);
#elif defined(__aarch64__)
    CHECK(inf_simd_force(INF_SIMD_AVX2) == best);
#endif
}

TEST(test_simd_levels_agree_with_features)
{
    const inf_cpu_features *f = inf_cpu_features_get();
    inf_simd_level best = inf_simd_detect();
#if defined(__x86_64__)
    if (best >= INF_SIMD_AVX2)
        CHECK(f->avx2 && f->fma && f->f16c);
    if (best >= INF_SIMD_AVX512)
        CHECK(f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq);
    CHECK(best != INF_SIMD_NEON && !f->neon);
#elif defined(__aarch64__)
    CHECK(best == INF_SIMD_NEON && f->neon);
#endif
}

TEST(test_simd_level_names_round_trip)
{
    for (int l = 0; l < INF_SIMD_LEVEL_COUNT; l++)
        CHECK(inf_simd_level_from_name(inf_simd_level_name((inf_simd_level)l)) == l);
    CHECK(inf_simd_level_from_name("AVX2") == INF_SIMD_AVX2);
    CHECK(inf_simd_level_from_name("neon") == INF_SIMD_NEON);
    CHECK(inf_simd_level_from_name("sse") == -1);
}

TEST(test_simd_env_var_sets_the_start_level)
{
    /* Each test runs in a freshly forked child of a runner that never touched libinfer, so
     * detection (and the reading of INF_SIMD) happens here, after setenv. */
    CHECK(setenv("INF_SIMD", "scalar", 1) == 0);
    CHECK(inf_simd_active() == INF_SIMD_SCALAR);
    CHECK(inf_simd_detect() >= INF_SIMD_SCALAR);
    CHECK(inf_simd_force(INF_SIMD_AVX512) == inf_simd_detect());
}
