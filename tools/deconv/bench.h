// `deconv bench`: times layers with the library (and oneDNN, when built with it) and prints a
// table or JSON.
//
// Per layer: a Plan is created, X and W filled with seeded small integers, W packed once
// (Plan::pack_filter: constant weights, as oneDNN's are reordered once), then `warmup` runs and
// `repeats` timed runs of Plan::run; the median, minimum and spread ((max-min)/median) are
// reported. GFLOP/s = 2 * nominal MACs / median time, nominal MACs = N*G*C_in*C_out*prod(X)*
// prod(K) as bench/layers.json defines it (prod(Y), the output's, for the forward
// GroupConvolution; see nominal_macs). Layers run in their data format: nxc layers on our
// channels-last kernels, and oneDNN on nwc/nhwc/ndhwc data. Roofline % = t_roofline / t_median with
// t_roofline = max(2*MACs / peak_flops, min_bytes / peak_bandwidth), min_bytes = the input,
// filter and output bytes. A final "geomean" row gives the geometric means of GFLOP/s,
// roofline % and the oneDNN ratio (oneDNN time / our time: above 1 means we are faster).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "layer_spec.h"

namespace deconv_cli {

// The compute peak of a CUDA target's roofline when --peak-gflops names none (the CPU figure
// this project began with; GPUs differ by far more).
constexpr double kUnmeasuredPeakGflops = 380.0;

struct BenchOptions {
    int warmup = 2;
    double warmup_ms = 20;  // and at least this long (timing.h says why)
    int repeats = 10;
    int threads = 0;  // 0: the libraries' defaults (all cores)
    double budget_s = 10;  // per layer and library: fewer runs for slow layers (0: no limit)
    bool verbose = false;  // one progress line per layer on stderr, terminal or not
    bool json = false;
    // Print each layer's plan (Plan::describe) on stdout, one tab-separated line each, and time
    // nothing: the dispatch's choices over a suite, compared across builds.
    bool plans_only = false;
    bool include_scale = false;
    bool onednn = true;
    // Time Plan::run with the filter packed on every run instead of once (Plan::pack_filter, as
    // oneDNN's weights are reordered once, outside its timed runs).
    bool pack_per_run = false;
    double peak_gflops = 0;  // 0: measured on the CPU (peak_flops.h)
    double peak_gbps = 41.0;
    uint64_t seed = 1;
    std::vector<std::string> only;  // layer names to keep (empty: all)
    std::string source;             // what the layers came from, for the header
    deconv::ExecOptions exec;       // --target / --cpu-fallback
};

// Runs the benchmark, writing the table (or JSON) to `out` and progress to stderr on a
// terminal. Returns the exit code: 0, or 1 if a layer failed validation (reported before any
// timing). Layers the build lacks kernels for are reported as skipped.
int run_bench(std::vector<LayerSpec> layers, const BenchOptions &options, std::ostream &out);

// Sets the thread count for both libraries before any kernel runs (HL_NUM_THREADS and
// halide_set_num_threads for ours, omp_set_num_threads for oneDNN).
void set_bench_threads(int threads);

// One number printed with a printf format ("%.2f"), for the tables of bench and tune.
std::string fmt(const char *f, double v);

}  // namespace deconv_cli
