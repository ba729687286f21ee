#include "runtime/stream.h"

namespace trainrig::emu {

Stream::Stream(EmulatedGpu& gpu, bool blocking)
    : gpu_(gpu), blocking_(blocking), thread_([this] { loop(); }) {}

void Stream::close() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

StreamPoint Stream::enqueue(std::function<void()> work, std::vector<StreamPoint> after) {
    std::lock_guard lock(mu_);
    queue_.push_back({std::move(work), std::move(after)});
    cv_.notify_all();
    return {this, ++given_};
}

StreamPoint Stream::last() {
    std::lock_guard lock(mu_);
    return {this, given_};
}

bool Stream::reached(uint64_t ticket) {
    std::lock_guard lock(mu_);
    return done_ >= ticket;
}

void Stream::wait(uint64_t ticket) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_ >= ticket; });
}

void Stream::loop() {
    for (;;) {
        Work w;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, all done
            w = std::move(queue_.front());
            queue_.pop_front();
        }
        for (const StreamPoint& p : w.after)
            if (p.stream != this) p.stream->wait(p.ticket);
        if (gpu_.sticky_error() == cudaSuccess) w.run();
        std::lock_guard lock(mu_);
        ++done_;
        cv_.notify_all();
    }
}

Stream* resolve_stream(cudaStream_t s) {
    Emulator& emu = Emulator::get();
    if (s == nullptr || s == cudaStreamLegacy) {
        EmulatedGpu* gpu = emu.current();
        if (gpu == nullptr) return nullptr;
        std::lock_guard lock(gpu->mu);
        if (!gpu->null_stream) gpu->null_stream = std::make_unique<Stream>(*gpu, true);
        return gpu->null_stream.get();
    }
    if (!emu.is_stream(s)) {
        set_last_error(cudaErrorInvalidResourceHandle);
        return nullptr;
    }
    return reinterpret_cast<Stream*>(s);
}

void wait_for_device(EmulatedGpu& gpu) {
    std::vector<StreamPoint> points;
    {
        std::lock_guard lock(gpu.mu);
        if (gpu.null_stream) points.push_back(gpu.null_stream->last());
        for (Stream* s : gpu.streams) points.push_back(s->last());
    }
    for (const StreamPoint& p : points) p.stream->wait(p.ticket);
}

StreamPoint enqueue_ordered(Stream& s, std::function<void()> work, std::vector<StreamPoint> after) {
    EmulatedGpu& gpu = s.gpu();
    {
        std::lock_guard lock(gpu.mu);
        if (&s == gpu.null_stream.get()) {
            for (Stream* b : gpu.streams)
                if (b->blocking()) after.push_back(b->last());
        } else if (s.blocking() && gpu.null_stream) {
            after.push_back(gpu.null_stream->last());
        }
    }
    return s.enqueue(std::move(work), std::move(after));
}

}  // namespace trainrig::emu
