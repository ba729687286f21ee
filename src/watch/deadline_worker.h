// A thread that runs one job at a time for a caller that will not wait past a deadline. A job
// that overruns keeps the worker busy, and the caller moves on: the job's state is shared, so
// a worker whose call never returns can be abandoned (detached) without a dangling reference.
// This is how `watch` keeps a hung NVML call from stalling its loop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace trainrig::watch {

class DeadlineWorker {
public:
    using Clock = std::chrono::steady_clock;
    // The job names each step (an NVML call) before it makes it, so an overrun can be named.
    using Job = std::function<void(std::atomic<const char*>& step)>;

    DeadlineWorker();
    ~DeadlineWorker();  // joins an idle worker; abandons one whose job still runs
    DeadlineWorker(const DeadlineWorker&) = delete;
    DeadlineWorker& operator=(const DeadlineWorker&) = delete;

    // Starts `job`; false (and nothing starts) while the previous job still runs.
    bool start(Job job);
    // Waits for the running job until `until`; true when it has finished (or none was running).
    bool wait_until(Clock::time_point until);
    bool busy() const;
    // The step the running job last named, and how long the job has been running.
    const char* step() const;
    double running_seconds() const;

private:
    struct Shared {
        std::mutex mutex;
        std::condition_variable wake;  // a job arrived, or stop
        std::condition_variable done;  // the job finished
        Job job;
        bool busy = false;
        bool stop = false;
        Clock::time_point started;
        std::atomic<const char*> step{""};
    };
    static void loop(std::shared_ptr<Shared> s);

    std::shared_ptr<Shared> s_;
    std::thread thread_;
};

}  // namespace trainrig::watch
