// Which kernels channels-last layers, and the channels-first layers routed to the channels-last
// twin, run on (Plan::describe()), each case also run through every API against the reference:
//   LayoutWide.DepthwiseEveryGroupTile and DepthwiseInterleavedEveryTile: the group-vectorized
//   kernels of depthwise layers, per phase and interleaved; DepthwiseChannelsFirstOnTheTwin:
//   channels-first ones routed to them; RoutesByTappedPhases: kernels below the stride and 3D
//   layers of 8-15 channels, channels-first or twinned by their phases; DepthwiseOneTapTiles: the
//   interleaved kernel's one-tap depthwise tiles; InterleavedRowTails: the tail outputs of
//   interleaved rows (transposed columns in 2D); DepthwiseHalfVectorRows: rows of 8-15 groups;
//   FewChannelTwoVectorRows: two position vectors of two and three channels;
//   RowBlocksAndOneTapTiles: the blocked 1D kernel by threads, one-tap layers on channel tiles,
//   twinned or on positions;
//   FewOutputChannelsEveryDotTile: the kernels that vectorize input channels; and the rules of
//   runtime/dispatch/layer_classes.cpp (FewOutputChannelsTakeTheTwin, NarrowRowsOnChannelTiles,
//   FewChannelsAtStride2RunPerPhase,
//   KernelFourStrideTwoOneDimTakeTheTwin, ...).
#include "layout_cases.h"

