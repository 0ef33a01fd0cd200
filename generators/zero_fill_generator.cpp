// Zeros on the device: the CUDA dispatcher's fill of the output positions of stride phases that
// receive no tap (runtime/plan.cpp), without a round trip through host memory. One kernel per
// element size (zero is all-zero bits in every dtype of the library); six dimensions, any
// strides, so every phase view of a rank 1-3 output (padded with unit axes) fits.
#include "Halide.h"

namespace deconv {
namespace gen {

class ZeroFillGenerator : public Halide::Generator<ZeroFillGenerator> {
public:
    GeneratorParam<int> bits{"bits", 32, 8, 64};
    GeneratorParam<int> threads{"threads", 128, 1, 1024};

    void configure() { output = add_output<Buffer<>>("output", UInt(bits), 6); }

    void generate() {
        std::vector<Var> x;
        for (int i = 0; i < 6; i++) x.emplace_back("x" + std::to_string(i));
        Func out = *output;
        out(x) = cast(UInt(bits), 0);
        output->dim(0).set_stride(Expr());
        if (get_target().has_gpu_feature()) {
            // Threads along the innermost axis, every other axis fused into the block index.
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
    }

private:
    Halide::GeneratorOutput<Buffer<>> *output = nullptr;
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::ZeroFillGenerator, deconv_zero_fill)
