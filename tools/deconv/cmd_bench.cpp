// `deconv bench`: one layer (flags, --layer, --desc) or a suite (--suite FILE.json | FILE.xml;
// without either, the source tree's bench/layers.json, default_suite_path()).
#include <iostream>

#include "commands.h"
#include "errors.h"
#include "layer_selection.h"

namespace deconv_cli {

int bench_command(BenchCommandOptions &o) {
    // Threads first: the libraries read them when their pools start.
    set_bench_threads(o.bench.threads);
    if (o.bench.threads < 0) throw UsageError("--threads " + std::to_string(o.bench.threads) + ": must be at least 1");
    load_schedule_database(o.schedules);

    LayerSelection sel = select_layers(o.layer, o.suite, o.dtype);
    std::vector<LayerSpec> layers = std::move(sel.layers);
    o.bench.source = sel.source;
    o.bench.only = split_names(o.only);
    o.bench.onednn = !o.no_onednn;
    o.bench.exec = exec_options(o.target, o.cpu_fallback, o.algorithm);
    o.bench.exec.schedule = o.schedule;
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
