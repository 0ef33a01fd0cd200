#include "kernel_registry.h"

#include <cstring>

// Generated: includes every kernel header and defines kKernelTable[].
#include "kernel_table.inc"

namespace deconv {
namespace detail {

const KernelEntry *kernels_begin() { return kKernelTable; }
const KernelEntry *kernels_end() { return kKernelTable + sizeof(kKernelTable) / sizeof(kKernelTable[0]); }

const KernelEntry *find_kernel(const char *op, int rank, DType dtype, Device device) {
    for (const KernelEntry *k = kernels_begin(); k != kernels_end(); ++k) {
        if (k->rank == rank && k->dtype == dtype && k->device == device && std::strcmp(k->op, op) == 0) return k;
    }
    return nullptr;
}

}  // namespace detail

namespace {
// The distinct values of one field over the kernel table, in table order.
template <typename T, typename Field>
std::vector<T> distinct(Device device, Field field) {
    std::vector<T> out;
    for (const detail::KernelEntry *k = detail::kernels_begin(); k != detail::kernels_end(); ++k) {
        if (k->device != device) continue;
        const T v = field(*k);
        bool seen = false;
        for (const T &o : out) seen = seen || o == v;
        if (!seen) out.push_back(v);
    }
    return out;
}
}  // namespace

std::vector<DType> built_dtypes(Device device) {
    return distinct<DType>(device, [](const detail::KernelEntry &k) { return k.dtype; });
}

std::vector<int> built_ranks(Device device) {
    return distinct<int>(device, [](const detail::KernelEntry &k) { return k.rank; });
}

bool has_kernel(Op op, int rank, DType dtype, DataFormat format, Device device) {
    const bool nxc = format == DataFormat::NXC;
    const char *name = op == Op::GroupConvolution ? (nxc ? "group_conv_nxc" : "group_conv")
                                                   : (nxc ? "phase_conv_nxc" : "phase_conv");
    return detail::find_kernel(name, rank, dtype, device) != nullptr;
}

}  // namespace deconv
