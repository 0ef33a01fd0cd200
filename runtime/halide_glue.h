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

}  // namespace detail
}  // namespace deconv
