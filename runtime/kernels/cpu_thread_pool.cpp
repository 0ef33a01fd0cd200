#include "kernels/cpu_thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "HalideRuntime.h"

namespace deconv {
namespace detail {

namespace {

// How long an idle worker spins before it sleeps. About what OpenMP's default
// wait policy spins; long enough to span the serial copies between the kernel
// calls of one run and the gap between runs, short enough that an idle process
// stops burning a core within a millisecond. DECONV_SPIN_US overrides it (0:
// sleep at once; "off": Halide's own pool).
constexpr int kDefaultSpinMicros = 1000;

// The most threads a loop uses (a bound on absurd HL_NUM_THREADS values).
constexpr int kMaxThreads = 256;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

int env_threads() {
    static const int n = [] {
        const char *env = std::getenv("HL_NUM_THREADS");
        if (env && *env) {
            char *end = nullptr;
            const long n = std::strtol(env, &end, 10);
            if (end && *end == '\0' && n >= 1) return (int)std::min<long>(n, kMaxThreads);
        }
        return (int)std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, kMaxThreads);
    }();
    return n;
}

// -1: Halide's pool; otherwise the spin in microseconds.
int spin_micros() {
    static const int us = [] {
        const char *env = std::getenv("DECONV_SPIN_US");
        if (!env || !*env) return kDefaultSpinMicros;
        if (std::strcmp(env, "off") == 0) return -1;
        char *end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (!end || *end != '\0' || v < 0) return kDefaultSpinMicros;
        return (int)std::min<long>(v, 1000000);
    }();
    return us;
}

std::atomic<int> g_threads{0};  // 0: not set (env_threads())

// Set while a thread runs tasks of a loop: a loop it starts then runs serially.
thread_local bool t_in_loop = false;
// Set by StaticTasks: the loops this thread starts deal out their tasks however few they are.
thread_local bool t_static_tasks = false;
// The body of the innermost loop of at least `threads` tasks whose task this thread runs: the
// loop that a loop started inside it is nested in (loops of fewer tasks only pass through).
thread_local halide_task_t t_task_body = nullptr;

// A loop of fewer tasks than this per thread is coarse: one task left over is a large share of
// it, and a vCPU that the host stalls for a while keeps the other waiting up to a whole task.
constexpr int kCoarseTasksPerThread = 4;

// What the pool has learnt of loop bodies: the most tasks of a loop started inside one of their
// tasks (the kernels' nested parallel loops: channel tiles outside rows). Kernels keep their
// loop nests, so a plan's second run knows its first's. Open addressing, insert-only, lock-free;
// a full table learns no more (the loops then run as if nothing was known).
class NestedLoops {
public:
    void record(halide_task_t body, int tasks) {
        if (!body) return;
        for (size_t i = slot(body), n = 0; n < kSlots; i = (i + 1) % kSlots, n++) {
            halide_task_t key = keys_[i].load(std::memory_order_acquire);
            if (key == nullptr && keys_[i].compare_exchange_strong(key, body)) key = body;
            if (key != body) continue;
            int seen = tasks_[i].load(std::memory_order_relaxed);
            while (seen < tasks && !tasks_[i].compare_exchange_weak(seen, tasks)) {
            }
            return;
        }
    }
    // The most tasks of a loop seen inside `body`'s tasks, 0 if none.
    int inner_tasks(halide_task_t body) const {
        for (size_t i = slot(body), n = 0; n < kSlots; i = (i + 1) % kSlots, n++) {
            const halide_task_t key = keys_[i].load(std::memory_order_acquire);
            if (key == body) return tasks_[i].load(std::memory_order_relaxed);
            if (key == nullptr) return 0;
        }
        return 0;
    }

private:
    static constexpr size_t kSlots = 512;
    static size_t slot(halide_task_t body) { return (reinterpret_cast<uintptr_t>(body) >> 4) * 0x9E3779B97F4A7C15ull % kSlots; }
    std::atomic<halide_task_t> keys_[kSlots] = {};
    std::atomic<int> tasks_[kSlots] = {};
};

NestedLoops &nested_loops() {
    static NestedLoops *n = new NestedLoops;
    return *n;
}

// Runs task i of a loop with `body` as the loop later loops are nested in.
int run_task(void *uc, halide_task_t f, int i, uint8_t *closure) {
    const halide_task_t outer = t_task_body;
    t_task_body = f;
    const int r = f(uc, i, closure);
    t_task_body = outer;
    return r;
}

// Clears t_static_tasks for the tasks a loop runs on the caller's thread, restoring it after.
struct StaticOnlyHere {
    const bool dealt = t_static_tasks;
    StaticOnlyHere() { t_static_tasks = false; }
    ~StaticOnlyHere() { t_static_tasks = dealt; }
};

class Pool {
public:
    // Runs tasks [min, min + size) of `f`; the caller takes part.
    int run(void *uc, halide_task_t f, int min, int size, uint8_t *closure) {
        const int threads = pool_threads();
        if (t_in_loop && size >= threads) nested_loops().record(t_task_body, size);
        if (t_in_loop || threads <= 1) return serial(uc, f, min, size, closure, size >= threads);
        // StaticTasks is for this loop's tasks, not for the loops they start on this thread
        // (those a worker starts never see it): a run of one slice left the kernel's loop of 3
        // channel tiles dealt 2 + 1 to the two threads (dcgan_l2's edge rows).
        const StaticOnlyHere static_here;
        // Fewer tasks than threads (the batch loop of one image, outside the loops over groups
        // and rows): run them in turn and leave the pool to the loops inside. So too a coarse
        // loop whose tasks start a fine one (AVX2 kernels with 4 channel tiles of 16 outside 56
        // rows: a stalled vCPU held the other back by up to a quarter of the layer): its tasks
        // in turn, each dealing out its inner loop's.
        const bool coarse = size < kCoarseTasksPerThread * threads && !static_here.dealt &&
                            nested_loops().inner_tasks(f) >= kCoarseTasksPerThread * threads;
        if (size < threads || coarse) {
            for (int i = 0; i < size; i++) {
                if (int r = coarse ? run_task(uc, f, min + i, closure) : f(uc, min + i, closure)) return r;
            }
            return 0;
        }
        std::unique_lock<std::mutex> owner(owner_, std::try_to_lock);
        if (!owner.owns_lock()) return serial(uc, f, min, size, closure, true);
        ensure_workers(threads - 1);

        // Publish: the fields, then open, then the generation that workers watch. Open before
        // the generation: a worker that sees the new generation must find the job open. (The
        // other order let a spinning worker check open_ in between and skip the job: it missed
        // 45% of centernet_dla_dw's loops, whose caller then ran every task itself.)
        job_ = {uc, f, closure, min, size};
        const int participants = std::min(threads, size);
        for (int t = 0; t < participants; t++) {
            ranges_[t].next.store((int)((int64_t)size * t / participants));
            ranges_[t].end = (int)((int64_t)size * (t + 1) / participants);
        }
        participants_ = participants;
        error_.store(0);
        active_.store(participants - 1);
        open_.store(true);
        generation_.fetch_add(1);
        if (sleepers_.load() > 0) {
            std::lock_guard<std::mutex> lk(sleep_mutex_);
            wake_.notify_all();
        }
        t_in_loop = true;
        take_tasks(0);
        t_in_loop = false;
        // Close the job, then wait for the workers inside it: none reads its fields after.
        open_.store(false);
        while (busy_.load() != 0) cpu_relax();
        return error_.load();
    }

private:
    struct Job {
        void *uc = nullptr;
        halide_task_t f = nullptr;
        uint8_t *closure = nullptr;
        int min = 0, size = 0;
    };

