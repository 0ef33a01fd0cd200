// A copy between two device views of the same six-axis shape, each with any strides: the CUDA
// dispatcher packs a filter that lives in device memory into the channel-contiguous order the GPU
// kernels read best (runtime/gpu/gpu_executor.cpp), without a round trip through host memory. One
// kernel per element size: a copy moves bits, whatever the dtype.
#include "Halide.h"
#include "schedules/gpu_elementwise_schedule.h"

namespace deconv {
namespace gen {

class StridedCopyGenerator : public Halide::Generator<StridedCopyGenerator> {
public:
    GeneratorParam<int> bits{"bits", 32, 8, 64};
    GeneratorParam<int> threads{"threads", 128, 1, 1024};

    void configure() {
        input = add_input<Buffer<>>("input", UInt(bits), 6);
        output = add_output<Buffer<>>("output", UInt(bits), 6);
    }

    void generate() {
        std::vector<Var> x;
        for (int i = 0; i < 6; i++) x.emplace_back("x" + std::to_string(i));
        Func out = *output;
        out(x) = (*input)(x);
        input->dim(0).set_stride(Expr());
        output->dim(0).set_stride(Expr());
        if (get_target().has_gpu_feature()) schedule_gpu_elementwise(out, x, threads);
    }

private:
    Halide::GeneratorInput<Buffer<>> *input = nullptr;
    Halide::GeneratorOutput<Buffer<>> *output = nullptr;
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::StridedCopyGenerator, deconv_strided_copy)
