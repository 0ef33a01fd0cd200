// What the GPU dispatch tests share, whichever backend runs the kernels: CUDA on a device
// (cuda_test.cpp) or OpenCL on the CPU through pocl (tests/opencl). Each test supplies how one
// plan runs; the problems, the two data formats and the checks of the result are these.
#pragma once

#include "check.h"
#include "layout_support.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace deconv_test {

// A GPU run's host tensors: input and filter in layouts from `layout(shape)`, filled with the
// values; the output in its layout, filled with a byte pattern that `before` keeps, so that
// check_gpu_output can see what the run wrote.
struct GpuRunBuffers {
    StridedLayout li, lw, lo;
    Buffer in, w, out;
    std::vector<unsigned char> before;
};
template <typename Layout>
GpuRunBuffers gpu_run_buffers(deconv::DType t, const std::vector<int64_t> &in_shape, const std::vector<int64_t> &w_shape,
                              const std::vector<int64_t> &out_shape, const std::vector<double> &in_values,
                              const std::vector<double> &w_values, const Layout &layout) {
    GpuRunBuffers b;
    b.li = layout(in_shape);
    b.lw = layout(w_shape);
    b.lo = layout(out_shape);
    b.in = Buffer(t, in_shape, b.li.span);
    b.w = Buffer(t, w_shape, b.lw.span);
    b.out = Buffer(t, out_shape, b.lo.span);
    fill_strided(b.in, in_shape, b.li.strides, in_values);
    fill_strided(b.w, w_shape, b.lw.strides, w_values);
    b.out.fill_bytes(0xCD);
    b.before = b.out.payload();
    return b;
}

// A GPU run's output checked: nothing written outside the buffer or into the view's gaps
// (`before`: the buffer's bytes before the run), and the values within compare_to_reference's
// per-dtype bounds of `ref`. `path` names the run in messages.
inline ::testing::AssertionResult check_gpu_output(const char *path, deconv::DType t, const Buffer &out,
                                                   const std::vector<int64_t> &out_shape, const StridedLayout &lo,
                                                   const std::vector<unsigned char> &before,
                                                   const deconv_ref::Result &ref) {
    if (!out.guards_intact()) return ::testing::AssertionFailure() << path << ": wrote outside the buffer";
    const auto read = read_strided(out, out_shape, lo, before);
    if (read.gap >= 0)
        return ::testing::AssertionFailure() << path << ": wrote into a gap of the output view at element " << read.gap;
    auto r = compare_to_reference(t, read.values, ref);
    if (!r) return ::testing::AssertionFailure() << path << ": " << r.message();
    return r;
}

// One problem (NCX shapes and values, its reference result in NCX) in both data formats:
// `run(attrs, in_shape, in_values, ref)` runs it with `attrs.data_format` set, on values and a
// reference in that format, and returns the check of its result (a deconv::Error counts as a
// failure). Returns the failures, reporting the first few of the test.
template <typename Run>
int check_both_formats(deconv::Attributes attrs, const std::vector<int64_t> &in_shape_ncx, const std::vector<double> &x,
                       const deconv_ref::Result &ref_ncx, int index, const std::string &what, int already_failed,
                       const Run &run) {
    int failed = 0;
    for (deconv::DataFormat f : {deconv::DataFormat::NCX, deconv::DataFormat::NXC}) {
        attrs.data_format = f;
        const auto in_shape = shape_in(f, in_shape_ncx);
        const auto xin = f == deconv::DataFormat::NXC ? ncx_to_nxc(x, in_shape_ncx) : x;
        std::string error;
        try {
            const ::testing::AssertionResult r = run(attrs, in_shape, xin, result_in(f, ref_ncx));
            if (!r) error = r.message();
        } catch (const deconv::Error &e) {
            error = e.what();
        }
        if (!error.empty() && already_failed + ++failed <= 10)
            ADD_FAILURE() << "case #" << index << " " << what << " " << deconv::data_format_name(f) << ": " << error;
    }
    return failed;
}

