// Streams and events. An event records a point in a stream's work; its time is the host clock
// when the stream reached it, which measures the emulator and nothing else.
#include <chrono>
#include <memory>

#include "runtime/api_common.h"
#include "runtime/stream.h"

using namespace trainrig::emu;

// The runtime's opaque event type, completed here.
struct CUevent_st {
    struct Mark {
        StreamPoint point;
        std::atomic<double> ms{0};  // host time when reached, in ms
    };
    bool timing = true;
    std::mutex mu;
    std::shared_ptr<Mark> mark;  // the latest record, or null if never recorded
};

namespace {

std::mutex g_events_mu;
std::set<const void*> g_events;

bool live_event(const void* e) {
    std::lock_guard lock(g_events_mu);
    return g_events.count(e) != 0;
}

double host_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::shared_ptr<CUevent_st::Mark> mark_of(cudaEvent_t e) {
    std::lock_guard lock(e->mu);
    return e->mark;
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* out, unsigned int flags) {
    TRAINRIG_EMU_ENTER(gpu);
    auto* s = new Stream(*gpu, (flags & cudaStreamNonBlocking) == 0);
    Emulator::get().register_stream(s);
    {
        std::lock_guard lock(gpu->mu);
        gpu->streams.insert(s);
    }
    *out = reinterpret_cast<cudaStream_t>(s);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* out) { return cudaStreamCreateWithFlags(out, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (stream == nullptr || !Emulator::get().is_stream(stream))
        return set_last_error(cudaErrorInvalidResourceHandle);
    auto* s = reinterpret_cast<Stream*>(stream);
    Emulator::get().retire_stream(s);
    {
        std::lock_guard lock(s->gpu().mu);
        s->gpu().streams.erase(s);
    }
    s->close();  // finishes its work first; kept for the events recorded on it
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    TRAINRIG_EMU_ENTER(gpu);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    s->wait_all();
    return set_last_error(s->gpu().sticky_error());
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    TRAINRIG_EMU_ENTER(gpu);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = s->gpu().sticky_error(); e != cudaSuccess) return set_last_error(e);
    return s->reached(s->last().ticket) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* out, unsigned int flags) {
    auto* e = new CUevent_st;
    e->timing = (flags & cudaEventDisableTiming) == 0;
    std::lock_guard lock(g_events_mu);
    g_events.insert(e);
    *out = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* out) { return cudaEventCreateWithFlags(out, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    {
        std::lock_guard lock(g_events_mu);
        if (g_events.erase(e) == 0) return set_last_error(cudaErrorInvalidResourceHandle);
    }
    delete e;  // a record still queued holds its mark, not the event
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) {
    TRAINRIG_EMU_ENTER(gpu);
    if (!live_event(e)) return set_last_error(cudaErrorInvalidResourceHandle);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    auto mark = std::make_shared<CUevent_st::Mark>();
    mark->point = enqueue_ordered(*s, [mark] { mark->ms = host_ms(); });
    std::lock_guard lock(e->mu);
    e->mark = std::move(mark);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (!live_event(e)) return set_last_error(cudaErrorInvalidResourceHandle);
    const auto mark = mark_of(e);
    if (mark == nullptr) return cudaSuccess;  // never recorded: complete, as documented
    return mark->point.stream->reached(mark->point.ticket) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (!live_event(e)) return set_last_error(cudaErrorInvalidResourceHandle);
    const auto mark = mark_of(e);
    if (mark == nullptr) return cudaSuccess;
    mark->point.stream->wait(mark->point.ticket);
    return set_last_error(mark->point.stream->gpu().sticky_error());
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (!live_event(start) || !live_event(end))
        return set_last_error(cudaErrorInvalidResourceHandle);
    if (!start->timing || !end->timing) return set_last_error(cudaErrorInvalidResourceHandle);
    const auto a = mark_of(start), b = mark_of(end);
    if (a == nullptr || b == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    if (!a->point.stream->reached(a->point.ticket) || !b->point.stream->reached(b->point.ticket))
        return set_last_error(cudaErrorNotReady);
    *ms = static_cast<float>(b->ms.load() - a->ms.load());
    return cudaSuccess;
}

// Work given to `stream` after this call waits for the event's latest record.
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t e, unsigned int flags) {
    TRAINRIG_EMU_ENTER(gpu);
    if (flags != 0 || !live_event(e)) return set_last_error(cudaErrorInvalidResourceHandle);
    Stream* s = resolve_stream(stream);
    if (s == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
    const auto mark = mark_of(e);
    if (mark == nullptr) return cudaSuccess;
    enqueue_ordered(*s, [] {}, {mark->point});
    return cudaSuccess;
}

}  // extern "C"
