// `deconv bench`: one layer (flags, --layer, --desc) or a suite (--suite FILE.json | FILE.xml).
#include <iostream>

#include "commands.h"
#include "errors.h"
#include "suite.h"

namespace deconv_cli {

int bench_command(BenchCommandOptions &o) {
    // Threads first: the libraries read them when their pools start.
    set_bench_threads(o.bench.threads);
    if (o.bench.threads < 0) throw UsageError("--threads " + std::to_string(o.bench.threads) + ": must be at least 1");

    std::vector<LayerSpec> layers;
    const LayerOptions &lo = o.layer;
    bool has_layer_flags = false;
    for (CLI::Option *opt : lo.layer_flags()) has_layer_flags = has_layer_flags || (opt && opt->count() > 0);
    if (!o.suite.empty()) {
        if (has_layer_flags)
            throw UsageError("--suite cannot be combined with --layer, --layer-name, --desc, --op, shape "
                             "or attribute flags (pick suite layers with --only; --data-format applies "
                             "to every layer)");
        const std::optional<deconv::DataFormat> format = data_format_flag(lo);
        Suite s = load_suite(o.suite);
        for (const std::string &n : s.notes) std::cerr << "note: " << n << "\n";
        layers = std::move(s.layers);
        o.bench.source = o.suite;
        if (format)
            for (LayerSpec &l : layers) set_data_format(l, *format);
    } else {
        std::vector<std::string> notes;
        LayerSpec spec = resolve_layer(o.layer, notes);
        for (const std::string &n : notes) std::cerr << "note: " << n << "\n";
        if (spec.input_shape.empty() || spec.filter_shape.empty())
            throw UsageError("bench needs --suite FILE, or a layer: --layer FILE.xml, --desc, or "
                             "--input-shape and --filter-shape");
        if (spec.name.empty()) spec.name = "layer";
        o.bench.source = spec.origin.empty() ? "the command line" : spec.origin;
        layers.push_back(std::move(spec));
    }
    if (!o.dtype.empty()) {
        const deconv::DType t = parse_dtype_arg(o.dtype, "--dtype");
        for (LayerSpec &l : layers) l.dtype = t;
    }
    if (!o.only.empty()) {
        std::string item;
        for (size_t i = 0; i <= o.only.size(); ++i) {
            if (i == o.only.size() || o.only[i] == ',') {
                if (!item.empty()) o.bench.only.push_back(item);
                item.clear();
            } else {
                item.push_back(o.only[i]);
            }
        }
    }
    o.bench.onednn = !o.no_onednn;
    o.bench.exec = exec_options(o.target, o.cpu_fallback);
    if (o.bench.exec.device == deconv::Device::CUDA && !deconv::cuda_available()) {
        if (!o.bench.exec.allow_cpu_fallback)
            throw deconv::Error(deconv::ErrorKind::Unsupported,
                                "--target cuda: CUDA is unavailable: " + deconv::cuda_unavailable_reason() +
                                    " (--cpu-fallback runs the layers on the CPU instead)");
        std::cerr << "note: --cpu-fallback: running on the CPU: CUDA is unavailable: "
                  << deconv::cuda_unavailable_reason() << "\n";
    }
    return run_bench(std::move(layers), o.bench, std::cout);
}

}  // namespace deconv_cli
