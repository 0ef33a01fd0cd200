// Generator registration of the quantized backprop kernel: the phase convolution of
// phase_conv_algorithm.h on channels-last data and weights in groups of input channels, summed
// by one dot-product instruction per group: u8 x i8 quads (vpdpbusd, AVX512-VNNI; `group` 4),
// i8 x i8 quads (sdot, ARMv8.2 dot product; `group` 4 and `signed_data`: the dispatcher's copy
// holds u8 data moved by 128, which sdot's one signedness needs), or i16 x i16 pairs (vpmaddwd
// on x86, NEON multiply-adds on ARM64; `group` 2: the dispatcher's copy holds the data less its
// zero point, exact in i16). Accumulated in i32, less a per-channel compensation (the source zero point's share, which the dispatcher computes per
// phase: runtime/cpu/quantized_dots_executor.cpp), then the epilogue in the store: bias, output
// scale, two piecewise-linear post-ops (relu with a slope, clip, bounded_relu, linear), the
// destination zero point, rounding half to even and saturation to `dst` (u8, i8, i32 or f32).
// Every epilogue value is a run-time input, identity where the layer has none. Interior only:
// the dispatcher hands a copy of the input bordered with the zero point, so every tap reads a
// real or a padded element and the compensation is the same for every output of a phase.
// Scheduled by schedules/cpu_quant_dots_schedule.h; an executable of its own
// (generators/CMakeLists.txt).
#include "phase_conv_algorithm.h"
#include "schedules/cpu_quant_dots_schedule.h"

#include <iostream>
#include <limits>

namespace deconv {
namespace gen {

class PhaseConvQuantGenerator : public Halide::Generator<PhaseConvQuantGenerator> {
public:
    GeneratorParam<int> rank{"rank", 2, 1, 3};
    // The layer's data type as the registry files the kernel: u8 (i8 data reaches the kernel as
    // u8 shifted by 128, or as i16: the dispatcher's copy).
    GeneratorParam<std::string> dtype{"dtype", "u8"};
    // Input channels per dot product: 4 (u8 x i8 quads) or 2 (i16 x i16 pairs).
    GeneratorParam<int> group{"group", 4, 2, 4};
    // Quads of i8 data rather than u8 (sdot takes operands of one signedness).
    GeneratorParam<bool> signed_data{"signed_data", false};
    GeneratorParam<std::string> layout{"layout", "nxc"};
    // Interior only (the registry's name for it: every tap reads inside the bordered copy).
    GeneratorParam<bool> bounded{"bounded", false};
    // The output's type: u8, i8, i32 or f32 (the f32 value before post-ops the kernel cannot run,
    // which the dispatcher's epilogue pass then applies).
    GeneratorParam<std::string> dst{"dst", "u8"};
    // The register tile: vectors of output channels x positions; 0 = the target's (4 x 6 with 32
    // vector registers, 2 x 5 with 16).
    GeneratorParam<int> vectors{"vectors", 0, 0, 8};
    GeneratorParam<int> q_tile{"q_tile", 0, 0, 16};

    Input<int32_t> in_step_0{"in_step_0", 1, 1, 1 << 20};
    Input<int32_t> in_step_1{"in_step_1", 1, 1, 1 << 20};
    Input<int32_t> in_step_2{"in_step_2", 1, 1, 1 << 20};
    // Post-op slot i: v = clamp(select(v > 0, v * pos_i, v * neg_i) + add_i, lo_i, hi_i).
    Input<float> pos_0{"pos_0", 1.f}, neg_0{"neg_0", 1.f}, add_0{"add_0", 0.f}, lo_0{"lo_0", 0.f}, hi_0{"hi_0", 0.f};
    Input<float> pos_1{"pos_1", 1.f}, neg_1{"neg_1", 1.f}, add_1{"add_1", 0.f}, lo_1{"lo_1", 0.f}, hi_1{"hi_1", 0.f};
    Input<float> dst_zero_point{"dst_zero_point", 0.f};

    // data [ci, g, x.., n]; filter [co4, ci, g, k..] (below); comp, bias, scale [co, g]; output
    // [co, g, y.., n].
    Halide::GeneratorInput<Buffer<>> *input = nullptr, *filter = nullptr, *comp = nullptr, *bias = nullptr,
                                     *scale = nullptr;
    Halide::GeneratorOutput<Buffer<>> *output = nullptr;

    void configure() {
        if (std::string(dtype) != "u8" || std::string(layout) != "nxc" || bounded || (group != 2 && group != 4) ||
            (signed_data && group != 4)) {
            std::cerr << "deconv generator: the quantized kernel takes dtype=u8 layout=nxc bounded=false group=2|4, "
                         "signed_data with group=4 only\n";
            std::exit(1);
        }
        const int d = rank;
        input = add_input<Buffer<>>("input", data_type(), d + 3);
        filter = add_input<Buffer<>>("filter", group == 4 ? Int(8) : Int(16), d + 3);
        comp = add_input<Buffer<>>("comp", Int(32), 2);
        bias = add_input<Buffer<>>("bias", Float(32), 2);
        scale = add_input<Buffer<>>("scale", Float(32), 2);
        output = add_output<Buffer<>>("output", dst_type(), d + 3);
    }

