#include "peak_flops.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace deconv_cli {
namespace {

// Each loop runs `iters` steps of `kChains` independent multiply-adds (enough chains to cover the
// FMA latency times the FMA ports of current cores) and returns the FLOPs it did; `sink` keeps
// the result alive. acc * 0.999999 + 1e-6 stays near 1: no overflow, no denormals.
constexpr int kChains = 24;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) double fma_avx512(int64_t iters, float *sink) {
    __m512 acc[kChains];
    for (int k = 0; k < kChains; k++) acc[k] = _mm512_set1_ps(1.0f + (float)k);
    const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 24
        for (int k = 0; k < kChains; k++) acc[k] = _mm512_fmadd_ps(acc[k], b, c);
    }
    __m512 s = acc[0];
    for (int k = 1; k < kChains; k++) s = _mm512_add_ps(s, acc[k]);
    *sink += _mm512_reduce_add_ps(s);
    return 2.0 * 16 * kChains * (double)iters;
}

// 16 vector registers: half the chains.
__attribute__((target("avx2,fma"))) double fma_avx2(int64_t iters, float *sink) {
    constexpr int chains = kChains / 2;
    __m256 acc[chains];
    for (int k = 0; k < chains; k++) acc[k] = _mm256_set1_ps(1.0f + (float)k);
    const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 12
        for (int k = 0; k < chains; k++) acc[k] = _mm256_fmadd_ps(acc[k], b, c);
    }
    float lanes[8];
    __m256 s = acc[0];
    for (int k = 1; k < chains; k++) s = _mm256_add_ps(s, acc[k]);
    _mm256_storeu_ps(lanes, s);
    for (float v : lanes) *sink += v;
    return 2.0 * 8 * chains * (double)iters;
}

// No FMA: a multiply and an add, two FLOPs per lane.
double mul_add_sse(int64_t iters, float *sink) {
    constexpr int chains = kChains / 2;
    __m128 acc[chains];
    for (int k = 0; k < chains; k++) acc[k] = _mm_set1_ps(1.0f + (float)k);
    const __m128 b = _mm_set1_ps(0.999999f), c = _mm_set1_ps(1e-6f);
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 12
        for (int k = 0; k < chains; k++) acc[k] = _mm_add_ps(_mm_mul_ps(acc[k], b), c);
    }
    float lanes[4];
    __m128 s = acc[0];
    for (int k = 1; k < chains; k++) s = _mm_add_ps(s, acc[k]);
    _mm_storeu_ps(lanes, s);
    for (float v : lanes) *sink += v;
    return 2.0 * 4 * chains * (double)iters;
}

using Loop = double (*)(int64_t, float *);
// The vectors of the CPU variant the kernels run (DECONV_CPU_VARIANT caps it), within what the
// CPU has: capped at AVX2 on a Zen 5, whose 512-bit FMAs double its peak, the AVX-512 loop put
// every layer at half its share of the AVX2 peak.
Loop variant_loop(const std::string &variant) {
    const bool avx512 = __builtin_cpu_supports("avx512f") && (variant.empty() || variant == "avx512");
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && variant != "sse41";
    if (avx512) return fma_avx512;
    if (avx2) return fma_avx2;
    return mul_add_sse;
}
#elif defined(__aarch64__)
double fma_neon(int64_t iters, float *sink) {
    float32x4_t acc[kChains];
    for (int k = 0; k < kChains; k++) acc[k] = vdupq_n_f32(1.0f + (float)k);
    const float32x4_t b = vdupq_n_f32(0.999999f), c = vdupq_n_f32(1e-6f);
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 24
        for (int k = 0; k < kChains; k++) acc[k] = vfmaq_f32(c, acc[k], b);
    }
    float32x4_t s = acc[0];
    for (int k = 1; k < kChains; k++) s = vaddq_f32(s, acc[k]);
    *sink += vaddvq_f32(s);
    return 2.0 * 4 * kChains * (double)iters;
}
using Loop = double (*)(int64_t, float *);
Loop variant_loop(const std::string &) { return fma_neon; }
#else
double mul_add_scalar(int64_t iters, float *sink) {
    float acc[kChains];
    for (int k = 0; k < kChains; k++) acc[k] = 1.0f + (float)k;
    for (int64_t i = 0; i < iters; i++)
        for (int k = 0; k < kChains; k++) acc[k] = acc[k] * 0.999999f + 1e-6f;
    for (float v : acc) *sink += v;
    return 2.0 * kChains * (double)iters;
}
using Loop = double (*)(int64_t, float *);
Loop variant_loop(const std::string &) { return mul_add_scalar; }
#endif

// One round: every thread runs `iters` steps, started together; GFLOP/s over the wall time.
double round_gflops(Loop loop, int threads, int64_t iters, double *seconds) {
    std::atomic<int> ready{0};
    std::vector<float> sinks((size_t)threads * 16, 0.0f);  // a cache line each
    std::vector<double> flops((size_t)threads, 0.0);
    auto body = [&](int t) {
        ready.fetch_add(1);
        while (ready.load() < threads) std::this_thread::yield();
        flops[(size_t)t] = loop(iters, &sinks[(size_t)t * 16]);
    };
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; t++) pool.emplace_back(body, t);
    body(0);
    for (std::thread &th : pool) th.join();
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double total = 0;
    for (double f : flops) total += f;
    return total / *seconds * 1e-9;
}

}  // namespace

double measure_fp32_peak_gflops(int threads, const std::string &cpu_variant) {
    threads = std::max(threads, 1);
    const Loop loop = variant_loop(cpu_variant);
    // Steps per round: doubled until a round takes 10 ms (thread start-up is then a small part),
    // then the best of three rounds.
    int64_t iters = 1 << 12;
    double seconds = 0, best = round_gflops(loop, threads, iters, &seconds);
    while (seconds < 0.01 && iters < (int64_t(1) << 40)) {
        iters *= 2;
        best = round_gflops(loop, threads, iters, &seconds);
    }
    for (int r = 0; r < 2; r++) best = std::max(best, round_gflops(loop, threads, iters, &seconds));
    return best;
}

}  // namespace deconv_cli
