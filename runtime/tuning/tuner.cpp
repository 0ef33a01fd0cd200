// tune_layer: coordinate search over the dispatch policy's knobs (policy.h), each candidate
// checked against the untuned plan and timed interleaved with the incumbent.
#include "deconv/tuning.h"

#include "kernels/half_conversion.h"
#include "kernels/kernel_registry.h"
#include "plan/policy.h"
#include "tuning/schedule_database.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>

namespace deconv {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int64_t count_of(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    return n;
}

// Random data every dtype represents exactly: floats of magnitude 1/8..2 (f16, bf16: random
// mantissas under a small exponent), small integers.
std::vector<uint8_t> random_tensor(DType t, int64_t count, std::mt19937 &rng) {
    std::vector<uint8_t> b((size_t)count * dtype_size(t));
    std::uniform_int_distribution<int> bits(0, 0xffff), small(-8, 8);
    for (int64_t i = 0; i < count; i++) {
        uint8_t *at = b.data() + i * (int64_t)dtype_size(t);
        const int r = bits(rng);
        switch (t) {
        case DType::f32: {
            const float v = (float)small(rng) / 8.0f + (float)(r & 0xff) / 4096.0f;
            std::memcpy(at, &v, 4);
            break;
        }
        case DType::f64: {
            const double v = (double)small(rng) / 8.0 + (double)r / 1048576.0;
            std::memcpy(at, &v, 8);
            break;
        }
        case DType::f16: {
            const uint16_t h = (uint16_t)(((r & 1) << 15) | ((12 + (r >> 1) % 4) << 10) | (bits(rng) & 0x3ff));
            std::memcpy(at, &h, 2);
            break;
        }
        case DType::bf16: {
            const uint16_t h = (uint16_t)(((r & 1) << 15) | ((124 + (r >> 1) % 4) << 7) | (bits(rng) & 0x7f));
            std::memcpy(at, &h, 2);
            break;
        }
        case DType::i8: *(int8_t *)at = (int8_t)small(rng); break;
        case DType::u8: *at = (uint8_t)(small(rng) + 8); break;
        case DType::i32: {
            const int32_t v = small(rng);
            std::memcpy(at, &v, 4);
            break;
        }
        }
    }
    return b;
}

double value_at(const std::vector<uint8_t> &b, DType t, int64_t i) {
    const uint8_t *at = b.data() + i * (int64_t)dtype_size(t);
    switch (t) {
    case DType::f32: { float v; std::memcpy(&v, at, 4); return v; }
    case DType::f64: { double v; std::memcpy(&v, at, 8); return v; }
    case DType::bf16: {
        uint16_t h; std::memcpy(&h, at, 2);
        const uint32_t w = (uint32_t)h << 16;
        float v; std::memcpy(&v, &w, 4);
        return v;
    }
    case DType::f16: {
        uint16_t h; std::memcpy(&h, at, 2);
        return detail::f16_to_f32(h);
    }
    case DType::i8: return *(const int8_t *)at;
    case DType::u8: return *at;
    case DType::i32: { int32_t v; std::memcpy(&v, at, 4); return v; }
    }
    return 0;
}

// Whether `got` equals the untuned plan's `want` up to summation order: the kernels accumulate
// in f32 (f16, bf16, f32) or f64 and may add in another order, a difference bounded by a few
// units of the accumulator's precision times the largest output (1e-4 for f32 over reductions
// of up to thousands of terms); f16 and bf16 round once more to the storage type, so a result may
// land one storage unit away (2^-10, 2^-7 relative). Integer accumulation is exact.
// The Winograd path (`winograd`) adds its transforms' rounding: up to kWinogradTolerance of the
// largest output in f32 (docs/semantics.md states the bound; tests/correctness/winograd_test.cpp
// checks it).
constexpr double kWinogradTolerance = 1e-3;

bool same_result(const std::vector<uint8_t> &got, const std::vector<uint8_t> &want, DType t, int64_t count,
                 bool winograd) {
    double scale = 1;
    for (int64_t i = 0; i < count; i++) scale = std::max(scale, std::fabs(value_at(want, t, i)));
    double tol = 0;
    switch (t) {
    case DType::f32: tol = winograd ? kWinogradTolerance : 1e-4; break;
    case DType::f64: tol = 1e-10; break;
    case DType::f16: tol = 2.0 / 1024; break;
    case DType::bf16: tol = 2.0 / 128; break;
    default: tol = 0;
    }
    for (int64_t i = 0; i < count; i++) {
        const double a = value_at(got, t, i), b = value_at(want, t, i);
        if (!(std::fabs(a - b) <= tol * std::max(scale, std::fabs(b) * 8))) return false;
    }
    return true;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double spread(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.size() < 4) return 0;
    const double m = median(v);
    return m > 0 ? (v[v.size() * 3 / 4] - v[v.size() / 4]) / m : 0;
}

// A plan with its filter packed once, as inference runs it (constant weights).
struct Candidate {
    std::string schedule;
    Plan plan;
    PackedFilter filter;
    std::vector<double> samples;  // ms per run
};

// What a plan runs, without its policy line: candidates that run the same are timed once.
std::string execution_of(const Plan &plan) {
    const std::string d = plan.describe();
    const size_t policy = d.rfind("; policy ");
    return policy == std::string::npos ? d : d.substr(0, policy);
}

// The layer a search tunes: one dtype, or separate tensor types with an epilogue (`typed`).
struct TunedLayer {
    Op op;
    DataTypes types;
    Epilogue epilogue;
    bool typed = false;
};

class Search {
public:
    Search(const TunedLayer &layer, const std::vector<int64_t> &in, const std::vector<int64_t> &w, const Attributes &attrs,
           const std::optional<std::vector<int64_t>> &out, const TuneOptions &o)
        : op_(layer.op), types_(layer.types), epilogue_(layer.epilogue), typed_(layer.typed),
          dtype_(layer.typed ? DType::f32 : layer.types.src), in_(in), w_(w), attrs_(attrs), out_shape_(out), options_(o),
          start_(Clock::now()) {
        const Plan base = make_plan("");
        std::mt19937 rng(1234);
        input_ = random_tensor(types_.src, count_of(in), rng);
        filter_ = random_tensor(types_.weights, count_of(w), rng);
        out_count_ = count_of(base.shape().output_shape);
        want_.assign((size_t)out_count_ * dtype_size(types_.dst), 0);
        if (typed_) run_args(base, rng);
        // The reference: the direct kernels' result, the untuned plan's unless Winograd is allowed.
        if (o.algorithm == Algorithm::Direct || typed_) {
            run_raw(base, want_);
        } else {
            ExecOptions direct;
            direct.use_schedule_database = false;
            run_raw(Plan::create(op_, dtype_, in_, w_, attrs_, out_shape_, direct), want_);
        }
        got_ = want_;
        default_.emplace(Candidate{"", base, pack(base), {}});
        // Enough runs per sample that one sample takes a millisecond or more.
        run_once(*default_);
        const Clock::time_point t0 = Clock::now();
        run_once(*default_);
        const double once = std::max(seconds_since(t0), 1e-7);
        runs_per_sample_ = (int)std::clamp(1e-3 / once, 1.0, 1000.0);
        seen_.push_back(execution_of(base));
    }

