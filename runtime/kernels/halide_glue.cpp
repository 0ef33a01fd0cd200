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
// The features that tell the variants apart: a cap refuses those its variant lacks.
constexpr halide_target_feature_t kCapFeatures[] = {halide_target_feature_arm_dot_prod,
                                                    halide_target_feature_arm_fp16};
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
constexpr halide_target_feature_t kCapFeatures[] = {
    halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_avx512,
    halide_target_feature_fma, halide_target_feature_f16c};
#endif

constexpr int kFeatureWords = (halide_target_feature_end + 63) / 64;

bool has(const uint64_t *bits, halide_target_feature_t f) { return (bits[f / 64] >> (f % 64)) & 1; }

// Rank of the cap from DECONV_CPU_VARIANT: 0 = no cap, else the index of the best allowed.
int cap_index() {
    static const int cap = [] {
        const char *env = std::getenv("DECONV_CPU_VARIANT");
        if (!env || !*env) return 0;
        const auto &v = variants();
        for (size_t i = 0; i < v.size(); i++) {
            if (std::strcmp(env, v[i].name) == 0) return (int)i;
        }
        return 0;
    }();
    return cap;
}

#if defined(__aarch64__)
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
// features).
int hardware_has_features(int count, const uint64_t *features);

int can_use_features(int count, const uint64_t *features) {
    const int cap = cap_index();
    if (cap > 0 && count >= kFeatureWords) {
        // Refuse any variant that needs a feature the capped variant lacks.
        const auto &capped = variants()[cap].features;
        for (halide_target_feature_t f : kCapFeatures) {
            bool allowed = false;
            for (auto c : capped) allowed = allowed || c == f;
            if (has(features, f) && !allowed) return 0;
        }
    }
    return hardware_has_features(count, features);
}

int hardware_has_features(int count, const uint64_t *features) {
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

// Whether kernels built for `features` run here: under the variant cap (DECONV_CPU_VARIANT), or
// on the hardware alone (`capped` false).
bool can_use(const std::vector<halide_target_feature_t> &features, bool capped = true) {
    install_halide_hooks();
    uint64_t bits[kFeatureWords] = {};
    for (auto f : features) bits[f / 64] |= uint64_t(1) << (f % 64);
    return (capped ? can_use_features(kFeatureWords, bits) : hardware_has_features(kFeatureWords, bits)) != 0;
}

}  // namespace

bool cpu_has_bf16_dot(const std::string &variant) {
#if defined(__x86_64__)
    if (variant != variants().front().name) return false;
    std::vector<halide_target_feature_t> features = variants().front().features;
    features.push_back(halide_target_feature_avx512_sapphirerapids);
    return can_use(features, false);
#else
    (void)variant;
    return false;
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
    return rank >= 0 && can_use(variants()[rank].features, false);
}

bool cpu_variant_runs(const char *name) {
    for (const Variant &v : variants()) {
        if (std::strcmp(v.name, name) == 0) return can_use(v.features);
    }
    return false;
}

std::string missing_cpu_variant_reason() {
    std::string built;
    for (const std::string &b : built_cpu_variants()) {
        if (cpu_variant_runs(b.c_str())) return "";
        built += (built.empty() ? "" : ", ") + b;
    }
    const int cap = cap_index();
    return "this library's CPU kernels are built for " + built + " only, which " +
           (cap > 0 ? "DECONV_CPU_VARIANT=" + std::string(variants()[cap].name) + " or this CPU"
                    : std::string("this CPU")) +
           " does not allow: a library built with -DDECONV_CPU_VARIANTS=native runs on CPUs like its build "
           "machine's; build with -DDECONV_CPU_VARIANTS=all for every variant";
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

std::string cpu_variant() {
    for (const std::string &b : detail::built_cpu_variants()) {
        if (detail::cpu_variant_runs(b.c_str())) return b;
    }
    return "none";
}

}  // namespace deconv
