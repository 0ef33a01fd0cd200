#include "cpu_thread_pool.h"

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

class Pool {
public:
    // Runs tasks [min, min + size) of `f`; the caller takes part.
    int run(void *uc, halide_task_t f, int min, int size, uint8_t *closure) {
        const int threads = pool_threads();
        if (t_in_loop || threads <= 1) return serial(uc, f, min, size, closure);
        // Fewer tasks than threads (the batch loop of one image, outside the loops over groups
        // and rows): run them in turn and leave the pool to the loops inside.
        if (size < threads) {
            for (int i = 0; i < size; i++) {
                if (int r = f(uc, min + i, closure)) return r;
            }
            return 0;
        }
        std::unique_lock<std::mutex> owner(owner_, std::try_to_lock);
        if (!owner.owns_lock()) return serial(uc, f, min, size, closure);
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

    static int serial(void *uc, halide_task_t f, int min, int size, uint8_t *closure) {
        const bool outer = t_in_loop;
        t_in_loop = true;
        int result = 0;
        for (int i = 0; i < size && result == 0; i++) result = f(uc, min + i, closure);
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
                const int e = job_.f(job_.uc, job_.min + i, job_.closure);
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