    bool out_of_time() const { return seconds_since(start_) > options_.max_seconds; }

    // A plan for `schedule` that runs differently from every one seen and computes the untuned
    // plan's result; nullopt otherwise.
    std::optional<Candidate> candidate(const std::string &schedule) {
        std::optional<Plan> plan;
        try {
            plan = make_plan(schedule);
        } catch (const Error &) {
            return std::nullopt;  // a pin this layer cannot take
        }
        const std::string how = execution_of(*plan);
        if (std::find(seen_.begin(), seen_.end(), how) != seen_.end()) return std::nullopt;
        seen_.push_back(how);
        result_.candidates++;
        Candidate c{schedule, *plan, pack(*plan), {}};
        std::fill(got_.begin(), got_.end(), 0xA5);  // a stale result must not pass
        run_once(c);
        if (!same_result(got_, want_, types_.dst, out_count_, options_.algorithm != Algorithm::Direct)) {
            result_.rejected++;
            return std::nullopt;
        }
        return c;
    }

    // Interleaved rounds: each round runs every candidate once (in a rotated order) after a
    // warm-up run each.
    void time(std::vector<Candidate *> &cs, int rounds) {
        for (Candidate *c : cs) run_once(*c);
        for (int r = 0; r < rounds; r++) {
            for (size_t k = 0; k < cs.size(); k++) {
                Candidate &c = *cs[(k + r) % cs.size()];
                const Clock::time_point t0 = Clock::now();
                for (int i = 0; i < runs_per_sample_; i++) run_once(c);
                c.samples.push_back(seconds_since(t0) * 1e3 / runs_per_sample_);
            }
        }
    }

