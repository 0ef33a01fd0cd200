// The CUDA device (ExecOptions{Device::CUDA}):
//   CudaBuild.*        which CUDA kernels this build registered (op x rank x dtype x layout).
//   CudaDevice.*       device names, and what needs no GPU: the refusal of device views by CPU
//                      plans, the "not supported on CUDA" errors, the CPU fallback.
//   CudaUnavailable.*  without a usable GPU (CI): the clear error, the output untouched, repeated
//                      and concurrent failing calls. Skipped where a GPU is present.
//   CudaGpu*           with a GPU: every op x rank x dtype built for CUDA against the independent
//                      reference, through host buffers (dense and strided) and device pointers
//                      (dense and strided), phases without taps and output_shape included.
//                      Skipped (saying so) where cuda_available() is false.
#include "check.h"
#include "gpu_dispatch_checks.h"
#include "layout_support.h"
#include "../../facts/tile_facts.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace {

using deconv::DataFormat;
using deconv::Device;
using deconv::DType;
using deconv::ErrorKind;
using deconv::ExecOptions;
using deconv::Memory;
using deconv::Op;
using deconv_test::Buffer;
using ::testing::HasSubstr;

// Every dtype Halide 14 compiles for CUDA (bf16 is left to the CPU).
const std::vector<DType> kCudaDtypes = {DType::f32, DType::f16, DType::f64, DType::i8, DType::u8, DType::i32};

// The CUDA matrix as cmake/DeconvKernels.cmake configured it (DECONV_TEST_CUDA_DTYPES, from
// DECONV_CUDA_DTYPES and DECONV_DTYPES): what the registry must hold.
std::vector<DType> cuda_dtypes_built() {
    std::vector<DType> v;
    const std::string list = DECONV_TEST_CUDA_DTYPES;
    size_t start = 0;
    while (start < list.size()) {
        const size_t end = std::min(list.find(',', start), list.size());
        if (end > start) v.push_back(deconv::parse_dtype(list.substr(start, end - start)));
        start = end + 1;
    }
    return v;
}

#define SKIP_WITHOUT_GPU()                                                                          \
    do {                                                                                            \
        if (!deconv::cuda_available())                                                              \
            GTEST_SKIP() << "no usable CUDA GPU here, the CUDA kernels are not run: "               \
                         << deconv::cuda_unavailable_reason();                                      \
    } while (0)

// Whether the environment named a CUDA JIT register cap before the library could: read during
// static initialisation, before main and before any CUDA query.
const bool g_caller_set_jit_registers = std::getenv("HL_CUDA_JIT_MAX_REGISTERS") != nullptr;

// A backprop problem from its attributes (strides, pads_begin, pads_end, dilations, output_padding).
deconv_ref::Problem problem(bool grouped, const std::vector<int64_t> &in_shape, const std::vector<int64_t> &w_shape,
                            std::vector<int64_t> strides, std::vector<int64_t> pads_begin,
                            std::vector<int64_t> pads_end, std::vector<int64_t> dilations,
                            std::vector<int64_t> output_padding) {
    deconv::Attributes a;
    a.strides = std::move(strides);
    a.pads_begin = std::move(pads_begin);
    a.pads_end = std::move(pads_end);
    a.dilations = std::move(dilations);
    a.output_padding = std::move(output_padding);
    return deconv_test::ref_problem(grouped, in_shape, w_shape, a);
}

// A small backprop layer with its reference result (NCX).
struct Layer {
    deconv_ref::Problem p;
    std::vector<double> input, filter;
};

Layer small_layer(DType t) {
    Layer l;
    l.p = problem(true, {1, 4, 5, 6}, {2, 2, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {0, 0});
    std::mt19937 rng(7);
    l.input = deconv_test::random_values(t, deconv_ref::product(l.p.input_shape), rng);
    l.filter = deconv_test::random_values(t, deconv_ref::product(l.p.filter_shape), rng);
    return l;
}

// ---------------------------------------------------------------- build facts

TEST(CudaBuild, RegistryHasTheCudaKernels) {
    const auto ranks = deconv::built_ranks();
    const auto want = cuda_dtypes_built();
    for (Op op : {Op::GroupConvolutionBackpropData, Op::GroupConvolution}) {
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) {
            for (int r : ranks) {
                for (DType t : deconv::built_dtypes()) {
                    const bool expected = std::find(want.begin(), want.end(), t) != want.end();
                    EXPECT_EQ(deconv::has_kernel(op, r, t, f, Device::CUDA), expected)
                        << deconv::op_name(op) << " " << r << "D " << deconv::dtype_name(t) << " "
                        << deconv::data_format_name(f);
                    // The CPU kernels are all there, whatever CUDA has.
                    EXPECT_TRUE(deconv::has_kernel(op, r, t, f, Device::CPU));
                }
            }
        }
    }
    auto sorted = [](std::vector<DType> v) {
        std::sort(v.begin(), v.end());
        return v;
    };
    EXPECT_EQ(sorted(deconv::built_dtypes(Device::CUDA)), sorted(want));
    EXPECT_EQ(deconv::built_ranks(Device::CUDA), want.empty() ? std::vector<int>{} : ranks);
}

