// Zeros on the device: the CUDA dispatcher's fill of the output positions of stride phases that
// receive no tap (runtime/gpu/gpu_executor.cpp), without a round trip through host memory. One kernel per
// element size (zero is all-zero bits in every dtype of the library); six dimensions, any
// strides, so every phase view of a rank 1-3 output (padded with unit axes) fits.
#include "Halide.h"
#include "schedules/gpu_elementwise_schedule.h"

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
        if (get_target().has_gpu_feature()) schedule_gpu_elementwise(out, x, threads);
    }

private:
    Halide::GeneratorOutput<Buffer<>> *output = nullptr;
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::ZeroFillGenerator, deconv_zero_fill)
