// Bridges Halide's runtime to the library: its error messages become deconv::Error, and the
// x86 variant choice of the multi-target kernels can be observed and capped.
#pragma once

#include <string>

namespace deconv {
namespace detail {

// Installs the handlers once (idempotent, thread-safe).
void install_halide_hooks();
// The last message Halide reported on this thread, then cleared.
std::string take_halide_error();
// Whether the CPU runs the bf16 dot-product kernels (x86-64 with AVX512-BF16 and VNNI, the
// features Halide's run-time check reads as avx512_sapphirerapids) and DECONV_CPU_VARIANT
// allows avx512.
bool cpu_has_bf16_dot();

}  // namespace detail
}  // namespace deconv
