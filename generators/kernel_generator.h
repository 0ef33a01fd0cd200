// What the kernel generators share: the dtype and layout parameters, the buffer inputs and
// output in the layout's dimension order, and handing the algorithm to the schedule of the
// target class. Each generator (phase_conv_generator.cpp, group_conv_generator.cpp) adds its own
// scalar inputs and algorithm.
#pragma once

#include "Halide.h"
#include "conv_stages.h"
#include "data_layout.h"
#include "schedules/cpu_channels_last_schedule.h"
#include "schedules/cpu_groups_schedule.h"
#include "schedules/cpu_schedule.h"
#include "schedules/cpu_tap_rows_schedule.h"
#include "schedules/gpu_schedule.h"
#include "schedules/schedule_params.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

namespace deconv {
namespace gen {

// Halide 14 has no bfloat16 GeneratorParam<Type>: the dtype travels as a string.
inline Halide::Type storage_type(const std::string &name) {
    using namespace Halide;
    static const std::map<std::string, Type> types = {
        {"f32", Float(32)}, {"f16", Float(16)}, {"bf16", BFloat(16)}, {"f64", Float(64)},
        {"i8", Int(8)},     {"u8", UInt(8)},    {"i32", Int(32)},
    };
    auto it = types.find(name);
    if (it == types.end()) {
        std::cerr << "deconv generator: unknown dtype '" << name << "'\n";
        std::exit(1);
    }
    return it->second;
}

inline Layout parse_layout(const std::string &name) {
    if (name == "ncx") return Layout::NCX;
    if (name == "nxc") return Layout::NXC;
    std::cerr << "deconv generator: unknown layout '" << name << "' (ncx or nxc)\n";
    std::exit(1);
}

// The parameters and buffers every kernel has. Derived generators call add_buffers() from
// configure() and finish() at the end of generate().
template <typename T>
class ConvKernelGenerator : public Halide::Generator<T> {
public:
    Halide::GeneratorParam<int> rank{"rank", 2, 1, 3};
    Halide::GeneratorParam<std::string> dtype{"dtype", "f32"};
    // Memory order of data and output: "ncx" (channels first) or "nxc" (channels last).
    Halide::GeneratorParam<std::string> layout{"layout", "ncx"};
    // What the register tile vectorizes: "positions" (channels-first data only) or "channels"
    // (output channels; the channels-last schedule). "auto": channels under NXC, positions under
    // NCX. "groups": the groups (channels-last depthwise kernels, one input and one output
    // channel per group; cpu_groups_schedule.h).
    Halide::GeneratorParam<std::string> vectorize{"vectorize", "auto"};
    // bf16 on channels-last schedules: the filter holds input channels in pairs and each pair is
    // reduced by one dot-product instruction (vdpbf16ps; the x86 targets with AVX512-BF16,
    // cmake/DeconvKernels.cmake). The layer's input channels per group must be even.
    Halide::GeneratorParam<bool> ci_pairs{"ci_pairs", false};
    // Schedule knobs (ScheduleParams); 0 = target default.
    Halide::GeneratorParam<int> vectors{"vectors", 0, 0, 8};
    Halide::GeneratorParam<int> co_tile{"co_tile", 0, 0, 32};
    Halide::GeneratorParam<int> q_tile{"q_tile", 0, 0, 32};
    Halide::GeneratorParam<bool> unroll_taps{"unroll_taps", false};
    // Channels-last kernels: the outer axes' taps summed one tap row at a time over a band of
    // output rows (cpu_tap_rows_schedule.h), for layers of many weights per call.
    Halide::GeneratorParam<bool> tap_rows{"tap_rows", false};
    // ScheduleParams::q_block and l2_input_bytes (in KiB) of the blocked interleaved kernel.
    Halide::GeneratorParam<int> q_block{"q_block", tiles::blocked_tiles_per_block(), 1, 1 << 16};
    Halide::GeneratorParam<int> l2_input_kib{"l2_input_kib", tiles::kBlockedInputBytes / 1024, 1, 1 << 20};
    // GPU targets: threads per block (ScheduleParams::threads_x / threads_y); 0 = default.
    Halide::GeneratorParam<int> threads_x{"threads_x", 0, 0, 1024};
    Halide::GeneratorParam<int> threads_y{"threads_y", 0, 0, 1024};
    // GPU targets: output rows per thread (ScheduleParams::row_tile); 0 = default.
    Halide::GeneratorParam<int> row_tile{"row_tile", 0, 0, 16};
    // GPU targets: ScheduleParams::big_tile_outputs; 0 = default. The OpenCL test kernels lower it
    // so that small problems reach the large tile.
    Halide::GeneratorParam<int> big_tile_outputs{"big_tile_outputs", 0, 0, 1 << 30};

protected:
    // data [x.., ci, g, n] / filter [k.., co, ci, g] / output [q.., co, g, n] in logical order;
    // the buffers' dimension order follows the layout (data_layout.h).
    Halide::GeneratorInput<Halide::Buffer<>> *input = nullptr;
    Halide::GeneratorInput<Halide::Buffer<>> *filter = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *output = nullptr;
    // The epilogue (conv_stages.h, StoreEpilogue): the bias [co, g] in the accumulator's type and
    // the post-op slot. Every kernel has them, after the filter, so that each family keeps one C
    // signature; integer and GPU kernels leave them unread.
    Halide::GeneratorInput<Halide::Buffer<>> *bias = nullptr;
    Halide::GeneratorInput<float> *post_alpha = nullptr, *post_hi = nullptr;

