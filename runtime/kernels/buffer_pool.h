// Scratch buffers a plan keeps between runs (the zero-bordered input copy, the dense output of
// channels-last kernels): a run takes one and hands it back when done, so repeated runs touch no
// fresh pages. One buffer per run in flight: Plan::run may be called from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace deconv {
namespace detail {

class BufferPool {
public:
    // A buffer taken from the pool, handed back when it goes out of scope.
    class Lease {
    public:
        Lease(BufferPool *pool, std::vector<uint8_t> data) : pool_(pool), data_(std::move(data)) {}
        Lease(Lease &&other) noexcept : pool_(other.pool_), data_(std::move(other.data_)) { other.pool_ = nullptr; }
        Lease &operator=(Lease &&) = delete;
        ~Lease() {
            if (pool_ && !data_.empty()) pool_->give_back(std::move(data_));
        }
        uint8_t *data() { return data_.data(); }

    private:
        BufferPool *pool_;
        std::vector<uint8_t> data_;
    };

    // A buffer of `bytes`: one handed back earlier when its size matches, with whatever it held
    // (its users rely on that: the bordered copy's margins stay zero), else a new zeroed one.
    Lease take(size_t bytes) {
        std::vector<uint8_t> buf;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (size_t i = 0; i < free_.size(); i++) {
                if (free_[i].size() == bytes) {
                    buf = std::move(free_[i]);
                    free_.erase(free_.begin() + (std::ptrdiff_t)i);
                    break;
                }
            }
        }
        if (buf.size() != bytes) buf.assign(bytes, 0);
        return Lease(this, std::move(buf));
    }

private:
    void give_back(std::vector<uint8_t> buf) {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(std::move(buf));
    }

    std::mutex mutex_;
    std::vector<std::vector<uint8_t>> free_;
};

// Vectors handed back for reuse whatever their size: a run that repacks its filter takes one
// whose capacity holds the packing and refills it, so that its pages stay mapped. (A fresh 32 MiB
// packing per run, [1024, 512, 4, 4] f32: 120-134 ms of page faults, 22 ms refilled.) Unlike
// BufferPool, a taken vector is always zeroed.
class RecycledVectors {
public:
    // `bytes` zero bytes: in the smallest vector handed back that holds them, else a new one (a
    // run packs its filter and the interleaved kernel's copy, of different sizes, in turn).
    std::vector<uint8_t> take(size_t bytes) {
        std::vector<uint8_t> v;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            size_t best = free_.size();
            for (size_t i = 0; i < free_.size(); i++) {
                if (free_[i].capacity() >= bytes && (best == free_.size() || free_[i].capacity() < free_[best].capacity()))
                    best = i;
            }
            if (best < free_.size()) {
                v = std::move(free_[best]);
                free_.erase(free_.begin() + (std::ptrdiff_t)best);
            }
        }
        v.assign(bytes, 0);
        return v;
    }
    void give_back(std::vector<uint8_t> v) {
        if (v.capacity() == 0) return;
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(std::move(v));
    }

private:
    std::mutex mutex_;
    std::vector<std::vector<uint8_t>> free_;
};

}  // namespace detail
}  // namespace deconv
