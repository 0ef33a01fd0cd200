#include "measure.h"

#include "autoschedulers.h"
#include "deconv/deconv.h"
#include "phase_calls.h"
#include "phase_pipeline.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

namespace deconv_asb {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int64_t count(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::vector<float> random_tensor(const std::vector<int64_t> &shape, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> v((size_t)count(shape));
    for (float &e : v) e = u(rng);
    return v;
}

deconv::Attributes attributes(const SuiteLayer &l) {
    deconv::Attributes a;
    a.strides = l.strides;
    a.pads_begin = l.pads_begin;
    a.pads_end = l.pads_end;
    a.dilations = l.dilations;
    a.output_padding = l.output_padding;
    a.data_format = deconv::DataFormat::NCX;
    return a;
}

// The largest |got - want|, relative to max(1, the largest |want|); NaN (an output element no
// phase wrote, as `got` starts NaN) gives infinity.
double relative_error(const std::vector<float> &got, const std::vector<float> &want) {
    double err = 0, scale = 1;
    for (size_t i = 0; i < want.size(); i++) {
        const double d = std::fabs((double)got[i] - want[i]);
        err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
        scale = std::max(scale, (double)std::fabs(want[i]));
    }
    return err / scale;
}

}  // namespace

Measurement measure(const SuiteLayer &layer, const std::string &contender, const MeasureOptions &opt) {
    Measurement m;
    deconv::set_cpu_threads(opt.threads);
    const deconv::Plan plan = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32,
                                                   layer.input_shape(), layer.filter_shape(), attributes(layer));
    const deconv::ShapeInfo &si = plan.shape();
    std::vector<float> x = random_tensor(layer.input_shape(), 1), w = random_tensor(layer.filter_shape(), 2);
    std::vector<float> want((size_t)count(si.output_shape));
    plan.run(x.data(), w.data(), want.data());

    if (contender == "deconv") {
        // As `deconv bench` times it: constant weights packed once, then runs on the views.
        const deconv::PackedFilter pw =
            plan.pack_filter(deconv::ConstTensorView(w.data(), deconv::DType::f32, layer.filter_shape()));
        std::vector<float> y(want.size());
        const deconv::ConstTensorView vx(x.data(), deconv::DType::f32, layer.input_shape());
        const deconv::TensorView vy{y.data(), deconv::DType::f32, si.output_shape, {}};
        m.plan = plan.describe();
        m.calls = 1;
        m.timing = time_runs([&] { plan.run(vx, pw, vy); }, opt.timing);
        m.max_err = relative_error(y, want);
        m.ok = m.max_err <= opt.tolerance;
        if (!m.ok) m.error = "deconv's packed-filter run differs from its unpacked run";
        return m;
    }
    if (contender != "none" && !is_autoscheduler(contender))
        throw std::runtime_error("unknown contender '" + contender + "'");

    std::vector<float> y(want.size(), std::numeric_limits<float>::quiet_NaN());
    const std::vector<int64_t> out_spatial(si.output_shape.begin() + 2, si.output_shape.end());
    const std::vector<PhaseCall> calls = layer_phase_calls(layer, out_spatial, si.pads_begin, x.data(), w.data(), y.data());
    m.calls = (int)calls.size();

    // One pipeline per distinct phase shape, each scheduled for its own estimates.
    std::map<PhaseShape, PhasePipeline> pipes;
    const Halide::Target jit = opt.target.with_feature(Halide::Target::JIT);
    for (const PhaseCall &c : calls) {
        if (pipes.count(c.shape)) continue;
        std::vector<int64_t> steps(c.in_step.rbegin(), c.in_step.rend());
        PhasePipeline p = build_phase_pipeline(layer, c.shape, steps);
        if (contender != "none") {
            const auto t0 = std::chrono::steady_clock::now();
            const std::string source = autoschedule(p.pipeline, contender, opt.plugin_dir, opt.target, opt.machine);
            m.schedule_s += seconds_since(t0);
            if (!opt.schedules_dir.empty()) {
                std::ofstream(opt.schedules_dir + "/" + layer.name + "." + contender + "." +
                              std::to_string(pipes.size()) + ".txt")
                    << source;
            }
        }
        const auto t0 = std::chrono::steady_clock::now();
        p.pipeline.compile_jit(jit);
        m.compile_s += seconds_since(t0);
        pipes.emplace(c.shape, p);
    }
    m.pipelines = (int)pipes.size();

    auto run_layer = [&] {
        for (const PhaseCall &c : calls) {
            PhasePipeline &p = pipes.at(c.shape);
            p.input.set(c.input);
            p.filter.set(c.filter);
            for (size_t h = 0; h < c.in_step.size(); h++) p.in_step[h].set(c.in_step[h]);
            Halide::Buffer<float> out = c.output;  // realize() takes an lvalue; the copy shares y
            p.pipeline.realize(out, jit);
        }
    };
    run_layer();
    m.max_err = relative_error(y, want);
    if (!(m.max_err <= opt.tolerance)) {
        m.error = "output differs from deconv's (relative error " + std::to_string(m.max_err) + ")";
        return m;
    }
    m.timing = time_runs(run_layer, opt.timing);
    m.ok = true;
    return m;
}

}  // namespace deconv_asb