namespace {

using namespace layout_cases;

// "rank R, kernel K stride S, row of X: ", the prefix of a case's failure message.
std::string row_case(int rank, int64_t k, int64_t s, int64_t x) {
    return "rank " + std::to_string(rank) + ", kernel " + std::to_string(k) + " stride " + std::to_string(s) +
           ", row of " + std::to_string(x) + ": ";
}

// Channels-last depthwise layers (one input and one output channel per group) run the
// group-vectorized kernels: group counts on every side of their tiles (4-lane, one vector, the
// exact tiles of two and three vectors, the full tile of several vectors, and scalar under four;
// lanes are 4 to 16), rows narrower and wider than the position tiles (4, 5, 6 and 8), strides
// 1-3 with the phases' interior and bounded kernels, batch 1-2, every built dtype and rank. The
// first case of each dtype with group kernels (f32, f16 and bf16: a speed family,
// cmake/DeconvKernels.cmake) also checks the plan names the group kernel, so a routing change
// cannot leave them untested; the other dtypes run the same layers on the general kernels.
TEST(LayoutWide, DepthwiseEveryGroupTile) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        bool routed = false;
        for (int64_t groups : {1, 3, 4, 5, 8, 12, 13, 16, 21, 24, 32, 33, 48, 64, 70, 96})
            for (int64_t x : {1, 3, 4, 7, 17}) {
                const int rank = 1 + (i % 3);
                const uint64_t seed = deconv_test::sweep_seed(t, rank, 7000 + i);
                const int64_t s = 1 + i % 3, k = 1 + (i / 3) % 4;
                i++;
                if (!deconv_test::rank_built(rank)) continue;
                const deconv_ref::Problem p = grouped_problem(i % 5 == 0 ? 2 : 1, groups, 1, 1, true, rank,
                                                              {x, k, s, std::min<int64_t>(1, k - 1)}, {2, 2, 2, 0});
                const bool speed_dtype = t == DType::f32 || t == DType::f16 || t == DType::bf16;
                if (!routed && groups >= 16 && speed_dtype) {
                    // (Unless the environment pins a route: the unbordered_* runs. The group
                    // kernels are built for x86-64 and ARM64: generators/CMakeLists.txt.)
                    const std::string how = plan_of(t, p);
#if defined(__x86_64__) || defined(__aarch64__)
                    if (how.find("route=") == std::string::npos && deconv_test::speed_families_here())
                        EXPECT_NE(how.find("_nxc_groups"), std::string::npos) << how;
#endif
                    routed = true;
                }
                check_random_case(t, seed, i % 3, p, ran, failed);
            }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Depthwise rows on the plain interleaved kernel that are no whole number of its group tiles run
// as their first whole multiple, then the rest, only where the row holds four tiles or more
// (runtime/dispatch/impl_phase_kernels.cpp, row exact_groups_min_tiles): rows of 17 and 65 groups of 8 outputs (kernel 16
// at stride 8, pad 0). Each against the reference, through every API; the split checked on
// x86-64 AVX-512 plans where nothing pins a knob.
TEST(LayoutWide, DepthwiseRowsSplitAtTileMultiplesWhenLong) {
    int ran = 0, failed = 0, i = 0;
    for (const int64_t x : {16, 64}) {
        i++;
        const deconv_ref::Problem p = grouped_problem(1, 3, 1, 1, true, 2, {x, 16, 8, 0}, {2, 16, 8, 0});
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(p);
        if (routes_checked(how) && how.find("(avx512") != std::string::npos) {
            EXPECT_NE(how.find("interleaved_s8"), std::string::npos) << how;
            EXPECT_EQ(how.find("exact groups") != std::string::npos, x == 64) << how;
        }
#endif
        check_ncx_f32_apis(p, 2, 7800 + 3 * i, "row of " + std::to_string(x + 1) + " groups: ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first depthwise layers that the channels-first kernels tile badly run on the
// channels-last twin's group kernels (runtime/dispatch/impl_layout_twins.cpp, depthwise_prefers_twin): 3D layers
// but kernel = stride = 2 on rows of 16 or more, and 2D layers at stride 3 but kernel 3 and
// kernel 6 with pads a multiple of 3, or at stride 2 with phases of three taps or more; kernels
// up to 2s at stride 2, strides 4 and 8 (the interleaved kernel), stride 1, and kernels below the
// stride whose phases with taps write a quarter of the outputs or less stay. Each against the
// reference, through every API, with its plan checked (x86-64, where the group kernels are
// built; unless the environment pins a route).
TEST(LayoutWide, DepthwiseChannelsFirstOnTheTwin) {
    struct Case {
        int rank;
        AxisSpec inner, outer;
        bool twin;
    };
    const Case cases[] = {
        {3, {6, 4, 3, 1}, {5, 4, 3, 1}, true},   // kernel 4 at stride 3, 3D
        {3, {5, 2, 2, 0}, {4, 2, 2, 0}, true},   // kernel = stride, 3D, rows of 5
        {3, {16, 2, 2, 0}, {3, 2, 2, 0}, false}, // kernel = stride, 3D, rows of 16
        {3, {16, 4, 2, 1}, {3, 4, 2, 1}, true},  // kernel 2s, 3D, rows of 16
        {2, {9, 5, 2, 2}, {7, 5, 2, 2}, true},   // kernel 5 at stride 2: phases of 3 and 2 taps
        {2, {8, 3, 3, 1}, {6, 3, 3, 1}, false},  // kernel 3 at stride 3, pad 1: the one-tap tile
        {2, {8, 3, 3, 0}, {6, 3, 3, 0}, false},  // kernel 3 at stride 3, pad 0
        {2, {8, 6, 3, 1}, {6, 6, 3, 0}, true},   // kernel 6 at stride 3, pad 1: two taps each
        {2, {8, 6, 3, 3}, {6, 6, 3, 0}, false},  // kernel 6 at stride 3, pad 3: two taps each
        {2, {8, 4, 3, 0}, {6, 4, 3, 0}, true},   // kernel 4 at stride 3: phases of 2 and 1 taps
        {2, {9, 4, 2, 1}, {7, 4, 2, 1}, false},  // kernel 2s: the interleaved kernel's fast tile
        {2, {9, 3, 2, 1}, {7, 3, 2, 1}, false},  // kernel 3 at stride 2: the short-phase kernel
        {2, {9, 3, 1, 1}, {7, 3, 1, 1}, false},  // stride 1
        {2, {8, 1, 4, 0}, {6, 1, 4, 0}, false},  // kernel 1 at stride 4: 1/16 of the outputs tapped
        {2, {8, 2, 3, 0}, {6, 2, 3, 0}, true},   // kernel 2 at stride 3: 4/9 tapped
        {2, {8, 4, 4, 0}, {6, 4, 4, 0}, false},  // kernel 4 at stride 4: the interleaved kernel
        {2, {8, 8, 4, 2}, {6, 8, 4, 2}, false},  // kernel 8 at stride 4, pad 2
        {2, {5, 16, 8, 4}, {3, 16, 8, 4}, false}, // kernel 16 at stride 8, pad 4 (fcn8s_upscore8)
        {2, {4, 8, 8, 0}, {3, 8, 8, 0}, false},   // kernel 8 at stride 8
    };
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        for (int64_t groups : {5, 16, 37}) {
            i++;
            if (!deconv_test::rank_built(c.rank)) continue;
            const deconv_ref::Problem p = grouped_problem(1 + i % 2, groups, 1, 1, true, c.rank, c.inner, c.outer);
#if defined(__x86_64__)
            const std::string how = ncx_f32_plan(p);
            if (how.find("route=") == std::string::npos && deconv_test::speed_families_here()) {
                EXPECT_EQ(how.find("channels-last twin") != std::string::npos, c.twin) << how;
                if (c.twin) EXPECT_NE(how.find("_nxc_groups"), std::string::npos) << how;
            }
#endif
            check_ncx_f32_apis(p, c.rank, 7900 + 3 * i, "", ran, failed);
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first depthwise layers on the position kernels (cpu_schedule.h) take their depthwise
// branches, which know the channel loop is one: at stride 1 (dense output rows) rows of 70, 40,
// 20 and 9 positions (four, two and one vectors of positions, and the half and quarter vectors
// on AVX-512; on AVX2 and SSE4.1 the same rows span other branches), kernels 3 and 5, dilations
// 1 and 2, the bounded kernel at the edges; at stride 2 with the interleaved kernels pinned off
// (strided output rows: the branches without vector stores). Ranks 1-3, batch 1-2, 3 or 17
// groups, each against the reference through every API; the stride-1 plans of ranks 1-2 checked
// to run the position kernels on x86-64 (unless the environment pins a route), rank 3 pinned to
// them.
TEST(LayoutWide, DepthwisePositionTiles) {
    int ran = 0, failed = 0, i = 0;
    for (const int rank : {1, 2, 3})
        for (const int64_t x : {70, 40, 20, 9})
            for (const auto &[k, s, d] : {std::tuple<int64_t, int64_t, int64_t>{3, 1, 1}, {5, 1, 2}, {3, 2, 1}}) {
                i++;
                if (!deconv_test::rank_built(rank) || (rank == 3 && x > 20)) continue;
                deconv_ref::Problem p = grouped_problem(1 + i % 2, i % 2 ? 3 : 17, 1, 1, true, rank,
                                                        {x, k, s, (k - 1) / 2}, {4, k, s, 1});
                p.dilations.assign(rank, d);
                // (3D depthwise layers at stride 1 take the channels-last twin's group kernels by
                // the rules: pinned to the position kernels here.)
                const char *pin = s != 1 ? "interleave=off" : rank == 3 ? "route=positions" : "";
#if defined(__x86_64__)
                if (s == 1 && rank < 3) {
                    const std::string how = ncx_f32_plan(p);
                    if (routes_checked(how))
                        EXPECT_NE(how.find("kernel deconv_phase_conv_interior_r" + std::to_string(rank)),
                                  std::string::npos)
                            << how;
                }
#endif
                for (int api = 0; api < 3; api++)
                    check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, rank, 8700 + 3 * i + api), api, p,
                                      ran, failed, pin, DataFormat::NCX, row_case(rank, k, s, x));
            }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first depthwise layers at kernel = stride (strides 2-4, ranks 2 and 3) run the
// interleaved kernel's one-tap tiles (cpu_interleaved_schedule.h): rows that are a whole number
// of its tiles and rows that are not, for vectors of 4, 8 and 16 lanes and the four-position
// tile, every pads_begin residue, batch 1-2. Each against the reference, through every API, with
// its plan checked (x86-64, unless the environment pins a route).
TEST(LayoutWide, DepthwiseOneTapTiles) {
    int ran = 0, failed = 0, i = 0;
    for (const int rank : {2, 3})
        for (const int64_t s : {2, 3, 4})
            for (const int64_t x : {4, 7, 16, 19, 37})
                for (int64_t pad = 0; pad < s; pad++) {
                    i++;
                    if (!deconv_test::rank_built(rank) || (rank == 3 && (s != 2 || x < 16))) continue;
                    const deconv_ref::Problem p =
                        grouped_problem(1 + i % 2, 3 + i % 4, 1, 1, true, rank, {x, s, s, pad}, {3, s, s, 0});
#if defined(__x86_64__)
                    const std::string how = ncx_f32_plan(p);
                    if (how.find("route=") == std::string::npos && deconv_test::speed_families_here())
                        EXPECT_NE(how.find("interleaved_s" + std::to_string(s) + "_r" + std::to_string(rank)),
                                  std::string::npos)
                            << how;
#endif
                    check_ncx_f32_apis(p, rank, 8600 + 3 * i,
                                       "row of " + std::to_string(x) + ", pad " + std::to_string(pad) + ": ", ran,
                                       failed);
                }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first depthwise layers with kernels below the stride (phases without taps): on
// AVX-512 they run the interleaved kernel, which writes the tap-less phases' zeros within its
// rows (runtime/dispatch/kernel_choice.cpp, interleaved_kernel_for), except rows of fewer than 12 groups with
// three or more tail outputs. Kernels 1-3 at strides 2-4, output_padding 0 and 1 (rows with and
// without tails), rows of 7 and 14 inputs, ranks 2 and 3, batch 1-2, each against the reference
// through every API; 2D plans checked on x86-64 (unless the environment pins a route).
TEST(LayoutWide, DepthwiseBelowStrideInterleaved) {
    struct Axis {
        int64_t k, s;
    };
    int ran = 0, failed = 0, i = 0;
    for (const int rank : {2, 3})
        for (const Axis a : {Axis{1, 2}, Axis{1, 3}, Axis{2, 4}, Axis{3, 4}})
            for (const int64_t op : {0, 1})
                for (const int64_t x : {7, 14}) {
                    i++;
                    if (!deconv_test::rank_built(rank) || (rank == 3 && x > 7)) continue;
                    const deconv_ref::Problem p =
                        grouped_problem(1 + i % 2, 24 + 8 * (i % 3), 1, 1, true, rank, {x, a.k, a.s, 0, op}, {5, a.k, a.s, 0, op});
#if defined(__x86_64__)
                    const std::string how = ncx_f32_plan(p);
                    const int64_t y = (x - 1) * a.s + a.k + op, tail = y % a.s;
                    const bool expected = !(tail >= 3 && y / a.s < 12);
                    if (rank == 2 && routes_checked(how) && how.find("(avx512") != std::string::npos)
                        EXPECT_EQ(how.find("interleaved_s" + std::to_string(a.s)) != std::string::npos, expected) << how;
#endif
                    check_ncx_f32_apis(p, rank, 9400 + 3 * i,
                                       row_case(rank, a.k, a.s, x), ran, failed);
                }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Tail outputs of interleaved rows (rows of Y outputs, Y mod s > 0: kernel 3 stride 2 pad 1,
// kernel 5 pad 2, padded kernel = stride at strides 3 and 4): 2D rows run them as transposed
// columns (runtime/cpu/phase_kernel_calls.cpp, call_phase_kernel_transposed), 1D and 3D along the row with
// the outputs before them. Depthwise, grouped and few-channel layers, rows of 5-21 inputs (tails
// against rows shorter and longer than a vector), batch 1-2, the outer axis at another stride and
// pad. Depthwise plans of kernel 3 stride 2 checked to name the interleaved kernel on x86-64 (the
// others take the channels-last twin with this outer axis: runtime/dispatch/impl_layout_twins.cpp,
// depthwise_prefers_twin).
TEST(LayoutWide, InterleavedRowTails) {
    struct Shape {
        int64_t groups, cin, cout;
    };
    struct Axis {
        int64_t k, s, pad, output_padding = 0;
    };
    int ran = 0, failed = 0, i = 0;
    for (const int rank : {1, 2, 3})
        for (const Shape c : {Shape{16, 1, 1}, Shape{2, 8, 8}, Shape{1, 4, 3}})
            for (const Axis a : {Axis{3, 2, 1}, Axis{5, 2, 2}, Axis{3, 3, 1}, Axis{4, 4, 1}, Axis{2, 2, 0, 1}})
                for (const int64_t x : {5, 21}) {
                    i++;
                    if (!deconv_test::rank_built(rank) || (rank == 3 && x > 5)) continue;
                    const deconv_ref::Problem p = grouped_problem(1 + i % 2, c.groups, c.cin, c.cout, true, rank,
                                                                  {x, a.k, a.s, a.pad, a.output_padding},
                                                                  {4 + i % 3, 3, 2, 1});
#if defined(__x86_64__)
                    const std::string how = ncx_f32_plan(p);
                    if (rank == 2 && c.cin == 1 && a.k == 3 && a.s == 2 && routes_checked(how))
                        EXPECT_NE(how.find("interleaved_s" + std::to_string(a.s)), std::string::npos) << how;
#endif
                    check_ncx_f32_apis(p, rank, 8900 + 3 * i,
                                       row_case(rank, a.k, a.s, x), ran, failed);
                }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Depthwise channels-first rows of 8-15 groups of s outputs on the plain interleaved kernel run
// half vectors on AVX-512 (cpu_interleaved_schedule.h), with and without the common pad residue
// and a tail: kernel 3 stride 2 pad 1 (rows of 8, 11 and 14 groups and a tail output), kernel 4
// stride 2 pad 1 and pad 0, kernel 8 stride 4, kernel 16 stride 8; ranks 2 and 3, batch 1-2,
// 16 groups, every API, against the reference. Plans of stride 2 in 2D name the interleaved
// kernel.
TEST(LayoutWide, DepthwiseHalfVectorRows) {
    struct Axis {
        int64_t x, k, s, pad;
    };
    int ran = 0, failed = 0, i = 0;
    for (const int rank : {2, 3})
        for (const Axis a : {Axis{9, 3, 2, 1}, Axis{12, 3, 2, 1}, Axis{15, 3, 2, 1}, Axis{10, 4, 2, 1},
                             Axis{11, 4, 2, 0}, Axis{9, 8, 4, 2}, Axis{12, 16, 8, 0}}) {
            i++;
            if (!deconv_test::rank_built(rank)) continue;
            const deconv_ref::Problem p =
                grouped_problem(1 + i % 2, 16, 1, 1, true, rank, {a.x, a.k, a.s, a.pad}, {rank == 3 ? 3 : 6, 3, 2, 1});
#if defined(__x86_64__)
            const std::string how = ncx_f32_plan(p);
            if (rank == 2 && a.s == 2 && routes_checked(how))
                EXPECT_NE(how.find("interleaved_s2"), std::string::npos) << how;
#endif
            check_ncx_f32_apis(p, rank, 9300 + 3 * i,
                               "rank " + std::to_string(rank) + ", kernel " + std::to_string(a.k) + " stride " +
                                   std::to_string(a.s) + ", row of " + std::to_string(a.x) + ": ",
                               ran, failed);
        }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first layers of two and three output channels on the plain interleaved kernel run
// two position vectors per tile where the row holds them, on 16 registers too (12 accumulators,
// tiles::interleaved_few_channel_accumulators; without the unrolled taps there): kernel 4 (two
// taps per phase) and kernel 3 (a short phase) at stride 2, kernel 6 at stride 3 (pinned
// interleave=plain, which 16 registers need to take it); rows of 20 and 37 inputs (two vectors
// on AVX2 and SSE4.1, and on AVX-512 too at 37) with and without a tail output, ranks 2-3,
// batch 1-2, f32, f16 and bf16, every API, against the reference. Plans of stride 2 in 2D name
// the interleaved kernel.
TEST(LayoutWide, FewChannelTwoVectorRows) {
    int ran = 0, failed = 0, i = 0;
    for (const DType t : {DType::f32, DType::f16, DType::bf16}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (const int rank : {2, 3})
            for (const int64_t cout : {2, 3})
                for (const AxisSpec a : {AxisSpec{20, 4, 2, 1}, AxisSpec{37, 3, 2, 1, 1}, AxisSpec{20, 3, 2, 1},
                                         AxisSpec{37, 6, 3, 2}, AxisSpec{20, 6, 3, 1, 2}}) {
                    i++;
                    if (!deconv_test::rank_built(rank)) continue;
                    const deconv_ref::Problem p =
                        grouped_problem(1 + i % 2, 1, 8, cout, false, rank, a, {rank == 3 ? 3 : 5, 3, 2, 1});
                    const std::string pin = a.s == 3 ? "interleave=plain" : "";
#if defined(__x86_64__)
                    if (t == DType::f32 && rank == 2 && a.s == 2) {
                        const std::string how = ncx_f32_plan(p);
                        if (routes_checked(how)) EXPECT_NE(how.find("interleaved_s2"), std::string::npos) << how;
                    }
#endif
                    for (int api = 0; api < 3; api++)
                        check_random_case(t, deconv_test::sweep_seed(t, rank, 9400 + 3 * i + api), api, p, ran,
                                          failed, pin, DataFormat::NCX,
                                          "rank " + std::to_string(rank) + ", " + std::to_string(cout) +
                                              " channels, kernel " + std::to_string(a.k) + " stride " +
                                              std::to_string(a.s) + ", row of " + std::to_string(a.x) + ": ");
                }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first layers routed by their phases (runtime/dispatch/impl_layout_twins.cpp, choose_via_channels_last):
// kernels below the stride whose phases have one tap at most and write a quarter of the outputs
// or less stay on the channels-first kernels, whatever their channel counts; at half written they
// take the twin (16 or more output channels), but 1D layers with taps in a third of the phases
// or fewer, or in half of them with no tail output, stay (one_tap_1d_positions). 3D layers of 8-15 output channels take the twin
// where a phase has several taps, not where every phase has one. 1D layers at stride 1 stay
// with 96 or fewer products per output (input channels x taps). Each against the reference,
// through every API, with its plan checked (x86-64, where the channels-last kernels are built;
// unless the environment pins a route).
TEST(LayoutWide, RoutesByTappedPhases) {
    struct Case {
        int rank;
        AxisSpec inner, outer;
        int64_t groups, cin, cout;
        bool twin;
    };
    const Case cases[] = {
        {2, {12, 1, 3, 0}, {9, 1, 3, 0}, 1, 12, 20, false},  // kernel 1 at stride 3: 13% written
        {1, {40, 1, 4, 0}, {}, 2, 4, 16, false},              // kernel 1 at stride 4, 1D: 25%
        {3, {9, 1, 2, 0}, {6, 1, 2, 0}, 1, 16, 16, false},    // kernel 1 at stride 2, 3D: 16%
        {1, {12, 1, 2, 0}, {}, 1, 16, 32, true},              // kernel 1 at stride 2, 1D: 52%
        {1, {12, 1, 2, 0, 1}, {}, 1, 16, 32, false},          // the same, output_padding 1: 50%, no tail
        {1, {30, 1, 3, 0}, {}, 1, 32, 16, false},             // kernel 1 at stride 3, 1D: 34%
        {1, {30, 2, 3, 0}, {}, 1, 32, 16, true},              // kernel 2 at stride 3, 1D: 67%
        {3, {7, 3, 2, 1}, {5, 3, 2, 1}, 1, 12, 8, true},      // 3D, 8 channels, phases of 2 taps
        {3, {7, 2, 2, 0}, {5, 2, 2, 0}, 1, 16, 8, false},     // 3D, 8 channels, one tap each
        {1, {40, 3, 1, 1}, {}, 1, 16, 32, false},             // 1D stride 1, 16 x 3 products
        {1, {40, 2, 1, 0}, {}, 1, 64, 32, true},              // 1D stride 1, 64 x 2 products
    };
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        i++;
        if (!deconv_test::rank_built(c.rank)) continue;
        const deconv_ref::Problem p = grouped_problem(1 + i % 2, c.groups, c.cin, c.cout, true, c.rank, c.inner, c.outer);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(p);
        if (how.find("route=") == std::string::npos && deconv_test::speed_families_here()) {
            EXPECT_EQ(how.find("channels-last twin") != std::string::npos, c.twin) << "case " << i << ": " << how;
        }
#endif
        check_ncx_f32_apis(p, c.rank, 8300 + 3 * i, "case " + std::to_string(i) + ": ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// 2D layers of stride 2 with short phase reductions (input channels x taps per phase of 64 or
// less; 128 or less with 16 or more groups), at most 32 output channels per group and rows of 16
// or more even outputs stay channels-first on the interleaved position kernel on CPUs of 32
// vector registers, not on the channels-last twin (runtime/dispatch/layer_classes.cpp, short_strided_2d);
// longer reductions with few groups, wider outputs, narrow or odd rows and stride 3 keep the
// twin. Each against the reference, through every API; plans checked on x86-64 AVX-512 where
// nothing pins a knob.
TEST(LayoutWide, ShortStrided2DStayChannelsFirst) {
    // inner, outer axes; groups, input and output channels; on the interleaved kernel (32 registers)
    int n = 0;
    const auto c = [&n](AxisSpec inner, AxisSpec outer, int64_t groups, int64_t cin, int64_t cout, bool routed) {
        return RouteCase{grouped_problem(1 + ++n % 2, groups, cin, cout, true, 2, inner, outer), routed};
    };
    const std::vector<RouteCase> cases = {
        c({16, 3, 2, 1}, {6, 3, 2, 1}, 4, 16, 16, true),     // 16 x 4 taps, rows of 32
        c({16, 4, 2, 1, 1}, {5, 4, 2, 1}, 1, 12, 32, true),  // 12 x 4 taps, kernel 4, rows of 34
        c({17, 3, 2, 1}, {5, 3, 2, 1}, 16, 32, 16, true),    // 32 x 4 taps, 16 groups
        c({16, 3, 2, 1}, {5, 3, 2, 1}, 2, 32, 16, false),    // 32 x 4 taps, 2 groups
        c({16, 3, 2, 1}, {5, 3, 2, 1}, 1, 16, 48, false),    // 48 output channels
        c({16, 4, 2, 1}, {5, 4, 2, 1}, 1, 16, 16, false),    // rows of 33: an odd last output
        c({7, 3, 2, 1, 1}, {5, 3, 2, 1}, 4, 16, 16, false),  // rows of 14
        c({16, 4, 3, 1}, {5, 4, 3, 1}, 1, 16, 16, false),    // stride 3
    };
    check_route_cases(
        cases, 2, 8450, [](const std::string &how) { return routes_checked(how) && how.find("(avx512") != std::string::npos; },
        [](const std::string &how, bool routed) {
            EXPECT_EQ(how.find("channels-last twin") == std::string::npos, routed);
            if (routed) EXPECT_NE(how.find("deconv_phase_conv_interleaved_"), std::string::npos);
        });
}

// Channels-first grouped layers of 4 output channels per group at a stride of 2 or more along
// rows narrower than a vector take the channels-last twin and its group blocks of four on
// AVX-512 (runtime/dispatch/channels_last_families.cpp, group_blocks_twin): phase rows of 7 (kernel 3
// stride 2), of 10 at stride 3 with dilation 2, of 8 in 1D; not rows of 28, 6 groups (no whole
// blocks), 8 channels per group (blocks of two), stride 1, AVX2's blocks of two, nor blocks of
// four of other channel counts (2 channels under AVX2, depthwise under SSE4.1). Each
// against the reference, through every API; plans checked where no pin decides the rule, on
// AVX-512 for its routes and on every x86 variant for its absence elsewhere.
TEST(LayoutWide, GroupBlocksTwinOnNarrowRows) {
    int n = 0;
    const auto c = [&n](int rank, AxisSpec inner, AxisSpec outer, int64_t groups, int64_t cin, int64_t cout,
                        bool routed) {
        return RouteCase{grouped_problem(1 + ++n % 2, groups, cin, cout, true, rank, inner, outer), routed};
    };
    for (int rank : {1, 2}) {
        std::vector<RouteCase> cases;
        if (rank == 2) {
            cases = {
                c(2, {7, 3, 2, 1, 1}, {7, 3, 2, 1, 1}, 16, 2, 4, true),  // rows of 7 per phase
                c(2, {10, 4, 3, 1}, {6, 4, 3, 1}, 8, 8, 4, true),        // stride 3 (dilation below)
                c(2, {28, 3, 2, 1, 1}, {5, 3, 2, 1}, 8, 4, 4, false),    // rows of 28
                c(2, {7, 3, 2, 1, 1}, {5, 3, 2, 1}, 6, 2, 4, false),     // 6 groups
                c(2, {7, 3, 2, 1, 1}, {5, 3, 2, 1}, 8, 4, 8, false),     // 8 channels per group
                c(2, {9, 3, 1, 1}, {5, 3, 1, 1}, 8, 4, 4, false),        // stride 1
                c(2, {5, 3, 2, 1, 1}, {5, 3, 2, 1}, 8, 4, 2, false),     // 2 channels (AVX2: blocks of 4)
                c(2, {3, 3, 2, 1}, {3, 3, 2, 1}, 8, 1, 1, false),        // depthwise (SSE4.1: blocks of 4)
            };
            cases[1].p.dilations = {2, 2};
        } else {
            cases = {
                c(1, {8, 4, 2, 1}, {}, 8, 4, 4, true),    // 1D rows of 8 per phase
                c(1, {40, 4, 2, 1}, {}, 8, 4, 4, false),  // rows of 40
            };
        }
        // Checked wherever no pin decides the rule (the ctest variants of lower CPUs pin serial=off).
        const auto checked = [](const std::string &how) {
            return how.find("route=") == std::string::npos && deconv_test::speed_families_here() && how.find("group_blocks=") == std::string::npos &&
                   how.find("bordered_input=") == std::string::npos;
        };
        check_route_cases(cases, rank, 8520 + 20 * rank, checked, [](const std::string &how, bool routed) {
            const bool avx512 = how.find("(avx512") != std::string::npos;
            const bool twin = how.find("channels-last twin") != std::string::npos;
            EXPECT_EQ(twin, routed && avx512);
            if (twin) EXPECT_NE(how.find("group blocks of 4"), std::string::npos);
        });
    }
}

// 2D channels-first layers of 4-15 output channels and 32 or more input channels at stride 2 run
// per phase on x86-64, not on the interleaved kernel (runtime/dispatch/layer_classes.cpp,
// per_phase_few_channels); 3 output channels or 16 input channels stay interleaved. Rows of 20
// positions per phase (narrower rows of half a vector of channels take the channel tiles:
// NarrowRowsOnChannelTiles). Each against the reference, through every API; plans checked
// where nothing pins a knob.
TEST(LayoutWide, FewChannelsAtStride2RunPerPhase) {
    std::vector<RouteCase> cases;
    int n = 0;
    for (const auto &[cin, cout, per_phase] : {std::tuple{32, 4, true}, {40, 15, true}, {32, 3, false}, {16, 8, false}})
        cases.push_back({grouped_problem(1 + ++n % 2, 1, cin, cout, true, 2, {20, 3, 2, 1}, {6, 4, 2, 1}), per_phase});
    check_route_cases(
        cases, 2, 8470, [](const std::string &how) { return routes_checked(how) && how.find("twin") == std::string::npos; },
        [](const std::string &how, bool per_phase) {
            EXPECT_EQ(how.find("interleaved") == std::string::npos, per_phase);
        });
}

// 2D channels-first layers of one or three output channels and 32 or more input channels at
// stride 2 take the channels-last twin on x86-64 (runtime/dispatch/layer_classes.cpp, few_outputs_twin):
// with a batch of 16 and phase rows of 16 positions or fewer on every CPU; on 16 vector registers
// also one output channel at any size, and three with a batch of 16 where a phase has one tap
// fewer (kernel 3) or with 256 input channels at kernel 4. Two output channels, 16 input channels,
// three output channels of one wide image, and three of 32 input channels at kernel 4 (the
// interleaved kernel's 12-accumulator tile) stay channels-first. Each against the reference,
// through every API; plans checked where nothing pins a knob.
TEST(LayoutWide, FewOutputChannelsTakeTheTwin) {
    // batch, inner axis, input channels, output channels; twin on AVX-512, twin on AVX2/SSE4.1
    struct Case {
        int64_t batch;
        AxisSpec inner;
        int64_t cin, cout;
        bool wide_regs, narrow_regs;
    };
    const std::vector<Case> table = {
        {16, {8, 4, 2, 1}, 32, 1, true, true},       // rows of 8, batch 16
        {16, {8, 3, 2, 1, 1}, 40, 3, true, true},    // kernel 3, output padding
        {1, {24, 4, 2, 1}, 32, 1, false, true},      // rows of 24, one image
        {1, {24, 3, 2, 1, 1}, 32, 3, false, false},  // three channels of one image
        {16, {8, 4, 2, 1}, 32, 2, false, false},     // two output channels
        {16, {8, 4, 2, 1}, 16, 1, false, false},     // 16 input channels
        {16, {24, 4, 2, 1}, 32, 3, false, false},    // three channels at kernel 4, batch 16
        {1, {24, 4, 2, 1}, 256, 3, false, true},     // 256 input channels at kernel 4
    };
    for (const bool wide : {true, false}) {
        std::vector<RouteCase> cases;
        for (const Case &c : table)
            cases.push_back({grouped_problem(c.batch, 1, c.cin, c.cout, true, 2, c.inner, {6, 4, 2, 1}),
                             wide ? c.wide_regs : c.narrow_regs});
        check_route_cases(
            cases, 2, wide ? 8480 : 8485,
            [wide](const std::string &how) { return routes_checked(how) && (how.find("(avx512") != std::string::npos) == wide; },
            [](const std::string &how, bool twin) { EXPECT_EQ(how.find("channels-last twin") != std::string::npos, twin); });
    }
}

// 2D channels-first layers of half a vector of output channels per group (8 on AVX-512, 4 on
// AVX2) or on AVX2 a whole one (8), 16 or more input channels, phase reductions up to 256 and
// phase rows of a vector or less run on the channel tiles (runtime/dispatch/layer_classes.cpp,
// narrow_rows_channel_tiles): strides 1 and 2, kernels 3 and 4, one and two groups, an odd
// output row. Fewer input channels, a longer reduction and wider rows keep their routes. Each
// against the reference, through every API; plans checked on the ISA each row is for, where
// nothing pins a knob.
TEST(LayoutWide, NarrowRowsOnChannelTiles) {
    struct Case {
        int64_t groups;
        AxisSpec inner;
        int64_t cin;
        bool routed;
    };
    const std::vector<Case> table = {
        {1, {7, 4, 2, 1}, 32, true},      // rows of 7 per phase, kernel 4 stride 2
        {2, {7, 3, 2, 1, 1}, 16, true},   // two groups, kernel 3, output padding
        {1, {6, 3, 1, 1}, 32, true},      // stride 1
        {1, {7, 3, 2, 1}, 64, true},      // rows of 7 and 6 outputs per phase (13 in all)
        {1, {7, 2, 2, 0}, 8, false},      // 8 input channels
        {1, {7, 4, 2, 1}, 96, false},     // a reduction of 96 x 4 taps
        {1, {40, 4, 2, 1}, 32, false},    // rows of 40 per phase
    };
    // (AVX-512, 8 channels), (AVX2, 4), (AVX2, 8)
    for (const std::pair<bool, int64_t> &isa : {std::pair<bool, int64_t>{true, 8}, {false, 4}, {false, 8}}) {
        const bool wide = isa.first;
        const int64_t cout = isa.second;
        std::vector<RouteCase> cases;
        for (const Case &c : table)
            cases.push_back({grouped_problem(1, c.groups, c.cin, cout, true, 2, c.inner, {5, 3, 2, 1}), c.routed});
        check_route_cases(
            cases, 2, 8700 + cout + (wide ? 0 : 1),
            [wide](const std::string &how) {
                return routes_checked(how) && how.find(wide ? "(avx512" : "(avx2") != std::string::npos;
            },
            [](const std::string &how, bool routed) {
                EXPECT_EQ(how.find("deconv_phase_conv_channels_") != std::string::npos, routed);
            });
    }
}

// 1D channels-first layers at stride 2 of 16-64 output and at most 128 input channels, every
// phase with taps, run on the interleaved position kernels on x86-64, the plain one where the
// blocked one does not serve them (runtime/dispatch/layer_classes.cpp, short_1d_positions): not on the channel
// tiles (one tap per phase) nor the twin. More input channels, and kernels below the stride, keep their
// routes. Each against the reference, through every API; plans checked where nothing pins a knob.
TEST(LayoutWide, ShortOneDimLayersOnInterleavedPositions) {
    int n = 0;
    const auto c = [&n](AxisSpec axis, int64_t cin, int64_t cout, bool routed) {
        return RouteCase{grouped_problem(1 + ++n % 2, 1, cin, cout, true, 1, axis, {}), routed};
    };
    const std::vector<RouteCase> cases = {
        c({50, 2, 2, 0}, 32, 32, true),    // one tap per phase: not the channel tiles
        c({40, 3, 2, 1}, 128, 64, true),   // phases of 2 and 1 taps: not the twin
        c({40, 4, 2, 1}, 64, 16, true),    // 16 output channels
        c({40, 3, 2, 1}, 136, 64, false),  // 136 input channels
        c({40, 1, 2, 0}, 64, 32, false),   // kernel 1: a phase without taps
    };
    check_route_cases(cases, 1, 8490, routes_checked, [](const std::string &how, bool routed) {
        // The plain kernel, or the blocked one where it serves the layer (rows of enough blocks
        // for the CPU's tile).
        EXPECT_EQ(how.find("deconv_phase_conv_interleaved_") != std::string::npos &&
                      how.find("twin") == std::string::npos,
                  routed);
    });
}

// 1D channels-first layers of kernel 4 at stride 2 take the channels-last twin on AVX2 (16
// registers of 8 lanes; runtime/dispatch/layer_classes.cpp, kernel4_stride2_1d_twin), not the position
// kernels: rows of 16384 positions or more with 64 or more input and 32 or more output channels,
// and 128-256 input channels to at most half as many output channels (32 or more) at any row
// length. Shorter rows of 64 input channels, fewer output channels and kernel 3 keep their
// routes. Each short-row case against the reference through every API, the long row through one
// (each API's run of it costs the reference half a second); plans checked on x86-64 AVX2 where
// nothing pins a knob.
TEST(LayoutWide, KernelFourStrideTwoOneDimTakeTheTwin) {
    const auto problem = [](AxisSpec axis, int64_t cin, int64_t cout) {
        return grouped_problem(1, 1, cin, cout, true, 1, axis, {});
    };
    const auto on_avx2 = [](const std::string &how) {
        return routes_checked(how) && how.find("(avx2") != std::string::npos;
    };
    const auto expect_twin = [](const std::string &how, bool twin) {
        EXPECT_EQ(how.find("channels-last twin") != std::string::npos, twin);
    };
    check_route_cases(
        {
            {problem({40, 4, 2, 1}, 128, 64), true},   // 128 -> 64, a short row
            {problem({40, 4, 2, 1}, 64, 32), false},   // 64 input channels, a short row
            {problem({40, 4, 2, 1}, 128, 24), false},  // 24 output channels
            {problem({40, 3, 2, 1}, 128, 64), false},  // kernel 3
        },
        1, 8495, on_avx2, expect_twin);

    const deconv_ref::Problem long_row = problem({16384, 4, 2, 1}, 64, 32);
#if defined(__x86_64__)
    const std::string how = ncx_f32_plan(long_row);
    if (on_avx2(how)) {
        SCOPED_TRACE("long row: " + how);
        expect_twin(how, true);
    }
#endif
    int ran = 0, failed = 0;
    if (deconv_test::rank_built(1))
        check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, 1, 8510), 0, long_row, ran, failed, "",
                          DataFormat::NCX, "long row: ");
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0);
}

// 3D layers of one-tap phases with short reductions (input x output channels 512 or fewer) run
// on the blocked interleaved kernel from rows of 16 groups of s outputs without a tail output,
// not on the channels-last twin (runtime/dispatch/kernel_choice.cpp, prefers_blocked_interleave): rows of 16
// and 24 groups (the latter past one tile: the plain kernel's rest); not 32 -> 32 channels, a
// tail output, or rows of 12 groups. Each against the reference, through every API; plans
// checked on x86-64 where nothing pins a knob.
TEST(LayoutWide, OneTap3dFewChannelsInterleaved) {
    if (!deconv_test::rank_built(3)) GTEST_SKIP() << "rank 3 kernels not built";
    const auto one_tap = [](int64_t x, int64_t cin, int64_t cout, int64_t output_padding) {
        return grouped_problem(1, 1, cin, cout, false, 3, {x, 2, 2, 0, output_padding}, {3, 2, 2, 0});
    };
    const std::vector<RouteCase> cases = {
        {one_tap(16, 16, 16, 0), true}, {one_tap(24, 8, 32, 0), true},   {one_tap(16, 32, 32, 0), false},
        {one_tap(16, 16, 16, 1), false}, {one_tap(12, 16, 16, 0), false},
    };
    check_route_cases(
        cases, 3, 8460, [](const std::string &how) { return routes_checked(how); },
        [](const std::string &how, bool routed) {
            EXPECT_EQ(how.find("interleaved deconv_phase_conv_interleaved_blocked") != std::string::npos, routed);
        });
}

// Stride-1 channels-first layers of fewer than 16 output channels per group whose rows are
// narrower than the position tile run on the position kernels with flat rows (runtime/
// layer_classes.cpp, flat_rows_class): 2D and 3D, grouped, dilated, depthwise in 2D, pads 0-2
// (rows of the zero margins read across), and copies a multiple of 4 KiB per channel (one more
// row apart); not 3D depthwise layers, groups of 8 -> 8 channels (the twin's dense-group tiles),
// stride 2, rows of 32 or more, 16 output channels, or a scratch output over 64 MiB. Each against
// the reference through every API, plans checked on x86-64 AVX-512 where nothing pins a knob
// (AVX2: below 4 output channels); channels-last layers of 4-7 output channels on their
// channels-first twin; then every built dtype, and flat rows pinned on under every variant, with
// the outer axis's tap windows (3D) pinned on too.
TEST(LayoutWide, FlatRowsOfStrideOnePlanes) {
    const auto layer = [](int rank, int64_t n, int64_t groups, int64_t cin, int64_t cout, int64_t x, int64_t k,
                          int64_t pad, int64_t dilation, int64_t s = 1) {
        deconv_ref::Problem p = grouped_problem(n, groups, cin, cout, true, rank, {x, k, s, pad}, {x, k, s, pad});
        p.pads_end = p.pads_begin;
        p.dilations.assign(rank, dilation);
        return p;
    };
    const std::vector<RouteCase> planes = {
        {layer(2, 1, 1, 32, 4, 7, 3, 1, 1), true},    {layer(2, 2, 2, 16, 6, 14, 3, 0, 2), true},
        {layer(2, 1, 1, 16, 12, 10, 4, 1, 1), true},  {layer(2, 1, 16, 1, 1, 10, 3, 1, 1), true},
        {layer(2, 1, 1, 8, 3, 28, 3, 0, 1), true},    {layer(2, 1, 2, 8, 8, 10, 3, 1, 1), false},
        {layer(2, 1, 1, 16, 4, 10, 4, 1, 1, 2), false}, {layer(2, 1, 1, 16, 4, 40, 3, 1, 1), false},
        {layer(2, 1, 1, 16, 16, 10, 3, 1, 1), false},
    };
    const std::vector<RouteCase> volumes = {
        {layer(3, 1, 1, 24, 8, 6, 3, 1, 1), true},  {layer(3, 2, 4, 8, 4, 8, 2, 1, 2), true},
        {layer(3, 1, 1, 8, 8, 12, 3, 0, 1), true},  {layer(3, 1, 16, 1, 1, 8, 3, 1, 1), false},
    };
    const auto checked = [](const std::string &how) { return routes_checked(how) && how.find("(avx512") != std::string::npos; };
    const auto expect = [](const std::string &how, bool routed) {
        EXPECT_EQ(how.find("flat rows") != std::string::npos, routed);
    };
    check_route_cases(planes, 2, 8700, checked, expect);
    if (deconv_test::rank_built(3)) check_route_cases(volumes, 3, 8760, checked, expect);
    // Channels-last layers of 4-7 output channels per group run on their channels-first twin,
    // which takes flat rows too.
    int ran = 0, failed = 0, i = 0;
    for (const deconv_ref::Problem &p : {layer(2, 2, 1, 32, 4, 14, 3, 1, 1), layer(2, 1, 4, 16, 6, 10, 4, 1, 2),
                                         layer(3, 1, 4, 8, 5, 8, 3, 1, 1)}) {
        const int rank = (int)p.input_shape.size() - 2;
        if (!deconv_test::rank_built(rank)) continue;
#if defined(__x86_64__)
        const std::string how = plan_of(DType::f32, p);
        if (checked(how)) EXPECT_NE(how.find("channels-first twin (transposed copies)"), std::string::npos) << how;
        if (checked(how)) EXPECT_NE(how.find("flat rows"), std::string::npos) << how;
#endif
        for (int api = 0; api < 3; api++)
            check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, rank, 8790 + i++), api, p, ran, failed, "",
                              DataFormat::NXC, "channels-last: ");
    }
#if defined(__x86_64__)
    // Not where the scratch output at the copy's pitch would pass the bordered copy's 64 MiB
    // (8192 images of 1 -> 12 channels at 14x14: 88 MiB; the plan alone, nothing run).
    const std::string big = ncx_f32_plan(layer(2, 8192, 1, 1, 12, 14, 3, 1, 1));
    if (checked(big)) EXPECT_EQ(big.find("flat rows"), std::string::npos) << big;
#endif
    for (const std::vector<RouteCase> *cases : {&planes, &volumes})
        for (const RouteCase &c : *cases) {
            const int rank = (int)c.p.input_shape.size() - 2;
            if (!c.routed || !deconv_test::rank_built(rank)) continue;
            for (DType t : deconv_test::all_dtypes()) {
                if (!deconv_test::dtype_built(t) || t == DType::f32) continue;
                i++;
                check_random_case(t, deconv_test::sweep_seed(t, rank, 8800 + i), i % 3, c.p, ran, failed, "",
                                  DataFormat::NCX, "dtype case: ");
            }
            for (const char *pin : {"flat_rows=on", "flat_rows=on tap_windows=on"}) {
                i++;
                check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, rank, 8800 + i), i % 3, c.p, ran,
                                  failed, pin, DataFormat::NCX, std::string(pin) + ": ");
            }
        }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Phase tasks (runtime/cpu/phase_tasks.h, a tuning knob) pinned on, with the layer free to run in
// parallel however small: interleaved rows with tail outputs (their innermost phases in one
// task), channels-last layers of 256 bytes or more per position (each phase a task) and of fewer
// (a row of phases per task), many phases at stride 3, phases without taps (zero first), the
// channels-last twin of a channels-first 3D layer, flat rows (one phase) and tap windows. Each
// against the reference through every API; the pin shows in the plan. Then 1D channels-last
// depthwise layers, whose kernels run rows in tasks of several position tiles, ending in a part
// task, on both thread counts.
TEST(LayoutWide, PhaseTasksAgainstReference) {
    struct Case {
        deconv_ref::Problem p;
        DataFormat format;
    };
    const auto layer = [](int rank, int64_t n, int64_t groups, int64_t cin, int64_t cout, AxisSpec axis) {
        return grouped_problem(n, groups, cin, cout, true, rank, axis, axis);
    };
    std::vector<Case> cases = {
        {layer(2, 1, 4, 8, 8, {15, 3, 2, 0}), DataFormat::NCX},       // interleaved, tail outputs
        {layer(2, 2, 1, 16, 64, {9, 3, 2, 1, 1}), DataFormat::NXC},   // 256 bytes a position
        {layer(2, 1, 2, 8, 12, {10, 4, 2, 1}), DataFormat::NXC},      // 96 bytes a position
        {layer(2, 1, 1, 16, 8, {7, 5, 3, 1}), DataFormat::NCX},       // 9 phases
        {layer(2, 1, 2, 4, 4, {8, 1, 3, 0}), DataFormat::NCX},        // 8 of 9 phases tap-less
        {layer(2, 1, 1, 32, 4, {7, 3, 1, 1}), DataFormat::NCX},       // flat rows: one phase
        {layer(1, 2, 1, 8, 24, {40, 4, 2, 1}), DataFormat::NCX},
    };
    if (deconv_test::rank_built(3)) {
        cases.push_back({layer(3, 1, 1, 16, 64, {5, 4, 2, 1}), DataFormat::NCX});  // the twin
        cases.push_back({layer(3, 1, 1, 8, 8, {6, 4, 2, 2}), DataFormat::NCX});    // tap windows
    }
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        const int rank = (int)c.p.input_shape.size() - 2;
        if (!deconv_test::rank_built(rank)) continue;
        i++;
        const std::string pin = i == (int)cases.size() ? "serial=off phase_tasks=on tap_windows=on" : "serial=off phase_tasks=on";
#if defined(__x86_64__)
        const std::string how = plan_of(DType::f32, c.p, pin, c.format);
        EXPECT_NE(how.find("phase tasks"), std::string::npos) << how;
#endif
        for (int api = 0; api < 3; api++)
            check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, rank, 8900 + 3 * i + api), api, c.p, ran,
                              failed, pin, c.format, "case " + std::to_string(i) + ": ");
    }
    // 1D channels-last depthwise: 4 images of 32 groups, 250 positions (kernel 3 stride 4), 1000
    // (kernel 4 stride 3) and 61.
    const int threads = deconv::cpu_threads();
    for (int t : {1, 2}) {
        deconv::set_cpu_threads(t);
        for (const AxisSpec &axis : {AxisSpec{250, 3, 4, 1}, AxisSpec{1000, 4, 3, 0}, AxisSpec{61, 2, 2, 0}}) {
            i++;
            const deconv_ref::Problem p = grouped_problem(4, 32, 1, 1, true, 1, axis, axis);
            check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, 1, 8900 + 3 * i), i % 3, p, ran, failed,
                              "serial=off", DataFormat::NXC, "1D depthwise " + std::to_string(axis.x) + ": ");
        }
    }
    deconv::set_cpu_threads(threads);
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// 1D layers run on the blocked interleaved kernel only with a block of their row (its parallel
// task) per thread at least (runtime/dispatch/kernel_choice.cpp, prefers_blocked_interleave): a row of one
// block takes it on one thread, not on two. Blocks hold fewer tiles where the input channels'
// rows would overflow the block's input bytes (tiles::blocked_block_tiles): 320 input channels
// make blocks of 12 tiles on AVX-512, so a row of 14 tiles is two blocks, the last a partial one,
// and takes the kernel on two threads too. 1D and 2D layers of one-tap phases with 32 or more
// input and output channels run on the channel-vectorized channels-first kernels on CPUs of 32
// vector registers (one_tap_channel_tiles), on the channels-last twin elsewhere, with fewer
// input channels, with output planes of 32 KiB or more and over 32 output channels
// (large_one_tap_2d), 1D ones with output rows of 16 KiB or more (large_one_tap_1d: 4096
// positions twinned, 4092 not), and at a stride of 2 or more along rows (strided_one_tap_2d: 2D
// layers of short reductions then stay on the position kernels). Each against the reference,
// through every API; plans checked on x86-64 where nothing pins a knob.
TEST(LayoutWide, RowBlocksAndOneTapTiles) {
    int ran = 0, failed = 0;
    const int threads = deconv::cpu_threads();
    const deconv_ref::Problem row = grouped_problem(1, 1, 40, 24, true, 1, {64, 4, 2, 1}, {});  // 64 groups
    for (int t : {1, 2}) {
        deconv::set_cpu_threads(t);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(row);
        if (routes_checked(how)) EXPECT_EQ(how.find("interleaved_blocked") != std::string::npos, t == 1) << how;
#endif
        check_ncx_f32_apis(row, 1, 8400 + 3 * t, "1D row, " + std::to_string(t) + " threads: ", ran, failed);
    }
    const deconv_ref::Problem wide = grouped_problem(1, 1, 320, 24, true, 1, {430, 4, 2, 1}, {});  // 430 groups
    for (int t : {1, 2}) {
        deconv::set_cpu_threads(t);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(wide);
        if (routes_checked(how)) EXPECT_NE(how.find("interleaved_blocked"), std::string::npos) << how;
#endif
        check_ncx_f32_apis(wide, 1, 8410 + 3 * t, "1D row of 320 channels, " + std::to_string(t) + " threads: ", ran,
                           failed);
    }
    deconv::set_cpu_threads(threads);
    enum class Route { Tiles, Twin, Positions };
    struct Case {
        AxisSpec inner, outer;
        int64_t cin, cout;
        Route wide_regs;  // on CPUs of 32 registers (16: the twin, positions cases unchecked)
        int rank = 2;     // 1: `outer` unused
    };
    const Case cases[] = {
        {{9, 1, 1, 0}, {7, 1, 1, 0}, 48, 40, Route::Tiles},     // kernel 1: one tap
        {{8, 2, 2, 0}, {5, 2, 2, 0}, 40, 33, Route::Twin},      // kernel 2 stride 2: one tap per phase
        {{8, 2, 2, 0}, {5, 2, 2, 0}, 16, 40, Route::Twin},      // 16 input channels
        {{46, 2, 2, 0}, {46, 2, 2, 0}, 40, 40, Route::Twin},    // output planes of 92x92 (33 KiB), 40 channels
        {{16, 2, 2, 0}, {12, 2, 2, 0}, 64, 32, Route::Positions},  // kernel 2 stride 2, a short reduction
        {{4096, 1, 1, 0}, {}, 100, 36, Route::Twin, 1},            // 1D rows of 4096 outputs (16 KiB)
        {{2000, 1, 1, 0}, {}, 100, 36, Route::Tiles, 1},           // 1D rows of 2000
        {{1024, 4, 4, 0}, {}, 40, 40, Route::Twin, 1},             // kernel 4 stride 4 into 4096
        {{1023, 4, 4, 0}, {}, 40, 40, Route::Tiles, 1},            // ... into 4092
    };
    int i = 0;
    for (const Case &c : cases) {
        i++;
        const deconv_ref::Problem p = grouped_problem(1 + i % 2, 1, c.cin, c.cout, true, c.rank, c.inner, c.outer);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(p);
        const bool wide = how.find("(avx512") != std::string::npos;
        if (routes_checked(how) && (wide || c.wide_regs != Route::Positions)) {
            const Route route = wide ? c.wide_regs : Route::Twin;
            const bool twin = how.find("channels-last twin") != std::string::npos;
            const bool tiles = how.find("deconv_phase_conv_channels_") != std::string::npos;
            EXPECT_EQ(twin, route == Route::Twin) << "case " << i << ": " << how;
            EXPECT_EQ(tiles, route == Route::Tiles) << "case " << i << ": " << how;
        }
#endif
        check_ncx_f32_apis(p, 2, 8500 + 3 * i, "case " + std::to_string(i) + ": ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last depthwise layers with stride 2 or 8 on the innermost axis run its phases together
// on the interleaved group kernel (cpu_interleaved_groups_schedule.h): group counts on every
// side of its tiles (scalar under four, 4-lane, one vector, the full tile, with shifted last
// tiles, whole vectors of 16, 32 and 96), rows of 1 to 9 groups of s outputs (narrower and
// wider than its position tile), 1, 2 and 3 taps per phase and a phase one tap short (kernels
// s, 2s, 3s, 2s - 1), pads_begin at the kernel's common residue and off it, the Y mod s outputs
// past the last whole group (output_padding), ranks 1-3, batch 1-2; f32, and f16 (run as f32
// where the CPU has F16C). Every case checks that the plan names the interleaved group kernel
// where it is built (x86-64 f32 plans; expect_plan_runs).
TEST(LayoutWide, DepthwiseInterleavedEveryTile) {
    int ran = 0, failed = 0, i = 0, routed = 0;
    for (DType t : {DType::f32, DType::f16}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int64_t s : {2, 8})
            for (int64_t groups : {1, 3, 4, 5, 8, 13, 16, 21, 32, 33, 64, 70, 96})
                for (int64_t x : {1, 2, 3, 5, 9}) {
                    const int rank = 1 + (i % 3);
                    const uint64_t seed = deconv_test::sweep_seed(t, rank, 7500 + i);
                    const int64_t kernels[4] = {2 * s, s, 3 * s, 2 * s - 1};
                    const int64_t k = kernels[i % 4];
                    const int64_t pads[4] = {s == 2 ? 1 : 0, 0, s - 1, s + 1};
                    const int64_t pad = std::min(pads[(i / 4) % 4], k - 1);
                    i++;
                    if (!deconv_test::rank_built(rank)) continue;
                    // Outer axes of kernel 4 at stride 2 (two taps per phase) or 3 (two and one).
                    const AxisSpec outer = i % 2 == 0 ? AxisSpec{3, 4, 2, 1} : AxisSpec{3, 3, 2, 1};
                    const deconv_ref::Problem p = grouped_problem(i % 5 == 0 ? 2 : 1, groups, 1, 1, true, rank,
                                                                  {x, k, s, pad, i % s}, outer);
                    // The rules run the kernel on its fast branch only: pad 1 at stride 2, 0 at
                    // stride 8, two taps per phase on the two innermost axes, or phases of one tap
                    // beside them (a kernel one tap short along the innermost axis, kernel 3 along
                    // the next) where the groups fill whole vectors (16 fill every variant's),
                    // in 1D, and in 2D on rows of whole groups of s outputs; the pin reaches the
                    // others.
                    const int64_t width = deconv_ref::resolve(p).out_spatial.back();
                    const bool two_taps = k == 2 * s && (rank == 1 || outer.k == 4);
                    const bool one_tap = (k == 2 * s || k == 2 * s - 1) && groups % 16 == 0 &&
                                         (rank == 1 || (rank == 2 && width % s == 0));
                    const bool fast = pad % s == (s == 2 ? 1 : 0) && (two_taps || one_tap);
                    const std::string pin = fast ? "" : "interleave=plain";
#if defined(__x86_64__)
                    if (t == DType::f32 && width >= s)
                        routed += expect_plan_runs(t, p, "interleaved deconv_phase_conv_interleaved_nxc_groups_s", pin);
#endif
                    check_random_case(t, seed, i % 3, p, ran, failed, pin);
                }
    }
    std::printf("[ routed   ] %d of %d cases on the interleaved group kernel\n", routed, ran);
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first layers of 4-6 output channels per group with a stride above 1 and two vectors of
// input channels or more run on the channels-last twin's channel-dot kernels on AVX-512 (runtime/
// layer_classes.cpp, dot_outputs_twin): 3D layers, and 2D ones of phase reductions of 256 or more;
// not 2D layers of shorter reductions, stride-1 layers, or 1D ones. Each against the reference
// through every API; plans checked on x86-64 AVX-512 where nothing pins a knob.
TEST(LayoutWide, FewOutputChannelsOnTheTwinsDots) {
    const auto layer = [](int rank, int64_t groups, int64_t cin, int64_t cout, AxisSpec axis) {
        return grouped_problem(1, groups, cin, cout, groups > 1, rank, axis, axis);
    };
    std::vector<RouteCase> planes = {
        {layer(2, 1, 64, 5, {7, 3, 2, 1}), true},      // 64 x 4 taps
        {layer(2, 2, 128, 4, {9, 4, 3, 1}), true},     // 128 x 4 taps, 2 groups
        {layer(2, 1, 32, 6, {12, 3, 2, 1}), false},    // 32 x 4 taps: short
        {layer(2, 1, 64, 6, {10, 3, 1, 1}), false},    // stride 1
        {layer(2, 1, 64, 8, {7, 3, 2, 1}), false},     // 8 output channels
    };
    const std::vector<RouteCase> volumes = {
        {layer(3, 1, 32, 4, {5, 3, 2, 1}), true},
        {layer(3, 1, 64, 6, {4, 4, 2, 1}), true},
        {layer(3, 1, 64, 5, {5, 2, 1, 0}), false},     // stride 1
    };
    const std::vector<RouteCase> rows = {{layer(1, 1, 64, 5, {40, 2, 2, 0}), false}};
    const auto checked = [](const std::string &how) { return routes_checked(how) && how.find("(avx512") != std::string::npos; };
    const auto expect = [](const std::string &how, bool routed) {
        EXPECT_EQ(how.find("channels-last twin") != std::string::npos && how.find("nxc_dots") != std::string::npos, routed);
    };
    check_route_cases(planes, 2, 9100, checked, expect);
    if (deconv_test::rank_built(3)) check_route_cases(volumes, 3, 9140, checked, expect);
    check_route_cases(rows, 1, 9170, checked, expect);
}

// Channels-last layers of 1-6 output channels per group and a vector or more of input channels
// run the kernels that vectorize input channels (cpu_channel_dots_schedule.h): every output
// channel count they specialize (4-6 from two vectors of input channels, and at stride 1 in 2D
// and 3D from 8: the plans of both sides checked on AVX-512), input channels a whole number of vectors or not (16, 8 and 4
// lanes), rows narrower and wider than their position tile, strides 1-2 with kernels 1-4 (the
// interior and bounded kernels), groups, ranks 1-3, and batches of 1 and 5 (5 images run in image
// slices where the layer is large enough to be parallel); f32, and f16 (run as f32 where the CPU
// has F16C). Every f32 case with at least 16 input channels checks that the plan names the kernel
// (4-6: 32; built wherever f32 is; expect_plan_runs).
TEST(LayoutWide, FewOutputChannelsEveryDotTile) {
    int ran = 0, failed = 0, i = 0, routed = 0;
    for (DType t : {DType::f32, DType::f16}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int64_t cout = 1; cout <= 6; cout++)
            for (int64_t cin : {4, 8, 12, 16, 24, 40, 64})
                for (int64_t x : {1, 3, 4, 5, 9, 19}) {
                    const int rank = 1 + (i % 3);
                    const uint64_t seed = deconv_test::sweep_seed(t, rank, 8100 + i);
                    const int64_t s = 1 + i % 2, k = 1 + (i / 2) % 4;
                    const int64_t groups = i % 5 == 0 ? 2 : 1;
                    const int64_t n = x == 19 ? 5 : 1 + (i / 7) % 2;
                    i++;
                    if (!deconv_test::rank_built(rank)) continue;
                    const deconv_ref::Problem p =
                        grouped_problem(n, groups, cin, cout, groups > 1, rank, {x, k, s, std::min<int64_t>(1, k - 1)},
                                        {x == 19 && rank < 3 ? 12 : 3, 2, 2, 0});
                    if (t == DType::f32 && cin >= (cout > 3 ? 32 : 16))
                        routed += expect_plan_runs(t, p, "kernel deconv_phase_conv_nxc_dots_");
                    check_random_case(t, seed, i % 3, p, ran, failed);
                }
    }
    // Stride 1 in 2D, 5 output channels: on the channel-dot kernels from 128 input channels.
    for (int64_t cin : {32, 128}) {
        const deconv_ref::Problem p = grouped_problem(1, 1, cin, 5, false, 2, {9, 3, 1, 1}, {6, 2, 1, 0});
#if defined(__x86_64__)
        const std::string how = plan_of(DType::f32, p);
        if (routes_checked(how) && how.find("(avx512") != std::string::npos)
            EXPECT_EQ(how.find("nxc_dots") != std::string::npos, cin == 128) << how;
#endif
        check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, 2, 8090 + cin), 0, p, ran, failed);
    }
    std::printf("[ routed   ] %d of %d cases on the channel-dot kernels\n", routed, ran);
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}


// 1D channels-last layers of one group at stride 1 or 2 on the channel tiles read the caller's
// input in place, the row ends of phases that reach past it on the bounded kernel
// (runtime/dispatch/layer_classes.cpp, in_place_1d_channels_last); at stride 8, with groups, and in 2D
// they keep the zero-bordered copy, as on CPUs of 4-lane vectors (SSE4.1). Plans checked on
// x86-64 AVX-512 and AVX2 where nothing pins a knob; every case against the reference through
// every API, as f32 and f16.
TEST(LayoutWide, OneDimChannelsLastReadInPlace) {
    struct Case {
        deconv_ref::Problem p;
        int rank;
        bool in_place;
    };
    const std::vector<Case> cases = {
        {grouped_problem(1, 1, 64, 32, false, 1, {40, 4, 2, 1}, {}), 1, true},   // kernel 4 stride 2
        {grouped_problem(2, 1, 32, 48, false, 1, {37, 3, 1, 1}, {}), 1, true},   // kernel 3 stride 1
        {grouped_problem(1, 1, 24, 16, false, 1, {29, 7, 1, 3}, {}), 1, true},   // kernel 7 stride 1
        {grouped_problem(3, 1, 16, 32, false, 1, {3, 7, 1, 3}, {}), 1, true},    // no output inside: ends only
        {grouped_problem(1, 1, 64, 24, false, 1, {41, 5, 2, 0}, {}), 1, true},   // pad 0: both ends
        {grouped_problem(1, 1, 32, 32, false, 1, {20, 16, 8, 4}, {}), 1, false},  // stride 8
        {grouped_problem(1, 2, 32, 32, true, 1, {40, 4, 2, 1}, {}), 1, false},    // two groups
        {grouped_problem(1, 1, 32, 32, false, 2, {9, 4, 2, 1}, {9, 4, 2, 1}), 2, false},  // 2D
    };
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        i++;
        if (!deconv_test::rank_built(c.rank)) continue;
#if defined(__x86_64__)
        const std::string how = plan_of(DType::f32, c.p);
        if (routes_checked(how) && how.find("(sse41") == std::string::npos) {
            SCOPED_TRACE("case " + std::to_string(i) + ": " + how);
            EXPECT_EQ(how.find("zero-bordered input") == std::string::npos, c.in_place);
            if (c.in_place)
                EXPECT_NE(how.find("input in place, row ends on deconv_phase_conv_nxc_r1_"), std::string::npos);
        }
#endif
        for (DType t : {DType::f32, DType::f16}) {
            if (!deconv_test::dtype_built(t)) continue;
            for (int api = 0; api < 3; api++)
                check_random_case(t, deconv_test::sweep_seed(t, c.rank, 8520 + 3 * i + api), api, c.p, ran, failed,
                                  "", DataFormat::NXC, "case " + std::to_string(i) + ": ");
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}


}  // namespace
