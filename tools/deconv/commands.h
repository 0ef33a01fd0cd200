// The subcommands of `deconv`: their options (filled by CLI11 in main.cpp) and their bodies.
// Each body returns the exit code or throws (UsageError, IoError, deconv::Error, ...); main()
// turns exceptions into one "error:" line.
#pragma once

#include <cstdint>
#include <string>

#include "bench.h"
#include "host_tensor.h"
#include "layer_options.h"

namespace deconv_cli {

struct RunOptions {
    LayerOptions layer;
    std::string input, filter, output;
    std::string dtype;  // empty: X's dtype
    std::string target = "cpu";  // cpu (alias host) or cuda
    bool cpu_fallback = false;   // --target cuda: run on the CPU when CUDA cannot
    bool random = false;
    uint64_t seed = 1;
    std::string save_input, save_filter, save_bias;
    std::string dst_init;  // --dst-init: the output's earlier contents (a sum post-op)
    bool verbose = false;
    std::string schedules;
    std::string algorithm = "direct";
    std::string schedule;  // --schedule: pins of the dispatch policy (ExecOptions::schedule)
    CLI::Option *o_dtype = nullptr;
};
int run_command(const RunOptions &o);

// --algorithm's value; UsageError for an unknown one.
deconv::Algorithm algorithm_option(const std::string &algorithm);
// --target, --cpu-fallback and --algorithm as the library's ExecOptions; UsageError for an
// unknown target or algorithm.
deconv::ExecOptions exec_options(const std::string &target, bool cpu_fallback, const std::string &algorithm = "direct");
// Plan::create with those options. A CUDA request CUDA cannot serve (no driver or GPU, or no
// CUDA kernel for the layer) throws a deconv::Error naming --target cuda and the opt-in
// fallback; with the fallback, a note on stderr says that the layer runs on the CPU, and why.
deconv::Plan create_plan(const LayerSpec &spec, deconv::DType dtype, const deconv::ExecOptions &exec);
// A layer with QuantSpec::typed(): shape inference first (its errors as they are), then
// Plan::create(op, layer_types, ..., layer_epilogue) with the scales for the output's channels.
// Errors as create_plan's.
deconv::Plan create_typed_plan(const LayerSpec &spec, const deconv::ExecOptions &exec);
// Random bias data of the layer's bias dtype for `channels` output channels: integers -32..32
// (exact in every dtype), seeded.
HostTensor random_bias(deconv::DType dtype, int64_t channels, uint64_t seed);

struct InferShapeOptions {
    LayerOptions layer;
    bool verbose = false;
};
int infer_shape_command(const InferShapeOptions &o);

struct BenchCommandOptions {
    LayerOptions layer;
    std::string suite;
    std::string dtype;   // overrides the layers' dtype when given
    std::string only;    // comma-separated layer names
    bool no_onednn = false;
    std::string target = "cpu";
    bool cpu_fallback = false;
    std::string schedules;
    std::string algorithm = "direct";
    std::string schedule;  // --schedule: pins of the dispatch policy (ExecOptions::schedule)
    BenchOptions bench;
};
int bench_command(BenchCommandOptions &o);

struct TuneCommandOptions {
    LayerOptions layer;
    std::string suite;
    std::string dtype;
    std::string only;
    int threads = 0;
    int repeats = 0;
    double max_seconds = 20;
    bool include_scale = false;
    std::string out;        // database to merge the results into
    std::string schedules;  // database consulted before tuning (the "before" column's plan is untuned regardless)
    std::string algorithm = "direct";  // auto: the search may pick the Winograd path
    bool verbose = false;
};
int tune_command(TuneCommandOptions &o);

// --schedules FILE: deconv::load_schedules, its errors as IoError (exit 2). Nothing for "".
void load_schedule_database(const std::string &path);

}  // namespace deconv_cli
