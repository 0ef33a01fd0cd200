// Generator registration of the Winograd transforms (winograd_algorithm.h), specialised per rank
// and F(m, r) by generator parameters, scheduled by schedules/cpu_winograd_schedule.h. The matrix
// products between them run on the channel-vectorized phase kernels. f32 only: f16 and bf16
// layers run as f32 (runtime/kernels/half_conversion.h). A generator executable of its own, so that
// adding to it leaves the phase kernels' generator (and every kernel built from it) unchanged.
#include "Halide.h"
#include "schedules/cpu_winograd_schedule.h"

#include <cstdlib>
#include <iostream>

namespace deconv {
namespace gen {

template <typename T>
class WinogradGenerator : public Halide::Generator<T> {
public:
    Halide::GeneratorParam<int> rank{"rank", 2, 1, 2};
    Halide::GeneratorParam<std::string> dtype{"dtype", "f32"};
    // F(tile, taps): outputs per tile and taps per axis (winograd_transforms.h).
    Halide::GeneratorParam<int> tile{"tile", 4, 2, 4};
    Halide::GeneratorParam<int> taps{"taps", 2, 2, 3};

protected:
    const winograd::Algorithm &algorithm() const {
        if (std::string(dtype) != "f32") {
            std::cerr << "deconv winograd generator: dtype must be f32, not '" << std::string(dtype) << "'\n";
            std::exit(1);
        }
        const winograd::Algorithm *f = winograd::find_algorithm(tile, taps);
        if (!f) {
            std::cerr << "deconv winograd generator: no F(" << int(tile) << ", " << int(taps) << ")\n";
            std::exit(1);
        }
        return *f;
    }
    int lanes() const { return this->get_target().natural_vector_size(Halide::Float(32)); }
};

// input [ci, g, x.., n] -> tiles [ci, xi.., g, T.., n].
class WinogradInputGenerator : public WinogradGenerator<WinogradInputGenerator> {
public:
    void configure() {
        input = add_input<Halide::Buffer<>>("input", Halide::Float(32), rank + 3);
        tiles = add_output<Halide::Buffer<>>("tiles", Halide::Float(32), 2 * rank + 3);
    }
    void generate() {
        using namespace Halide;
        Region spatial(rank + 3);
        for (int a = 0; a < rank; a++) spatial[2 + a] = {input->dim(2 + a).min(), input->dim(2 + a).extent()};
        Func zero_outside = BoundaryConditions::constant_exterior(*input, 0.0f, spatial);
        WinogradInputStages s = define_winograd_input(zero_outside, algorithm(), rank);
        std::vector<Var> v = {s.ci};
        v.insert(v.end(), s.xi.begin(), s.xi.end());
        v.push_back(s.g);
        v.insert(v.end(), s.t.begin(), s.t.end());
        v.push_back(s.n);
        (*tiles)(v) = s.stage.back()(v);
        s.stage.back().compute_inline();
        const int alpha = algorithm().alpha();
        for (int a = 0; a < rank; a++) tiles->dim(1 + a).set_bounds(0, alpha);
        s.stage.back() = *tiles;
        schedule_cpu_winograd_input(s, input->dim(0).extent() >= lanes(), lanes());
    }

private:
    Halide::GeneratorInput<Halide::Buffer<>> *input = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *tiles = nullptr;
};

// products [co, xi.., g, T.., n] -> output [co, g, q.., n] (the output's q axes start at 0).
class WinogradOutputGenerator : public WinogradGenerator<WinogradOutputGenerator> {
public:
    void configure() {
        products = add_input<Halide::Buffer<>>("products", Halide::Float(32), 2 * rank + 3);
        output = add_output<Halide::Buffer<>>("output", Halide::Float(32), rank + 3);
    }
    void generate() {
        using namespace Halide;
        const winograd::Algorithm &f = algorithm();
        WinogradOutputStages s = define_winograd_output(*products, f, rank);
        std::vector<Var> v = {s.co, s.g};
        v.insert(v.end(), s.q.begin(), s.q.end());
        v.push_back(s.n);
        (*output)(v) = s.stage.back()(v);
        s.stage.back().compute_inline();
        s.stage.back() = *output;
        for (int a = 0; a < rank; a++) {
            output->dim(2 + a).set_min(0);
            products->dim(1 + a).set_bounds(0, f.alpha());
        }
        schedule_cpu_winograd_output(s, output->dim(0).extent() >= lanes(), lanes(), f.m);
    }

private:
    Halide::GeneratorInput<Halide::Buffer<>> *products = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *output = nullptr;
};

}  // namespace gen
}  // namespace deconv

HALIDE_REGISTER_GENERATOR(deconv::gen::WinogradInputGenerator, deconv_winograd_input)
HALIDE_REGISTER_GENERATOR(deconv::gen::WinogradOutputGenerator, deconv_winograd_output)
