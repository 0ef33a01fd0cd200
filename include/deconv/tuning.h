// Autotuning: searching a layer's dispatch policy on this machine, and schedule databases.
//
// tune_layer searches the policies that this build's kernels can run for one layer (one knob at
// a time, starting from the heuristics' plan), checks each candidate's result against the
// untuned plan's on the layer's own shapes, times them interleaved, and keeps the fastest only
// when it beats the untuned plan by more than the measured noise. save_schedule records the
// result in a schedule database, which Plan::create then consults (load_schedules,
// DECONV_SCHEDULES). docs/tuning.md describes the knobs and the file format.
#pragma once

#include "deconv/deconv.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace deconv {

struct TuneOptions {
    // Time for the whole search of one layer, in seconds (each candidate's check and timing
    // included); the search stops at the first knob past it. Must be positive.
    double max_seconds = 20;
    // Timed samples per candidate and round of the interleaved timing (0: 5).
    int repeats = 0;
    // Direct: the direct kernels' policies only. Auto: the Winograd path too (knobs `algorithm`
    // and `winograd_tile`), its results checked against the direct ones within its error bound
    // (docs/semantics.md). Winograd: the Winograd path's policies only.
    Algorithm algorithm = Algorithm::Direct;
    // Called as the search goes on: the fraction of the time budget spent, and what is timed.
    std::function<void(double fraction, const std::string &what)> progress;
};

struct TuneResult {
    std::string schedule;  // the winning pins, "knob=value ..."; "" when the untuned plan won
    std::string default_description, tuned_description;  // Plan::describe() of both
    double default_ms = 0, tuned_ms = 0;  // medians, measured in the same interleaved rounds
    double noise = 0;      // the untuned plan's relative spread (interquartile range / median)
    int candidates = 0;    // distinct executions checked
    int rejected = 0;      // candidates whose result differed from the untuned plan's
    double seconds = 0;    // spent on the search
};

// Tunes one CPU layer (the arguments of Plan::create). Throws what Plan::create throws for the
// layer, and Error(InvalidArgument) for options out of range.
TuneResult tune_layer(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                      const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                      const std::optional<std::vector<int64_t>> &output_shape = std::nullopt,
                      const TuneOptions &options = {});

// The same for a layer of separate tensor types with an epilogue (the arguments of the DataTypes
// Plan::create; quantized layers among them). Its candidates compute the untuned plan's output
// exactly (the accumulation is exact and the epilogue the same), with a random bias where the
// epilogue has one and random scales where it takes them at each run.
TuneResult tune_layer(Op op, const DataTypes &types, const std::vector<int64_t> &input_shape,
                      const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                      const std::optional<std::vector<int64_t>> &output_shape, const Epilogue &epilogue,
                      const TuneOptions &options = {});

// Adds the result for the layer on this machine (CPU variant, model and thread count) to the
// database file at `path`, replacing an entry for the same layer and machine and keeping every
// other; creates the file. `name` labels the entry (optional). Throws Error naming the file when
// it is malformed (it is then left as it was) or cannot be written.
void save_schedule(const std::string &path, Op op, DType dtype, const std::vector<int64_t> &input_shape,
                   const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                   const std::optional<std::vector<int64_t>> &output_shape, const TuneResult &result,
                   const std::string &name = "");
// The same for a layer of separate tensor types: its entry holds the types ("types": "u8s8u8"),
// and only plans of those types take it (their accumulating plans then take no entry of their
// own dtype).
void save_schedule(const std::string &path, Op op, const DataTypes &types, const std::vector<int64_t> &input_shape,
                   const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                   const std::optional<std::vector<int64_t>> &output_shape, const TuneResult &result,
                   const std::string &name = "");

// The knobs a schedule pins, and the values tune_layer tries for each ("auto" first).
std::vector<std::string> schedule_knobs();
std::vector<std::string> schedule_knob_values(const std::string &knob);

}  // namespace deconv
