#include "bench.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <ostream>
#include <thread>

#include "commands.h"
#include "errors.h"
#include "host_tensor.h"
#include "machine.h"
#include "onednn_baseline.h"
#include "peak_flops.h"
#include "timing.h"

// The Halide runtime linked into the library exports this; weak so that a build without it
// still links (HL_NUM_THREADS covers that case).
extern "C" int halide_set_num_threads(int n) __attribute__((weak));

namespace deconv_cli {

namespace {

struct Row {
    LayerSpec layer;
    deconv::DType dtype = deconv::DType::f32;  // the data's
    // A quantized layer or one with an epilogue (QuantSpec::typed()): its three dtypes.
    bool typed = false;
    deconv::DataTypes types;
    std::optional<deconv::Plan> plan;
    std::string skipped;  // reason, when not run
    uint64_t bytes = 0;   // input + filter + output
    double macs = 0;
    TimingStats ours;
    bool ran = false;
    OnednnTiming dnn;
    bool dnn_ran = false;
    double gflops = 0, roofline_pct = 0, ratio = 0;
    std::vector<std::string> notes;
};

bool integer_dtype(deconv::DType t) {
    return t == deconv::DType::i8 || t == deconv::DType::u8 || t == deconv::DType::i32;
}

bool has_sum(const deconv::Epilogue &e) {
    return std::any_of(e.post_ops.begin(), e.post_ops.end(),
                       [](const deconv::PostOp &p) { return p.kind == deconv::PostOp::Kind::sum; });
}

// The dtype column: the dtype, or a typed layer's three ("u8s8u8").
std::string dtype_label(const Row &r) {
    return r.typed ? deconv::data_types_name(r.types) : std::string(deconv::dtype_name(r.dtype));
}

double geomean(const std::vector<double> &v) {
    if (v.empty()) return 0;
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / static_cast<double>(v.size()));
}


// On a terminal: one line rewritten in place. With --verbose elsewhere: one line per step.
class Progress {
public:
    explicit Progress(bool verbose) : tty_(::isatty(STDERR_FILENO) == 1), verbose_(verbose) {}
    void show(size_t i, size_t n, const std::string &name, const char *what) {
        if (tty_) std::fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s", i + 1, n, name.c_str(), what);
        else if (verbose_) std::fprintf(stderr, "[%zu/%zu] %s: %s\n", i + 1, n, name.c_str(), what);
        std::fflush(stderr);
    }
    void done() {
        if (!tty_) return;
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    }

private:
    bool tty_, verbose_;
};

}  // namespace

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void set_bench_threads(int threads) {
    if (threads <= 0) return;
    // Halide's own pool too, for runs with DECONV_SPIN_US=off.
    ::setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
    if (halide_set_num_threads) halide_set_num_threads(threads);
    deconv::set_cpu_threads(threads);
#if defined(DECONV_HAVE_ONEDNN)
    onednn_set_threads(threads);
#endif
}