// ---------------------------------------------------------------- what needs no GPU

TEST(CudaDevice, Names) {
    EXPECT_STREQ(deconv::device_name(Device::CPU), "cpu");
    EXPECT_STREQ(deconv::device_name(Device::CUDA), "cuda");
    EXPECT_EQ(deconv::parse_device("CUDA"), Device::CUDA);
    EXPECT_EQ(deconv::parse_device("host"), Device::CPU);
    EXPECT_EQ(deconv::parse_device("cpu"), Device::CPU);
    try {
        deconv::parse_device("gpu");
        FAIL() << "parse_device(\"gpu\") did not throw";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("'gpu'"));
    }
    // cuda_available() and its reason agree.
    EXPECT_EQ(deconv::cuda_available(), deconv::cuda_unavailable_reason().empty());
}

// Halide 14 JIT-compiles the kernels' PTX at 64 registers unless HL_CUDA_JIT_MAX_REGISTERS says
// otherwise, and the rank-2/3 kernels spill at 64 (docs/cuda.md): the library sets its own cap
// when it finds a GPU, leaving a caller's value alone.
TEST(CudaGpuJit, RegisterCapIsSetBeforeKernelsLoad) {
    SKIP_WITHOUT_GPU();
    const char *cap = std::getenv("HL_CUDA_JIT_MAX_REGISTERS");
    ASSERT_NE(cap, nullptr) << "a usable GPU was found but HL_CUDA_JIT_MAX_REGISTERS is unset";
    if (g_caller_set_jit_registers) GTEST_SKIP() << "the environment set HL_CUDA_JIT_MAX_REGISTERS=" << cap;
    const int regs = std::atoi(cap);
    EXPECT_GT(regs, 64) << "the library's cap should lift Halide's default of 64";
    EXPECT_LE(regs, 255) << "ptxas allows at most 255 registers per thread";
}

TEST(CudaDevice, CpuPlansRefuseDeviceViews) {
    const DType t = DType::f32;
    if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(2)) GTEST_SKIP() << "f32 2D not built";
    const Layer l = small_layer(t);
    const auto attrs = deconv_test::to_lib_attrs(l.p);
    const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape, attrs);
    EXPECT_EQ(plan.device(), Device::CPU);
    Buffer in(t, l.p.input_shape), w(t, l.p.filter_shape), out(t, plan.shape().output_shape);
    deconv_test::fill(in, l.input);
    deconv_test::fill(w, l.filter);
    out.fill_bytes(0xCD);
    const auto before = out.payload();
    for (int which = 0; which < 3; which++) {
        deconv::ConstTensorView iv = in.cview(), wv = w.cview();
        deconv::TensorView ov = out.view();
        (which == 0 ? iv.memory : which == 1 ? wv.memory : ov.memory) = Memory::CudaDevice;
        try {
            plan.run(iv, wv, ov);
            ADD_FAILURE() << "a device view (#" << which << ") ran on a CPU plan";
        } catch (const deconv::Error &e) {
            EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
            EXPECT_THAT(e.what(), HasSubstr("CUDA device memory but the plan runs on the CPU"));
        }
    }
    EXPECT_EQ(out.payload(), before) << "the output was written";
}

TEST(CudaDevice, UnsupportedDtypeSaysSoAndFallsBack) {
    // bf16 has no CUDA kernel (LLVM 14's NVPTX back end cannot compile it): an Unsupported error
    // naming CUDA, whether or not a GPU is present; with the fallback, the CPU kernels.
    const DType t = DType::bf16;
    if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(2)) GTEST_SKIP() << "bf16 2D not built";
    const Layer l = small_layer(t);
    const auto attrs = deconv_test::to_lib_attrs(l.p);
    try {
        deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape, attrs,
                             std::nullopt, ExecOptions{Device::CUDA, false});
        FAIL() << "a bf16 CUDA plan was created";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
#if DECONV_TEST_CUDA_BUILT
        EXPECT_THAT(e.what(), HasSubstr("not supported on CUDA"));
        EXPECT_THAT(e.what(), HasSubstr("bf16"));