    TuneResult run() {
        const int rounds = options_.repeats > 0 ? options_.repeats : 5;
        Candidate best = *default_;
        const std::vector<std::string> knobs = detail::policy_knobs();
        for (size_t k = 0; k < knobs.size() && !out_of_time(); k++) {
            if (knobs[k] == "kernel_vectors") continue;  // searched with kernel_q_tile
            if (options_.progress) options_.progress(seconds_since(start_) / options_.max_seconds, knobs[k]);
            std::vector<Candidate> trial;
            const detail::Policy current = detail::parse_policy(best.schedule, "tuner");
            for (const auto &values : knob_values(knobs[k])) {
                if (out_of_time()) break;
                detail::Policy p = current;
                for (const auto &[knob, v] : values) detail::set_policy_knob(p, knob, v);
                if (p == current) continue;
                if (auto c = candidate(detail::format_policy(p))) trial.push_back(std::move(*c));
            }
            if (trial.empty()) continue;
            best.samples.clear();
            std::vector<Candidate *> cs = {&best};
            for (Candidate &c : trial) cs.push_back(&c);
            time(cs, rounds);
            const double margin = std::max(0.02, spread(best.samples));
            Candidate *winner = &best;
            for (Candidate &c : trial)
                if (median(c.samples) < median(winner->samples) * (1 - margin)) winner = &c;
            if (winner != &best) best = *winner;
        }
        // The winner against the untuned plan, twice, each time as new plans (new scratch buffers:
        // a plan's run time can depend on where its buffers landed, 0.45 against 1.0 ms seen for
        // one layer) timed in rounds of their own. Kept only when it wins both by more than the
        // untuned plan's spread; the times reported are the second round's.
        bool wins = !best.schedule.empty();
        Candidate base = *default_, chosen = best;
        for (int confirm = 0; confirm < 2; confirm++) {
            base = fresh(default_->schedule);
            std::vector<Candidate *> final_round = {&base};
            if (wins) {
                chosen = fresh(best.schedule);
                final_round.push_back(&chosen);
            }
            time(final_round, std::max(rounds, 7));
            result_.noise = spread(base.samples);
            wins = wins && median(chosen.samples) < median(base.samples) * (1 - std::max(0.02, result_.noise));
        }
        result_.default_ms = median(base.samples);
        result_.default_description = base.plan.describe();
        const Candidate &kept = wins ? chosen : base;
        result_.schedule = kept.schedule;
        result_.tuned_ms = median(kept.samples);
        result_.tuned_description = kept.plan.describe();
        result_.seconds = seconds_since(start_);
        if (options_.progress) options_.progress(1.0, "done");
        return result_;
    }

private:
    using KnobValues = std::vector<std::pair<std::string, std::string>>;