int run_bench(std::vector<LayerSpec> layers, const BenchOptions &opt, std::ostream &out) {
    if (opt.repeats < 1) throw UsageError("--repeats " + std::to_string(opt.repeats) + ": must be at least 1");
    if (opt.warmup < 0) throw UsageError("--warmup " + std::to_string(opt.warmup) + ": must be at least 0");
    if (!(opt.warmup_ms >= 0)) throw UsageError("--warmup-ms " + fmt("%g", opt.warmup_ms) + ": must be at least 0");
    if (opt.budget_s < 0) throw UsageError("--max-seconds must not be negative");
    if (!(opt.peak_gflops >= 0)) throw UsageError("--peak-gflops must be positive");
    if (!(opt.peak_gbps > 0)) throw UsageError("--peak-gbps must be positive");
    for (const std::string &name : opt.only) {
        if (std::none_of(layers.begin(), layers.end(), [&](const LayerSpec &l) { return l.name == name; }))
            throw UsageError("--only: no layer named '" + name + "' in " + opt.source);
    }
#if defined(DECONV_HAVE_ONEDNN)
    const bool with_onednn = opt.onednn;
#else
    const bool with_onednn = false;
#endif

    // Phase 1: select and validate every layer before timing anything.
    std::vector<Row> rows;
    size_t skipped_scale = 0;
    for (LayerSpec &l : layers) {
        if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), l.name) == opt.only.end())
            continue;
        if (l.scale && !opt.include_scale && opt.only.empty()) {
            ++skipped_scale;
            continue;
        }
        Row r;
        settle_op(l);
        r.layer = l;
        r.dtype = l.dtype.value_or(deconv::DType::f32);
        r.typed = l.quant.typed();
        r.types = layer_types(l);
        if (r.typed) r.dtype = r.types.src;
        if (l.input_shape.empty() || l.filter_shape.empty())
            throw UsageError((l.origin.empty() ? "the layer" : l.origin) +
                             ": no input and filter shapes (use --input-shape and --filter-shape, "
                             "--layer or --desc)");
        try {
            if (r.typed) {
                // The scales' count follows from the output's channels (shapes checked first).
                const deconv::ShapeInfo si0 =
                    deconv::infer_shape(l.op, l.input_shape, l.filter_shape, l.attrs, l.output_shape);
                r.plan = deconv::Plan::create(l.op, r.types, l.input_shape, l.filter_shape, l.attrs,
                                              l.output_shape, opt.exec, layer_epilogue(l, output_channels(si0)));
            } else {
                r.plan = deconv::Plan::create(l.op, r.dtype, l.input_shape, l.filter_shape, l.attrs,
                                              l.output_shape, opt.exec);
            }
        } catch (const deconv::Error &e) {
            if (e.kind() != deconv::ErrorKind::Unsupported) rethrow_with_origin(e, l);
            // A dtype combination or bias the flags (or the entry) asked for is a mistake, not a
            // layer this build lacks: reported, not skipped.
            const std::string m = e.what();
            if (r.typed && (m.rfind("dtype combination", 0) == 0 || m.rfind("bias dtype", 0) == 0 ||
                            m.rfind("quantized layers (", 0) == 0))
                rethrow_with_origin(e, l);
            r.skipped = e.what();
            rows.push_back(std::move(r));
            continue;
        }
        const deconv::ShapeInfo &si = r.plan->shape();
        check_declared_output(l, si.output_shape);
        if (opt.verbose) std::cerr << "plan " << l.name << ": " << r.plan->describe() << "\n";
        const std::string what = l.name.empty() ? std::string("layer") : "layer '" + l.name + "'";
        r.bytes = checked_add(checked_add(checked_bytes(l.input_shape, deconv::dtype_size(r.types.src), what),
                                          checked_bytes(l.filter_shape, deconv::dtype_size(r.types.weights), what), what),
                              checked_bytes(si.output_shape, deconv::dtype_size(r.types.dst), what), what);
        // oneDNN needs its own copies (f32 at most) and reordered layouts: about 3x ours in f32.
        const uint64_t f32_bytes = checked_add(checked_add(checked_bytes(l.input_shape, 4, what),
                                                           checked_bytes(l.filter_shape, 4, what), what),
                                               checked_bytes(si.output_shape, 4, what), what);
        uint64_t need = r.bytes;
        if (with_onednn) need = checked_add(need, f32_bytes * 3, what);
        if (need > memory_limit_bytes() && !opt.plans_only) {
            r.skipped = "needs " + human_bytes(need) + ", more than the " +
                        human_bytes(memory_limit_bytes()) + " available";
            r.plan.reset();
        }
        r.macs = nominal_macs(l, si.output_shape);
        if (r.plan && !r.plan->fallback_reason().empty())
            r.notes.push_back("ran on the CPU (--cpu-fallback): " + r.plan->fallback_reason());
        if (r.plan && r.plan->device() == deconv::Device::CUDA)
            r.notes.push_back("cuda: X, W and Y stay on the GPU (copies not timed); roofline % is against "
                              "--peak-gflops/--peak-gbps, the CPU's unless given");
        if (si.data_format == deconv::DataFormat::NXC)
            r.notes.push_back("nxc: our channels-last kernels (data_format NXC); oneDNN's plain "
                              "configuration used its nwc/nhwc/ndhwc format");
        if (r.typed) r.notes.push_back("layer: " + describe_quant(l));
        rows.push_back(std::move(r));
    }
    if (rows.empty()) throw UsageError("no layer to run in " + opt.source + " (all are scale layers? "
                                       "add --include-scale)");

    if (opt.plans_only) {
        for (const Row &r : rows)
            out << r.layer.name << "\t" << (r.plan ? r.plan->describe() : "unsupported: " + r.skipped) << "\n";
        return 0;
    }

    // Phase 2: time.
    const TimingOptions timing{opt.warmup, opt.warmup_ms, opt.repeats, opt.budget_s};
    Progress progress(opt.verbose);
    const std::string variant = deconv::cpu_variant();
    for (size_t i = 0; i < rows.size(); ++i) {
        Row &r = rows[i];
        if (!r.plan) continue;
        const LayerSpec &l = r.layer;
        const deconv::ShapeInfo &si = r.plan->shape();
        progress.show(i, rows.size(), l.name, "deconv");
        HostTensor x = HostTensor::zeros(r.types.src, l.input_shape);
        HostTensor w = HostTensor::zeros(r.types.weights, l.filter_shape);
        HostTensor y = HostTensor::zeros(r.types.dst, si.output_shape);
        fill_random(x, opt.seed * 2 + 1 + i * 1000003ull);
        fill_random(w, opt.seed * 2 + 2 + i * 1000003ull);
        const deconv::Plan &plan = *r.plan;
        // Typed layers: the bias (seeded) and, with a sum post-op, the output's earlier contents;
        // our compared output is one run from those contents after the timed runs.
        HostTensor bias, y0;
        const deconv::Epilogue &epilogue = plan.epilogue();
        if (r.typed && epilogue.bias)
            bias = random_bias(*epilogue.bias, output_channels(si), opt.seed * 2 + 3 + i * 1000003ull);
        if (r.typed && has_sum(epilogue)) {
            y0 = HostTensor::zeros(r.types.dst, si.output_shape);
            fill_random(y0, opt.seed * 2 + 4 + i * 1000003ull);
            y.bytes = y0.bytes;
        }
        deconv::RunArgs run_args;
        if (epilogue.bias) run_args.bias = bias.data();
        try {
            if (r.typed) {
                const deconv::ConstTensorView vx(x.data(), r.types.src, l.input_shape);
                const deconv::ConstTensorView vw(w.data(), r.types.weights, l.filter_shape);
                const deconv::TensorView vy{y.data(), r.types.dst, si.output_shape, {}};
                if (opt.pack_per_run) {
                    r.ours = time_runs([&] { plan.run(vx, vw, vy, run_args); }, timing);
                } else {
                    const deconv::PackedFilter pw = plan.pack_filter(vw);
                    r.ours = time_runs([&] { plan.run(vx, pw, vy, run_args); }, timing);
                }
                if (has_sum(epilogue)) {
                    y.bytes = y0.bytes;
                    plan.run(vx, vw, vy, run_args);
                }
            } else if (plan.device() == deconv::Device::CUDA) {
                // Device-resident tensors, as an inference runtime keeps them: the timed runs are
                // the kernels alone (each run waits for the GPU), the filter packed on the GPU
                // once (or in every run with --pack-per-run) as on the CPU.
                deconv::CudaBuffer dx(x.bytes.size()), dw(w.bytes.size()), dy(y.bytes.size());
                dx.upload(x.data(), x.bytes.size());
                dw.upload(w.data(), w.bytes.size());
                const auto on_gpu = deconv::Memory::CudaDevice;
                const deconv::ConstTensorView vx(dx.data(), r.dtype, l.input_shape, {}, on_gpu);
                const deconv::ConstTensorView vw(dw.data(), r.dtype, l.filter_shape, {}, on_gpu);
                const deconv::TensorView vy{dy.data(), r.dtype, si.output_shape, {}, on_gpu};
                if (opt.pack_per_run) {
                    r.ours = time_runs([&] { plan.run(vx, vw, vy); }, timing);
                } else {
                    const deconv::PackedFilter pw = plan.pack_filter(vw);
                    r.ours = time_runs([&] { plan.run(vx, pw, vy); }, timing);
                }
                dy.download(y.data(), y.bytes.size());
            } else if (opt.pack_per_run) {
                r.ours = time_runs([&] { plan.run(x.data(), w.data(), y.data()); },
                                   timing);
            } else {
                const deconv::PackedFilter pw =
                    plan.pack_filter(deconv::ConstTensorView(w.data(), r.dtype, l.filter_shape));
                const deconv::ConstTensorView vx(x.data(), r.dtype, l.input_shape);
                const deconv::TensorView vy{y.data(), r.dtype, si.output_shape, {}};
                r.ours = time_runs([&] { plan.run(vx, pw, vy); }, timing);
            }
        } catch (const deconv::Error &e) {
            progress.done();
            rethrow_with_origin(e, l);
        }
        r.ran = true;
        if (r.ours.runs < opt.repeats)
            r.notes.push_back("ours: " + std::to_string(r.ours.runs) + " timed run(s) within --max-seconds " +
                              fmt("%g", opt.budget_s));
        const double secs = r.ours.median_ms / 1e3;
        r.gflops = secs > 0 ? 2.0 * r.macs / secs / 1e9 : 0;
#if defined(DECONV_HAVE_ONEDNN)
        if (with_onednn) {
            progress.show(i, rows.size(), l.name, "oneDNN");
            OnednnEpilogue dnn_epi;
            if (r.typed) {
                dnn_epi.types = r.types;
                dnn_epi.epilogue = epilogue;
                dnn_epi.bias = epilogue.bias ? &bias : nullptr;
                dnn_epi.dst_init = has_sum(epilogue) ? &y0 : nullptr;
            }
            r.dnn = onednn_time(l, si, x, w, &y, timing, r.typed ? &dnn_epi : nullptr);
            r.dnn_ran = r.dnn.ok;
            if (r.dnn.ok && r.dnn.stats.runs < opt.repeats)
                r.notes.push_back("oneDNN: " + std::to_string(r.dnn.stats.runs) +
                                  " timed run(s) within --max-seconds " + fmt("%g", opt.budget_s));
            if (r.dnn.ok && !r.dnn.not_timed.empty())
                r.notes.push_back("oneDNN: not timed: " + r.dnn.not_timed);
            if (r.dnn.ok) {
                r.ratio = r.dnn.stats.median_ms / r.ours.median_ms;
                if (!r.dnn.dtype_note.empty()) r.notes.push_back("oneDNN: " + r.dnn.dtype_note);
                const deconv::DType out_t = r.types.dst;
                const double tol = (out_t == deconv::DType::f32 || out_t == deconv::DType::f64) ? 1e-4 : 1e-2;
                const bool quantized = r.typed && integer_dtype(r.types.src);
                if (quantized && integer_dtype(out_t)) {
                    // oneDNN rounds in its own order (and may round a tie the other way): within 1.
                    r.notes.push_back(std::string(r.dnn.max_abs_diff > 1 ? "WARNING: " : "") +
                                      "outputs vs oneDNN's int8 deconvolution: max |difference| " +
                                      fmt("%g", r.dnn.max_abs_diff) + " (" + deconv::dtype_name(out_t) +
                                      (r.dnn.max_abs_diff > 1 ? ", expected at most 1)" : ")"));
                } else if (quantized) {
                    r.notes.push_back(std::string(r.dnn.max_abs_diff > tol * std::max(1.0, r.dnn.max_abs_ours)
                                                      ? "WARNING: " : "") +
                                      "outputs vs oneDNN's int8 deconvolution: max |difference| " +
                                      fmt("%.4g", r.dnn.max_abs_diff) + " (largest |output| " +
                                      fmt("%.4g", r.dnn.max_abs_ours) + ")");
                } else if (integer_dtype(r.dtype)) {
                    r.notes.push_back("outputs not compared with oneDNN (it ran f32; ours saturates to " +
                                      std::string(deconv::dtype_name(r.dtype)) + ")");
                } else if (r.dnn.max_abs_diff > tol * std::max(1.0, r.dnn.max_abs_ours)) {
                    r.notes.push_back("WARNING: outputs differ from oneDNN's by up to " +
                                      fmt("%.4g", r.dnn.max_abs_diff) + " (largest |output| " +
                                      fmt("%.4g", r.dnn.max_abs_ours) + ")");
                }
                if (r.typed && !quantized) {
                    std::string n = "oneDNN with the epilogue: fused " +
                                    (r.dnn.fused_ms >= 0 ? fmt("%.3f", r.dnn.fused_ms) + " ms (" + r.dnn.fused_impl + ")"
                                                         : std::string("not timed")) +
                                    ", plain + separate pass " +
                                    (r.dnn.pass_ms >= 0 ? fmt("%.3f", r.dnn.pass_ms) + " ms (" + r.dnn.pass_impl + ")"
                                                        : "not timed" + (r.dnn.pass_note.empty()
                                                                             ? std::string()
                                                                             : " (" + r.dnn.pass_note + ")"));
                    r.notes.push_back(n);
                }
            } else {
                r.notes.push_back("oneDNN did not run: " + r.dnn.error);
            }
        }
#endif
    }
    progress.done();

    // The roofline's compute peak: named, else measured with the bench's threads once the layers
    // are timed (its threads and their stacks then leave the timed runs alone). CPU targets; a
    // CUDA target's roofline takes kUnmeasuredPeakGflops unless --peak-gflops names its GPU's.
    const int hw_threads = static_cast<int>(std::thread::hardware_concurrency());
    const bool peak_measured = !(opt.peak_gflops > 0) && opt.exec.device == deconv::Device::CPU;
    const double peak_gflops = opt.peak_gflops > 0 ? opt.peak_gflops
                               : peak_measured ? measure_fp32_peak_gflops(opt.threads > 0 ? opt.threads : hw_threads, variant)
                                               : kUnmeasuredPeakGflops;
    for (Row &r : rows) {
        const double secs = r.ours.median_ms / 1e3;
        const double t_roof = std::max(2.0 * r.macs / (peak_gflops * 1e9),
                                       static_cast<double>(r.bytes) / (opt.peak_gbps * 1e9));
        r.roofline_pct = r.ran && secs > 0 ? t_roof / secs * 100.0 : 0;
    }

    // Phase 3: report.
    std::vector<double> g_gflops, g_roof, g_ratio;
    for (const Row &r : rows) {
        if (!r.ran) continue;
        if (r.gflops > 0) g_gflops.push_back(r.gflops);
        if (r.roofline_pct > 0) g_roof.push_back(r.roofline_pct);
        if (r.dnn_ran && r.ratio > 0) g_ratio.push_back(r.ratio);
    }
    const std::string dnn_version =
