// The epilogue in the kernels' store (generators/conv_stages.h, StoreEpilogue): a float layer's
// bias and a relu, clip or bounded_relu list folded into one slot, applied by every kernel of
// the phase-kernel and batch-rows executors as it stores, and by the fill of the phases that no
// tap reaches.
//
// A plan with an epilogue (api/epilogue_plan.cpp) offers it to the plain plan it runs through a
// scope on the calling thread; the executor that can store it takes it at its entry and passes
// it down explicitly. A run whose executor did not take it gets the epilogue pass instead
// (cpu/epilogue_pass.h), so that every implementation stays correct without knowing of it. A plan
// whose epilogue the store cannot run offers the pass as an output stage instead
// (cpu/output_stage.h), taken the same way.
#pragma once

#include "cpu/output_stage.h"
#include "deconv/deconv.h"
#include "kernels/kernel_epilogue.h"

#include <vector>

namespace deconv {
namespace detail {

// The slot a post-op list folds into (kernels/kernel_epilogue.h): a relu of slope alpha <= 1, and
// bounded_relus and clips from 0, after no relu or one of slope 0, which bound it by hi; false for
// any other list (then the pass runs it).
bool fold_store_post_ops(const std::vector<PostOp> &ops, float &alpha, float &hi);

// Offers `e`, or the output stage `s`, to the plain plan run inside the scope, on this thread.
class FusedEpilogueScope {
public:
    explicit FusedEpilogueScope(const KernelEpilogue *e, const OutputStage *s = nullptr);
    ~FusedEpilogueScope();
    FusedEpilogueScope(const FusedEpilogueScope &) = delete;
    FusedEpilogueScope &operator=(const FusedEpilogueScope &) = delete;
    // Whether an executor took the epilogue (and stored it everywhere it wrote).
    bool taken() const { return taken_; }

private:
    const KernelEpilogue *prev_e_;
    const OutputStage *prev_s_;
    bool *prev_taken_;
    bool taken_ = false;
};

// The epilogue offered to this thread's run, marked taken; null when none is.
const KernelEpilogue *take_fused_epilogue();

// The output stage offered to this thread's run into the view `output` with strides `strides`
// (null when none is, or for another view), left offered: an executor that can compute in slices
// of its own takes it.
const OutputStage *offered_output_stage(const void *output, const std::vector<int64_t> &strides);
void take_output_stage();

// What an executor passes down to its kernel calls: the run's epilogue (null: none) and the
// group of the layer where the calls' output views start.
struct CallEpilogue {
    const KernelEpilogue *e = nullptr;
    int64_t g0 = 0;
};

}  // namespace detail
}  // namespace deconv