    Halide::Type storage() const { return storage_type(dtype); }
    Layout data_layout() const { return parse_layout(layout); }
    bool channel_major() const {
        const std::string v = vectorize;
        if (v == "auto") return data_layout() == Layout::NXC;
        if (v != "channels" && v != "positions" && v != "groups") {
            std::cerr << "deconv generator: vectorize must be auto, positions, channels or groups, not '" << v << "'\n";
            std::exit(1);
        }
        if (v == "groups" && (data_layout() != Layout::NXC || this->get_target().has_gpu_feature())) {
            std::cerr << "deconv generator: vectorize=groups needs layout=nxc on a CPU target\n";
            std::exit(1);
        }
        if (v == "groups") return true;  // the channel-major filter: [co, ci, g, k..]
        if (v == "positions" && data_layout() == Layout::NXC) {
            std::cerr << "deconv generator: channels-last data vectorizes channels (vectorize=positions given)\n";
            std::exit(1);
        }
        return v == "channels";
    }

    bool groups_vectorized() const { return std::string(vectorize) == "groups" && channel_major(); }

    void add_buffers() {
        const int d = rank;
        input = this->template add_input<Halide::Buffer<>>("input", storage(), d + 3);
        filter = this->template add_input<Halide::Buffer<>>("filter", storage(), d + 3);
        add_epilogue_inputs();
        output = this->template add_output<Halide::Buffer<>>("output", storage(), d + 3);
    }

    // The epilogue's inputs, added right after the filter.
    void add_epilogue_inputs() {
        const Halide::Type t = storage().is_float() ? accumulator_type(storage()) : Halide::Float(32);
        bias = this->template add_input<Halide::Buffer<>>("bias", t, 2);
        post_alpha = this->template add_input<float>("post_alpha");
        post_hi = this->template add_input<float>("post_hi");
    }

    // Whether this kernel runs the epilogue: float data on a CPU.
    bool has_epilogue() const { return storage().is_float() && !this->get_target().has_gpu_feature(); }

    // The bias the accumulator starts from (the algorithms' `bias`), undefined without an epilogue.
    Halide::Func store_bias() { return has_epilogue() ? Halide::Func(*bias) : Halide::Func(); }

    // The value the kernel stores for accumulator value `acc` (its bias included).
    Halide::Expr stored(const Halide::Expr &acc) {
        StoreEpilogue e;
        if (has_epilogue()) {
            e.alpha = *post_alpha;
            e.hi = *post_hi;
        }
        return epilogue_store(storage(), acc, e);
    }

    Halide::Func logical_input_of(bool bounded) {
        return logical_input(*input, *input, data_layout(), rank, storage(), bounded, !channel_major());
    }
    Halide::Func logical_filter_of() { return logical_filter(*filter, channel_major(), rank, pairs()); }

