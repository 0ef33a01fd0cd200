// The GPU schedule (generators/schedules/gpu_schedule.h) and the GPU executor
// (runtime/gpu/gpu_executor.cpp, which runs CUDA plans) on the CPU through OpenCL (pocl), against the
// independent reference (tests/reference/). The kernels are the CUDA matrix's, compiled for
// Halide's OpenCL target (cmake/DeconvOpenCLTestKernels.cmake); the executor is the very code CUDA
// plans run, on the OpenCL backend (opencl_backend.h).
//   OpenClDevice.*        an OpenCL device is usable. With DECONV_OPENCL_TESTS=ON a missing one
//                         fails every test, saying so: turning the option off is how a machine
//                         without pocl opts out.
//   OpenClBackprop.*      the backprop sweep's problems in both layouts: stride phases, phases
//                         without taps (zero fills), output_shape, auto_pad, depthwise, medium rows
//                         and channel counts (register tiles and their tails).
//   OpenClBackprop.EveryScheduleMapping  each mapping and register tile of the schedule.
//   OpenClBackpropWide.*  full register tiles and the guarded tails of both thread axes.
//   OpenClForward.*       GroupConvolution: strides, dilations, pads and auto_pad.
//   OpenClPackedFilter.*  a filter packed once on the device serving later runs.
//   OpenClPlan.*          the launch limits of the GPU kernels.
//   OpenClHostViews.*     host views: the executor's device copies, dense output and download.
//
// Tolerances: compare_to_reference (correctness/check.h), the CPU suites' per-dtype bounds. They
// hold here for the same reasons: f32 allows 2 (n+1) u32 sum|terms| whatever the order of the
// reduction and whether pocl contracts products into FMAs (each only removes a rounding); i32 is
// exact (accumulated in 64 bits, saturated once on store, as the CPU kernels do).
#include "check.h"
#include "gpu_dispatch_checks.h"
#include "layout_support.h"

#include "gpu/gpu_executor.h"
#include "kernels/halide_glue.h"
#include "opencl_backend.h"
#include "opencl_plan.h"

#include "HalideRuntime.h"
#include "HalideRuntimeOpenCL.h"

#include <optional>
#include <sstream>
#include <stdexcept>