// The backprop sweep's first 60 problems of a (dtype, rank) shard (stride above kernel: phases
// without taps; output_shape; auto_pad; depthwise; medium rows and channel counts for the
// register tiles), each handed to `check(op, dtype, input shape, filter shape, attributes,
// output_shape, input, filter, reference in NCX, index, what, failures so far)`, which returns
// its failures. Some problem must have phases without taps (the zero fills).
template <typename Check>
void check_backprop_sweep(deconv::DType t, int rank, const Check &check) {
    int failed = 0, zero_phase_cases = 0;
    for (int i = 0; i < 60; i++) {
        const GenCase c = make_case(t, rank, i);
        for (int s = 0; s < static_cast<int>(c.p.strides.size()); s++)
            if (c.p.strides[s] > c.p.filter_shape[c.p.filter_shape.size() - rank + s]) {
                zero_phase_cases++;
                break;
            }
        failed += check(lib_op(c.p), t, c.p.input_shape, c.p.filter_shape, to_lib_attrs(c.p), c.p.output_shape, c.input,
                        c.filter, deconv_ref::compute(c.p, c.input, c.filter), i, describe(c), failed);
    }
    EXPECT_EQ(failed, 0);
    EXPECT_GT(zero_phase_cases, 0) << "no case had a stride above its kernel (phases without taps)";
}

// Problems that reach every specialization of the GPU schedule (generators/schedules/gpu_schedule.h)
// in `rank` dimensions, for the register tiles' facts in tile_facts.h: channels-first phases
// narrower than gpu_narrow_width() with a warp of channels (threads along channels), wide ones
// (threads along positions: the large channel x row tile from gpu_big_tile_outputs() outputs,
// the small one below), few channels (rows alone), rows shorter than a row tile and rows
// narrower than a position tile (one element per thread), each with channel counts and rows that
// leave tails, and input channels per group that divide gpu_ci_unroll() and that do not.
// `big_tile_outputs`: the outputs per launch from which the kernels take the large tile. Handed to
// `check` as check_backprop_sweep does.
template <typename Check>
void check_schedule_mappings(deconv::DType t, int rank, int64_t big_tile_outputs, const Check &check) {
    struct Shape {
        const char *what;
        int64_t rows, width, c_in, c_out, kernel, stride;
    };
    // The large tile's launch, 2 groups of 37 channels and 9 rows (3D: 2 planes), just over
    // big_tile_outputs; kernel 1 at stride 1 keeps the reference cheap.
    const int64_t big_rows = rank >= 2 ? 9 : 1, big_planes = rank >= 3 ? 2 : 1;
    const int64_t big_width = std::max<int64_t>(30, big_tile_outputs / (2 * 37 * big_rows * big_planes) + 1);
    const Shape shapes[] = {
        {"narrow phases, a warp of channels", 9, 7, 4, 37, 3, 2},
        {"wide rows, the small channel x row tile", 6, 30, 3, 37, 3, 1},
        {"wide rows, the large channel x row tile", 9, big_width, 4, 37, 1, 1},
        {"wide rows, few channels", 6, 30, 4, 3, 3, 1},
        {"narrow phases, few channels", 9, 7, 3, 12, 3, 2},
        {"rows shorter than a row tile", 1, 30, 4, 37, 3, 1},
        {"phases narrower than a position tile", 9, 3, 3, 37, 3, 2},
    };
    int failed = 0, index = 0;
    for (const Shape &s : shapes) {
        std::vector<int64_t> in_shape = {1, 2 * s.c_in}, w_shape = {2, s.c_in, s.c_out};
        deconv::Attributes a;
        const int64_t spatial[3] = {2, s.rows, s.width};
        for (int i = 3 - rank; i < 3; i++) {
            in_shape.push_back(spatial[i]);
            w_shape.push_back(s.kernel);
            a.strides.push_back(s.stride);
            a.dilations.push_back(1);
            a.pads_begin.push_back((s.kernel - 1) / 2);
            a.pads_end.push_back((s.kernel - 1) / 2);
            a.output_padding.push_back(0);
        }
        const deconv_ref::Problem p = ref_problem(true, in_shape, w_shape, a);
        std::mt19937 rng(static_cast<uint32_t>(17 + index));
        const auto x = random_values(t, deconv_ref::product(p.input_shape), rng);
        const auto w = random_values(t, deconv_ref::product(p.filter_shape), rng);
        failed += check(deconv::Op::GroupConvolutionBackpropData, t, p.input_shape, p.filter_shape, to_lib_attrs(p),
                        std::nullopt, x, w, deconv_ref::compute(p, x, w), index, std::string(s.what) + ": " +
                        deconv_ref::describe(p), failed);
        index++;
    }
    EXPECT_EQ(failed, 0);
}

}  // namespace deconv_test
