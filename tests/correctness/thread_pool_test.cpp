// The CPU kernels' thread pool (runtime/kernels/cpu_thread_pool.cpp), through the entry point the
// kernels call (halide_do_par_for) and through layers run at several thread counts: every task
// runs exactly once, nested and concurrent loops, a failing task's result, set_cpu_threads'
// contract. Under DECONV_SPIN_US=off the same tests exercise Halide's own pool.
#include "check.h"
#include "kernels/cpu_thread_pool.h"  // runtime/: SerialLoops, StaticTasks

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

extern "C" int halide_do_par_for(void *user_context, int (*task)(void *, int, uint8_t *), int min, int size,
                                 uint8_t *closure);

namespace {

using deconv::DType;
using deconv_test::GenCase;

// Restores the default thread count when a test ends, whatever it set.
struct ThreadCountGuard {
    ~ThreadCountGuard() { deconv::set_cpu_threads(0); }
};

struct Counts {
    std::vector<std::atomic<int>> outer, inner;
    int inner_per_task = 0;
    int fail_at = -1;
    Counts(int n, int inner_n) : outer(n), inner(size_t(n) * inner_n), inner_per_task(inner_n) {}
};

struct InnerClosure {
    Counts *c;
    int task;
};

int inner_task(void *, int i, uint8_t *closure) {
    auto *ic = reinterpret_cast<InnerClosure *>(closure);
    ic->c->inner[size_t(ic->task) * ic->c->inner_per_task + i]++;
    return 0;
}

int outer_task(void *uc, int i, uint8_t *closure) {
    auto *c = reinterpret_cast<Counts *>(closure);
    c->outer[i]++;
    if (i == c->fail_at) return -7;
    if (c->inner_per_task > 0) {
        InnerClosure ic{c, i};
        return halide_do_par_for(uc, inner_task, 0, c->inner_per_task, reinterpret_cast<uint8_t *>(&ic));
    }
    return 0;
}

// Runs one loop of `n` tasks (with `inner` nested tasks each) and checks every task ran once.
::testing::AssertionResult loop_runs_each_task_once(int n, int inner) {
    Counts c(n, inner);
    const int r = halide_do_par_for(nullptr, outer_task, 0, n, reinterpret_cast<uint8_t *>(&c));
    if (r != 0) return ::testing::AssertionFailure() << "loop returned " << r;
    for (int i = 0; i < n; i++) {
        if (c.outer[i] != 1) return ::testing::AssertionFailure() << "task " << i << " ran " << c.outer[i] << " times";
        for (int j = 0; j < inner; j++) {
            const int k = c.inner[size_t(i) * inner + j];
            if (k != 1) return ::testing::AssertionFailure() << "nested task " << i << "." << j << " ran " << k << " times";
        }
    }
    return ::testing::AssertionSuccess();
}

TEST(ThreadPool, EveryTaskOnceAtEveryThreadCount) {
    ThreadCountGuard guard;
    for (int threads : {1, 2, 3, 8}) {
        deconv::set_cpu_threads(threads);
        for (int n : {0, 1, 2, 3, 31, 1000}) {
            EXPECT_TRUE(loop_runs_each_task_once(n, 0)) << threads << " threads, " << n << " tasks";
            EXPECT_TRUE(loop_runs_each_task_once(n, 5)) << threads << " threads, " << n << " tasks x 5 nested";
        }
        // Many small loops back to back: the workers' spin-then-sleep hand-over at every loop.
        for (int k = 0; k < 200; k++) ASSERT_TRUE(loop_runs_each_task_once(1 + k % 9, 0)) << threads << " threads";
    }
}

struct ThreadIds {
    std::mutex m;
    std::set<std::thread::id> ids;
};

int record_thread(void *, int, uint8_t *closure) {
    auto *t = reinterpret_cast<ThreadIds *>(closure);
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // long enough for a worker to join in
    std::lock_guard<std::mutex> lk(t->m);
    t->ids.insert(std::this_thread::get_id());
    return 0;
}

bool on_halide_pool() {
    const char *e = std::getenv("DECONV_SPIN_US");
    return e && std::strcmp(e, "off") == 0;
}

// The threads a loop of `n` tasks ran on.
std::set<std::thread::id> loop_threads(int n) {
    ThreadIds t;
    EXPECT_EQ(halide_do_par_for(nullptr, record_thread, 0, n, reinterpret_cast<uint8_t *>(&t)), 0);
    return t.ids;
}

// A SerialLoops scope keeps this thread's loops on it (the plan's choice for tiny layers); its
// end, and a scope that does not ask for it, leave them parallel. Under Halide's own pool
// (DECONV_SPIN_US=off) the scope has no effect: only the first check is made.
TEST(ThreadPool, SerialLoopsScope) {
    ThreadCountGuard guard;
    deconv::set_cpu_threads(4);
    {
        const deconv::detail::SerialLoops serial(true);
        if (!on_halide_pool()) {
            EXPECT_EQ(loop_threads(64), std::set<std::thread::id>{std::this_thread::get_id()});
        }
        const deconv::detail::SerialLoops inner(false);  // nested: stays serial
        if (!on_halide_pool()) EXPECT_EQ(loop_threads(64).size(), 1u);
    }
    {
        const deconv::detail::SerialLoops no(false);
        EXPECT_TRUE(loop_runs_each_task_once(64, 2));
    }
    // Parallel again: with 64 tasks of 50 us on 4 threads, some worker takes part (in one of
    // several tries: on a loaded machine the workers may not get a core in time).
    size_t most = 0;
    for (int k = 0; k < 20 && most < 2; k++) most = std::max(most, loop_threads(64).size());
    EXPECT_GT(most, 1u);
}

// A loop of few tasks whose tasks start loops of many (a kernel's channel tiles outside its rows).
struct Nest {
    int inner = 64;
    std::vector<ThreadIds> per_outer_task;  // the threads each outer task's inner loop ran on
    explicit Nest(int outer) : per_outer_task(outer) {}
};

int nest_inner(void *uc, int i, uint8_t *closure) { return record_thread(uc, i, closure); }

int nest_outer(void *uc, int i, uint8_t *closure) {
    auto *n = reinterpret_cast<Nest *>(closure);
    return halide_do_par_for(uc, nest_inner, 0, n->inner, reinterpret_cast<uint8_t *>(&n->per_outer_task[i]));
}

// The most threads any outer task's inner loop ran on, over a loop of two outer tasks.
size_t widest_inner_loop() {
    Nest n(2);
    EXPECT_EQ(halide_do_par_for(nullptr, nest_outer, 0, 2, reinterpret_cast<uint8_t *>(&n)), 0);
    size_t most = 0;
    for (ThreadIds &t : n.per_outer_task) most = std::max(most, t.ids.size());
    return most;
}

// Once the pool has seen the coarse loop's tasks start fine loops, it runs the coarse tasks in
// turn and deals out each inner loop, whose tasks then run on several threads; without that (the
// first run, and under StaticTasks: slices that each thread keeps) each inner loop is nested in
// one thread's task and runs on that thread alone.
TEST(ThreadPool, CoarseLoopsDealOutTheirInnerLoops) {
    if (on_halide_pool()) GTEST_SKIP() << "Halide's own pool (DECONV_SPIN_US=off) runs nested loops serially";
    ThreadCountGuard guard;
    deconv::set_cpu_threads(2);  // two outer tasks: one per thread, coarse (fewer than 4 per thread)
    {
        const deconv::detail::StaticTasks slices;
        for (int k = 0; k < 3; k++) EXPECT_EQ(widest_inner_loop(), 1u);
    }
    // Some worker joins an inner loop in one of several tries (a loaded machine may not give the
    // workers a core in time).
    size_t most = 0;
    for (int k = 0; k < 20 && most < 2; k++) most = std::max(most, widest_inner_loop());
    EXPECT_GT(most, 1u);
    {
        const deconv::detail::StaticTasks slices;  // learnt, but the scope still keeps the tasks whole
        EXPECT_EQ(widest_inner_loop(), 1u);
    }
    EXPECT_TRUE(loop_runs_each_task_once(2, 64));
}

int one_slice(void *, int, uint8_t *closure) {
    *reinterpret_cast<size_t *>(closure) = widest_inner_loop();
    return 0;
}

// StaticTasks keeps the slices of its own loop whole, not the loops a slice starts: a loop of one
// slice runs it on the caller, whose coarse loops then still deal out their inner loops (a
// kernel's channel tiles outside its rows, called from one slice of edge windows).
TEST(ThreadPool, OneSliceLeavesItsLoopsToThePool) {
    if (on_halide_pool()) GTEST_SKIP() << "Halide's own pool (DECONV_SPIN_US=off) runs nested loops serially";
    ThreadCountGuard guard;
    deconv::set_cpu_threads(2);
    for (int k = 0; k < 3; k++) widest_inner_loop();  // the pool learns that the loops nest
    size_t most = 0;
    for (int k = 0; k < 20 && most < 2; k++) {
        const deconv::detail::StaticTasks slices;
        size_t widest = 0;
        EXPECT_EQ(halide_do_par_for(nullptr, one_slice, 0, 1, reinterpret_cast<uint8_t *>(&widest)), 0);
        most = std::max(most, widest);
    }
    EXPECT_GT(most, 1u);
}

TEST(ThreadPool, FailingTaskIsTheLoopsResult) {
    ThreadCountGuard guard;
    for (int threads : {1, 2, 4}) {
        deconv::set_cpu_threads(threads);
        Counts c(300, 0);
        c.fail_at = 123;
        EXPECT_EQ(halide_do_par_for(nullptr, outer_task, 0, 300, reinterpret_cast<uint8_t *>(&c)), -7)
            << threads << " threads";
        EXPECT_EQ(c.outer[123], 1);
        // The pool is usable after a failure.
        EXPECT_TRUE(loop_runs_each_task_once(100, 3)) << threads << " threads";
    }
}

TEST(ThreadPool, LoopsFromSeveralThreadsAtOnce) {
    ThreadCountGuard guard;
    deconv::set_cpu_threads(2);
    constexpr int kCallers = 4;
    std::vector<std::string> errors(kCallers);
    std::vector<std::thread> callers;
    for (int t = 0; t < kCallers; t++)
        callers.emplace_back([&, t] {
            for (int k = 0; k < 100 && errors[t].empty(); k++) {
                const auto r = loop_runs_each_task_once(17 + (k + t) % 50, k % 3);
                if (!r) errors[t] = r.message();
            }
        });
    for (auto &c : callers) c.join();
    for (int t = 0; t < kCallers; t++) EXPECT_EQ(errors[t], "") << "caller " << t;
}

TEST(ThreadPool, SetCpuThreadsContract) {
    ThreadCountGuard guard;
    try {
        deconv::set_cpu_threads(-1);
        FAIL() << "no error for -1 threads";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
        EXPECT_THAT(e.what(), ::testing::HasSubstr("set_cpu_threads(-1)"));
    }
    deconv::set_cpu_threads(3);
    EXPECT_EQ(deconv::cpu_threads(), 3);
    deconv::set_cpu_threads(0);
    EXPECT_GE(deconv::cpu_threads(), 1);
}

// Layers of every rank at 1, 2 and 5 threads against the reference (5: more threads than this
// machine's cores, so workers are preempted mid-loop).
TEST(ThreadPool, LayersMatchTheReferenceAtSeveralThreadCounts) {
    ThreadCountGuard guard;
    for (int threads : {1, 2, 5}) {
        deconv::set_cpu_threads(threads);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank) || !deconv_test::dtype_built(DType::f32)) continue;
            for (int i = 0; i < 4; i++) {
                GenCase c = deconv_test::make_case(DType::f32, rank, 9100 + 10 * threads + i);
                c.api = 1;
                EXPECT_TRUE(deconv_test::run_and_check(c)) << threads << " threads";
            }
        }
    }
}

}  // namespace
