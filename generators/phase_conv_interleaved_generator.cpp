// Generator registration of the interleaved backprop kernel: the phase convolution with the
// stride phases of the innermost axis computed together and stored as dense rows
// (define_interleaved_phase_conv in phase_conv_algorithm.h, schedule in
// schedules/cpu_interleaved_schedule.h). Channels-first data, position-vectorized, interior
// only; the stride of the innermost axis is a compile-time parameter (the shuffles that
// interleave the phases need it), its dilation 1.
#include "kernel_generator.h"
#include "phase_conv_algorithm.h"
#include "schedules/cpu_interleaved_schedule.h"

namespace deconv {
namespace gen {

class PhaseConvInterleavedGenerator : public ConvKernelGenerator<PhaseConvInterleavedGenerator> {
public:
    // Stride of the innermost spatial axis: the phases interleaved per tile.
    GeneratorParam<int> x_stride{"x_stride", 2, 2, 8};
    // The blocked variant for layers with many output channels (cpu_interleaved_schedule.h).
    GeneratorParam<bool> blocked{"blocked", false};
    // A phase with one tap fewer than the others (-1: none), whose missing tap the reduction
    // skips (define_interleaved_phase_conv): odd kernels at stride 2 with an odd pads_begin put
    // it at phase 0 (grouped32_up: kernel 3, pad 1).
    GeneratorParam<int> short_phase{"short_phase", -1, -1, 7};

    // pads_begin of the innermost axis (phase ph of output group q reads input
    // q + floor((ph + pad_begin_0) / stride) - j). The dispatcher passes it modulo the stride and
    // moves the input's origin by the rest (the schedule specializes common residues).
    Input<int32_t> pad_begin_0{"pad_begin_0", 0, 0, 1 << 30};
    // Input step per output step of the outer axes (their phase views, as in deconv_phase_conv).
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
        if (data_layout() != Layout::NCX || channel_major()) {
            std::cerr << "deconv generator: the interleaved phase kernel is channels-first and position-vectorized\n";
            std::exit(1);
        }
        std::vector<Expr> steps = {1, in_step_1, in_step_2};
        steps.resize(rank);
        InterleavedStages p = define_interleaved_phase_conv(logical_input_of(false), Func(*filter), *filter, rank, x_stride,
                                                            pad_begin_0, steps, storage(), short_phase, store_bias());
        const std::vector<Var> args = p.args();
        (*output)(args) = stored(p.acc(std::vector<Expr>(args.begin(), args.end())));
        p.out.compute_inline();
        p.out = *output;
        // Phases side by side, groups of `x_stride` apart: dense rows the schedule stores with
        // interleaving shuffles. The filter's taps and the outer axes are strided views.
        output->dim(0).set_stride(1);
        output->dim(0).set_extent(x_stride);
        output->dim(0).set_min(0);
        output->dim(1).set_stride(x_stride);
        filter->dim(0).set_stride(Expr());
        // Output channels innermost in the packed filter (pack_interleaved): a tile's weight
        // broadcasts are constant offsets from one address per tap.
        filter->dim(rank + 1).set_stride(1);

        ScheduleParams sp;
        sp.vectors = vectors;
        sp.co_tile = co_tile;
        sp.unroll_taps = unroll_taps;
        sp.q_block = q_block;
        sp.l2_input_bytes = l2_input_kib * 1024;
        if (get_target().has_gpu_feature()) {
            std::cerr << "deconv generator: the interleaved phase kernel is a CPU kernel\n";
            std::exit(1);
        }
        schedule_cpu_interleaved(p, *output, x_stride, pad_begin_0, get_target(), accumulator_type(storage()), sp,
                                 blocked);
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvInterleavedGenerator, deconv_phase_conv_interleaved)
