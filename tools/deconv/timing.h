// Wall-clock timing of a callable: warm-up runs, then repeated timed runs, summarised by the
// median, the minimum and the spread ((max - min) / median). A time budget (seconds, 0 for
// none) cuts the runs short for slow layers: warm-up stops once it has used a quarter of it,
// timed runs once they have used all of it (at least one timed run always happens).
//
// Warm-up lasts at least `warmup` runs and at least `warmup_ms`. The floor in time is for the
// small layers of a suite that times two libraries one after the other: each library's idle
// threads spin for a few milliseconds after its last run (OpenMP's default wait policy does),
// and timed runs started inside that window share the cores with them. Measured on
// grouped32_up (0.15 ms at 2 threads): 2 warm-up runs right after oneDNN's timing gave 0.27 ms,
// our one-thread time; after 100 warm-up runs, 0.14-0.15.
#pragma once

#include <functional>
#include <vector>

namespace deconv_cli {

struct TimingStats {
    int runs = 0;
    double median_ms = 0, min_ms = 0, max_ms = 0;
    double spread_pct = 0;  // (max - min) / median * 100
    std::vector<double> samples_ms;
};

struct TimingOptions {
    int warmup = 2;
    double warmup_ms = 20;
    int repeats = 10;
    double budget_s = 10;  // 0: no limit
};

TimingStats time_runs(const std::function<void()> &fn, const TimingOptions &opt);

}  // namespace deconv_cli
