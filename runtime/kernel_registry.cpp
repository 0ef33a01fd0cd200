#include "kernel_registry.h"

#include <cstring>

// Generated: includes every kernel header and defines kKernelTable[].
#include "kernel_table.inc"

namespace deconv {
namespace detail {

const KernelEntry *kernels_begin() { return kKernelTable; }
const KernelEntry *kernels_end() { return kKernelTable + sizeof(kKernelTable) / sizeof(kKernelTable[0]); }

const KernelEntry *find_kernel(const char *op, int rank, DType dtype) {
    for (const KernelEntry *k = kernels_begin(); k != kernels_end(); ++k) {
        if (k->rank == rank && k->dtype == dtype && std::strcmp(k->op, op) == 0) return k;
    }
    return nullptr;
}

}  // namespace detail

namespace {
// The distinct values of one field over the kernel table, in table order.
template <typename T, typename Field>
std::vector<T> distinct(Field field) {
    std::vector<T> out;
    for (const detail::KernelEntry *k = detail::kernels_begin(); k != detail::kernels_end(); ++k) {
        const T v = field(*k);
        bool seen = false;
        for (const T &o : out) seen = seen || o == v;
        if (!seen) out.push_back(v);
    }
    return out;
}
}  // namespace

std::vector<DType> built_dtypes() {
    return distinct<DType>([](const detail::KernelEntry &k) { return k.dtype; });
}

std::vector<int> built_ranks() {
    return distinct<int>([](const detail::KernelEntry &k) { return k.rank; });
}

}  // namespace deconv
