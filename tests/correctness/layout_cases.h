// What the channels-last (layout_*_test.cpp) tests share: problems of a given grouping and
// axes, running one through every API against the reference, and reading which kernels a plan
// chose (Plan::describe()).
#pragma once

#include "check.h"
#include "layout_support.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace layout_cases {

using deconv::DataFormat;
using deconv::DType;
using deconv_test::Buffer;
using deconv_test::ncx_to_nxc;
using deconv_test::nxc_shape;
using deconv_test::result_in;
using deconv_test::vec_str;

inline deconv::Attributes nxc_attrs(const deconv_ref::Problem &p) {
    deconv::Attributes a = deconv_test::to_lib_attrs(p);
    a.data_format = DataFormat::NXC;
    return a;
}

// ---------------------------------------------------------------- one problem

// A problem (NCX shapes, as the reference sees them) as an NXC case of the shared runner.
inline deconv_test::GenCase nxc_case(DType t, uint64_t seed, int api, const deconv_ref::Problem &p, std::mt19937 &rng) {
    deconv_test::GenCase c;
    c.format = DataFormat::NXC;
    c.dtype = t;
    c.seed = seed;
    c.api = api;
    c.p = p;
    c.input = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
    c.filter = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
    return c;
}

// Runs problem `p` (NCX shapes) as NXC (or `format`) on random data drawn from `seed`, through
// API `api`: counted in `ran`, failures in `failed` (the first dozen reported, after `what`).
inline void check_random_case(DType t, uint64_t seed, int api, const deconv_ref::Problem &p, int &ran, int &failed,
                              const std::string &schedule = "", DataFormat format = DataFormat::NXC,
                              const std::string &what = "") {
    std::mt19937 rng(static_cast<uint32_t>(seed));
    ran++;
    deconv_test::GenCase c = nxc_case(t, seed, api, p, rng);
    c.format = format;
    c.exec.schedule = schedule;
    const auto r = deconv_test::run_and_check(c);
    if (!r && ++failed <= 12) ADD_FAILURE() << what << r.message();
}

// One spatial axis of a test problem: input positions, kernel, stride, pads_begin, output_padding.
struct AxisSpec {
    int64_t x, k, s, pad_begin, output_padding = 0;
};

// A problem (NCX shapes, as the reference sees them) of `groups` groups of `cin` -> `cout`
// channels (GroupConvolutionBackpropData when `grouped`), its innermost axis `inner` and every
// other axis `outer`, no pads_end.
inline deconv_ref::Problem grouped_problem(int64_t n, int64_t groups, int64_t cin, int64_t cout, bool grouped, int rank,
                                           const AxisSpec &inner, const AxisSpec &outer) {
    deconv_ref::Problem p;
    p.grouped = grouped;
    p.input_shape = {n, groups * cin};
    p.filter_shape = grouped ? std::vector<int64_t>{groups, cin, cout} : std::vector<int64_t>{cin, cout};
    for (int a = 0; a < rank; a++) {
        const AxisSpec &axis = a == rank - 1 ? inner : outer;
        p.input_shape.push_back(axis.x);
        p.filter_shape.push_back(axis.k);
        p.strides.push_back(axis.s);
        p.pads_begin.push_back(axis.pad_begin);
        p.pads_end.push_back(0);
        p.output_padding.push_back(axis.output_padding);
    }
    return p;
}

// The plan (Plan::describe()) of NXC (or `format`) problem `p` with the pins `schedule`.
inline std::string plan_of(DType t, const deconv_ref::Problem &p, const std::string &schedule = "",
                           DataFormat format = DataFormat::NXC) {
    deconv::ExecOptions exec;
    exec.schedule = schedule;
    deconv::Attributes attrs = deconv_test::to_lib_attrs(p);
    attrs.data_format = format;
    return deconv::Plan::create(p.grouped ? deconv::Op::GroupConvolutionBackpropData
                                          : deconv::Op::ConvolutionBackpropData,
                                t, format == DataFormat::NXC ? nxc_shape(p.input_shape) : p.input_shape,
                                p.filter_shape, attrs, std::nullopt, exec)
        .describe();
}

// Whether the plan of NXC (or `format`) problem `p` (with the pins `schedule`) names `part` (a
// kernel, a step) in Plan::describe(), expected unless the environment pins a knob that can keep
// it off (the unbordered_* and schedule ctest runs), or on a variant without the speed families
// (deconv_test::speed_families_here): 1 where checked, 0 where not.
inline int expect_plan_runs(DType t, const deconv_ref::Problem &p, const std::string &part,
                            const std::string &schedule = "", DataFormat format = DataFormat::NXC) {
    if (!deconv_test::speed_families_here()) return 0;
    const std::string how = plan_of(t, p, schedule, format);
    for (const char *pin : {"bordered_input=", "interleave=", "route="})
        if (how.find(pin) != std::string::npos && schedule.find(pin) == std::string::npos) return 0;
    EXPECT_NE(how.find(part), std::string::npos) << how;
    return 1;
}

// The plan (Plan::describe()) of channels-first f32 problem `p` with default options (read by
// the x86-64 route checks).
inline std::string ncx_f32_plan(const deconv_ref::Problem &p) { return plan_of(DType::f32, p, "", DataFormat::NCX); }

// Runs channels-first f32 problem `p` through every API against the reference; counts the runs
// and failures, the failure prefixed by `what`.
inline void check_ncx_f32_apis(const deconv_ref::Problem &p, int rank, uint64_t seed, const std::string &what, int &ran,
                               int &failed) {
    for (int api = 0; api < 3; api++)
        check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, rank, seed + api), api, p, ran, failed, "",
                          DataFormat::NCX, what);
}

// A route case: a channels-first f32 problem and whether the rule under test routes it.
struct RouteCase {
    deconv_ref::Problem p;
    bool routed;
};

// Checks each case's plan with `expect(how, routed)` where `checked(how)` (x86-64 plans: unpinned,
// on the CPUs the rule applies to), then runs the problem through every API against the
// reference; expects some to run and none to fail.
inline void check_route_cases(const std::vector<RouteCase> &cases, int rank, uint64_t seed,
                              const std::function<bool(const std::string &)> &checked,
                              const std::function<void(const std::string &, bool)> &expect) {
    int ran = 0, failed = 0, i = 0;
    for (const RouteCase &c : cases) {
        i++;
        if (!deconv_test::rank_built(rank)) continue;
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(c.p);
        if (checked(how) && deconv_test::speed_families_here()) {
            SCOPED_TRACE("case " + std::to_string(i) + ": " + how);
            expect(how, c.routed);
        }
#else
        (void)checked;
        (void)expect;
#endif
        check_ncx_f32_apis(c.p, rank, seed + 3 * i, "case " + std::to_string(i) + ": ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// A plan no pin of its route decides: all auto, or serial pinned alone (the ctest variants of
// lower CPUs pin it; it picks the threads, never a route or a kernel).
inline bool unpinned(const std::string &how) {
    return how.find("policy all auto") != std::string::npos || how.find("policy serial=off from") != std::string::npos;
}

// Whether a route check applies to a plan: nothing pins it, and the running variant has the
// speed families the routes name.
inline bool routes_checked(const std::string &how) { return unpinned(how) && deconv_test::speed_families_here(); }

}  // namespace layout_cases
