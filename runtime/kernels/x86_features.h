// The x86-64 vector extensions this CPU runs, for the library's own intrinsics and target
// clones (its baseline is SSE2): each asked of the CPU once.
#pragma once

#if defined(__x86_64__)
namespace deconv {
namespace detail {

inline bool cpu_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}

inline bool cpu_has_avx2_fma() {
    static const bool has = cpu_has_avx2() && __builtin_cpu_supports("fma");
    return has;
}

// AVX-512 F, BW, DQ and VL: what the 512-bit clones and intrinsics use.
inline bool cpu_has_avx512() {
    static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return has;
}

}  // namespace detail
}  // namespace deconv
#endif
