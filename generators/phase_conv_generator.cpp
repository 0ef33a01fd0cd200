// Generator registration: the phase convolution, specialised per rank and dtype by generator
// parameters, scheduled per target class. The algorithm is in phase_conv_algorithm.h, the
// schedules in schedules/.
#include "Halide.h"
#include "phase_conv_algorithm.h"
#include "schedules/cpu_schedule.h"
#include "schedules/schedule_params.h"

#include <cstdlib>
#include <iostream>
#include <map>

namespace deconv {
namespace gen {

using namespace Halide;

// Halide 14 has no bfloat16 GeneratorParam<Type>: the dtype travels as a string.
Type storage_type(const std::string &name) {
    static const std::map<std::string, Type> types = {
        {"f32", Float(32)}, {"f16", Float(16)}, {"bf16", BFloat(16)}, {"f64", Float(64)},
        {"i8", Int(8)},     {"u8", UInt(8)},    {"i32", Int(32)},
    };
    auto it = types.find(name);
    if (it == types.end()) {
        std::cerr << "phase_conv: unknown dtype '" << name << "'\n";
        std::exit(1);
    }
    return it->second;
}

class PhaseConvGenerator : public Generator<PhaseConvGenerator> {
public:
    GeneratorParam<int> rank{"rank", 2, 1, 3};
    GeneratorParam<std::string> dtype{"dtype", "f32"};
    // false: the interior variant, which assumes every tap lands inside the input.
    GeneratorParam<bool> bounded{"bounded", true};
    // Schedule knobs (deconv::gen::ScheduleParams); 0 = target default.
    GeneratorParam<int> vectors{"vectors", 0, 0, 8};
    GeneratorParam<int> co_tile{"co_tile", 0, 0, 32};
    GeneratorParam<bool> unroll_taps{"unroll_taps", false};

    // [x_0 .. x_{D-1}, ci, g, n], origin shifted per phase by the dispatcher
    GeneratorInput<Buffer<>> *input = nullptr;
    // [k_0 .. k_{D-1}, co, ci, g], the taps of one phase (strided view)
    GeneratorInput<Buffer<>> *filter = nullptr;
    // Input step per output step of each axis (dilation / gcd(stride, dilation)), innermost first.
    // Always three, whatever the rank, so every kernel has the same C signature.
    Input<int32_t> in_step_0{"in_step_0", 1, 1, 1 << 20};
    Input<int32_t> in_step_1{"in_step_1", 1, 1, 1 << 20};
    Input<int32_t> in_step_2{"in_step_2", 1, 1, 1 << 20};
    // [q_0 .. q_{D-1}, co, g, n], the positions of one phase (strided view)
    GeneratorOutput<Buffer<>> *output = nullptr;

    void configure() {
        const Type t = storage_type(dtype);
        const int d = rank;
        input = add_input<Buffer<>>("input", t, d + 3);
        filter = add_input<Buffer<>>("filter", t, d + 3);
        output = add_output<Buffer<>>("output", t, d + 3);
    }

    void generate() {
        const Type t = storage_type(dtype);
        const int d = rank;
        std::vector<Expr> steps = {in_step_0, in_step_1, in_step_2};
        steps.resize(d);

        Func in_f = *input, w_f = *filter;
        PhaseConv p = define_phase_conv(in_f, *input, w_f, *filter, d, steps, t, bounded);
        Func out_f = *output;
        // The Func of an Output<Buffer<>> added with add_output cannot be assigned a whole
        // definition from another Func directly: define it element-wise.
        std::vector<Var> pure(p.q.begin(), p.q.end());
        pure.push_back(p.co);
        pure.push_back(p.g);
        pure.push_back(p.n);
        (*output)(pure) = p.out(pure);

        // The dispatcher hands strided views: only the input's innermost stride is dense.
        filter->dim(0).set_stride(Expr());
        output->dim(0).set_stride(Expr());

        ScheduleParams sp;
        sp.vectors = vectors;
        sp.co_tile = co_tile;
        sp.unroll_taps = unroll_taps;
        p.out.compute_inline();
        // Schedule the output Func itself: alias p.out's role.
        PhaseConv s = p;
        s.out = (*output);
        if (get_target().has_gpu_feature()) {
            std::cerr << "phase_conv: GPU schedules are not built yet\n";
            std::exit(1);
        } else {
            schedule_cpu(s, *output, get_target(), accumulator_type(t), sp);
        }
    }
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::PhaseConvGenerator, deconv_phase_conv)
