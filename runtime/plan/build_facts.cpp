// What this build runs on this CPU, as the public API says it (deconv.h: built_dtypes,
// built_ranks, has_kernel): the kernel tables of the plans' default CPU variant (policy.h).
#include "deconv/deconv.h"
#include "kernels/kernel_registry.h"

#include <algorithm>
#include <string>
#include <vector>

namespace deconv {

namespace {
// The distinct values of one field over the kernel matrix (DECONV_DTYPES x DECONV_RANKS), in
// table order. Generic kernels serve layers of other kinds (the quantized kernels are filed
// under u8 whatever the matrix holds), so they say nothing of the plain dtypes.
template <typename T, typename Field>
std::vector<T> distinct(Device device, Field field) {
    std::vector<T> out;
    for (const detail::KernelEntry &k : detail::kernels(cpu_variant())) {
        if (k.key.device != device || k.key.family == detail::KernelFamily::Generic) continue;
        const T v = field(k);
        bool seen = false;
        for (const T &o : out) seen = seen || o == v;
        if (!seen) out.push_back(v);
    }
    return out;
}
}  // namespace

std::vector<DType> built_dtypes(Device device) {
    std::vector<DType> out = distinct<DType>(device, [](const detail::KernelEntry &k) { return k.key.dtype; });
    if (device != Device::CPU) return out;
    // Narrow dtypes of the matrix without kernels of their own run on their wider dtype's.
    const auto has = [&](DType t) { return std::find(out.begin(), out.end(), t) != out.end(); };
    for (DType t : detail::configured_dtypes()) {
        if (detail::configured_narrow(t) && !has(t) && has(detail::wider_dtype(t))) out.push_back(t);
    }
    return out;
}

std::vector<int> built_ranks(Device device) {
    return distinct<int>(device, [](const detail::KernelEntry &k) { return k.key.rank; });
}

bool has_kernel(Op op, int rank, DType dtype, DataFormat format, Device device) {
    detail::KernelKey key;
    key.family = op == Op::GroupConvolution ? detail::KernelFamily::GroupConv : detail::KernelFamily::Phase;
    key.rank = rank;
    key.dtype = dtype;
    key.device = device;
    key.layout = format;
    // The kernel each op runs first: channels vectorized under NXC (and for the forward op).
    key.channels = format == DataFormat::NXC || op == Op::GroupConvolution;
    if (device == Device::CUDA) key.channels = format == DataFormat::NXC;
    const std::string variant = cpu_variant();
    return detail::find_kernel(key, variant) != nullptr || detail::runs_on_wider_kernel(key, variant);
}

}  // namespace deconv