    // `fans_out`: the loop has at least as many tasks as threads (loops inside its tasks are
    // nested in it, not in the loop around it).
    static int serial(void *uc, halide_task_t f, int min, int size, uint8_t *closure, bool fans_out) {
        const bool outer = t_in_loop;
        t_in_loop = true;
        int result = 0;
        for (int i = 0; i < size && result == 0; i++) {
            result = fans_out ? run_task(uc, f, min + i, closure) : f(uc, min + i, closure);
        }
        t_in_loop = outer;
        return result;
    }

    // Participant `self` runs its own contiguous range first, then helps the others with theirs.
    void take_tasks(int self) {
        for (int k = 0; k < participants_; k++) {
            Range &r = ranges_[(self + k) % participants_];
            for (;;) {
                const int i = r.next.fetch_add(1);
                if (i >= r.end) break;
                if (error_.load() != 0) continue;  // skip the rest after a failure
                const int e = run_task(job_.uc, job_.f, job_.min + i, job_.closure);
                if (e != 0) {
                    int expected = 0;
                    error_.compare_exchange_strong(expected, e);
                }
            }
        }
    }

    void ensure_workers(int n) {
        while ((int)workers_ < n) {
            const int index = (int)workers_;
            try {
                std::thread([this, index] { work(index); }).detach();
            } catch (const std::system_error &) {
                // No thread to be had (a process, thread or address-space limit): the loop runs
                // on the threads there are, the caller taking every range no worker takes,
                // instead of throwing through the kernel that called halide_do_par_for (the
                // exception left Plan::run as a bare "Resource temporarily unavailable").
                return;
            }
            workers_++;
        }
    }