namespace {

using deconv::DataFormat;
using deconv::DType;
using deconv::Memory;
using deconv::Op;
using deconv_test::Buffer;
using deconv_test::StridedLayout;

#define REQUIRE_OPENCL()                                                                                      \
    do {                                                                                                      \
        const std::string why = opencl_problem();                                                             \
        ASSERT_TRUE(why.empty()) << "this build has DECONV_OPENCL_TESTS=ON but no usable OpenCL device: " << why \
                                 << "\nInstall pocl-opencl-icd (scripts/setup.sh does), or configure with "    \
                                    "-DDECONV_OPENCL_TESTS=OFF.";                                              \
    } while (0)

const std::string &opencl_problem() {
    static const std::string why = deconv_ocl::opencl_device_problem();
    return why;
}

// The kernels read every buffer through its strides, so device tensors whose every element has a
// slot of kViewAlignment bytes (opencl_backend.h) are as valid a layout as dense ones, and every
// phase view's offset into them is aligned (CUDA, whose views are plain addresses, runs the same
// offsets on dense tensors).
using deconv_ocl::kViewAlignment;

// `shape` laid out with make_layout's gaps and permuted axes, every stride scaled to whole slots.
StridedLayout aligned_layout(const std::vector<int64_t> &shape, size_t elem, std::mt19937 &rng) {
    StridedLayout l = deconv_test::make_layout(shape, rng, rng() % 2 == 0);
    const int64_t slot = kViewAlignment / static_cast<int64_t>(elem);
    for (int64_t &s : l.strides) s *= slot;
    l.span *= slot;
    return l;
}

// A host buffer's bytes in OpenCL device memory (a Halide OpenCL device handle, the form the GPU
// executor takes for Memory::CudaDevice views on this backend), freed on scope exit.
class DeviceCopy {
public:
    explicit DeviceCopy(Buffer &host) : dim_(0, static_cast<int32_t>(host.count * static_cast<int64_t>(host.elem())), 1) {
        buf_.host = static_cast<uint8_t *>(host.data());
        buf_.type = halide_type_t(halide_type_uint, 8);
        buf_.dimensions = 1;
        buf_.dim = &dim_;
        buf_.set_host_dirty(true);
        check(halide_copy_to_device(nullptr, &buf_, halide_opencl_device_interface()), "copying to the device");
    }
    DeviceCopy(const DeviceCopy &) = delete;
    DeviceCopy &operator=(const DeviceCopy &) = delete;
    ~DeviceCopy() { halide_device_free(nullptr, &buf_); }
    void *handle() const { return reinterpret_cast<void *>(static_cast<uintptr_t>(buf_.device)); }
    void download() {
        buf_.set_device_dirty(true);
        check(halide_copy_to_host(nullptr, &buf_), "copying to the host");
    }

private:
    static void check(int rc, const char *what) {
        if (rc != 0) throw std::runtime_error(std::string(what) + " failed: " + deconv::detail::take_halide_error());
    }
    halide_dimension_t dim_;
    halide_buffer_t buf_{};
};

// Host: dense host views; HostStrided: host views with gaps and permuted axes (packed on the host
// by the executor); Device: device views in aligned slots (see kViewAlignment).
enum class Path { Host, HostStrided, Device };
const char *path_name(Path p) {
    return p == Path::Device ? "device views" : p == Path::HostStrided ? "strided host views" : "dense host views";
}

// Whether every view of the plan starts at its tensor's first element (one phase per axis, from
// tap 0 and output 0): then host views, whose device copies are dense, need no aligned offsets.
bool views_start_at_zero(const deconv::Plan::Impl &p) {
    for (const auto &axis : p.phases)
        for (const auto &ph : axis)
            if (ph.out_first != 0 || ph.tap_first != 0) return false;
    return true;
}

// Runs `plan` through the GPU executor on OpenCL, with values in the plan's data format, and
// compares with `ref` (also in that format). Checks that nothing outside the output view changed.
// `packed`: a filter packed by pack_filter_on_gpu, which the run takes instead of w_values.
::testing::AssertionResult run_on_opencl(const deconv_ocl::OpenClPlan &plan, DType t,
                                         const std::vector<double> &in_values, const std::vector<double> &w_values,
                                         const deconv_ref::Result &ref, Path path, uint32_t seed,
                                         const deconv::detail::GpuPackedFilter *packed = nullptr) {
    const deconv::Plan::Impl &p = *plan.impl;
    const auto &in_shape = p.input_shape, &w_shape = p.filter_shape, &out_shape = p.info.output_shape;
    std::mt19937 rng(seed);
    const size_t elem = deconv::dtype_size(t);
    auto layout = [&](const std::vector<int64_t> &s) {
        if (path == Path::Device) return aligned_layout(s, elem, rng);
        if (path == Path::HostStrided) return deconv_test::make_layout(s, rng, rng() % 2 == 0);
        return deconv_test::dense_layout(s);
    };
    deconv_test::GpuRunBuffers b =
        deconv_test::gpu_run_buffers(t, in_shape, w_shape, out_shape, in_values, w_values, layout);
    const StridedLayout &li = b.li, &lw = b.lw, &lo = b.lo;
    Buffer &in = b.in, &w = b.w, &out = b.out;
    const auto &before = b.before;
    const char *name = path_name(path);
    try {
        if (path == Path::Device) {
            DeviceCopy din(in), dw(w), dout(out);
            deconv::detail::run_gpu(deconv_ocl::opencl_backend(), p, *plan.kernel,
                                    deconv::ConstTensorView(din.handle(), t, in_shape, li.strides, Memory::CudaDevice),
                                    deconv::ConstTensorView(dw.handle(), t, w_shape, lw.strides, Memory::CudaDevice),
                                    deconv::TensorView{dout.handle(), t, out_shape, lo.strides, Memory::CudaDevice},
                                    li.strides, lw.strides, lo.strides, packed);
            dout.download();
        } else {
            deconv::detail::run_gpu(deconv_ocl::opencl_backend(), p, *plan.kernel,
                                    deconv::ConstTensorView(in.data(), t, in_shape, li.strides),
                                    deconv::ConstTensorView(w.data(), t, w_shape, lw.strides),
                                    deconv::TensorView{out.data(), t, out_shape, lo.strides}, li.strides, lw.strides,
                                    lo.strides, packed);
        }
    } catch (const std::exception &e) {
        return ::testing::AssertionFailure() << name << ": " << e.what();
    }
    return deconv_test::check_gpu_output(name, t, out, out_shape, lo, before, ref);
}

// One problem (NCX shapes and values, its reference result in NCX) in both data formats, on
// device views, and on host views (dense or strided by `index`) where the plan's views start at
// zero; returns the failures,
// reporting the first few.
int check_both_formats(Op op, DType t, const std::vector<int64_t> &in_shape_ncx, const std::vector<int64_t> &w_shape,
                       const deconv::Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape,
                       const std::vector<double> &x, const std::vector<double> &w, const deconv_ref::Result &ref_ncx,
                       int index, const std::string &what, int already_failed) {
    return deconv_test::check_both_formats(
        attrs, in_shape_ncx, x, ref_ncx, index, what, already_failed,
        [&](const deconv::Attributes &a, const std::vector<int64_t> &in_shape, const std::vector<double> &xin,
            const deconv_ref::Result &ref) {
            const auto plan = deconv_ocl::make_opencl_plan(op, t, in_shape, w_shape, a, output_shape);
            auto r = run_on_opencl(plan, t, xin, w, ref, Path::Device, static_cast<uint32_t>(index));
            if (r && views_start_at_zero(*plan.impl))
                r = run_on_opencl(plan, t, xin, w, ref, index % 2 ? Path::HostStrided : Path::Host,
                                  static_cast<uint32_t>(index));
            return r;
        });
}

// The (dtype, rank) pairs of the OpenCL test matrix (DECONV_OPENCL_TEST_KERNELS).
struct Shard {
    DType dtype;
    int rank;
};
std::ostream &operator<<(std::ostream &os, const Shard &s) { return os << deconv::dtype_name(s.dtype) << " rank " << s.rank; }
std::vector<Shard> shards() {
    std::vector<Shard> v;
    std::stringstream list(DECONV_OPENCL_SHARDS);
    std::string item;
    while (std::getline(list, item, ',')) {
        const size_t colon = item.find(':');
        const auto t = deconv_test::dtype_from_str(item.substr(0, colon));
        if (!t || colon == std::string::npos) throw std::runtime_error("bad DECONV_OPENCL_SHARDS entry '" + item + "'");
        v.push_back({*t, std::stoi(item.substr(colon + 1))});
    }
    return v;
}
std::string shard_name(const ::testing::TestParamInfo<Shard> &i) {
    return std::string(deconv::dtype_name(i.param.dtype)) + "_rank" + std::to_string(i.param.rank);
}

TEST(OpenClDevice, IsUsable) { REQUIRE_OPENCL(); }

class OpenClBackprop : public ::testing::TestWithParam<Shard> {};

// The backprop sweep's problems (the CPU suites' make_case, as many as the CUDA GPU suite runs),
// each in NCX and NXC.
TEST_P(OpenClBackprop, MatchesReference) {
    REQUIRE_OPENCL();
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    deconv_test::check_backprop_sweep(t, rank, check_both_formats);
}

// Every mapping and register tile of the GPU schedule, with tails, in NCX and NXC.
TEST_P(OpenClBackprop, EveryScheduleMapping) {
    REQUIRE_OPENCL();
    deconv_test::check_schedule_mappings(GetParam().dtype, GetParam().rank, DECONV_OPENCL_BIG_TILE_OUTPUTS,
                                         check_both_formats);
}

INSTANTIATE_TEST_SUITE_P(Shards, OpenClBackprop, ::testing::ValuesIn(shards()), shard_name);

// Full register tiles and the guarded tails of both thread axes: 37 output channels per group
// (tiles of 4 in blocks of 4 along the tile axis, 32 threads along channels for NXC) and rows of
// 70 (blocks of 32 threads); stride 3 with kernel 2, so one phase in three has no tap.
TEST(OpenClBackpropWide, TilesAndTails) {
    REQUIRE_OPENCL();
    for (const Shard &s : shards()) {
        if (s.rank != 2) continue;
        deconv::Attributes a;
        a.strides = {3, 3};
        a.pads_begin = {0, 0};
        a.pads_end = {0, 1};
        const deconv_ref::Problem p = deconv_test::ref_problem(true, {2, 2 * 5, 4, 24}, {2, 5, 37, 2, 2}, a);
        std::mt19937 rng(3);
        const auto x = deconv_test::random_values(s.dtype, deconv_ref::product(p.input_shape), rng);
        const auto w = deconv_test::random_values(s.dtype, deconv_ref::product(p.filter_shape), rng);
        const auto ref_ncx = deconv_ref::compute(p, x, w);
        EXPECT_EQ(check_both_formats(Op::GroupConvolutionBackpropData, s.dtype, p.input_shape, p.filter_shape,
                                     deconv_test::to_lib_attrs(p), std::nullopt, x, w, ref_ncx, 11,
                                     deconv_ref::describe(p), 0),
                  0)
            << s;
    }
}

// A filter packed once on the device (from host memory, and from a strided device view through
// the strided copy kernel) serves later runs, which read neither the caller's filter nor its
// strides: each run below is given a filter of zeros.
TEST(OpenClPackedFilter, PackedOnceServesRuns) {
    REQUIRE_OPENCL();
    const Shard s = shards().front();
    deconv::Attributes a;
    a.strides.assign(s.rank, 2);
    a.dilations.assign(s.rank, 1);
    a.pads_begin.assign(s.rank, 1);
    a.pads_end.assign(s.rank, 1);
    std::vector<int64_t> in_shape = {1, 2 * 3}, w_shape = {2, 3, 37};
    for (int i = 0; i < s.rank; i++) {
        in_shape.push_back(7 + 2 * i);
        w_shape.push_back(3);
    }
    const deconv_ref::Problem p = deconv_test::ref_problem(true, in_shape, w_shape, a);
    std::mt19937 rng(23);
    const auto x = deconv_test::random_values(s.dtype, deconv_ref::product(p.input_shape), rng);
    const auto w = deconv_test::random_values(s.dtype, deconv_ref::product(p.filter_shape), rng);
    const std::vector<double> zeros(w.size(), 0.0);
    const auto ref = deconv_ref::compute(p, x, w);
    const auto plan = deconv_ocl::make_opencl_plan(Op::GroupConvolutionBackpropData, s.dtype, in_shape, w_shape, a,
                                                   std::nullopt);
    const auto &backend = deconv_ocl::opencl_backend();
    Buffer w_host(s.dtype, w_shape);
    deconv_test::fill(w_host, w);
    const auto from_host = deconv::detail::pack_filter_on_gpu(
        backend, *plan.impl, deconv::ConstTensorView(w_host.data(), s.dtype, w_shape), deconv_test::dense_layout(w_shape).strides);
    std::mt19937 lrng(4);
    const StridedLayout lw = aligned_layout(w_shape, deconv::dtype_size(s.dtype), lrng);
    Buffer w_strided(s.dtype, w_shape, lw.span);
    deconv_test::fill_strided(w_strided, w_shape, lw.strides, w);
    DeviceCopy w_dev(w_strided);
    const auto from_device = deconv::detail::pack_filter_on_gpu(
        backend, *plan.impl, deconv::ConstTensorView(w_dev.handle(), s.dtype, w_shape, lw.strides, Memory::CudaDevice),
        lw.strides);
    EXPECT_EQ(from_host->bytes(), from_device->bytes());
    for (const auto *packed : {from_host.get(), from_device.get(), from_host.get()})
        EXPECT_TRUE(run_on_opencl(plan, s.dtype, x, zeros, ref, Path::Device, 5, packed));
}

// The GPU kernels index with 32 bits: a tensor of 2^31 elements or more is refused before any
// launch, naming the tensor and the limit (the same check CUDA plans make).
TEST(OpenClPlan, TensorsBeyond32BitIndexingAreRefused) {
    deconv::Attributes a;
    a.strides = {1, 1};
    a.pads_begin = a.pads_end = {0, 0};
    a.dilations = {1, 1};
    try {
        deconv_ocl::make_opencl_plan(Op::GroupConvolutionBackpropData, DType::f32, {1, 2, 40000, 30000}, {2, 1, 1, 1, 1},
                                     a, std::nullopt);
        FAIL() << "a plan of 2.4e9-element tensors was made";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), deconv::ErrorKind::TooLarge);
        EXPECT_NE(std::string(e.what()).find("the data tensor's 2400000000 elements exceed the CUDA kernels' 32-bit "
                                             "indexing"),
                  std::string::npos)
            << e.what();
    }
}

