#include "run_timing.h"

#include <algorithm>

namespace deconv_asb {

Timing time_runs(const std::function<void()> &fn, const TimingOptions &opt) {
    using clock = std::chrono::steady_clock;
    const auto ms_since = [](clock::time_point t) {
        return std::chrono::duration<double, std::milli>(clock::now() - t).count();
    };
    const auto w0 = clock::now();
    for (int i = 0; i < opt.warmup || ms_since(w0) < opt.warmup_ms; i++) {
        fn();
        if (ms_since(w0) > opt.budget_s * 1e3 / 4) break;  // one slow run is warm enough
    }
    std::vector<double> ms;
    const auto t0 = clock::now();
    for (int i = 0; i < opt.repeats; i++) {
        const auto s = clock::now();
        fn();
        ms.push_back(ms_since(s));
        if ((int)ms.size() >= opt.min_repeats && ms_since(t0) > opt.budget_s * 1e3) break;
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    Timing t;
    t.runs = (int)n;
    t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    t.min_ms = ms.front();
    return t;
}

}  // namespace deconv_asb
