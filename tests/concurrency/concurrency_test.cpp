// Stress test of the library's thread-safety contract (deconv.h: "every function may be called
// from several threads at once; a Plan is immutable after creation and may be run concurrently
// on different buffers"): many threads run many plans at once - dense buffers, strided views
// and packed filters, plans created on the spot and shared ones - while other threads resize
// the CPU pool (set_cpu_threads) and ask for CUDA (the availability probe). Every result must
// equal, bit for bit, the one the same plan gave on one thread before the storm: the kernels'
// sums do not depend on the thread count, so any difference is a race. Built under TSan
// (cmake -DDECONV_SANITIZE=thread) it also lets ThreadSanitizer watch every access.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "deconv/deconv.h"

namespace {

using deconv::DType;
using deconv::Op;
using Dims = std::vector<int64_t>;

struct Layer {
    Op op;
    DType dtype;
    Dims input, filter;
    deconv::Attributes attrs;
};

// Small layers across the ops, ranks, data formats and the kernel routes they pick (few and
// many output channels, strides 1, 2 and 3, pads, dilations, output padding).
std::vector<Layer> layers() {
    std::vector<Layer> out;
    for (DType t : {DType::f32, DType::f64, DType::f16, DType::i8}) {
        deconv::Attributes s2;
        s2.strides = {2, 2};
        s2.pads_begin = {1, 1};
        s2.pads_end = {1, 0};
        out.push_back({Op::GroupConvolutionBackpropData, t, {1, 8, 9, 7}, {4, 2, 3, 3, 3}, s2});
        out.push_back({Op::GroupConvolutionBackpropData, t, {2, 24, 5, 6}, {1, 24, 16, 3, 3}, s2});
        deconv::Attributes nxc = s2;
        nxc.data_format = deconv::DataFormat::NXC;
        out.push_back({Op::GroupConvolutionBackpropData, t, {1, 6, 5, 8}, {2, 4, 4, 2, 2}, nxc});
        deconv::Attributes d1;
        d1.strides = {3};
        d1.dilations = {2};
        d1.output_padding = {1};
        out.push_back({Op::ConvolutionBackpropData, t, {1, 5, 11}, {5, 3, 3}, d1});
        deconv::Attributes d3;
        d3.strides = {2, 1, 2};
        out.push_back({Op::GroupConvolutionBackpropData, t, {1, 4, 3, 4, 3}, {2, 2, 2, 2, 3, 2}, d3});
        deconv::Attributes fwd;
        fwd.strides = {2, 2};
        fwd.pads_begin = {1, 1};
        fwd.pads_end = {1, 1};
        out.push_back({Op::GroupConvolution, t, {1, 6, 9, 9}, {3, 4, 2, 3, 3}, fwd});
        deconv::Attributes cbwd;
        cbwd.strides = {2, 2};
        cbwd.groups = 2;
        if (t == DType::f32 || t == DType::f16)  // oneDNN Graph's dtypes for the op
            out.push_back({Op::ConvolutionBackwardData, t, {1, 5, 5, 4}, {3, 3, 3, 4}, cbwd});
    }
    return out;
}

int64_t count(const Dims &d) {
    int64_t n = 1;
    for (int64_t v : d) n *= v;
    return n;
}

// Deterministic small integers, exact in every dtype (so every dtype's sums are exact too).
std::vector<uint8_t> data(DType t, int64_t n, int seed) {
    const size_t elem = deconv::dtype_size(t);
    std::vector<uint8_t> b(size_t(n) * elem);
    for (int64_t i = 0; i < n; i++) {
        const int v = int((i * 7 + seed * 13) % 5) - 2;
        switch (t) {
        case DType::f32: { const float f = float(v); std::memcpy(&b[i * elem], &f, elem); break; }
        case DType::f64: { const double f = double(v); std::memcpy(&b[i * elem], &f, elem); break; }
        case DType::f16: { const uint16_t h = v == 0 ? 0 : uint16_t((v < 0 ? 0x8000 : 0) | (std::abs(v) == 1 ? 0x3C00 : 0x4000)); std::memcpy(&b[i * elem], &h, elem); break; }
        case DType::bf16: { const uint16_t h = v == 0 ? 0 : uint16_t((v < 0 ? 0x8000 : 0) | (std::abs(v) == 1 ? 0x3F80 : 0x4000)); std::memcpy(&b[i * elem], &h, elem); break; }
        case DType::i8: case DType::u8: b[i] = uint8_t(t == DType::u8 ? v + 2 : v); break;
        case DType::i32: { const int32_t x = v; std::memcpy(&b[i * elem], &x, elem); break; }
        }
    }
    return b;
}

// A plan with its data and the output it gave on one thread.
struct Case {
    Layer layer;
    std::shared_ptr<deconv::Plan> plan;
    deconv::PackedFilter packed;
    std::vector<uint8_t> x, w, expected;
};

std::vector<Case> built_cases() {
    std::vector<Case> cases;
    deconv::set_cpu_threads(1);
    for (const Layer &l : layers()) {
        Case c;
        c.layer = l;
        try {
            c.plan = std::make_shared<deconv::Plan>(deconv::Plan::create(l.op, l.dtype, l.input, l.filter, l.attrs));
        } catch (const deconv::Error &e) {
            if (e.kind() == deconv::ErrorKind::Unsupported) continue;  // a dtype or rank not built
            throw;
        }
        c.x = data(l.dtype, count(l.input), 1);
        c.w = data(l.dtype, count(l.filter), 2);
        c.expected.assign(size_t(count(c.plan->shape().output_shape)) * deconv::dtype_size(l.dtype), 0);
        c.plan->run(c.x.data(), c.w.data(), c.expected.data());
        c.packed = c.plan->pack_filter(deconv::ConstTensorView(c.w.data(), l.dtype, l.filter));
        cases.push_back(std::move(c));
    }
    deconv::set_cpu_threads(0);
    return cases;
}

// One run of case `c` the way `how` picks: 0 dense buffers, 1 views with the packed filter,
// 2 a plan of its own created here, 3 the one-shot free function. Returns "" or what differed.
std::string run_once(const Case &c, int how) {
    const Layer &l = c.layer;
    const Dims &out_shape = c.plan->shape().output_shape;
    std::vector<uint8_t> y(c.expected.size(), 0x5A);
    switch (how) {
    case 0: c.plan->run(c.x.data(), c.w.data(), y.data()); break;
    case 1:
        c.plan->run(deconv::ConstTensorView(c.x.data(), l.dtype, l.input), c.packed,
                    deconv::TensorView{y.data(), l.dtype, out_shape, {}});
        break;
    case 2: deconv::Plan::create(l.op, l.dtype, l.input, l.filter, l.attrs).run(c.x.data(), c.w.data(), y.data()); break;
    default: {
        const deconv::ConstTensorView x(c.x.data(), l.dtype, l.input), w(c.w.data(), l.dtype, l.filter);
        const deconv::TensorView out{y.data(), l.dtype, out_shape, {}};
        switch (l.op) {
        case Op::GroupConvolutionBackpropData: deconv::group_convolution_backprop_data(x, w, out, l.attrs); break;
        case Op::ConvolutionBackpropData: deconv::convolution_backprop_data(x, w, out, l.attrs); break;
        case Op::GroupConvolution: deconv::group_convolution(x, w, out, l.attrs); break;
        case Op::ConvolutionBackwardData: deconv::convolution_backward_data(x, w, out, l.attrs); break;
        }
    }
    }
    if (y != c.expected)
        return std::string(deconv::op_name(l.op)) + " " + deconv::dtype_name(l.dtype) + " run " +
               std::to_string(how) + ": the output differs from the single-threaded one";
    return "";
}

TEST(Concurrency, ManyThreadsOnManyPlansGiveSingleThreadedBits) {
    const std::vector<Case> cases = built_cases();
    if (cases.empty()) GTEST_SKIP() << "no kernel of this build serves the layers";
    constexpr int kThreads = 12, kRounds = 20;
    std::atomic<bool> done{false};
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> workers;
    for (int th = 0; th < kThreads; th++)
        workers.emplace_back([&, th] {
            try {
                for (int r = 0; r < kRounds && errors[th].empty(); r++)
                    for (size_t i = 0; i < cases.size() && errors[th].empty(); i++)
                        errors[th] = run_once(cases[(i + size_t(th)) % cases.size()], (r + th) % 4);
            } catch (const std::exception &e) {
                errors[th] = e.what();
            }
        });
    // The pool resized under the runs, and the CUDA probe asked from several threads.
    std::thread resizer([&] {
        for (int n = 0; !done; n++) {
            deconv::set_cpu_threads(1 + n % 4);
            std::this_thread::yield();
        }
    });
    std::vector<std::thread> probes;
    for (int i = 0; i < 2; i++)
        probes.emplace_back([&] {
            while (!done) {
                if (deconv::cuda_available() != deconv::cuda_unavailable_reason().empty()) {
                    errors[0] = "cuda_available() and cuda_unavailable_reason() disagree";
                    return;
                }
                std::this_thread::yield();
            }
        });
    for (auto &t : workers) t.join();
    done = true;
    resizer.join();
    for (auto &t : probes) t.join();
    deconv::set_cpu_threads(0);
    for (int th = 0; th < kThreads; th++) EXPECT_EQ(errors[th], "") << "thread " << th;
}

}  // namespace
