// The thread pool the CPU kernels' parallel loops run on (Halide's halide_do_par_for, replaced
// through halide_set_custom_do_par_for).
//
// Why not Halide's own pool: its idle workers sleep on a condition variable at once, and on a
// virtual machine a sleeping vCPU takes longer to wake than a small layer takes to run. The
// suite's small layers (grouped32_up, centernet_dla_dw: 0.1-0.2 ms, two or more kernel calls
// per run with serial copies between them) then ran at one thread's speed whenever the second
// worker had gone to sleep, which was most runs. Here idle workers spin for a while (as
// OpenMP's do by default) before they sleep, so back-to-back kernel calls find them awake.
//
// Tasks are dealt out statically first: each participant (the caller is participant 0) runs its
// own contiguous range of the loop's tasks, then takes what is left of the others' ranges. So a
// thread keeps working on the same part of the tensors in every call and run: its output rows and
// input copy stay in its own core's caches. Handing tasks out one at a time from one counter (as
// Halide's pool does) moved them between cores run after run; on an AMD EPYC VM whose two vCPUs
// share no cache, centernet_dla_dw ran 1.8x slower on two threads than on one (0.38 ms against
// 0.21), and 0.12 ms with the static ranges.
//
// Semantics kept from Halide's pool: the calling thread takes part; a parallel loop inside a
// task (nested) runs serially on that thread, and a loop of fewer tasks than threads runs its
// tasks in turn, each free to use the pool for the loops inside; a task's non-zero result is the loop's result.
// Added: a coarse loop (fewer than four tasks per thread) whose tasks were seen to start loops of
// many runs its tasks in turn too, so that the inner loop is what the threads share (see
// StaticTasks below).
// Loops started on several threads at once: the first takes the workers, the others run
// serially on their own threads (the cores are busy anyway).
#pragma once

namespace deconv {
namespace detail {

// Installs the pool as Halide's do_par_for (idempotent, thread-safe), unless DECONV_SPIN_US=off
// keeps Halide's pool.
void install_cpu_thread_pool();

// Threads of a parallel loop (the caller included): set_cpu_threads' value, else HL_NUM_THREADS,
// else the hardware's.
int pool_threads();
void set_pool_threads(int threads);

// While one lives, the parallel loops this thread starts run on it alone (as nested loops do).
// For layers so small that handing half of them to another core costs more than it saves.
class SerialLoops {
public:
    explicit SerialLoops(bool serial);
    ~SerialLoops();
    SerialLoops(const SerialLoops &) = delete;
    SerialLoops &operator=(const SerialLoops &) = delete;

private:
    bool saved_;
};

// While one lives, the loops this thread starts deal out their tasks, one contiguous range per
// thread, however few they are: slices of a layer that each thread keeps in its own core's cache.
// The loops those tasks start are the pool's as usual, on this thread too.
// (Otherwise a loop of fewer than four tasks per thread whose tasks start loops of many tasks
// runs its tasks in turn, each dealing out the inner loop's: the pool learns which loops nest
// from earlier runs of the same kernels.)
class StaticTasks {
public:
    StaticTasks();
    ~StaticTasks();
    StaticTasks(const StaticTasks &) = delete;
    StaticTasks &operator=(const StaticTasks &) = delete;

private:
    bool saved_;
};

}  // namespace detail
}  // namespace deconv
