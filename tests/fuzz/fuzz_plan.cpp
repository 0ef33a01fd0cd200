// libFuzzer target: infer_shape and Plan::create over arbitrary shapes and attributes: every
// op, dtype, data format and weights format, ranks 0 to 4, dims and attribute lists mostly of
// the right length and small but also empty, of another length, zero, negative or huge (the
// overflow checks). The only failure allowed is a deconv::Error. infer_shape and a created plan
// must agree on the output shape, and a created plan small enough to run here is run, with the
// filter as given and packed (the two must agree bit for bit), so the sanitizers see its
// kernels' arguments, scratch buffers and copies.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "deconv/deconv.h"

namespace {

// A plan runs when each tensor has at most this many elements and its kernels at most this
// many multiply-adds: enough for every kernel path on a few channels and rows, small enough for
// thousands of runs a second.
constexpr uint64_t kRunElements = uint64_t(1) << 14;
constexpr int64_t kRunMacs = int64_t(1) << 20;
// Plan::create is only asked for layers whose tensors hold at most this many elements each
// (1 GiB of f32), whose filter dims and strides are at most kCreateExtent: its phase
// decomposition (runtime/layer/phase_decomposition.cpp) makes one phase per stride residue and walks
// every tap, so a filter of 2^30 taps along one axis (800 GB, a tensor no caller can hold) and
// a stride of 2^23 on a 2-pixel input (8 million phases, most of them empty) each kept creation
// busy for over a minute. Larger layers still go through infer_shape, whose overflow checks
// they are for.
constexpr uint64_t kCreateElements = uint64_t(1) << 28;
constexpr int64_t kCreateExtent = int64_t(1) << 16;

using Dims = std::vector<int64_t>;

// Mostly 0..9; sometimes negative, a power of two up to 2^62, or any 64-bit value.
int64_t fuzz_dim(FuzzedDataProvider &in) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return in.ConsumeIntegral<int64_t>();
    case 1: return -in.ConsumeIntegralInRange<int64_t>(1, 3);
    case 2: return int64_t(1) << in.ConsumeIntegralInRange<int>(16, 62);
    default: return in.ConsumeIntegralInRange<int64_t>(0, 9);
    }
}

// `n` dims, or now and then one more or one fewer.
Dims fuzz_dims(FuzzedDataProvider &in, size_t n) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: n = n + 1; break;
    case 1: n = n > 0 ? n - 1 : 0; break;
    default: break;
    }
    Dims d(n);
    for (int64_t &v : d) v = fuzz_dim(in);
    return d;
}

// An attribute list: empty (the spec's default) or of the spatial rank's length (or not).
Dims fuzz_attr(FuzzedDataProvider &in, size_t rank) {
    if (in.ConsumeBool()) return {};
    return fuzz_dims(in, rank);
}

template <typename T>
std::optional<T> maybe(FuzzedDataProvider &in, T value) {
    return in.ConsumeBool() ? std::optional<T>(value) : std::nullopt;
}

uint64_t elements(const Dims &shape) {
    uint64_t n = 1;
    for (int64_t v : shape) {
        if (v < 0 || __builtin_mul_overflow(n, uint64_t(v), &n)) return UINT64_MAX;
    }
    return n;
}

std::vector<uint8_t> filled(uint64_t count, size_t elem, uint8_t seed) {
    std::vector<uint8_t> b(count * elem);
    for (size_t i = 0; i < b.size(); i++) b[i] = uint8_t(seed + i * 37);
    return b;
}

void run_small_plan(const deconv::Plan &plan, deconv::DType dtype, const Dims &input_shape,
                    const Dims &filter_shape) {
    const Dims &output_shape = plan.shape().output_shape;
    const uint64_t xn = elements(input_shape), wn = elements(filter_shape), yn = elements(output_shape);
    if (xn > kRunElements || wn > kRunElements || yn > kRunElements || plan.macs() > kRunMacs) return;
    const size_t elem = deconv::dtype_size(dtype);
    const std::vector<uint8_t> x = filled(xn, elem, 1), w = filled(wn, elem, 2);
    std::vector<uint8_t> y(yn * elem, 0xAB), y_packed(yn * elem, 0xCD);
    plan.run(x.data(), w.data(), y.data());
    const deconv::PackedFilter packed = plan.pack_filter(deconv::ConstTensorView(w.data(), dtype, filter_shape));
    plan.run(deconv::ConstTensorView(x.data(), dtype, input_shape), packed,
             deconv::TensorView{y_packed.data(), dtype, output_shape, {}});
    if (y != y_packed) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    using deconv::Op;
    const Op op = in.PickValueInArray({Op::GroupConvolutionBackpropData, Op::ConvolutionBackpropData,
                                       Op::GroupConvolution, Op::ConvolutionBackwardData});
    using deconv::DType;
    const DType dtype = in.PickValueInArray({DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8,
                                             DType::u8, DType::i32});
    const size_t rank = in.ConsumeIntegralInRange<size_t>(0, 4);  // 1..3 are valid
    const bool grouped_filter = op == Op::GroupConvolutionBackpropData || op == Op::GroupConvolution;
    const Dims input_shape = fuzz_dims(in, rank + 2);
    const Dims filter_shape = fuzz_dims(in, rank + (grouped_filter ? 3 : 2));

    deconv::Attributes attrs;
    attrs.strides = fuzz_attr(in, rank);
    attrs.pads_begin = fuzz_attr(in, rank);
    attrs.pads_end = fuzz_attr(in, rank);
    attrs.dilations = fuzz_attr(in, rank);
    attrs.output_padding = fuzz_attr(in, rank);
    using deconv::AutoPad;
    attrs.auto_pad = in.PickValueInArray({AutoPad::Explicit, AutoPad::SameUpper, AutoPad::SameLower, AutoPad::Valid});
    attrs.data_format = maybe(in, in.PickValueInArray({deconv::DataFormat::NCX, deconv::DataFormat::NXC}));
    attrs.groups = maybe(in, fuzz_dim(in));
    attrs.weights_format = maybe(in, in.PickValueInArray({deconv::WeightsFormat::OIX, deconv::WeightsFormat::XIO}));
    if (in.ConsumeBool()) attrs.dst_shape = fuzz_dims(in, rank + 2);
    std::optional<Dims> output_shape;
    if (in.ConsumeBool()) output_shape = fuzz_dims(in, op == Op::ConvolutionBackwardData ? rank + 2 : rank);

    std::optional<deconv::ShapeInfo> info;
    try {
        info = deconv::infer_shape(op, input_shape, filter_shape, attrs, output_shape);
    } catch (const deconv::Error &) {
    }
    if (elements(input_shape) > kCreateElements || elements(filter_shape) > kCreateElements ||
        (info && elements(info->output_shape) > kCreateElements))
        return 0;
    for (const Dims *extents : {&filter_shape, static_cast<const Dims *>(&attrs.strides)})
        for (int64_t v : *extents)
            if (v > kCreateExtent) return 0;
    try {
        const deconv::Plan plan = deconv::Plan::create(op, dtype, input_shape, filter_shape, attrs, output_shape);
        // A plan exists only for a layer shape inference accepts, with the same output.
        if (!info || plan.shape().output_shape != info->output_shape) std::abort();
        run_small_plan(plan, dtype, input_shape, filter_shape);
    } catch (const deconv::Error &) {
    }
    return 0;
}
