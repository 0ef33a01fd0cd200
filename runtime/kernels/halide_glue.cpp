#include "kernels/halide_glue.h"

#include "kernels/cpu_thread_pool.h"
#include "kernels/kernel_registry.h"

#include "deconv/deconv.h"

#include "HalideRuntime.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace deconv {
namespace detail {

namespace {

thread_local std::string t_last_error;

// Halide's default handler aborts the process; ours keeps the message for the caller.
void on_halide_error(void *, const char *msg) {
    t_last_error = msg ? msg : "";
    while (!t_last_error.empty() && (t_last_error.back() == '\n' || t_last_error.back() == ' ')) {
        t_last_error.pop_back();
    }
}

// The CPU variants in the order the kernels try them (cmake/DeconvKernels.cmake), best first.
struct Variant {
    const char *name;
    std::vector<halide_target_feature_t> features;
};

#if defined(__aarch64__)
// DECONV_ARM64_TARGETS: arm-64-linux-arm_dot_prod-arm_fp16, then arm-64-linux (ARMv8-A NEON).
const std::vector<Variant> &variants() {
    static const std::vector<Variant> v = {
        {"dotprod_fp16", {halide_target_feature_arm_dot_prod, halide_target_feature_arm_fp16}},
        {"neon", {}},
    };
    return v;
}
#else
const std::vector<Variant> &variants() {
    static const std::vector<Variant> v = {
        {"avx512",
         {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_avx512,
          halide_target_feature_avx512_cannonlake, halide_target_feature_avx512_skylake,
          halide_target_feature_f16c, halide_target_feature_fma, halide_target_feature_sse41}},
        {"avx2",
         {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_f16c,
          halide_target_feature_fma, halide_target_feature_sse41}},
        {"sse41", {halide_target_feature_sse41}},
    };
    return v;
}
#endif

constexpr int kFeatureWords = (halide_target_feature_end + 63) / 64;

#if defined(__aarch64__)
bool has(const uint64_t *bits, halide_target_feature_t f) { return (bits[f / 64] >> (f % 64)) & 1; }

// Halide 14's aarch64 runtime reports arm_dot_prod and arm_fp16 as present on every CPU, so a
// Cortex-A53 would run the ARMv8.2 variant and die of SIGILL. The kernel (AT_HWCAP) decides.
bool cpu_has(halide_target_feature_t f) {
#if defined(__linux__)
    static const unsigned long hwcap = getauxval(AT_HWCAP);
    switch (f) {
    case halide_target_feature_arm_dot_prod:
        return (hwcap & HWCAP_ASIMDDP) != 0;
    case halide_target_feature_arm_fp16:
        // Scalar and vector half-precision arithmetic (FEAT_FP16 sets both).
        return (hwcap & HWCAP_FPHP) != 0 && (hwcap & HWCAP_ASIMDHP) != 0;
    default:
        return true;
    }
#else
    return f != halide_target_feature_arm_dot_prod && f != halide_target_feature_arm_fp16;
#endif
}
#endif

// Whether this CPU has `features` (Halide's check; on ARM64 the kernel's word on the ARMv8.2
// features). Installed as Halide's can_use_target_features.
int can_use_features(int count, const uint64_t *features) {
#if defined(__aarch64__)
    if (count >= kFeatureWords) {
        // Decide the ARMv8.2 features here and leave the rest to Halide's check.
        uint64_t rest[kFeatureWords];
        std::memcpy(rest, features, sizeof(rest));
        for (halide_target_feature_t f :
             {halide_target_feature_arm_dot_prod, halide_target_feature_arm_fp16}) {
            if (!has(features, f)) continue;
            if (!cpu_has(f)) return 0;
            rest[f / 64] &= ~(uint64_t(1) << (f % 64));
        }
        return halide_default_can_use_target_features(kFeatureWords, rest);
    }
#endif
    return halide_default_can_use_target_features(count, features);
}

}  // namespace

void install_halide_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_set_error_handler(on_halide_error);
        halide_set_custom_can_use_target_features(can_use_features);
        install_cpu_thread_pool();
    });
}

std::string take_halide_error() {
    std::string s;
    s.swap(t_last_error);
    return s;
}

namespace {

// Whether kernels built for `features` run on this CPU.
bool can_use(const std::vector<halide_target_feature_t> &features) {
    install_halide_hooks();
    uint64_t bits[kFeatureWords] = {};
    for (auto f : features) bits[f / 64] |= uint64_t(1) << (f % 64);
    return can_use_features(kFeatureWords, bits) != 0;
}

}  // namespace

bool cpu_has_bf16_dot(const std::string &variant) {
#if defined(__x86_64__)
    if (variant != variants().front().name) return false;
    std::vector<halide_target_feature_t> features = variants().front().features;
    features.push_back(halide_target_feature_avx512_sapphirerapids);
    return can_use(features);
#else
    (void)variant;
    return false;
#endif
}

Int8Quads cpu_int8_quads(const std::string &variant) {
    if (variant != variants().front().name || !can_use(variants().front().features)) return Int8Quads::none;
#if defined(__x86_64__)
    // CPUID leaf 7, subleaf 0: ECX bit 11 is AVX512-VNNI.
    unsigned a = 7, b = 0, c = 0, d = 0;
    __asm__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return (c >> 11) & 1 ? Int8Quads::u8_i8 : Int8Quads::none;
#elif defined(__aarch64__)
    return Int8Quads::i8_i8;  // the dotprod_fp16 variant, which can_use checked against AT_HWCAP
#else
    return Int8Quads::none;
#endif
}

int cpu_variant_rank(const std::string &name) {
    for (size_t i = 0; i < variants().size(); i++)
        if (name == variants()[i].name) return (int)i;
    return -1;
}

std::vector<std::string> cpu_variant_names() {
    std::vector<std::string> names;
    for (const Variant &v : variants()) names.push_back(v.name);
    return names;
}

bool cpu_supports_variant(const std::string &name) {
    const int rank = cpu_variant_rank(name);
    return rank >= 0 && can_use(variants()[rank].features);
}

}  // namespace detail

void set_cpu_threads(int threads) {
    if (threads < 0) {
        throw Error(ErrorKind::InvalidArgument,
                    "set_cpu_threads(" + std::to_string(threads) + "): must be 0 (the default) or more");
    }
    detail::install_halide_hooks();  // the pool among them
    detail::set_pool_threads(threads);
}

int cpu_threads() { return detail::pool_threads(); }

}  // namespace deconv
