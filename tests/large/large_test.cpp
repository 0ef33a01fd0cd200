// The spec's 3D example at full size: GroupConvolutionBackpropData, input 1x20x224x224x224 f32,
// filter 4x5x2x3x3x3, strides 2, pads 1/1 -> output 1x8x447x447x447 (0.9 GB in, 2.9 GB out).
// ~200 output points (every corner, edges, and random interior points) are checked against a
// gather formula computed directly from the spec, independent of the library.
//
// The data are small integers, so every product and partial sum is an integer far below 2^24:
// exact in f32 in any summation order, and the comparison can be exact.
#include "test_support.h"

#include <chrono>
#include <limits>
#include <memory>
#include <random>
#include <thread>

namespace {

// A cheap, non-periodic deterministic pattern of integers in [-r, r].
inline float pattern(uint64_t i, uint64_t mult, int r) {
    const uint64_t h = (i * mult) ^ ((i * mult) >> 29);
    return static_cast<float>(static_cast<int>((h >> 7) % static_cast<uint64_t>(2 * r + 1)) - r);
}

TEST(Large, SpecExample3DFullSize) {
    using deconv::DType;
    if (!deconv_test::rank_built(3) || !deconv_test::dtype_built(DType::f32))
        GTEST_SKIP() << "3D f32 kernels not built";
    const std::vector<int64_t> in_shape{1, 20, 224, 224, 224}, w_shape{4, 5, 2, 3, 3, 3};
    deconv::Attributes a;
    a.strides = {2, 2, 2};
    a.pads_begin = {1, 1, 1};
    a.pads_end = {1, 1, 1};
    a.dilations = {1, 1, 1};
    const std::vector<int64_t> out_shape{1, 8, 447, 447, 447};

    const auto info =
        deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, in_shape, w_shape, a);
    ASSERT_EQ(info.output_shape, out_shape);

    const int64_t n_in = deconv_ref::product(in_shape), n_w = deconv_ref::product(w_shape),
                  n_out = deconv_ref::product(out_shape);
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<float[]> in(new float[static_cast<size_t>(n_in)]);
    std::unique_ptr<float[]> w(new float[static_cast<size_t>(n_w)]);
    std::unique_ptr<float[]> out(new float[static_cast<size_t>(n_out)]);
    for (int64_t i = 0; i < n_w; i++) w[i] = pattern(static_cast<uint64_t>(i), 0xC2B2AE3D27D4EB4Full, 3);
    {
        // The input pattern, and a sentinel (NaN) in the whole output so that an unwritten
        // sampled point cannot pass; split over the cores (page faults dominate).
        const int nt = static_cast<int>(std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
        std::vector<std::thread> threads;
        for (int t = 0; t < nt; t++)
            threads.emplace_back([&, t] {
                const int64_t i0 = n_in * t / nt, i1 = n_in * (t + 1) / nt;
                for (int64_t i = i0; i < i1; i++)
                    in[i] = pattern(static_cast<uint64_t>(i), 0x9E3779B97F4A7C15ull, 7);
                const int64_t o0 = n_out * t / nt, o1 = n_out * (t + 1) / nt;
                std::fill(out.get() + o0, out.get() + o1, std::numeric_limits<float>::quiet_NaN());
            });
        for (auto &th : threads) th.join();
    }
    const auto t1 = std::chrono::steady_clock::now();

    ASSERT_NO_THROW(deconv::group_convolution_backprop_data(
        deconv::ConstTensorView(in.get(), DType::f32, in_shape),
        deconv::ConstTensorView(w.get(), DType::f32, w_shape),
        deconv::TensorView{out.get(), DType::f32, out_shape, {}}, a));
    const auto t2 = std::chrono::steady_clock::now();

    const deconv_ref::Problem p = deconv_test::ref_problem(true, in_shape, w_shape, a);
    const deconv_ref::Resolved r = deconv_ref::resolve(p);
    ASSERT_EQ(r.output_shape, out_shape);

    // Sample points: the 8 corners and 12 edge midpoints of the volume in two channels, then
    // random points (random channel, random position).
    std::vector<std::vector<int64_t>> points;
    const int64_t e = 446, m = 223;
    for (int64_t c : {int64_t{0}, int64_t{7}})
        for (int64_t z : {int64_t{0}, e})
            for (int64_t y : {int64_t{0}, e})
                for (int64_t x : {int64_t{0}, e}) points.push_back({0, c, z, y, x});
    for (int64_t c : {int64_t{3}, int64_t{4}}) {
        for (int64_t u : {int64_t{0}, e})
            for (int64_t v : {int64_t{0}, e}) {
                points.push_back({0, c, m, u, v});
                points.push_back({0, c, u, m, v});
                points.push_back({0, c, u, v, m});
            }
    }
    std::mt19937 rng(2024);
    std::uniform_int_distribution<int64_t> ch(0, 7), pos(0, 446), edge(0, 3);
    while (points.size() < 200) {
        std::vector<int64_t> pt{0, ch(rng), pos(rng), pos(rng), pos(rng)};
        // a quarter of them pinned near a border on one axis
        if (edge(rng) == 0) pt[2 + edge(rng) % 3] = edge(rng) < 2 ? edge(rng) : 446 - edge(rng);
        points.push_back(pt);
    }

    int bad = 0, nonzero = 0;
    for (const auto &pt : points) {
        const double want = deconv_ref::gather_point(
            r, pt, [&](int64_t i) { return static_cast<double>(in[i]); },
            [&](int64_t i) { return static_cast<double>(w[i]); });
        int64_t flat = 0;
        for (size_t k = 0; k < pt.size(); k++) flat = flat * out_shape[k] + pt[k];
        const double got = out[flat];
        if (want != 0) nonzero++;
        if (!(got == want) && ++bad <= 10)
            ADD_FAILURE() << "at " << deconv_test::vec_str(pt) << ": got " << got << " want "
                          << want;
    }
    EXPECT_EQ(bad, 0) << "of " << points.size() << " sampled points";
    EXPECT_GT(nonzero, 150) << "the pattern should make most sampled points non-zero";

    const double fill_s = std::chrono::duration<double>(t1 - t0).count();
    const double run_s = std::chrono::duration<double>(t2 - t1).count();
    // MACs: 20 input channels x 2 outputs per group x 27 taps per input element (less clipping).
    const double macs = static_cast<double>(n_in) * 2 * 27;
    std::printf("[ large    ] fill %.2f s, run %.2f s (~%.1f GMAC/s nominal), %zu points checked\n",
                fill_s, run_s, macs / run_s * 1e-9, points.size());
}

}  // namespace