#else
        EXPECT_THAT(e.what(), HasSubstr("CUDA is unavailable: "));
#endif
    }
    const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape,
                                           attrs, std::nullopt, ExecOptions{Device::CUDA, true});
    EXPECT_EQ(plan.device(), Device::CPU);
    EXPECT_THAT(plan.fallback_reason(), HasSubstr(DECONV_TEST_CUDA_BUILT ? "not supported on CUDA" : "CUDA is unavailable"));
    const deconv_ref::Result ref = deconv_ref::compute(l.p, l.input, l.filter);
    Buffer in(t, l.p.input_shape), w(t, l.p.filter_shape), out(t, ref.shape.output_shape);
    deconv_test::fill(in, l.input);
    deconv_test::fill(w, l.filter);
    plan.run(in.data(), w.data(), out.data());
    EXPECT_TRUE(deconv_test::compare_to_reference(t, deconv_test::read_all(out), ref));
}

// The fallback runs every op on the CPU when CUDA cannot, and on CUDA when it can: either way
// the result is the reference's.
TEST(CudaDevice, FallbackMatchesReference) {
    const DType t = DType::f32;
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << "f32 not built";
    int ran = 0;
    for (int rank : deconv::built_ranks()) {
        for (int i = 0; i < 12; i++) {
            const deconv_test::GenCase c = deconv_test::make_case(t, rank, i);
            const deconv_ref::Result ref = deconv_ref::compute(c.p, c.input, c.filter);
            const auto attrs = deconv_test::to_lib_attrs(c.p);
            const auto plan = deconv::Plan::create(deconv_test::lib_op(c.p), t, c.p.input_shape, c.p.filter_shape,
                                                   attrs, c.p.output_shape, ExecOptions{Device::CUDA, true});
            EXPECT_EQ(plan.device(), deconv::cuda_available() ? Device::CUDA : Device::CPU);
            Buffer in(t, c.p.input_shape), w(t, c.p.filter_shape), out(t, ref.shape.output_shape);
            deconv_test::fill(in, c.input);
            deconv_test::fill(w, c.filter);
            out.fill_bytes(0xCD);
            plan.run(in.data(), w.data(), out.data());
            EXPECT_TRUE(out.guards_intact());
            EXPECT_TRUE(deconv_test::compare_to_reference(t, deconv_test::read_all(out), ref)) << deconv_test::describe(c);
            ran++;
        }
    }
    EXPECT_GT(ran, 0);
}

// ---------------------------------------------------------------- without a GPU

class CudaUnavailable : public ::testing::Test {
protected:
    void SetUp() override {
        if (deconv::cuda_available()) GTEST_SKIP() << "a CUDA GPU is usable here: the no-GPU behaviour cannot be observed";
        if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP() << "f32 2D not built";
    }
    // The message every refusal must carry (a build without CUDA kernels says so as its reason).
    static std::string expected_text() { return "CUDA is unavailable: "; }
};

TEST_F(CudaUnavailable, ReasonIsGiven) {
    EXPECT_FALSE(deconv::cuda_available());
    const std::string why = deconv::cuda_unavailable_reason();
    EXPECT_FALSE(why.empty());
#if DECONV_TEST_CUDA_BUILT
    // The probe names the driver library or the driver call that failed.
    EXPECT_TRUE(why.find("libcuda") != std::string::npos || why.find("cu") == 0 ||
                why.find("no CUDA GPU") != std::string::npos || why.find("HL_GPU_DEVICE") != std::string::npos)
        << why;
#else
    EXPECT_THAT(why, HasSubstr("DECONV_CUDA=OFF"));
#endif
    // Under tests/fake_cuda's stand-in driver: the exact failure it plays.
    if (const char *want = std::getenv("DECONV_TEST_EXPECT_CUDA_REASON")) EXPECT_THAT(why, HasSubstr(want));
}

