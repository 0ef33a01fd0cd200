// Generator registration of the group-block kernels (schedules/group_block_facts.h): the phase
// convolution of phase_conv_algorithm.h on channels-last data whose vectors hold `group_block`
// groups' output channels, over the dispatcher's block-interleaved, zero-bordered input copy
// (group_block_layout.h). Interior only (the copy has the margins); the signature of
// deconv_phase_conv (PhaseKernelFn). In an executable of its own (generators/CMakeLists.txt).
#include "group_block_layout.h"
#include "kernel_generator.h"
#include "phase_conv_algorithm.h"
#include "schedules/cpu_group_blocks_schedule.h"

namespace deconv {
namespace gen {

class PhaseConvGroupBlocksGenerator : public ConvKernelGenerator<PhaseConvGroupBlocksGenerator> {
public:
    GeneratorParam<int> group_block{"group_block", 2, tiles::kGroupBlockMin, tiles::kGroupBlockMax};
    GeneratorParam<bool> bounded{"bounded", false};
    Input<int32_t> in_step_0{"in_step_0", 1, 1, 1 << 20};
    Input<int32_t> in_step_1{"in_step_1", 1, 1, 1 << 20};
    Input<int32_t> in_step_2{"in_step_2", 1, 1, 1 << 20};

    void configure() { add_buffers(); }

    void generate() {
        if (data_layout() != Layout::NXC || bounded || storage() != Float(32) || groups_vectorized() || pairs() ||
            get_target().has_gpu_feature()) {
            std::cerr << "deconv generator: the group-block kernel is f32, channels-last (layout=nxc), interior "
                         "(bounded=false), on a CPU\n";
            std::exit(1);
        }
        const int b = group_block;
        std::vector<Expr> steps = {in_step_0, in_step_1, in_step_2};
        steps.resize(rank);
        const GroupBlockFilter w = group_block_filter(*filter, rank, b);
        ConvStages p = define_phase_conv(group_block_input(*input, rank, b), w.logical, *filter, Layout::NXC, true,
                                         rank, steps, storage(), false, store_bias());
        const std::vector<Var> args = p.out_args();
        (*output)(args) = stored_value(p);
        p.out.compute_inline();
        p.out = *output;
        // The weights are read through their block-order copy: any packing.
        filter->dim(0).set_stride(Expr());
        // Channels and groups counted from 0 (as the dispatcher passes them), so that group
        // g = b * go + gi is gi modulo b: the block's lanes then read adjacent input elements.
        for (int d = 0; d < 2; d++) {
            output->dim(d).set_min(0);
            input->dim(d).set_min(0);
        }
        schedule_cpu_group_blocks(p, *output, w.blocked, w.gi, get_target(), b, input->dim(2).stride());
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvGroupBlocksGenerator, deconv_phase_conv_group_blocks)