    // The settings one step of the search tries for `knob`: each of its values, except the
    // register tiles, which are tried as (kernel_q_tile, kernel_vectors) pairs, those this build
    // holds for the layer's rank (DECONV_KERNEL_CANDIDATES, DECONV_SCHEDULES): the best q_tile of
    // the default vectors need not be the best of another.
    std::vector<KnobValues> knob_values(const std::string &knob) const {
        std::vector<KnobValues> out;
        if (knob != "kernel_q_tile") {
            for (const std::string &v : detail::policy_knob_values(knob)) out.push_back({{knob, v}});
            return out;
        }
        // f16 and bf16 layers may run the f32 kernels (half_conversion.h), else their own.
        const DType kernel_dtype = dtype_ == DType::f16 || dtype_ == DType::bf16 ? DType::f32 : dtype_;
        std::vector<std::pair<int, int>> tiles = {{0, 0}};
        for (const detail::KernelEntry &e : detail::kernels(detail::default_cpu_variant())) {
            const detail::ScheduleKnobs &k = e.knobs;
            if (e.key.device != Device::CPU || e.key.rank != (int)in_.size() - 2 || !e.key.channels ||
                (e.key.dtype != dtype_ && e.key.dtype != kernel_dtype) || (k.q_tile == 0 && k.vectors == 0))
                continue;
            if (std::find(tiles.begin(), tiles.end(), std::make_pair(k.q_tile, k.vectors)) == tiles.end())
                tiles.emplace_back(k.q_tile, k.vectors);
        }
        const auto text = [](int v) { return v == 0 ? std::string("auto") : std::to_string(v); };
        for (const auto &[q, v] : tiles) out.push_back({{"kernel_q_tile", text(q)}, {"kernel_vectors", text(v)}});
        return out;
    }

    // The layer's plan with `schedule` pinned, the databases ignored ("": the untuned plan).
    Plan make_plan(const std::string &schedule) const {
        ExecOptions e;
        e.use_schedule_database = false;
        e.schedule = schedule;
        e.algorithm = options_.algorithm;
        if (typed_) return Plan::create(op_, types_, in_, w_, attrs_, out_shape_, e, epilogue_);
        return Plan::create(op_, dtype_, in_, w_, attrs_, out_shape_, e);
    }

    // A typed layer's run-time inputs: its bias (small integers, in its dtype) and, where the
    // epilogue leaves them to each run, its scales (powers of two).
    void run_args(const Plan &plan, std::mt19937 &rng) {
        const std::vector<int64_t> &out = plan.shape().output_shape;
        const int64_t channels = out[plan.shape().data_format == DataFormat::NXC ? out.size() - 1 : 1];
        std::uniform_int_distribution<int> small(-8, 8), exponent(-6, -2);
        if (epilogue_.bias) {
            // (Every bias dtype: i32 or f32 for quantized layers, the layer's own or f32 for float
            // ones; small integers are exact in each.)
            const DType bt = *epilogue_.bias;
            const size_t size = dtype_size(bt);
            bias_.resize((size_t)channels * size);
            for (int64_t c = 0; c < channels; c++) {
                uint8_t *at = bias_.data() + c * (int64_t)size;
                const int v = small(rng);
                const float f = (float)v;
                const double d = v;
                switch (bt) {
                case DType::i32: std::memcpy(at, &v, 4); break;
                case DType::f64: std::memcpy(at, &d, 8); break;
                case DType::f16:
                case DType::bf16: detail::f32_row_to_half(bt, &f, (uint16_t *)at, 1, 1); break;
                default: std::memcpy(at, &f, 4); break;
                }
            }
            args_.bias = bias_.data();
        }
        if (epilogue_.scale_mode != ScaleMode::none && epilogue_.scales.empty()) {
            scales_.resize(epilogue_.scale_mode == ScaleMode::per_tensor ? 1 : (size_t)channels);
            for (float &s : scales_) s = std::ldexp(1.0f, exponent(rng));
            args_.scales = scales_.data();
        }
    }

    void run_raw(const Plan &plan, std::vector<uint8_t> &out) const {
        const TensorView dst{out.data(), types_.dst, plan.shape().output_shape, {}};
        const ConstTensorView x(input_.data(), types_.src, in_), w(filter_.data(), types_.weights, w_);
        if (typed_) plan.run(x, w, dst, args_);
        else plan.run(x, w, dst);
    }

    // A new plan of `schedule` (already checked), its filter packed.
    Candidate fresh(const std::string &schedule) const {
        const Plan plan = make_plan(schedule);
        return Candidate{schedule, plan, pack(plan), {}};
    }

