// Generator registration of the interleaved backprop kernel of channels-last depthwise layers
// (one input and one output channel per group): define_interleaved_phase_conv
// (phase_conv_algorithm.h), every stride phase of the innermost axis in one call, the groups
// vectorized (schedules/cpu_interleaved_groups_schedule.h). The per-phase group kernels
// (vectorize=groups) store a phase's outputs s positions apart, so at stride 8 each of the 64
// phases of fcn8s_upscore8_nxc wrote every eighth 84-byte run of rows spread over the whole
// 23 MB output, and every cache line was fetched again per phase. Here a call writes whole rows.
// An executable of its own (generators/CMakeLists.txt), so that adding it rebuilds no other kernel.
#include "kernel_generator.h"
#include "phase_conv_algorithm.h"
#include "schedules/cpu_interleaved_groups_schedule.h"

namespace deconv {
namespace gen {

class PhaseConvInterleavedGroupsGenerator : public ConvKernelGenerator<PhaseConvInterleavedGroupsGenerator> {
public:
    // Stride of the innermost spatial axis: the phases interleaved per tile.
    GeneratorParam<int> x_stride{"x_stride", 2, 2, 8};

    // The signature of deconv_phase_conv_interleaved (runtime/kernels/kernel_registry.h,
    // InterleavedKernelFn): pads_begin of the innermost axis modulo the stride, the outer axes'
    // input steps.
    Input<int32_t> pad_begin_0{"pad_begin_0", 0, 0, 1 << 30};
    Input<int32_t> in_step_1{"in_step_1", 1, 1, 1 << 20};
    Input<int32_t> in_step_2{"in_step_2", 1, 1, 1 << 20};

    void configure() {
        const int d = rank;
        input = add_input<Buffer<>>("input", storage(), d + 3);
        filter = add_input<Buffer<>>("filter", storage(), d + 4);
        add_epilogue_inputs();
        output = add_output<Buffer<>>("output", storage(), d + 4);
    }

    void generate() {
        if (data_layout() != Layout::NXC || !groups_vectorized() || get_target().has_gpu_feature()) {
            std::cerr << "deconv generator: the interleaved group kernel needs layout=nxc vectorize=groups on a CPU target\n";
            std::exit(1);
        }
        std::vector<Expr> steps = {1, in_step_1, in_step_2};
        steps.resize(rank);
        InterleavedStages p = define_interleaved_phase_conv(logical_input_of(false), Func(*filter), *filter, rank, x_stride,
                                                            pad_begin_0, steps, storage(), -1, store_bias());
        const std::vector<Var> args = p.args();
        (*output)(args) = stored(p.acc(std::vector<Expr>(args.begin(), args.end())));
        p.out.compute_inline();
        p.out = *output;
        // Output [ph, q_0 .. q_{D-1}, co, g, n] and filter [j, ph, k_1 .. k_{D-1}, co, ci, g] as the
        // channels-first interleaved kernel's, but the groups dense (and one channel each): the
        // phases are strided views of the channels-last rows.
        output->dim(0).set_stride(Expr());
        output->dim(0).set_min(0);
        output->dim(0).set_extent(x_stride);
        output->dim(rank + 1).set_min(0);
        output->dim(rank + 1).set_extent(1);
        output->dim(rank + 2).set_stride(1);
        bias->dim(1).set_stride(1);
        input->dim(0).set_extent(1);
        input->dim(1).set_stride(1);
        filter->dim(0).set_stride(Expr());
        filter->dim(rank + 1).set_extent(1);
        filter->dim(rank + 2).set_extent(1);
        filter->dim(rank + 3).set_stride(1);

        ScheduleParams sp;
        sp.vectors = vectors;
        sp.q_tile = q_tile;
        schedule_cpu_interleaved_groups(p, *output, x_stride, pad_begin_0, get_target(), accumulator_type(storage()), sp);
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvInterleavedGroupsGenerator, deconv_phase_conv_interleaved_groups)
