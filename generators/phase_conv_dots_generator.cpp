// Generator registration of the channels-last backprop kernel that vectorizes input channels
// (few output channels per group, many input channels: schedules/cpu_channel_dots_schedule.h),
// the phase convolution of phase_conv_algorithm.h with the signature of deconv_phase_conv
// (PhaseKernelFn). In the few-channel generator executable (generators/CMakeLists.txt).
#include "kernel_generator.h"
#include "phase_conv_algorithm.h"
#include "schedules/cpu_channel_dots_schedule.h"

namespace deconv {
namespace gen {

class PhaseConvDotsGenerator : public ConvKernelGenerator<PhaseConvDotsGenerator> {
public:
    // false: the interior variant (no bounds tests), as deconv_phase_conv's.
    GeneratorParam<bool> bounded{"bounded", true};
    Input<int32_t> in_step_0{"in_step_0", 1, 1, 1 << 20};
    Input<int32_t> in_step_1{"in_step_1", 1, 1, 1 << 20};
    Input<int32_t> in_step_2{"in_step_2", 1, 1, 1 << 20};

    void configure() { add_buffers(); }

    void generate() {
        if (data_layout() != Layout::NXC || groups_vectorized() || pairs() || get_target().has_gpu_feature()) {
            std::cerr << "deconv generator: the channel-dot kernel is channels-last (layout=nxc), on a CPU\n";
            std::exit(1);
        }
        std::vector<Expr> steps = {in_step_0, in_step_1, in_step_2};
        steps.resize(rank);
        const Func w = logical_filter_of();
        ConvStages p = define_phase_conv(logical_input_of(bounded), w, *filter, Layout::NXC, true, rank, steps, storage(),
                                         false, store_bias());
        const std::vector<Var> args = p.out_args();
        (*output)(args) = stored_value(p);
        p.out.compute_inline();
        p.out = *output;
        // The weights are read through their copy (the schedule's): any packing.
        filter->dim(0).set_stride(Expr());
        ScheduleParams sp;
        sp.q_tile = q_tile;
        schedule_cpu_channel_dots(p, w, *output, get_target(), accumulator_type(storage()), sp, bounded);
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvDotsGenerator, deconv_phase_conv_dots)
