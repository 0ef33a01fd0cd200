// Bridges Halide's runtime to the library: its error messages become deconv::Error, and the
// choice among the CPU variants the kernels were built for can be observed and capped (the cap,
// DECONV_CPU_VARIANT, is the default of each plan's cpu_variant knob).
#pragma once

#include <string>
#include <vector>

namespace deconv {
namespace detail {

// Installs the handlers once (idempotent, thread-safe).
void install_halide_hooks();
// The last message Halide reported on this thread, then cleared.
std::string take_halide_error();
// Whether a plan on CPU variant `variant` runs the bf16 dot-product kernels: the avx512 variant,
// on x86-64 with AVX512-BF16 and VNNI (the features Halide's run-time check reads as
// avx512_sapphirerapids).
bool cpu_has_bf16_dot(const std::string &variant);
// The CPU variants this library knows, best first (avx512, avx2, sse41; dotprod_fp16, neon).
std::vector<std::string> cpu_variant_names();
// A variant's place in that order (0 best), or -1 for a name it does not know.
int cpu_variant_rank(const std::string &name);
// Whether this CPU's hardware runs kernels of variant `name`, whatever DECONV_CPU_VARIANT says.
bool cpu_supports_variant(const std::string &name);
// Whether kernels of the CPU variant `name` (variants' names: avx512, avx2, sse41; dotprod_fp16,
// neon) run on this CPU under the DECONV_CPU_VARIANT cap. False for names it does not know.
bool cpu_variant_runs(const char *name);
// Why this CPU has no CPU kernels, where the build's variants all need features it lacks (or the
// cap takes away); "" where it has them.
std::string missing_cpu_variant_reason();

}  // namespace detail
}  // namespace deconv
