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

std::vector<DType> built_dtypes() {
    std::vector<DType> out;
    for (const detail::KernelEntry *k = detail::kernels_begin(); k != detail::kernels_end(); ++k) {
        bool seen = false;
        for (DType t : out) seen = seen || t == k->dtype;
        if (!seen) out.push_back(k->dtype);
    }
    return out;
}

std::vector<int> built_ranks() {
    std::vector<int> out;
    for (const detail::KernelEntry *k = detail::kernels_begin(); k != detail::kernels_end(); ++k) {
        bool seen = false;
        for (int r : out) seen = seen || r == k->rank;
        if (!seen) out.push_back(k->rank);
    }
    return out;
}

}  // namespace deconv