    PackedFilter pack(const Plan &plan) const {
        return plan.pack_filter(ConstTensorView(filter_.data(), types_.weights, w_));
    }
    void run_once(const Candidate &c) {
        const ConstTensorView x(input_.data(), types_.src, in_);
        const TensorView dst{got_.data(), types_.dst, c.plan.shape().output_shape, {}};
        if (typed_) c.plan.run(x, c.filter, dst, args_);
        else c.plan.run(x, c.filter, dst);
    }

    Op op_;
    DataTypes types_;
    Epilogue epilogue_;
    bool typed_ = false;
    DType dtype_;  // the plain plan's dtype; a typed layer's kernels are the f32 ones (knob_values)
    std::vector<uint8_t> bias_;
    std::vector<float> scales_;
    RunArgs args_;
    std::vector<int64_t> in_, w_;
    Attributes attrs_;
    std::optional<std::vector<int64_t>> out_shape_;
    TuneOptions options_;
    Clock::time_point start_;
    std::vector<uint8_t> input_, filter_, want_, got_;
    int64_t out_count_ = 0;
    int runs_per_sample_ = 1;
    std::optional<Candidate> default_;
    std::vector<std::string> seen_;
    TuneResult result_;
};

std::string today() {
    const std::time_t now = std::time(nullptr);
    char buf[16];
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
    return buf;
}

}  // namespace

namespace {

void check_tune_options(const TuneOptions &options) {
    if (!(options.max_seconds > 0) || options.max_seconds > 1e6) {
        throw Error(ErrorKind::InvalidArgument,
                    "tune: max_seconds is " + std::to_string(options.max_seconds) + " but must be in (0, 1e6]");
    }
    if (options.repeats < 0 || options.repeats > 1000) {
        throw Error(ErrorKind::InvalidArgument,
                    "tune: repeats is " + std::to_string(options.repeats) + " but must be 0 (default) to 1000");
    }
}

void save_entry(const std::string &path, Op op, DType dtype, const std::string &types,
                const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape,
                const TuneResult &result, const std::string &name) {
    const ShapeInfo info = infer_shape(op, input_shape, filter_shape, attrs, output_shape);
    detail::ScheduleEntry e;
    e.key = detail::schedule_key(op, dtype, input_shape, filter_shape, info, attrs);
    e.key.types = types;
    e.cpu = detail::cpu_model_name();
    e.policy = detail::parse_policy(result.schedule, "tune result");
    e.name = name;
    e.tuned_ms = result.tuned_ms;
    e.default_ms = result.default_ms;
    e.tuned_on = today();
    detail::merge_schedule_file(path, {e});
}

}  // namespace

TuneResult tune_layer(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                      const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                      const std::optional<std::vector<int64_t>> &output_shape, const TuneOptions &options) {
    check_tune_options(options);
    Search s(TunedLayer{op, {dtype, dtype, dtype}, {}, false}, input_shape, filter_shape, attrs, output_shape, options);
    return s.run();
}

TuneResult tune_layer(Op op, const DataTypes &types, const std::vector<int64_t> &input_shape,
                      const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                      const std::optional<std::vector<int64_t>> &output_shape, const Epilogue &epilogue,
                      const TuneOptions &options) {
    check_tune_options(options);
    Search s(TunedLayer{op, types, epilogue, true}, input_shape, filter_shape, attrs, output_shape, options);
    return s.run();
}

void save_schedule(const std::string &path, Op op, DType dtype, const std::vector<int64_t> &input_shape,
                   const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                   const std::optional<std::vector<int64_t>> &output_shape, const TuneResult &result,
                   const std::string &name) {
    save_entry(path, op, dtype, "", input_shape, filter_shape, attrs, output_shape, result, name);
}

void save_schedule(const std::string &path, Op op, const DataTypes &types, const std::vector<int64_t> &input_shape,
                   const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                   const std::optional<std::vector<int64_t>> &output_shape, const TuneResult &result,
                   const std::string &name) {
    save_entry(path, op, types.src, data_types_name(types), input_shape, filter_shape, attrs, output_shape, result,
               name);
}

std::vector<std::string> schedule_knobs() { return detail::policy_knobs(); }
std::vector<std::string> schedule_knob_values(const std::string &knob) { return detail::policy_knob_values(knob); }

}  // namespace deconv
