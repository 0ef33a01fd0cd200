#include "timing.h"

#include <algorithm>
#include <chrono>

namespace deconv_cli {

TimingStats time_runs(const std::function<void()> &fn, const TimingOptions &opt) {
    using clock = std::chrono::steady_clock;
    const double budget_ms = opt.budget_s * 1e3;
    const auto w0 = clock::now();
    for (int i = 0;; ++i) {
        const double used = std::chrono::duration<double, std::milli>(clock::now() - w0).count();
        if (i >= opt.warmup && used >= opt.warmup_ms) break;
        if (budget_ms > 0 && used > budget_ms / 4) break;
        fn();
    }
    TimingStats s;
    const int repeats = std::max(opt.repeats, 1);
    double used = 0;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = clock::now();
        fn();
        const auto t1 = clock::now();
        const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        s.samples_ms.push_back(ms);
        used += ms;
        if (budget_ms > 0 && used > budget_ms) break;
    }
    std::vector<double> sorted = s.samples_ms;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    s.runs = static_cast<int>(n);
    s.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    s.min_ms = sorted.front();
    s.max_ms = sorted.back();
    s.spread_pct = s.median_ms > 0 ? (s.max_ms - s.min_ms) / s.median_ms * 100.0 : 0.0;
    return s;
}

}  // namespace deconv_cli
