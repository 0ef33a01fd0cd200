// The README's "Library API" snippet as a program: tests/readme/CMakeLists.txt copies the code
// between its ```c++ fence and the next fence out of README.md into readme_snippet.inc at
// configure time, and this file declares what the snippet assumes (the buffers x, w, y of the
// spec's 2D example and views of them), runs it and checks two outputs. So the test
// readme.api_snippet fails when the code a reader copies stops compiling or running.
#include <deconv/deconv.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

int main() {
    using deconv::DType;
    if (!deconv::has_kernel(deconv::Op::GroupConvolutionBackpropData, 2, DType::f32, deconv::DataFormat::NCX,
                            deconv::Device::CPU)) {
        std::puts("[SKIP] this build has no f32 2D kernels (DECONV_DTYPES, DECONV_RANKS)");
        return 77;
    }
    // data [1, 20, 224, 224] of ones, filter [4, 5, 2, 3, 3] of halves, output [1, 8, 447, 447].
    std::vector<float> x(1 * 20 * 224 * 224, 1.0f), w(4 * 5 * 2 * 3 * 3, 0.5f), y(1 * 8 * 447 * 447, -1.0f);
    const deconv::ConstTensorView x_view(x.data(), DType::f32, {1, 20, 224, 224});
    const deconv::ConstTensorView w_view(w.data(), DType::f32, {4, 5, 2, 3, 3});
    const deconv::TensorView y_view{y.data(), DType::f32, {1, 8, 447, 447}};
    try {
#include "readme_snippet.inc"
    } catch (const deconv::Error &e) {
        std::fprintf(stderr, "the README's snippet threw: %s\n", e.what());
        return 1;
    }
    // Stride 2, pad 1, kernel 3: an output at odd (row, column) takes 2 x 2 taps, one at even
    // (row, column) a single tap, each summing 5 input channels of 1 x 0.5.
    const float odd = y[1 * 447 + 1], even = y[2 * 447 + 2];
    if (std::fabs(odd - 10.0f) > 1e-5f || std::fabs(even - 2.5f) > 1e-5f) {
        std::fprintf(stderr, "the README's snippet computed y[0, 0, 1, 1] = %g (want 10), y[0, 0, 2, 2] = %g (want 2.5)\n",
                     odd, even);
        return 1;
    }
    std::puts("Success!");
    return 0;
}
