// Wall-clock timing of a callable: warm-up runs, then repeated timed runs, summarised by the
// median, the minimum and the spread ((max - min) / median). A time budget (seconds, 0 for
// none) cuts the runs short for slow layers: warm-up stops once it has used a quarter of it,
// timed runs once they have used all of it (at least one timed run always happens).
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

TimingStats time_runs(const std::function<void()> &fn, int warmup, int repeats,
                      double budget_s = 0);

}  // namespace deconv_cli
