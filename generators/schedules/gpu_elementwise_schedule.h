// GPU schedule of the device helpers (zero_fill_generator.cpp, strided_copy_generator.cpp): one
// thread per element of a six-axis view with any strides.
#pragma once

#include "Halide.h"

#include <vector>

namespace deconv {
namespace gen {

// `x`: the six pure axes of `out`, innermost first. Threads along the innermost axis, every other
// axis fused into the block index.
inline void schedule_gpu_elementwise(Halide::Func out, const std::vector<Halide::Var> &x, int threads) {
    using namespace Halide;
    Var xo("xo"), xi("xi"), b1("b1"), b2("b2"), b3("b3"), b4("b4"), block("block");
    out.split(x[0], xo, xi, threads, TailStrategy::GuardWithIf)
        .fuse(xo, x[1], b1)
        .fuse(b1, x[2], b2)
        .fuse(b2, x[3], b3)
        .fuse(b3, x[4], b4)
        .fuse(b4, x[5], block)
        .gpu_blocks(block)
        .gpu_threads(xi);
}

}  // namespace gen
}  // namespace deconv
