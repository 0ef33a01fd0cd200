#include "cpu/output_stage.h"

namespace deconv {
namespace detail {

void OutputStage::write(const uint8_t *acc_data, const std::vector<int64_t> &acc_st, const std::vector<int64_t> &shape,
                        const std::vector<int64_t> &origin) const {
    int64_t offset = 0;
    for (size_t a = 0; a < origin.size(); a++) offset += origin[a] * dst_st[a];
    apply_epilogue(*values, acc, acc_data, acc_st, dst + offset * (int64_t)dtype_size(values->types.dst), dst_st, shape,
                   c_axis, false);
}

}  // namespace detail
}  // namespace deconv