    void work(int index) {
        t_in_loop = true;
        uint64_t seen = generation_.load();
        for (;;) {
            uint64_t g = wait_for_generation(seen);
            seen = g;
            if (index >= active_.load()) continue;
            busy_.fetch_add(1);
            // The job is still the one published under `g` (open and unchanged) or a
            // later one: either way its fields hold until busy_ drops back.
            if (open_.load()) take_tasks(index + 1);
            busy_.fetch_sub(1);
        }
    }

    uint64_t wait_for_generation(uint64_t seen) {
        const int us = std::max(spin_micros(), 0);
        const auto start = std::chrono::steady_clock::now();
        for (int spins = 0;; spins++) {
            const uint64_t g = generation_.load();
            if (g != seen) return g;
            cpu_relax();
            if ((spins & 63) == 0 && std::chrono::steady_clock::now() - start >= std::chrono::microseconds(us)) {
                break;
            }
        }
        std::unique_lock<std::mutex> lk(sleep_mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lk, [&] { return generation_.load() != seen; });
        sleepers_.fetch_sub(1);
        return generation_.load();
    }

    std::mutex owner_;    // one loop at a time owns the workers
    size_t workers_ = 0;  // under owner_
    Job job_;
    struct alignas(64) Range {
        std::atomic<int> next{0};
        int end = 0;
    };
    Range ranges_[kMaxThreads];
    int participants_ = 0;
    std::atomic<int> error_{0}, active_{0}, busy_{0}, sleepers_{0};
    std::atomic<uint64_t> generation_{0};
    std::atomic<bool> open_{false};
    std::mutex sleep_mutex_;
    std::condition_variable wake_;
};

// Never destroyed: its detached workers may still spin while the process exits.
Pool &pool() {
    static Pool *p = new Pool;
    return *p;
}

int do_par_for(void *uc, halide_task_t f, int min, int size, uint8_t *closure) {
    return pool().run(uc, f, min, size, closure);
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DECONV_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define DECONV_TSAN 1
#endif

#if defined(DECONV_TSAN)
// ThreadSanitizer builds (cmake -DDECONV_SANITIZE=thread): Halide's own pool (DECONV_SPIN_US=off)
// hands a loop's tasks to its threads under its own futex-based locks, in the Halide runtime,
// which is not instrumented, so TSan would see every task's reads of what the caller wrote (and
// the caller's reads of what the tasks wrote) as races. This wrapper tells it what Halide
// guarantees: the loop's start happens before each task, and each task before the loop's end.
// The two sync addresses differ so that tasks of one loop stay unordered among themselves, and
// a race between two of them is still reported.
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);

struct TsanLoop {
    halide_task_t f;
    uint8_t *closure;
    char started, finished;  // the sync addresses
};

int tsan_task(void *uc, int i, uint8_t *closure) {
    auto *loop = reinterpret_cast<TsanLoop *>(closure);
    __tsan_acquire(&loop->started);
    const int r = loop->f(uc, i, loop->closure);
    __tsan_release(&loop->finished);
    return r;
}

int tsan_halide_do_par_for(void *uc, halide_task_t f, int min, int size, uint8_t *closure) {
    TsanLoop loop{f, closure, 0, 0};
    __tsan_release(&loop.started);
    const int r = halide_default_do_par_for(uc, tsan_task, min, size, reinterpret_cast<uint8_t *>(&loop));
    __tsan_acquire(&loop.finished);
    return r;
}
#endif

}  // namespace

int pool_threads() {
    const int n = g_threads.load();
    return n > 0 ? n : env_threads();
}

SerialLoops::SerialLoops(bool serial) : saved_(t_in_loop) { t_in_loop = t_in_loop || serial; }
SerialLoops::~SerialLoops() { t_in_loop = saved_; }

StaticTasks::StaticTasks() : saved_(t_static_tasks) { t_static_tasks = true; }
StaticTasks::~StaticTasks() { t_static_tasks = saved_; }

void set_pool_threads(int threads) { g_threads.store(std::clamp(threads, 0, kMaxThreads)); }

void install_cpu_thread_pool() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (spin_micros() >= 0) halide_set_custom_do_par_for(do_par_for);
#if defined(DECONV_TSAN)
        else halide_set_custom_do_par_for(tsan_halide_do_par_for);
#endif
    });
}

}  // namespace detail
}  // namespace deconv