    // ci_pairs, checked against the dtype and schedule it needs.
    bool pairs() const {
        if (!ci_pairs) return false;
        if (storage() != Halide::BFloat(16) || !channel_major() || this->get_target().has_gpu_feature()) {
            std::cerr << "deconv generator: ci_pairs needs dtype bf16 on a CPU channels-last schedule "
                         "(vectorize=channels or layout=nxc)\n";
            std::exit(1);
        }
        return true;
    }

    // The stored value at the output's pure arguments: the accumulator through the epilogue.
    Halide::Expr stored_value(const ConvStages &p) {
        const std::vector<Halide::Var> a = p.acc_args();
        return stored(p.acc(std::vector<Halide::Expr>(a.begin(), a.end())));
    }

    // Defines the output from the algorithm and schedules it. `variants`: conditions under which
    // the schedule is worth specialising as a whole (e.g. unit stride), best first.
    // `dense_groups`: channels-last tiles get their dense-group branch (cpu_channels_last_schedule.h),
    // for an algorithm whose positions read consecutive input positions. `bounded`: every read is
    // bounds-tested (the channels-last schedule's bounded branch list).
    void finish(ConvStages &p, const std::vector<Halide::Expr> &variants, bool dense_groups = false,
                bool bounded = false) {
        using namespace Halide;
        const std::vector<Var> args = p.out_args();
        // The Func of an Output<Buffer<>> added with add_output cannot be assigned a whole
        // definition from another Func directly: define it element-wise.
        (*output)(args) = stored_value(p);
        p.out.compute_inline();
        ConvStages s = p;
        s.out = (*output);
        // The dispatcher hands strided views: the filter's taps and the output's positions of one
        // phase are strided; only the data's innermost axis must be dense, and output channels
        // where they are innermost (NXC), and the filter's when they are vectorized.
        const Target t = this->get_target();
        if (t.has_gpu_feature()) {
            // GPU kernels read data and output through their strides (no vector loads): any view
            // of the caller's tensors runs. The filter comes packed by the dispatcher
            // (runtime/gpu/gpu_executor.cpp) with output channels dense, so a thread's weights of
            // consecutive channels share one address computation.
            input->dim(0).set_stride(Expr());
            output->dim(0).set_stride(Expr());
            const int co_dim = filter_buffer_dim(p.channel_major, rank, rank);
            if (co_dim != 0) filter->dim(0).set_stride(Expr());
            filter->dim(co_dim).set_stride(1);
        } else {
            if (!p.channel_major) filter->dim(0).set_stride(Expr());
            if (data_layout() == Layout::NCX) output->dim(0).set_stride(Expr());
        }
        if (groups_vectorized()) {
            // One channel per group: the groups are dense in every buffer (NXC [c, g, ..], filter
            // [co, ci, g, ..]).
            input->dim(0).set_extent(1);
            input->dim(1).set_stride(1);
            output->dim(0).set_extent(1);
            output->dim(1).set_stride(1);
            bias->dim(1).set_stride(1);
            filter->dim(0).set_extent(1);
            filter->dim(1).set_extent(1);
            filter->dim(2).set_stride(1);
        }

        ScheduleParams sp;
        sp.vectors = vectors;
        sp.co_tile = co_tile;
        sp.q_tile = q_tile;
        sp.unroll_taps = unroll_taps;
        sp.threads_x = threads_x;
        sp.threads_y = threads_y;
        sp.row_tile = row_tile;
        sp.big_tile_outputs = big_tile_outputs;
        if (t.has_gpu_feature()) {
            schedule_gpu(s, *output, sp);
        } else if (groups_vectorized()) {
            schedule_cpu_groups(s, *output, t, accumulator_type(storage()), sp);
        } else if (tap_rows) {
            schedule_cpu_tap_rows(s, *output, t, accumulator_type(storage()), sp);
        } else if (p.channel_major) {
            const bool dense = dense_groups && data_layout() == Layout::NXC;
            schedule_cpu_channels_last(s, *output, t, accumulator_type(storage()), sp, variants,
                                       dense ? input->dim(2).stride() : Halide::Expr(), bounded);
        } else {
            schedule_cpu(s, *output, t, accumulator_type(storage()), sp, variants, bounded);
        }
    }
};

}  // namespace gen
}  // namespace deconv