TEST_F(CudaUnavailable, PlanAndOneShotThrowAndLeaveTheOutput) {
    const DType t = DType::f32;
    const Layer l = small_layer(t);
    const auto attrs = deconv_test::to_lib_attrs(l.p);
    const ExecOptions cuda{Device::CUDA, false};
    try {
        deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape, attrs,
                             std::nullopt, cuda);
        FAIL() << "a CUDA plan was created without a GPU";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_THAT(e.what(), HasSubstr(expected_text()));
        EXPECT_THAT(e.what(), HasSubstr(deconv::cuda_unavailable_reason()));
    }
    // The one-shot functions, every op: the output keeps its bytes.
    const deconv_ref::Result ref = deconv_ref::compute(l.p, l.input, l.filter);
    Buffer in(t, l.p.input_shape), w(t, l.p.filter_shape), out(t, ref.shape.output_shape);
    deconv_test::fill(in, l.input);
    deconv_test::fill(w, l.filter);
    out.fill_bytes(0xCD);
    const auto before = out.payload();
    EXPECT_THROW(deconv::group_convolution_backprop_data(in.cview(), w.cview(), out.view(), attrs, std::nullopt, cuda),
                 deconv::Error);
    Buffer fw(t, {2, 3, 2, 3, 3});  // GroupConvolution: [G, C_OUT, C_IN, K..], data has 4 = 2 x 2 channels
    deconv::Attributes fa;
    Buffer fout(t, {1, 6, 3, 4});
    fout.fill_bytes(0xCD);
    const auto fbefore = fout.payload();
    try {
        deconv::group_convolution(in.cview(), fw.cview(), fout.view(), fa, cuda);
        ADD_FAILURE() << "GroupConvolution ran on CUDA without a GPU";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_THAT(e.what(), HasSubstr(expected_text()));
    }
    EXPECT_EQ(out.payload(), before);
    EXPECT_EQ(fout.payload(), fbefore);
    EXPECT_TRUE(out.guards_intact());
}

// CudaBuffer refuses to exist without a GPU, naming the reason.
TEST_F(CudaUnavailable, CudaBufferIsRefused) {
    try {
        deconv::CudaBuffer b(1024);
        FAIL() << "a CudaBuffer was allocated without a GPU";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_THAT(e.what(), HasSubstr(expected_text()));
    }
}

// The opt-in fallback: a CPU plan that says why, computes the reference's numbers, and refuses
// device-memory views (there is no device here to read them from) naming the fallback.
TEST_F(CudaUnavailable, FallbackRunsOnCpuAndRefusesDeviceViews) {
    const DType t = DType::f32;
    const Layer l = small_layer(t);
    const auto attrs = deconv_test::to_lib_attrs(l.p);
    const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape,
                                           attrs, std::nullopt, ExecOptions{Device::CUDA, true});
    EXPECT_EQ(plan.device(), Device::CPU);
    EXPECT_THAT(plan.fallback_reason(), HasSubstr(expected_text()));
    const deconv_ref::Result ref = deconv_ref::compute(l.p, l.input, l.filter);
    Buffer in(t, l.p.input_shape), w(t, l.p.filter_shape), out(t, ref.shape.output_shape);
    deconv_test::fill(in, l.input);
    deconv_test::fill(w, l.filter);
    out.fill_bytes(0xCD);
    const auto before = out.payload();
    deconv::ConstTensorView iv = in.cview();
    iv.memory = Memory::CudaDevice;
    try {
        plan.run(iv, w.cview(), out.view());
        ADD_FAILURE() << "a device view ran on a fallback CPU plan";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("data view is CUDA device memory but the plan runs on the CPU"));
        EXPECT_THAT(e.what(), HasSubstr("CPU fallback: " + expected_text()));
    }
    EXPECT_EQ(out.payload(), before);
    plan.run(in.data(), w.data(), out.data());
    EXPECT_TRUE(out.guards_intact());
    EXPECT_TRUE(deconv_test::compare_to_reference(t, deconv_test::read_all(out), ref));
    // The one-shot functions take the same option.
    Buffer out2(t, ref.shape.output_shape);
    deconv::group_convolution_backprop_data(in.cview(), w.cview(), out2.view(), attrs, std::nullopt,
                                            ExecOptions{Device::CUDA, true});
    EXPECT_TRUE(deconv_test::compare_to_reference(t, deconv_test::read_all(out2), ref));
}

