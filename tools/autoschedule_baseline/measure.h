// One measurement: a layer run by one contender, checked against deconv's result and timed.
// The contenders are "deconv" (the library's own plan, public API), "none" (the phase
// pipelines with Halide's default schedule) and Halide's autoschedulers (autoschedulers.h).
// Each runs in its own process (isolated_run.h), so a crash or a runaway search loses only
// itself.
#pragma once

#include "Halide.h"
#include "run_timing.h"
#include "suite_layer.h"

#include <string>

namespace deconv_asb {

struct MeasureOptions {
    int threads = 2;
    std::string plugin_dir;
    Halide::Target target;
    Halide::MachineParams machine = Halide::MachineParams::generic();
    TimingOptions timing;
    // Largest |ours - deconv's| allowed, relative to max(1, the largest |deconv's output|).
    double tolerance = 1e-4;
    std::string schedules_dir;  // where to write each schedule's source; empty: nowhere
};

struct Measurement {
    bool ok = false;
    std::string error;       // why not ok
    Timing timing;
    double schedule_s = 0;   // autoscheduling, all the layer's pipelines together
    double compile_s = 0;    // JIT compilation, likewise
    int pipelines = 0;       // distinct phase shapes, one pipeline each
    int calls = 0;           // pipeline runs per layer run (one per phase combination)
    double max_err = 0;      // relative to the largest output magnitude
    std::string plan;        // deconv: Plan::describe()
};

Measurement measure(const SuiteLayer &layer, const std::string &contender, const MeasureOptions &opt);

}  // namespace deconv_asb
