// Parallel tasks of the CPU schedules: the outermost output row axis is split into tasks of
// several rows, sized at run time so that one kernel call makes about kTasksPerCall tasks over
// rows x groups x batch (the groups and batch loops are parallel too, nested). One task per row
// made depthwise layers pay Halide's task overhead thousands of times per call (centernet_dla_dw:
// 64 groups x 64 rows per phase, 64 outputs per task).
#pragma once

#include "Halide.h"

namespace deconv {
namespace gen {

// Enough tasks to balance a few cores while each stays large enough to amortise its dispatch.
constexpr int kTasksPerCall = 32;

// `row`: the outermost row loop of `s`, `rows`/`groups`/`batch`: the extents of its output.
// Returns the loops it made: the parallel one over tasks and the rows inside a task.
struct RowTasks {
    Halide::Var task, in_task;
};

inline RowTasks parallel_row_tasks(Halide::Stage s, const Halide::Var &row, const Halide::Expr &rows,
                                   const Halide::Expr &groups, const Halide::Expr &batch) {
    using namespace Halide;
    Var task(row.name() + "_task"), in_task(row.name() + "_in_task");
    const Expr per_task = clamp(rows * groups * batch / kTasksPerCall, 1, max(rows, 1));
    s.split(row, task, in_task, per_task, TailStrategy::GuardWithIf).parallel(task);
    return {task, in_task};
}

}  // namespace gen
}  // namespace deconv