TEST_F(CudaUnavailable, RepeatedConcurrentFailuresAreCheap) {
    const DType t = DType::f32;
    const Layer l = small_layer(t);
    const auto attrs = deconv_test::to_lib_attrs(l.p);
    std::atomic<int> refused{0}, wrong{0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int k = 0; k < 8; k++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 200; i++) {
                try {
                    deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape,
                                         attrs, std::nullopt, ExecOptions{Device::CUDA, false});
                    wrong++;
                } catch (const deconv::Error &e) {
                    if (e.kind() == ErrorKind::Unsupported &&
                        std::string(e.what()).find(expected_text()) != std::string::npos)
                        refused++;
                    else
                        wrong++;
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(refused.load(), 1600);
    EXPECT_EQ(wrong.load(), 0);
    // The driver is probed once: 1600 refusals cost plan validation only.
    EXPECT_LT(secs, 10.0);
}

// ---------------------------------------------------------------- with a GPU

// Device memory holding a copy of a host Buffer's payload (gaps of strided views included),
// through the library's CudaBuffer (itself checked by CudaGpuBuffer.RoundTripAndOversizedCopies).
struct DeviceCopy {
    size_t bytes;
    deconv::CudaBuffer buf;
    explicit DeviceCopy(const Buffer &b) : bytes(static_cast<size_t>(b.count) * b.elem()), buf(bytes) {
        buf.upload(b.data(), bytes);
    }
    void download(Buffer &b) const { buf.download(b.data(), bytes); }
    void *as_pointer() const { return buf.data(); }
};

enum class Path { HostDense, HostStrided, DeviceDense, DeviceStrided };
const char *path_name(Path p) {
    switch (p) {
    case Path::HostDense: return "host dense";
    case Path::HostStrided: return "host strided";
    case Path::DeviceDense: return "device dense";
    case Path::DeviceStrided: return "device strided";
    }
    return "?";
}

// Runs `plan` (a CUDA plan) on values given in the plan's data format, through `path`, and
// compares with `ref` (also in the plan's format). Checks that nothing outside the output view
// is written.
::testing::AssertionResult run_path(const deconv::Plan &plan, DType t, const std::vector<int64_t> &in_shape,
                                    const std::vector<int64_t> &w_shape, const std::vector<double> &in_values,
                                    const std::vector<double> &w_values, const deconv_ref::Result &ref, Path path,
                                    uint32_t seed) {
    const auto &out_shape = plan.shape().output_shape;
    const bool strided = path == Path::HostStrided || path == Path::DeviceStrided;
    const bool device = path == Path::DeviceDense || path == Path::DeviceStrided;
    std::mt19937 rng(seed);
    auto layout = [&](const std::vector<int64_t> &shape) {
        if (strided) return deconv_test::make_layout(shape, rng, rng() % 2 == 0);
        return deconv_test::dense_layout(shape);
    };
    deconv_test::GpuRunBuffers b =
        deconv_test::gpu_run_buffers(t, in_shape, w_shape, out_shape, in_values, w_values, layout);
    const auto &li = b.li, &lw = b.lw, &lo = b.lo;
    Buffer &in = b.in, &w = b.w, &out = b.out;
    const auto &before = b.before;
    const Memory mem = device ? Memory::CudaDevice : Memory::Host;
    std::optional<DeviceCopy> din, dw, dout;
    const void *in_ptr = in.data(), *w_ptr = w.data();
    void *out_ptr = out.data();
    if (device) {
        din.emplace(in);
        dw.emplace(w);
        dout.emplace(out);
        in_ptr = din->as_pointer();
        w_ptr = dw->as_pointer();
        out_ptr = dout->as_pointer();
    }
    plan.run(deconv::ConstTensorView(in_ptr, t, in_shape, li.strides, mem),
             deconv::ConstTensorView(w_ptr, t, w_shape, lw.strides, mem),
             deconv::TensorView{out_ptr, t, out_shape, lo.strides, mem});
    if (device) dout->download(out);
    return deconv_test::check_gpu_output(path_name(path), t, out, out_shape, lo, before, ref);
}

// One problem on CUDA in both data formats, each through one of the four paths in turn (picked
// by `index`), against the reference; returns the failures, reporting the first few.
int check_both_formats(Op op, DType t, const std::vector<int64_t> &in_shape_ncx, const std::vector<int64_t> &w_shape,
                       const deconv::Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape,
                       const std::vector<double> &x, const std::vector<double> &w, const deconv_ref::Result &ref_ncx,
                       int index, const std::string &what, int already_failed) {
    return deconv_test::check_both_formats(
        attrs, in_shape_ncx, x, ref_ncx, index, what, already_failed,
        [&](const deconv::Attributes &a, const std::vector<int64_t> &in_shape, const std::vector<double> &xin,
            const deconv_ref::Result &ref) {
            const auto plan = deconv::Plan::create(op, t, in_shape, w_shape, a, output_shape, ExecOptions{Device::CUDA, false});
            EXPECT_EQ(plan.device(), Device::CUDA);
            const Path path = static_cast<Path>((index + (a.data_format == DataFormat::NXC)) % 4);
            return run_path(plan, t, in_shape, w_shape, xin, w, ref, path, static_cast<uint32_t>(index));
        });
}

struct GpuShard {
    DType dtype;
    int rank;
};
std::ostream &operator<<(std::ostream &os, const GpuShard &s) {
    return os << deconv::dtype_name(s.dtype) << " rank " << s.rank;
}
std::vector<GpuShard> gpu_shards() {
    std::vector<GpuShard> v;
    for (DType t : kCudaDtypes)
        for (int r = 1; r <= 3; r++) v.push_back({t, r});
    return v;
}
std::string gpu_shard_name(const ::testing::TestParamInfo<GpuShard> &i) {
    return std::string(deconv::dtype_name(i.param.dtype)) + "_rank" + std::to_string(i.param.rank);
}

class CudaGpuBackprop : public ::testing::TestWithParam<GpuShard> {};

// The backprop sweep's problems (stride > kernel: phases without taps; output_shape; auto_pad;
// depthwise; medium rows and channel counts for the register tiles), each in NCX and NXC, through
// the four paths in turn.
TEST_P(CudaGpuBackprop, MatchesReference) {
    SKIP_WITHOUT_GPU();
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv::has_kernel(Op::GroupConvolutionBackpropData, rank, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << deconv::dtype_name(t) << " rank " << rank << " has no CUDA kernel in this build";
    deconv_test::check_backprop_sweep(t, rank, check_both_formats);
}

// Every mapping and register tile of the GPU schedule (gpu_schedule.h), with tails, in NCX and NXC.
TEST_P(CudaGpuBackprop, EveryScheduleMapping) {
    SKIP_WITHOUT_GPU();
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv::has_kernel(Op::GroupConvolutionBackpropData, rank, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << deconv::dtype_name(t) << " rank " << rank << " has no CUDA kernel in this build";
    deconv_test::check_schedule_mappings(t, rank, deconv::tiles::gpu_big_tile_outputs(), check_both_formats);
}

INSTANTIATE_TEST_SUITE_P(Shards, CudaGpuBackprop, ::testing::ValuesIn(gpu_shards()), gpu_shard_name);

// A problem (NCX shapes and values, its reference in NCX) in one data format: the attributes,
// the input's shape and values and the reference in that format.
struct InFormat {
    DataFormat format;
    deconv::Attributes attrs;
    std::vector<int64_t> in_shape;
    std::vector<double> x;
    deconv_ref::Result ref;
};
std::vector<InFormat> in_both_formats(const deconv_ref::Problem &p, const std::vector<double> &x,
                                      const deconv_ref::Result &ref_ncx) {
    std::vector<InFormat> v;
    for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) {
        InFormat c{f, deconv_test::to_lib_attrs(p), deconv_test::shape_in(f, p.input_shape),
                   f == DataFormat::NXC ? deconv_test::ncx_to_nxc(x, p.input_shape) : x,
                   deconv_test::result_in(f, ref_ncx)};
        c.attrs.data_format = f;
        v.push_back(std::move(c));
    }
    return v;
}

// Wide layers: full register tiles and the guarded tails of both thread axes (channels and rows
// not multiples of the block), a phase without taps, on every path.
TEST(CudaGpuBackpropWide, TilesAndTails) {
    SKIP_WITHOUT_GPU();
    const DType t = DType::f32;
    if (!deconv::has_kernel(Op::GroupConvolutionBackpropData, 2, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << "f32 2D has no CUDA kernel in this build";
    // 37 output channels per group, rows of 70; stride 3 with kernel 2: one phase in three has no tap.
    deconv_ref::Problem p = problem(true, {2, 2 * 5, 4, 24}, {2, 5, 37, 2, 2}, {3, 3}, {0, 0},
                                                     {0, 1}, {1, 1}, {0, 0});
    std::mt19937 rng(3);
    const auto x = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
    const auto w = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
    const auto ref_ncx = deconv_ref::compute(p, x, w);
    for (const InFormat &c : in_both_formats(p, x, ref_ncx)) {
        const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, c.in_shape, p.filter_shape, c.attrs,
                                               std::nullopt, ExecOptions{Device::CUDA, false});
        for (Path path : {Path::HostDense, Path::HostStrided, Path::DeviceDense, Path::DeviceStrided})
            EXPECT_TRUE(run_path(plan, t, c.in_shape, p.filter_shape, c.x, w, c.ref, path, 11))
                << deconv::data_format_name(c.format);
    }
}

class CudaGpuForward : public ::testing::TestWithParam<GpuShard> {};

// GroupConvolution-1 on CUDA: random strides, dilations, pads and auto_pad, both layouts, the
// four paths.
TEST_P(CudaGpuForward, MatchesReference) {
    SKIP_WITHOUT_GPU();
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv::has_kernel(Op::GroupConvolution, rank, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << deconv::dtype_name(t) << " rank " << rank << " has no CUDA kernel in this build";
    std::mt19937 rng(1000 + 10 * rank + static_cast<int>(t));
    auto ri = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int failed = 0;
    for (int i = 0; i < 40; i++) {
        deconv_ref::ForwardProblem p;
        const bool wide = i % 5 == 3;
        const int64_t G = ri(1, 3), cin = ri(1, 4), cout = wide ? ri(17, 40) : ri(1, 5), N = ri(1, 2);
        p.input_shape = {N, G * cin};
        p.filter_shape = {G, cout, cin};
        const int mode = static_cast<int>(ri(0, 3));
        p.auto_pad = mode == 0 ? deconv_ref::AutoPad::Explicit
                     : mode == 1 ? deconv_ref::AutoPad::SameUpper
                     : mode == 2 ? deconv_ref::AutoPad::SameLower
                                 : deconv_ref::AutoPad::Valid;
        for (int a = 0; a < rank; a++) {
            const bool inner = a == rank - 1;
            const int64_t K = ri(1, 3), d = ri(1, 2), s = ri(1, 3);
            const int64_t X = (K - 1) * d + 1 + ri(0, inner ? (wide ? 60 : 12) : 4);
            p.input_shape.push_back(X);
            p.filter_shape.push_back(K);
            p.strides.push_back(s);
            p.dilations.push_back(d);
            p.pads_begin.push_back(ri(0, K));
            p.pads_end.push_back(ri(0, K));
        }
        const auto x = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
        const auto w = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
        const auto ref_ncx = deconv_ref::compute_forward(p, x, w);
        failed += check_both_formats(Op::GroupConvolution, t, p.input_shape, p.filter_shape,
                                     deconv_test::to_lib_attrs(p), std::nullopt, x, w, ref_ncx, i,
                                     deconv_ref::describe(p), failed);
    }
    EXPECT_EQ(failed, 0);
}

INSTANTIATE_TEST_SUITE_P(Shards, CudaGpuForward, ::testing::ValuesIn(gpu_shards()), gpu_shard_name);

// A filter packed once by a CUDA plan stays on the GPU: packed from host memory and from device
// memory (strided, so the device-side copy packs it), each serves several runs on device views,
// and the plan's results match the reference in both layouts.
TEST(CudaGpuPlan, PackedFilterStaysOnTheDevice) {
    SKIP_WITHOUT_GPU();
    const DType t = DType::f32;
    if (!deconv::has_kernel(Op::GroupConvolutionBackpropData, 2, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << "f32 2D has no CUDA kernel in this build";
    const deconv_ref::Problem p = problem(true, {1, 2 * 6, 9, 7}, {2, 6, 37, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1},
                                          {0, 0});
    std::mt19937 rng(29);
    const auto x = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
    const auto w = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
    const auto ref_ncx = deconv_ref::compute(p, x, w);
    for (const InFormat &c : in_both_formats(p, x, ref_ncx)) {
        const auto &attrs = c.attrs;
        const auto &in_shape = c.in_shape;
        const auto &xin = c.x;
        const auto &ref = c.ref;
        const DataFormat f = c.format;
        const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, in_shape, p.filter_shape, attrs,
                                               std::nullopt, ExecOptions{Device::CUDA, false});
        Buffer w_host(t, p.filter_shape);
        deconv_test::fill(w_host, w);
        const deconv::PackedFilter from_host = plan.pack_filter(deconv::ConstTensorView(w_host.data(), t, p.filter_shape));
        std::mt19937 lrng(31);
        const deconv_test::StridedLayout lw = deconv_test::make_layout(p.filter_shape, lrng, true);
        Buffer w_strided(t, p.filter_shape, lw.span);
        deconv_test::fill_strided(w_strided, p.filter_shape, lw.strides, w);
        DeviceCopy w_dev(w_strided);
        const deconv::PackedFilter from_device = plan.pack_filter(
            deconv::ConstTensorView(w_dev.as_pointer(), t, p.filter_shape, lw.strides, Memory::CudaDevice));
        EXPECT_GE(from_host.bytes(), static_cast<size_t>(deconv_ref::product(p.filter_shape)) * sizeof(float));
        EXPECT_EQ(from_device.bytes(), from_host.bytes());
        Buffer in(t, in_shape);
        deconv_test::fill(in, xin);
        DeviceCopy in_dev(in);
        for (const deconv::PackedFilter *packed : {&from_host, &from_device, &from_host}) {
            Buffer out(t, plan.shape().output_shape);
            DeviceCopy out_dev(out);
            plan.run(deconv::ConstTensorView(in_dev.as_pointer(), t, in_shape, {}, Memory::CudaDevice), *packed,
                     deconv::TensorView{out_dev.as_pointer(), t, plan.shape().output_shape, {}, Memory::CudaDevice});
            out_dev.download(out);
            EXPECT_TRUE(deconv_test::compare_to_reference(t, deconv_test::read_all(out), ref))
                << deconv::data_format_name(f) << (packed == &from_device ? ", packed from device memory" : "");
        }
    }
}

// One CUDA plan run from several threads at once on different buffers.
TEST(CudaGpuPlan, ConcurrentRuns) {
    SKIP_WITHOUT_GPU();
    const DType t = DType::f32;
    if (!deconv::has_kernel(Op::GroupConvolutionBackpropData, 2, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << "f32 2D has no CUDA kernel in this build";
    const Layer l = small_layer(t);
    const auto ref = deconv_ref::compute(l.p, l.input, l.filter);
    const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, l.p.input_shape, l.p.filter_shape,
                                           deconv_test::to_lib_attrs(l.p), std::nullopt, ExecOptions{Device::CUDA});
    std::atomic<int> bad{0};
    std::mutex m;
    std::string first_error;
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; k++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 20; i++) {
                Buffer in(t, l.p.input_shape), w(t, l.p.filter_shape), out(t, ref.shape.output_shape);
                deconv_test::fill(in, l.input);
                deconv_test::fill(w, l.filter);
                try {  // an exception must not leave a thread (it would end the whole test binary)
                    plan.run(in.data(), w.data(), out.data());
                    if (!deconv_test::compare_to_reference(t, deconv_test::read_all(out), ref)) bad++;
                } catch (const std::exception &e) {
                    bad++;
                    std::lock_guard<std::mutex> lock(m);
                    if (first_error.empty()) first_error = e.what();
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(bad.load(), 0) << first_error;
}

// CudaBuffer: a round trip through the GPU, and copies larger than the buffer refused.
TEST(CudaGpuBuffer, RoundTripAndOversizedCopies) {
    SKIP_WITHOUT_GPU();
    std::vector<uint8_t> src(1 << 20), back(1 << 20, 0);
    for (size_t i = 0; i < src.size(); i++) src[i] = static_cast<uint8_t>(i * 131 + 7);
    deconv::CudaBuffer b(src.size());
    EXPECT_EQ(b.size(), src.size());
    EXPECT_NE(b.data(), nullptr);
    b.upload(src.data(), src.size());
    b.download(back.data(), back.size());
    EXPECT_EQ(back, src);
    try {
        b.upload(src.data(), src.size() + 1);
        FAIL() << "an oversized upload was accepted";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("1048577 bytes do not fit a buffer of 1048576"));
    }
    deconv::CudaBuffer moved(std::move(b));
    EXPECT_EQ(moved.size(), src.size());
    EXPECT_EQ(b.data(), nullptr);
}

// A layer beyond the kernels' grid (groups x batch over 65535 blocks on grid z) is refused
// before it runs, naming the limit; with the fallback it runs on the CPU and says why.
TEST(CudaGpuPlan, GridLimitRefusedNamingIt) {
    SKIP_WITHOUT_GPU();
    const DType t = DType::f32;
    if (!deconv::has_kernel(Op::GroupConvolutionBackpropData, 1, t, DataFormat::NCX, Device::CUDA))
        GTEST_SKIP() << "f32 1D has no CUDA kernel in this build";
    const std::vector<int64_t> in_shape = {2, 40000, 3}, w_shape = {40000, 1, 1, 2};
    deconv::Attributes attrs;
    attrs.strides = {2};
    attrs.pads_begin = attrs.pads_end = {0};
    attrs.dilations = {1};
    try {
        deconv::Plan::create(Op::GroupConvolutionBackpropData, t, in_shape, w_shape, attrs, std::nullopt,
                             ExecOptions{Device::CUDA, false});
        FAIL() << "a plan beyond the CUDA grid was created";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::TooLarge);
        EXPECT_THAT(e.what(), HasSubstr("groups 40000 times batch 2 exceeds the CUDA kernels' grid z"));
    }
    const auto plan = deconv::Plan::create(Op::GroupConvolutionBackpropData, t, in_shape, w_shape, attrs,
                                           std::nullopt, ExecOptions{Device::CUDA, true});
    EXPECT_EQ(plan.device(), Device::CPU);
    EXPECT_THAT(plan.fallback_reason(), HasSubstr("grid z"));
}

}  // namespace
