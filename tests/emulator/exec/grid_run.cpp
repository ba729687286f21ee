#include "exec/grid_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace trainrig::emu {
namespace {

// One launch's blocks, shared by the threads that run them.
struct Job {
    const GridLaunch* launch;
    Schedule schedule;
    unsigned long long blocks = 0;
    std::atomic<unsigned long long> next{0};
    std::mutex mu;
    std::condition_variable done_cv;
    int helpers_busy = 0;
    std::string fault;

    uint3 block_index(unsigned long long k) const {
        const dim3 g = launch->grid;
        if (schedule.order == Schedule::kReverse) k = blocks - 1 - k;
        return uint3{static_cast<unsigned>(k % g.x), static_cast<unsigned>((k / g.x) % g.y),
                     static_cast<unsigned>(k / (static_cast<unsigned long long>(g.x) * g.y))};
    }

    // Runs blocks until none are left or one faulted.
    void work() {
        BlockRun run(launch->grid, launch->block, launch->shared_bytes, schedule);
        for (;;) {
            {
                std::lock_guard lock(mu);
                if (!fault.empty()) return;
            }
            const unsigned long long k = next.fetch_add(1);
            if (k >= blocks) return;
            const uint3 b = block_index(k);
            std::string why = run.run(b, launch->body);
            if (!why.empty()) {
                std::lock_guard lock(mu);
                if (fault.empty()) fault = fmt::format("block ({},{},{}): {}", b.x, b.y, b.z, why);
                return;
            }
        }
    }
};

class HostPool {
public:
    static HostPool& get() {
        static HostPool pool;
        return pool;
    }

    // Lets up to `helpers` pool threads work on the job beside its caller.
    void offer(const std::shared_ptr<Job>& job, unsigned helpers) {
        std::lock_guard lock(mu_);
        for (unsigned i = 0; i < helpers && i < threads_.size(); ++i) queue_.push_back(job);
        cv_.notify_all();
    }
    unsigned size() const { return static_cast<unsigned>(threads_.size()); }

private:
    HostPool() {
        unsigned n = std::max(1u, std::thread::hardware_concurrency());
        if (const char* v = std::getenv("TRAINRIG_EMULATED_HOST_THREADS"); v != nullptr && *v)
            n = static_cast<unsigned>(std::clamp(std::atoi(v), 1, 256));
        for (unsigned i = 0; i + 1 < n; ++i) threads_.emplace_back([this] { loop(); });
    }
    ~HostPool() {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) t.join();
    }

    void loop() {
        for (;;) {
            std::shared_ptr<Job> job;
            {
                std::unique_lock lock(mu_);
                cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (stop_) return;
                job = std::move(queue_.front());
                queue_.pop_front();
            }
            job->work();
            std::lock_guard lock(job->mu);
            if (--job->helpers_busy == 0) job->done_cv.notify_all();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<Job>> queue_;
    std::vector<std::thread> threads_;
    bool stop_ = false;
};

}  // namespace

std::string run_grid(const GridLaunch& launch, const Schedule& schedule, bool alone) {
    auto job = std::make_shared<Job>();
    job->launch = &launch;
    job->schedule = schedule;
    job->blocks = static_cast<unsigned long long>(launch.grid.x) * launch.grid.y * launch.grid.z;
    HostPool& pool = HostPool::get();
    const unsigned helpers =
        alone ? 0u
              : static_cast<unsigned>(std::min<unsigned long long>(pool.size(), job->blocks - 1));
    job->helpers_busy = static_cast<int>(helpers);
    if (helpers > 0) pool.offer(job, helpers);
    job->work();
    std::unique_lock lock(job->mu);
    job->done_cv.wait(lock, [&] { return job->helpers_busy == 0; });
    return job->fault;
}

}  // namespace trainrig::emu
