// libtrainrig_train_cuda.so: the C entry points of train_plugin_abi.h over GptCuda and the device
// world. Adds what the model itself does not: token batches staged through a pinned double
// buffer, the gradient all-reduce issued bucket by bucket while backward is still running, and
// CUDA events at each phase's edges. Only forward (for its loss) and the calls that read the
// device wait for it; backward and update return once queued, so the next micro-batch's token
// copy overlaps the current backward.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_memory.h"
#include "cuda/nccl_group.h"
#include "train/cuda/device_world.h"
#include "train/cuda/gpt_cuda.h"
#include "train/cuda/phase_events.h"
#include "train/cuda/token_staging.h"
#include "train/grad_buckets.h"
#include "train/train_plugin_support.h"

// Only the ABI is exported; trainrig_core, linked statically, stays hidden.
#pragma GCC visibility push(default)
#include "train/train_plugin_abi.h"
#pragma GCC visibility pop

using trainrig::Errc;
using trainrig::ok_status;
using trainrig::Result;
using trainrig::Status;
using trainrig::train::cuda::Phase;
namespace tc = trainrig::cuda;
namespace tt = trainrig::train;

struct trainrig_train_world {
    std::unique_ptr<tt::cuda::DeviceWorld> world;
};

struct trainrig_train_model {
    trainrig_train_world* w = nullptr;
    std::unique_ptr<tt::cuda::GptCuda> gpt;
    int max_tokens = 0;
    // Buckets, and for each layer (index l + 1; 0 is the embeddings' "-1") the ones it completes.
    std::vector<tt::GradBucket> buckets;
    std::vector<std::vector<size_t>> ready;
    std::vector<tc::Event> bucket_done;  // the all-reduce runs on the world's stream
    bool reduce_pending = false;
    std::optional<tt::cuda::TokenStaging> tokens;
    tt::cuda::PhaseEvents phases;
};

