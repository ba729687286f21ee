// A CUDA stream of an emulated GPU: a host thread that runs its work in order, each piece after
// the work it must wait for (an event, or the legacy default stream's implicit ordering) is
// done. Work on a poisoned device is skipped, as on a GPU whose context a fault destroyed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/emulator.h"

namespace trainrig::emu {

// A point in a stream's work: done once the stream has finished its ticket-th piece.
struct StreamPoint {
    Stream* stream = nullptr;
    uint64_t ticket = 0;
};

class Stream {
public:
    Stream(EmulatedGpu& gpu, bool blocking);
    ~Stream() { close(); }
    // Finishes the work given, then ends its thread. A closed stream is kept (never freed), so
    // an event recorded on it can still be asked about, as the runtime allows.
    void close();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // Adds work that runs after `after` and everything given before; returns its point.
    StreamPoint enqueue(std::function<void()> work, std::vector<StreamPoint> after = {});
    StreamPoint last();
    bool reached(uint64_t ticket);
    void wait(uint64_t ticket);
    void wait_all() { wait(last().ticket); }

    EmulatedGpu& gpu() { return gpu_; }
    bool blocking() const { return blocking_; }

private:
    struct Work {
        std::function<void()> run;
        std::vector<StreamPoint> after;
    };
    void loop();

    EmulatedGpu& gpu_;
    bool blocking_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Work> queue_;
    uint64_t given_ = 0, done_ = 0;
    bool stop_ = false;
    std::thread thread_;
};

// The stream a handle names on the current device: the legacy default stream for 0, else the
// handle; nullptr (and cudaErrorInvalidResourceHandle) for a handle that is not a live stream.
Stream* resolve_stream(cudaStream_t s);

// Waits until every stream of `gpu` has done the work given to it so far.
void wait_for_device(EmulatedGpu& gpu);

// Enqueues on `s` with the legacy default stream's rules: work on it waits for every blocking
// stream of its device, work on a blocking stream waits for it.
StreamPoint enqueue_ordered(Stream& s, std::function<void()> work,
                            std::vector<StreamPoint> after = {});

}  // namespace trainrig::emu
