// Slices of a CPU run (cpu_executor.cpp): how a layer's run splits into tasks that each copy
// their input and write their output while in the core's cache, and the loop that runs them.
#pragma once

#include "kernels/cpu_thread_pool.h"
#include "plan/plan_impl.h"

#include "HalideRuntime.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>

namespace deconv {
namespace detail {

// How a layer runs in slices: `tasks` == 0, whole; else `tasks` slices over `units`, (image,
// group) pairs or, when `images`, whole images, or when `slab_rows` > 0, (image, slab) pairs of
// `slab_rows` rows of the outermost output axis.
struct Slicing {
    int64_t tasks = 0, units = 0;
    bool images = false;
    int64_t slab_rows = 0;
};

// The slices of a run of `p` (policy group_slices and row_slabs pin them): `copies_input`, the run
// copies its input; `dense_output`, it computes into a dense buffer first; the packed filter's
// bytes and the element size.
Slicing slicing(const Plan::Impl &p, bool copies_input, bool dense_output, size_t filter_bytes, size_t elem);

// Runs fn(begin, count) over `units` split into `tasks` contiguous ranges, on the thread pool.
// The first exception a task throws is rethrown here once every task has finished.
template <typename Fn>
void run_slices(int64_t tasks, int64_t units, const Fn &fn) {
    struct Closure {
        const Fn *fn;
        int64_t tasks, units;
        std::mutex lock;
        std::exception_ptr error;
    } c{&fn, tasks, units, {}, nullptr};
    auto task = [](void *, int i, uint8_t *closure) -> int {
        Closure &c = *reinterpret_cast<Closure *>(closure);
        const int64_t begin = i * c.units / c.tasks, end = (i + 1) * c.units / c.tasks;
        try {
            (*c.fn)(begin, end - begin);
        } catch (...) {
            const std::lock_guard<std::mutex> hold(c.lock);
            if (!c.error) c.error = std::current_exception();
        }
        return 0;
    };
    const StaticTasks each_thread_its_slices;
    halide_do_par_for(nullptr, task, 0, (int)tasks, reinterpret_cast<uint8_t *>(&c));
    if (c.error) std::rethrow_exception(c.error);
}

}  // namespace detail
}  // namespace deconv
