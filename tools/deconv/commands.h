// The subcommands of `deconv`: their options (filled by CLI11 in main.cpp) and their bodies.
// Each body returns the exit code or throws (UsageError, IoError, deconv::Error, ...); main()
// turns exceptions into one "error:" line.
#pragma once

#include <cstdint>
#include <string>

#include "bench.h"
#include "layer_options.h"

namespace deconv_cli {

struct RunOptions {
    LayerOptions layer;
    std::string input, filter, output;
    std::string dtype;  // empty: X's dtype
    std::string target = "host";
    bool random = false;
    uint64_t seed = 1;
    std::string save_input, save_filter;
    bool verbose = false;
    CLI::Option *o_dtype = nullptr;
};
int run_command(const RunOptions &o);

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
    BenchOptions bench;
};
int bench_command(BenchCommandOptions &o);

}  // namespace deconv_cli