    Halide::Type data_type() const {
        if (group == 2) return Halide::Int(16);
        return signed_data ? Halide::Int(8) : Halide::UInt(8);
    }

    Halide::Type dst_type() const {
        const std::string t = dst;
        if (t == "u8") return Halide::UInt(8);
        if (t == "i8") return Halide::Int(8);
        if (t == "i32") return Halide::Int(32);
        if (t == "f32") return Halide::Float(32);
        std::cerr << "deconv generator: dst must be u8, i8, i32 or f32, not '" << t << "'\n";
        std::exit(1);
    }

    void generate() {
        using namespace Halide;
        std::vector<Expr> steps = {in_step_0, in_step_1, in_step_2};
        steps.resize(rank);
        const int n = group;
        const Type data_t = data_type();
        const Func in = logical_input(*input, *input, Layout::NXC, rank, data_t, false);
        // The weights in groups of n: output channel co's weights of input channels n*i..n*i+n-1
        // are the n elements at n*co of row n*i, whose rows lie C_OUT elements apart (so row n*i
        // starts n*i*C_OUT elements in: one row of n*C_OUT per n input channels). The buffer's ci
        // axis has the layer's extent, and is read at multiples of n.
        std::vector<Var> k;
        for (int i = 0; i < rank + 3; i++) k.emplace_back("k" + std::to_string(i));
        Func w("filter_quads");
        {
            std::vector<Expr> at(rank + 3);
            const Expr co = k[rank], ci = k[rank + 1];
            at[0] = n * co + ci % n;
            at[1] = ci / n * n;
            at[2] = k[rank + 2];
            for (int i = 0; i < rank; i++) at[3 + i] = k[i];
            w(k) = (*filter)(at);
        }
        ConvStages p = define_phase_conv(in, w, *filter, Layout::NXC, true, rank, steps, data_t);
        const std::vector<Var> args = p.out_args();
        // The epilogue's order (include/deconv/deconv.h): the accumulator as f32, bias, scale,
        // post-ops, zero point, round half to even, saturate.
        const Expr scaled = (cast<float>(p.acc(args) - (*comp)(p.co, p.g)) + (*bias)(p.co, p.g)) * (*scale)(p.co, p.g);
        Expr v = clamp(select(scaled > 0, scaled * pos_0, scaled * neg_0) + add_0, lo_0, hi_0);
        v = clamp(select(v > 0, v * pos_1, v * neg_1) + add_1, lo_1, hi_1);
        // No post-op, or a relu with a slope alone (slot 0 without scale, offset or bounds, slot 1
        // the identity; bounds at or beyond the largest float are none for the finite values
        // here): one select, in a branch of its own. The two general slots cost 14 operations per
        // vector, as many as the dot products of a 1x1 phase of 128 input channels (unet_up4).
        const float big = std::numeric_limits<float>::max();
        const Expr relu_only = pos_0 == 1.f && add_0 == 0.f && lo_0 <= -big && hi_0 >= big && pos_1 == 1.f &&
                               neg_1 == 1.f && add_1 == 0.f && lo_1 <= -big && hi_1 >= big;
        v = select(relu_only, select(scaled > 0, scaled, scaled * neg_0), v);
        const Type t = dst_type();
        if (t.is_float()) {
            (*output)(args) = v;
        } else if (t.bits() == 8) {
            // Saturate, then round half to even by adding and subtracting 1.5 * 2^23 (exact below
            // 2^22; strict, so that no reassociation folds it): the same as rounding first, the
            // bounds being integers, in 3 operations where round() took 4 (two 256-bit halves).
            const Expr sat = clamp(v + dst_zero_point, cast<float>(t.min()), cast<float>(t.max()));
            const float magic = 12582912.f;
            (*output)(args) = cast(t, strict_float((sat + magic) - magic));
        } else {
            (*output)(args) = saturating_cast(t, round(v + dst_zero_point));
        }
        p.out = *output;
        filter->dim(1).set_stride(Expr());
        // A whole number of groups of input channels (the dispatcher pads them with zeros): the
        // reduction then has no remainder, whose per-lane loop read the accumulators by index, so
        // that they went through memory at the end of every tap's reduction (dilated_s1: 9 taps of
        // 16 quads, 48 vector loads and stores per 384 dot products).
        filter->dim(1).set_extent(filter->dim(1).extent() / n * n);
        schedule_cpu_quant_dots(p, *output, get_target(), n, vectors, q_tile, {relu_only});
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvQuantGenerator, deconv_phase_conv_quant)