#if defined(DECONV_HAVE_ONEDNN)
        onednn_version();
#else
        "";
#endif

    if (opt.json) {
        using nlohmann::json;
        json j;
        j["deconv_version"] = deconv::version();
        j["source"] = opt.source;
        j["cpu_variant"] = variant;
        j["cpu"] = cpu_description();
        j["target"] = deconv::device_name(opt.exec.device);
        j["threads"] = opt.threads > 0 ? opt.threads : hw_threads;
        j["onednn_version"] = with_onednn ? json(dnn_version) : json(nullptr);
        j["warmup"] = opt.warmup;
        j["warmup_ms"] = opt.warmup_ms;
        j["repeats"] = opt.repeats;
        j["peak_gflops"] = peak_gflops;
        j["peak_gflops_measured"] = peak_measured;
        j["peak_gbps"] = opt.peak_gbps;
        j["skipped_scale_layers"] = skipped_scale;
        json arr = json::array();
        for (const Row &r : rows) {
            json e;
            e["name"] = r.layer.name;
            e["op"] = deconv::op_name(r.layer.op);
            e["dtype"] = deconv::dtype_name(r.dtype);
            if (r.typed) {
                e["cfg"] = deconv::data_types_name(r.types);
                e["epilogue"] = describe_quant(r.layer);
            }
            e["layout"] = layout_name(data_format_of(r.layer));
            e["input_shape"] = r.layer.input_shape;
            e["filter_shape"] = r.layer.filter_shape;
            e["macs"] = r.macs;
            if (r.plan) {
                e["output_shape"] = r.plan->shape().output_shape;
                e["macs_performed"] = r.plan->macs();
                e["device"] = deconv::device_name(r.plan->device());
                e["bytes"] = r.bytes;
            }
            if (!r.skipped.empty()) e["skipped"] = r.skipped;
            if (r.ran) {
                e["variant"] = variant;
                e["runs"] = r.ours.runs;
                e["ms_median"] = r.ours.median_ms;
                e["ms_min"] = r.ours.min_ms;
                e["ms_max"] = r.ours.max_ms;
                e["spread_pct"] = r.ours.spread_pct;
                e["samples_ms"] = r.ours.samples_ms;
                e["gflops"] = r.gflops;
                e["roofline_pct"] = r.roofline_pct;
            }
            if (r.dnn_ran) {
                json d;
                d["runs"] = r.dnn.stats.runs;
                d["ms_median"] = r.dnn.stats.median_ms;
                d["ms_min"] = r.dnn.stats.min_ms;
                d["spread_pct"] = r.dnn.stats.spread_pct;
                d["dtype"] = r.dnn.dtype;
                d["format"] = r.dnn.format;
                d["impl"] = r.dnn.impl;
                d["plain_ms"] = r.dnn.plain_ms >= 0 ? json(r.dnn.plain_ms) : json(nullptr);
                d["any_ms"] = r.dnn.any_ms >= 0 ? json(r.dnn.any_ms) : json(nullptr);
                d["plain_impl"] = r.dnn.plain_impl;
                d["any_impl"] = r.dnn.any_impl;
                if (!r.dnn.not_timed.empty()) d["not_timed"] = r.dnn.not_timed;
                d["max_abs_diff"] = r.dnn.max_abs_diff;
                if (r.typed) {
                    d["fused_ms"] = r.dnn.fused_ms >= 0 ? json(r.dnn.fused_ms) : json(nullptr);
                    d["pass_ms"] = r.dnn.pass_ms >= 0 ? json(r.dnn.pass_ms) : json(nullptr);
                    d["fused_impl"] = r.dnn.fused_impl;
                    d["pass_impl"] = r.dnn.pass_impl;
                    if (!r.dnn.pass_note.empty()) d["pass_note"] = r.dnn.pass_note;
                    d["runtime_zero_points"] = r.dnn.runtime_zero_points;
                }
                e["onednn"] = d;
                e["onednn_over_ours"] = r.ratio;
            } else if (with_onednn && r.ran) {
                e["onednn"] = json{{"error", r.dnn.error}};
            }
            e["notes"] = r.notes;
            arr.push_back(e);
        }
        j["layers"] = arr;
        j["geomean"] = json{{"gflops", geomean(g_gflops)},
                            {"roofline_pct", geomean(g_roof)},
                            {"onednn_over_ours", g_ratio.empty() ? json(nullptr) : json(geomean(g_ratio))}};
        out << j.dump(2) << "\n";
        return kExitOk;
    }

    // Text table.
    out << "deconv " << deconv::version() << " bench: " << rows.size() << " layer"
        << (rows.size() == 1 ? "" : "s") << " from " << opt.source;
    if (skipped_scale)
        out << " (" << skipped_scale << " scale layer" << (skipped_scale == 1 ? "" : "s")
            << " left out; --include-scale runs them)";
    out << "\n";
    out << "cpu " << cpu_description() << "\n";
    out << "target " << deconv::device_name(opt.exec.device)
        << (opt.exec.allow_cpu_fallback ? " (CPU fallback allowed)" : "") << ", cpu variant " << variant
        << ", threads "
        << (opt.threads > 0 ? std::to_string(opt.threads) : std::to_string(hw_threads) + " (default)")
        << ", oneDNN " << (with_onednn ? dnn_version : std::string("not compared")) << ", warmup "
        << opt.warmup << " (>= " << fmt("%g", opt.warmup_ms) << " ms), repeats " << opt.repeats << ", roofline " << fmt("%.0f", peak_gflops)
        << " GFLOP/s" << (peak_measured ? " (measured FP32 FMA peak, " + variant + " vectors)" : "") << " / " << opt.peak_gbps << " GB/s\n\n";
    char line[512];
    int dw = 5;  // the dtype column: wider for typed layers ("u8s8bf16")
    for (const Row &r : rows) dw = std::max(dw, static_cast<int>(dtype_label(r).size()));
    std::snprintf(line, sizeof line, "%-18s %-*s %-4s %10s %10s %7s %8s %6s", "layer", dw, "dtype",
                  "lay", "ms", "min ms", "spread", "GFLOP/s", "roof%");
    out << line;
    if (with_onednn) {
        std::snprintf(line, sizeof line, " %10s  %-34s %7s", "oneDNN ms", "oneDNN ran", "speedup");
        out << line;
    }
    out << "\n";
    for (const Row &r : rows) {
        if (!r.ran) {
            std::snprintf(line, sizeof line, "%-18s %-*s %-4s  skipped: %s", r.layer.name.c_str(), dw,
                          dtype_label(r).c_str(), layout_name(data_format_of(r.layer)),
                          r.skipped.c_str());
            out << line << "\n";
            continue;
        }
        std::snprintf(line, sizeof line, "%-18s %-*s %-4s %10.3f %10.3f %6.1f%% %8.1f %5.1f%%",
                      r.layer.name.c_str(), dw, dtype_label(r).c_str(), layout_name(data_format_of(r.layer)),
                      r.ours.median_ms, r.ours.min_ms, r.ours.spread_pct, r.gflops, r.roofline_pct);
        out << line;
        if (with_onednn) {
            if (r.dnn_ran) {
                const std::string ran = r.dnn.dtype + " " + r.dnn.format + " " + r.dnn.impl;
                std::snprintf(line, sizeof line, " %10.3f  %-34s %6.2fx", r.dnn.stats.median_ms,
                              ran.substr(0, 34).c_str(), r.ratio);
            } else {
                std::snprintf(line, sizeof line, " %10s  %-34s %7s", "-", "failed", "-");
            }
            out << line;
        }
        out << "\n";
    }
    std::snprintf(line, sizeof line, "%-18s %-*s %-4s %10s %10s %7s %8.1f %5.1f%%", "geomean", dw, "",
                  "", "", "", "", geomean(g_gflops), geomean(g_roof));
    out << line;
    if (with_onednn && !g_ratio.empty()) {
        std::snprintf(line, sizeof line, " %10s  %-34s %6.2fx", "", "", geomean(g_ratio));
        out << line;
    }
    out << "\n";
    // Notes, each text once with the layers it applies to.
    std::vector<std::pair<std::string, std::string>> notes;  // text, layer names
    for (const Row &r : rows)
        for (const std::string &n : r.notes) {
            auto it = std::find_if(notes.begin(), notes.end(), [&](const auto &p) { return p.first == n; });
            if (it == notes.end()) notes.emplace_back(n, r.layer.name);
            else it->second += ", " + r.layer.name;
        }
    if (!notes.empty()) out << "\nnotes:\n";
    for (const auto &n : notes) out << "  " << n.second << ": " << n.first << "\n";
    if (with_onednn)
        out << "\nspeedup = oneDNN median / our median (above 1: ours is faster); oneDNN ran = "
               "dtype, layout configuration (plain or any, the faster), implementation.\n";
    return kExitOk;
}

}  // namespace deconv_cli
