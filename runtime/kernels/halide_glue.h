// Bridges Halide's runtime to the library: its error messages become deconv::Error, and the CPU
// variants the kernels were built for are named and checked against this CPU (which one a plan
// runs is its policy's cpu_variant: plan/policy.h).
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
// The 4-way int8 dot product a plan on CPU variant `variant` runs the quantized quad kernels on:
// vpdpbusd (u8 x i8) on the avx512 variant of x86-64 CPUs with AVX512-VNNI (Cascade Lake, Ice
// Lake, Sapphire Rapids, Zen 4 on); sdot (i8 x i8) on the dotprod_fp16 variant of ARM64.
enum class Int8Quads { none, u8_i8, i8_i8 };
Int8Quads cpu_int8_quads(const std::string &variant);
// The CPU variants this library knows, best first (avx512, avx2, sse41; dotprod_fp16, neon).
std::vector<std::string> cpu_variant_names();
// A variant's place in that order (0 best), or -1 for a name it does not know.
int cpu_variant_rank(const std::string &name);
// Whether this CPU runs kernels of variant `name`; false for a name it does not know.
bool cpu_supports_variant(const std::string &name);

}  // namespace detail
}  // namespace deconv
