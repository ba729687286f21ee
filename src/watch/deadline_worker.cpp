#include "watch/deadline_worker.h"

namespace trainrig::watch {

DeadlineWorker::DeadlineWorker() : s_(std::make_shared<Shared>()), thread_(loop, s_) {}

DeadlineWorker::~DeadlineWorker() {
    bool abandoned = false;
    {
        std::lock_guard lock(s_->mutex);
        s_->stop = true;
        abandoned = s_->busy;
    }
    s_->wake.notify_one();
    // A job stuck in a driver call cannot be interrupted; the thread keeps the shared state
    // alive and exits on its own if the call ever returns.
    if (abandoned)
        thread_.detach();
    else
        thread_.join();
}

void DeadlineWorker::loop(std::shared_ptr<Shared> s) {
    std::unique_lock lock(s->mutex);
    while (true) {
        s->wake.wait(lock, [&] { return s->stop || (s->busy && s->job); });
        if (s->stop && !(s->busy && s->job)) return;
        Job job = std::move(s->job);
        s->job = nullptr;
        lock.unlock();
        job(s->step);
        lock.lock();
        s->busy = false;
        s->step = "";
        s->done.notify_all();
        if (s->stop) return;
    }
}

bool DeadlineWorker::start(Job job) {
    {
        std::lock_guard lock(s_->mutex);
        if (s_->busy) return false;
        s_->busy = true;
        s_->job = std::move(job);
        s_->started = Clock::now();
    }
    s_->wake.notify_one();
    return true;
}

bool DeadlineWorker::wait_until(Clock::time_point until) {
    std::unique_lock lock(s_->mutex);
    return s_->done.wait_until(lock, until, [&] { return !s_->busy; });
}

bool DeadlineWorker::busy() const {
    std::lock_guard lock(s_->mutex);
    return s_->busy;
}

const char* DeadlineWorker::step() const { return s_->step.load(); }

double DeadlineWorker::running_seconds() const {
    std::lock_guard lock(s_->mutex);
    if (!s_->busy) return 0;
    return std::chrono::duration<double>(Clock::now() - s_->started).count();
}

}  // namespace trainrig::watch
