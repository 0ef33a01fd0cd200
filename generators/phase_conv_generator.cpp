// Generator registration of the backprop kernels: the phase convolution, specialised per rank,
// dtype and data layout by generator parameters, scheduled per target class. The algorithm is
// in phase_conv_algorithm.h, the schedules in schedules/.
#include "kernel_generator.h"
#include "phase_conv_algorithm.h"

namespace deconv {
namespace gen {

class PhaseConvGenerator : public ConvKernelGenerator<PhaseConvGenerator> {
public:
    // false: the interior variant, which assumes every tap lands inside the input (the
    // dispatcher runs it on phases where no tap leaves the input, e.g. kernel == stride).
    GeneratorParam<bool> bounded{"bounded", true};

    // Input step per output step of each axis (dilation / gcd(stride, dilation)), innermost first.
    // Always three, whatever the rank, so every kernel has the same C signature.
    Input<int32_t> in_step_0{"in_step_0", 1, 1, 1 << 20};
    Input<int32_t> in_step_1{"in_step_1", 1, 1, 1 << 20};
    Input<int32_t> in_step_2{"in_step_2", 1, 1, 1 << 20};

    void configure() { add_buffers(); }

    void generate() {
        std::vector<Expr> steps = {in_step_0, in_step_1, in_step_2};
        steps.resize(rank);
        ConvStages p = define_phase_conv(logical_input_of(bounded), logical_filter_of(), *filter, data_layout(), channel_major(),
                                         rank, steps, storage(), pairs(), store_bias());
        finish(p, {}, true, bounded);
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvGenerator, deconv_phase_conv)
