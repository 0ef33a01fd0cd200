// Median timing of repeated runs: warm-up runs first (at least `warmup` and `warmup_ms`), then
// `repeats` timed runs, unless they pass `budget_s` of wall time (at least `min_repeats` are
// kept): the unscheduled pipelines of the big layers run for seconds each.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace deconv_asb {

struct TimingOptions {
    int warmup = 2;
    double warmup_ms = 200;
    int repeats = 15;
    int min_repeats = 3;
    double budget_s = 60;
};

struct Timing {
    double median_ms = 0, min_ms = 0;
    int runs = 0;
};

Timing time_runs(const std::function<void()> &fn, const TimingOptions &opt);

}  // namespace deconv_asb