class OpenClForward : public ::testing::TestWithParam<Shard> {};

// GroupConvolution-1: the forward sweep's problems (strides, dilations, pads, every auto_pad), each
// in NCX and NXC, on device and host views.
TEST_P(OpenClForward, MatchesReference) {
    REQUIRE_OPENCL();
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    const deconv_test::CaseSpec spec{deconv_test::CaseOp::Forward, deconv_test::CaseFormat::NCX, false, 0x0C1F0Dull};
    int failed = 0;
    for (int i = 0; i < 30; i++) {
        const deconv_test::GenCase c = deconv_test::make_case(spec, t, rank, i);
        const auto ref_ncx = deconv_ref::compute_forward(c.fp, c.input, c.filter);
        failed += check_both_formats(Op::GroupConvolution, t, c.fp.input_shape, c.fp.filter_shape,
                                     deconv_test::to_lib_attrs(c.fp), std::nullopt, c.input, c.filter, ref_ncx, i,
                                     deconv_test::describe(c), failed);
    }
    EXPECT_EQ(failed, 0);
}

INSTANTIATE_TEST_SUITE_P(Shards, OpenClForward, ::testing::ValuesIn(shards()), shard_name);

// Host views through the executor's dense device copies on a layer whose views start at zero
// (stride 1, dilation 2): upload, dense device output, download; strided host views are packed on
// the host first.
TEST(OpenClHostViews, DenseAndStrided) {
    REQUIRE_OPENCL();
    const Shard s = shards().front();
    deconv::Attributes a;
    a.strides.assign(s.rank, 1);
    a.dilations.assign(s.rank, 2);
    a.pads_begin.assign(s.rank, 1);
    a.pads_end.assign(s.rank, 0);
    std::vector<int64_t> in_shape = {2, 6}, w_shape = {2, 3, 5};
    for (int i = 0; i < s.rank; i++) {
        in_shape.push_back(9 + 4 * i);
        w_shape.push_back(3);
    }
    const deconv_ref::Problem p = deconv_test::ref_problem(true, in_shape, w_shape, a);
    std::mt19937 rng(5);
    const auto x = deconv_test::random_values(s.dtype, deconv_ref::product(p.input_shape), rng);
    const auto w = deconv_test::random_values(s.dtype, deconv_ref::product(p.filter_shape), rng);
    const auto ref = deconv_ref::compute(p, x, w);
    const auto plan = deconv_ocl::make_opencl_plan(Op::GroupConvolutionBackpropData, s.dtype, in_shape, w_shape, a,
                                                   std::nullopt);
    ASSERT_TRUE(views_start_at_zero(*plan.impl));
    EXPECT_TRUE(run_on_opencl(plan, s.dtype, x, w, ref, Path::Host, 1));
    EXPECT_TRUE(run_on_opencl(plan, s.dtype, x, w, ref, Path::HostStrided, 2));
}

}  // namespace
