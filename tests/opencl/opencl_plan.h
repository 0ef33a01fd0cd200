// A GPU plan on the OpenCL test kernels: the fields of Plan::Impl that the GPU executor reads,
// resolved as Plan::create resolves them for Device::CUDA (runtime/api/plan.cpp), with the OpenCL
// kernel of the key the CUDA plan looks up. Plan::create itself cannot make it: it asks the CUDA
// driver, which a machine without a GPU lacks.
#pragma once

#include "plan/plan_impl.h"

#include <memory>
#include <optional>
#include <vector>

namespace deconv_ocl {

struct OpenClPlan {
    std::shared_ptr<deconv::Plan::Impl> impl;
    const deconv::detail::KernelEntry *kernel = nullptr;
};

// Throws deconv::Error as Plan::create does (invalid layer, grid too large), and Unsupported when
// the OpenCL test matrix (DECONV_OPENCL_TEST_KERNELS) has no kernel for the layer.
OpenClPlan make_opencl_plan(deconv::Op op, deconv::DType dtype, const std::vector<int64_t> &input_shape,
                            const std::vector<int64_t> &filter_shape, const deconv::Attributes &attrs,
                            const std::optional<std::vector<int64_t>> &output_shape);

}  // namespace deconv_ocl