namespace {

// An event only for ordering streams: no timestamps to take.
Result<tc::Event> sync_event() {
    cudaEvent_t e = nullptr;
    CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return tc::Event(e);
}

std::string from_hex(const std::string& hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

Status open_model(trainrig_train_world* w, const char* json, trainrig_train_model** out) {
    auto parsed = tt::parse_model_request(json ? json : "");
    if (!parsed.ok()) return parsed.status();
    const tt::ModelRequest& r = *parsed;
    CUDA_TRY(cudaSetDevice(w->world->device()));
    auto m = std::make_unique<trainrig_train_model>();
    m->w = w;
    TRAINRIG_TRY(tc::move_into(tt::cuda::GptCuda::create(r.model, r.opt, r.batch, r.seq), m->gpt));
    m->max_tokens = r.batch * r.seq;
    m->buckets = tt::plan_grad_buckets(m->gpt->layout(), r.model.layers, r.bucket_bytes);
    m->ready.resize(static_cast<size_t>(r.model.layers) + 1);
    for (size_t i = 0; i < m->buckets.size(); ++i)
        m->ready[static_cast<size_t>(m->buckets[i].ready_after + 1)].push_back(i);
    for (size_t i = 0; i < m->buckets.size(); ++i) {
        tc::Event e;
        TRAINRIG_TRY(tc::move_into(sync_event(), e));
        m->bucket_done.push_back(std::move(e));
    }
    auto staging = tt::cuda::TokenStaging::create(static_cast<size_t>(m->max_tokens));
    if (!staging.ok()) return staging.status();
    m->tokens.emplace(std::move(staging).value());
    *out = m.release();
    return ok_status();
}

// Queues the all-reduce of the buckets backward has just completed: the world's stream waits
// for the compute stream to reach this point, so the sums start while earlier layers compute.
Status reduce_ready(trainrig_train_model* m, int layer) {
    ncclComm_t comm = m->w->world->comm();
    if (comm == nullptr)
        return Status(Errc::kIo, "the NCCL communicator was aborted after an earlier failure");
    const cudaStream_t stream = m->w->world->stream();
    float* grads = m->gpt->grads();
    for (size_t b : m->ready[static_cast<size_t>(layer + 1)]) {
        CUDA_TRY(cudaEventRecord(m->bucket_done[b].get(), m->gpt->stream()));
        CUDA_TRY(cudaStreamWaitEvent(stream, m->bucket_done[b].get(), 0));
        tc::NcclGroup group;
        NCCL_TRY(group.started());
        for (const tt::GradRange& r : m->buckets[b].ranges)
            NCCL_TRY(ncclAllReduce(grads + r.offset, grads + r.offset, r.size, ncclFloat, ncclSum,
                                   comm, stream));
        // Settled before the next bucket's event goes to the stream: a non-blocking
        // communicator may still be taking this group.
        TRAINRIG_TRY(m->w->world->settle(group.end(), "ncclGroupEnd"));
    }
    return ok_status();
}

// Null inputs: the micro-batch stage() sent.
Status forward(trainrig_train_model* m, const uint32_t* inputs, const uint32_t* targets, int B,
               int T, double* loss) {
    if (inputs != nullptr) TRAINRIG_TRY(m->tokens->stage(inputs, targets, B, T));
    const cudaStream_t compute = m->gpt->stream();
    auto d = m->tokens->take(compute, B, T);
    if (!d.ok()) return d.status();
    TRAINRIG_TRY(m->phases.begin(Phase::kForward, compute));
    auto r = m->gpt->forward(d->inputs, d->order, d->targets, B, T);
    if (!r.ok()) return r.status();
    *loss = *r;
    return m->phases.end(Phase::kForward, compute);
}

Status backward(trainrig_train_model* m, float scale, bool last) {
    const bool reduce = last && m->w->world->world() > 1;
    // Pending from the first bucket on: a failure midway must still abort the communicator.
    m->reduce_pending = reduce;
    const cudaStream_t compute = m->gpt->stream();
    TRAINRIG_TRY(m->phases.begin(Phase::kBackward, compute));
    TRAINRIG_TRY(m->gpt->backward(
        scale, [&](int layer) { return reduce ? reduce_ready(m, layer) : ok_status(); }));
    TRAINRIG_TRY(m->phases.end(Phase::kBackward, compute));
    if (!reduce) return ok_status();
    // The communication backward did not hide: from its last kernel to the last bucket's sum.
    TRAINRIG_TRY(m->phases.begin(Phase::kComm, compute));
    return m->phases.end(Phase::kComm, m->w->world->stream());
}

Status finish_reduce(trainrig_train_model* m) {
    if (!m->reduce_pending) return ok_status();
    Status s = m->w->world->wait();  // aborts the communicator on a failure
    m->reduce_pending = false;
    return s;
}

Status set_state(trainrig_train_model* m, const float* params, const float* am, const float* av) {
    TRAINRIG_TRY(m->gpt->set_params(params));
    if (am && av) return m->gpt->set_moments(am, av);
    const std::vector<float> zeros(m->gpt->layout().total(), 0.0f);
    return m->gpt->set_moments(zeros.data(), zeros.data());
}

Status get_state(trainrig_train_model* m, float* params, float* am, float* av) {
    if (params) TRAINRIG_TRY(m->gpt->get_params(params));
    if (am && av) TRAINRIG_TRY(m->gpt->get_moments(am, av));
    return ok_status();
}

}  // namespace

extern "C" {

int trainrig_train_abi(void) { return TRAINRIG_TRAIN_ABI; }

void trainrig_train_free(char* text) { std::free(text); }

char* trainrig_train_unique_id(unsigned char* id, size_t capacity, size_t* size) {
    return tt::plugin_call([&]() -> Status {
        ncclUniqueId u{};
        if (capacity < sizeof u) return Status(Errc::kInternal, "the NCCL id buffer is too small");
        NCCL_TRY(ncclGetUniqueId(&u));
        std::memcpy(id, &u, sizeof u);
        *size = sizeof u;
        return ok_status();
    });
}

char* trainrig_train_world_open(const char* config_json, trainrig_train_world** out) {
    return tt::plugin_call([&]() -> Status {
        const auto j = nlohmann::json::parse(config_json ? config_json : "", nullptr, false);
        if (!j.is_object()) return Status(Errc::kInvalidInput, "the world request is not JSON");
        auto w = std::make_unique<trainrig_train_world>();
        TRAINRIG_TRY(tc::move_into(
            tt::cuda::DeviceWorld::open(j.value("rank", 0), j.value("world", 1),
                                        j.value("local_rank", 0), from_hex(j.value("nccl_id", ""))),
            w->world));
        *out = w.release();
        return ok_status();
    });
}

void trainrig_train_world_close(trainrig_train_world* w) { delete w; }

char* trainrig_train_world_device(trainrig_train_world* w, char** json) {
    return tt::plugin_call([&]() -> Status {
        auto d = w->world->describe();
        if (!d.ok()) return d.status();
        *json = static_cast<char*>(std::malloc(d->size() + 1));
        if (*json == nullptr) return Status(Errc::kInternal, "out of host memory");
        std::memcpy(*json, d->c_str(), d->size() + 1);
        return ok_status();
    });
}

char* trainrig_train_world_all_reduce(trainrig_train_world* w, void* data, size_t n, int dtype) {
    return tt::plugin_call(
        [&] { return w->world->all_reduce(data, n, dtype == 1 ? ncclDouble : ncclFloat); });
}

char* trainrig_train_world_broadcast(trainrig_train_world* w, void* data, size_t bytes, int root) {
    return tt::plugin_call([&] { return w->world->broadcast(data, bytes, root); });
}

char* trainrig_train_model_open(trainrig_train_world* w, const char* config_json,
                                trainrig_train_model** out) {
    return tt::plugin_call([&] { return open_model(w, config_json, out); });
}

void trainrig_train_model_close(trainrig_train_model* m) {
    // An all-reduce that never finished (a peer is gone) keeps an NCCL kernel on the model's
    // gradients: abort it before their memory is freed, or cudaFree waits for ever.
    if (m && m->reduce_pending) m->w->world->abort();
    delete m;
}

char* trainrig_train_set_state(trainrig_train_model* m, const float* params, const float* adam_m,
                               const float* adam_v) {
    return tt::plugin_call([&] { return set_state(m, params, adam_m, adam_v); });
}

char* trainrig_train_get_state(trainrig_train_model* m, float* params, float* adam_m,
                               float* adam_v) {
    return tt::plugin_call([&] { return get_state(m, params, adam_m, adam_v); });
}

char* trainrig_train_get_grads(trainrig_train_model* m, float* grads) {
    return tt::plugin_call([&]() -> Status {
        // After the all-reduce, if one is under way.
        TRAINRIG_TRY(finish_reduce(m));
        TRAINRIG_TRY(tc::wait_stream(m->gpt->stream()));
        CUDA_TRY(cudaMemcpy(grads, m->gpt->grads(), m->gpt->layout().total() * sizeof(float),
                            cudaMemcpyDeviceToHost));
        return ok_status();
    });
}

char* trainrig_train_get_logits(trainrig_train_model* m, float* logits, size_t rows) {
    return tt::plugin_call([&] { return m->gpt->get_logits(logits, rows); });
}

char* trainrig_train_zero_grads(trainrig_train_model* m) {
    return tt::plugin_call([&] { return m->gpt->zero_grads(); });
}

char* trainrig_train_stage(trainrig_train_model* m, const uint32_t* inputs, const uint32_t* targets,
                           int batch, int seq) {
    return tt::plugin_call([&] { return m->tokens->stage(inputs, targets, batch, seq); });
}

char* trainrig_train_forward(trainrig_train_model* m, const uint32_t* inputs,
                             const uint32_t* targets, int batch, int seq, double* loss) {
    return tt::plugin_call([&] { return forward(m, inputs, targets, batch, seq, loss); });
}

char* trainrig_train_backward(trainrig_train_model* m, float loss_scale, int last) {
    return tt::plugin_call([&] { return backward(m, loss_scale, last != 0); });
}

char* trainrig_train_finish_reduce(trainrig_train_model* m) {
    return tt::plugin_call([&] { return finish_reduce(m); });
}

char* trainrig_train_grad_norm(trainrig_train_model* m, double* norm) {
    return tt::plugin_call([&]() -> Status {
        TRAINRIG_TRY(m->phases.begin(Phase::kOptimizer, m->gpt->stream()));
        auto s = m->gpt->grad_sum_squares();
        if (!s.ok()) return s.status();
        *norm = std::sqrt(*s);
        return ok_status();
    });
}

char* trainrig_train_update(trainrig_train_model* m, double lr, int64_t t, double norm) {
    return tt::plugin_call([&]() -> Status {
        TRAINRIG_TRY(m->gpt->update(lr, t, norm));
        return m->phases.end(Phase::kOptimizer, m->gpt->stream());
    });
}

char* trainrig_train_step_times(trainrig_train_model* m, double* seconds, int* measured) {
    return tt::plugin_call([&]() -> Status {
        // A fault in the work backward and update queued surfaces here, named as such.
        TRAINRIG_TRY(tc::wait_stream(m->gpt->stream()));
        auto t = m->phases.take();
        if (!t.ok()) return t.status();
        for (size_t i = 0; i < tt::cuda::kPhaseCount; ++i) seconds[i] = (*t)[i];
        *measured = 1;
        return ok_status();
    });
}

uint64_t trainrig_train_device_bytes(trainrig_train_model* m) {
    // The model's buffers and the two staged token slots.
    return m->gpt->allocated_bytes() + m->tokens->device_bytes();
}

}  // extern "C"
