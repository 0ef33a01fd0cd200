#include "phase_pipeline.h"

#include "phase_conv_algorithm.h"

#include <string>

namespace deconv_asb {

PhasePipeline build_phase_pipeline(const SuiteLayer &layer, const PhaseShape &shape,
                                   const std::vector<int64_t> &in_step) {
    using namespace Halide;
    namespace gen = deconv::gen;
    const int rank = layer.rank();
    const Type f32 = Float(32);
    PhasePipeline p{ImageParam(f32, rank + 3, "input"), ImageParam(f32, rank + 3, "filter"), {}, {}, {}};
    std::vector<Expr> steps;
    for (int h = 0; h < rank; h++) {
        p.in_step.emplace_back("in_step_" + std::to_string(h));
        p.in_step.back().set_estimate((int32_t)in_step[rank - 1 - h]);
        steps.push_back(p.in_step.back());
    }

    // The same calls, in the same order, as PhaseConvGenerator::generate() and finish() for
    // layout=ncx, vectorize=positions (channel_major false), dtype=f32.
    const Func input = gen::logical_input(p.input, p.input, gen::Layout::NCX, rank, f32, shape.bounded);
    const Func filter = gen::logical_filter(p.filter, /*channel_major=*/false, rank);
    gen::ConvStages s = gen::define_phase_conv(input, filter, p.filter, gen::Layout::NCX,
                                               /*channel_major=*/false, rank, steps, f32);
    p.output = s.out;
    // The runtime hands strided views: a phase's taps and output positions are `stride` apart
    // (finish() lifts the same two unit-stride constraints).
    p.filter.dim(0).set_stride(Expr());
    p.output.output_buffer().dim(0).set_stride(Expr());

    // Estimates: the layer's extents in the buffers' dimension order (innermost first).
    for (int h = 0; h < rank; h++) {
        const int i = rank - 1 - h;  // spec axis
        p.input.dim(h).set_estimate((int)-shape.in_offset[i], (int)layer.x[i]);
        p.filter.dim(h).set_estimate(0, (int)shape.tap_count[i]);
        p.output.set_estimate(s.q[h], 0, (int)shape.out_count[i]);
    }
    p.input.dim(rank).set_estimate(0, (int)layer.c_in);
    p.input.dim(rank + 1).set_estimate(0, (int)layer.g);
    p.input.dim(rank + 2).set_estimate(0, (int)layer.n);
    p.filter.dim(rank).set_estimate(0, (int)layer.c_out);
    p.filter.dim(rank + 1).set_estimate(0, (int)layer.c_in);
    p.filter.dim(rank + 2).set_estimate(0, (int)layer.g);
    p.output.set_estimate(s.co, 0, (int)layer.c_out);
    p.output.set_estimate(s.g, 0, (int)layer.g);
    p.output.set_estimate(s.n, 0, (int)layer.n);
    p.pipeline = Pipeline(p.output);
    return p;
}

}  // namespace deconv_asb
