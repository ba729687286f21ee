// A stand-in for libtrainrig_train_cuda.so that answers train_plugin_abi.h with the CPU backend,
// so the path `trainrig train --backend cuda` takes (dlopen, the world, the model, state in and
// out, the error channel) runs and is checked on machines without a GPU. One rank only.
// FAKE_TRAIN_DEVICE_MEMORY (bytes) makes model_open fail as a full device would.
// FAKE_TRAIN_OOM_ABOVE_BATCH (sequences) makes model_open of a larger batch fail as cudaMalloc
// does on a full device, in the CUDA backend's words; FAKE_TRAIN_FREE_BYTES is the free (and
// total) memory the device reports (0 when unset), for the micro-batch search.
// FAKE_TRAIN_PHASE_TIMES ("forward,backward,comm,optimizer" seconds) is what step_times reports
// for every step, as a device timing its phases with events would; unset, it reports none.
// How a device fails within one process, for the micro-batch trials:
//   FAKE_TRAIN_STALE_OOM=1: after an out-of-memory, the next forward in the same process fails
//     as a launch check that found the allocation's error left behind would;
//   FAKE_TRAIN_FAULT_AT_BATCH=N: forward at batch N faults as a kernel does, and every later
//     call of the process fails the same way (a sticky error: the context is lost);
//   FAKE_TRAIN_HANG_AT_BATCH=N: forward at batch N never returns, as on a hung GPU; it first
//     starts a second process that waits too, and writes "<its pid> <the second's pid>" to
//     FAKE_TRAIN_HANG_PIDS when set, so a test can see that both were ended.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "train/backend.h"
#include "train/communicator.h"
#include "train/param_layout.h"
#include "train/train_plugin_support.h"

#pragma GCC visibility push(default)
#include "train/train_plugin_abi.h"
#pragma GCC visibility pop

using trainrig::Errc;
using trainrig::ok_status;
using trainrig::Status;
namespace tt = trainrig::train;

struct trainrig_train_world {
    tt::LocalCommunicator comm;
};

struct trainrig_train_model {
    std::unique_ptr<tt::Backend> backend;
    tt::ModelConfig config;
    size_t total = 0;
    uint64_t bytes = 0;
    std::vector<uint32_t> staged_inputs, staged_targets;  // what stage() was given
    bool staged = false;
    int staged_B = 0, staged_T = 0;
    size_t max_tokens = 0;
    size_t logits_rows = 0;  // of the last forward; 0 once backward consumed them
};

namespace {

// What this process's device has been through (FAKE_TRAIN_STALE_OOM, FAKE_TRAIN_FAULT_AT_BATCH).
bool g_oom_left_behind = false;
bool g_context_lost = false;

const char* const kFault =
    "cudaStreamQuery(s): an illegal memory access was encountered (device_memory.h:143)";

bool env_is(const char* name, int value) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::atoi(v) == value;
}

[[noreturn]] void hang() {
    const pid_t waiter = ::fork();
    if (waiter == 0)
        for (;;) ::pause();
    if (const char* path = std::getenv("FAKE_TRAIN_HANG_PIDS")) {
        if (FILE* f = std::fopen(path, "w")) {
            std::fprintf(f, "%d %d\n", static_cast<int>(::getpid()), static_cast<int>(waiter));
            std::fclose(f);
        }
    }
    for (;;) ::pause();
}

}  // namespace

extern "C" {

int trainrig_train_abi(void) { return TRAINRIG_TRAIN_ABI; }
void trainrig_train_free(char* text) { std::free(text); }

char* trainrig_train_unique_id(unsigned char*, size_t, size_t*) {
    return tt::plugin_error(Status(Errc::kUnsupported, "the fake device has no NCCL"));
}

char* trainrig_train_world_open(const char* config_json, trainrig_train_world** out) {
    return tt::plugin_call([&]() -> Status {
        const auto j = nlohmann::json::parse(config_json, nullptr, false);
        if (!j.is_object() || j.value("world", 0) != 1)
            return Status(Errc::kUnsupported, "the fake device runs one rank");
        *out = new trainrig_train_world();
        return ok_status();
    });
}

void trainrig_train_world_close(trainrig_train_world* w) { delete w; }

char* trainrig_train_world_device(trainrig_train_world*, char** json) {
    const char* free_bytes = std::getenv("FAKE_TRAIN_FREE_BYTES");
    const unsigned long long free = free_bytes ? std::strtoull(free_bytes, nullptr, 10) : 0;
    const std::string d =
        fmt::format(R"({{"index":0,"name":"trainrig fake device","pci_bus_id":"00000000:00:00.0",)"
                    R"("compute_capability":"0.0","memory_bytes":{0},"free_bytes":{0}}})",
                    free);
    *json = static_cast<char*>(std::malloc(d.size() + 1));
    std::memcpy(*json, d.c_str(), d.size() + 1);
    return nullptr;
}

char* trainrig_train_world_all_reduce(trainrig_train_world*, void*, size_t, int) { return nullptr; }
char* trainrig_train_world_broadcast(trainrig_train_world*, void*, size_t, int) { return nullptr; }

char* trainrig_train_model_open(trainrig_train_world*, const char* config_json,
                                trainrig_train_model** out) {
    return tt::plugin_call([&]() -> Status {
        auto r = tt::parse_model_request(config_json);
        if (!r.ok()) return r.status();
        auto m = std::make_unique<trainrig_train_model>();
        m->config = r->model;
        m->total = tt::ParamLayout(r->model).total();
        m->max_tokens = static_cast<size_t>(r->batch) * static_cast<size_t>(r->seq);
        m->bytes = tt::cpu_training_bytes(r->model, r->batch, r->seq);
        if (g_context_lost) return Status(Errc::kIo, kFault);
        if (const char* above = std::getenv("FAKE_TRAIN_OOM_ABOVE_BATCH");
            above && r->batch > std::atoi(above)) {
            g_oom_left_behind = std::getenv("FAKE_TRAIN_STALE_OOM") != nullptr;
            return Status(Errc::kIo, "cudaMalloc(&p, bytes): out of memory (device_memory.h:71)");
        }
        if (const char* cap = std::getenv("FAKE_TRAIN_DEVICE_MEMORY");
            cap && m->bytes > std::strtoull(cap, nullptr, 10))
            return Status(Errc::kInvalidInput,
                          fmt::format("this run needs {} bytes of device memory, but only {} are "
                                      "free",
                                      m->bytes, cap),
                          "lower --batch and raise --grad-accum to keep the tokens per step");
        m->backend = tt::make_cpu_backend(r->model, r->opt);
        *out = m.release();
        return ok_status();
    });
}

void trainrig_train_model_close(trainrig_train_model* m) { delete m; }

char* trainrig_train_set_state(trainrig_train_model* m, const float* params, const float* am,
                               const float* av) {
    return tt::plugin_call([&] {
        tt::CheckpointState s;
        s.params.assign(params, params + m->total);
        s.adam_m.assign(m->total, 0.0f);
        s.adam_v.assign(m->total, 0.0f);
        if (am && av) {
            std::memcpy(s.adam_m.data(), am, m->total * sizeof(float));
            std::memcpy(s.adam_v.data(), av, m->total * sizeof(float));
        }
        return m->backend->load_state(s);
    });
}

char* trainrig_train_get_state(trainrig_train_model* m, float* params, float* am, float* av) {
    return tt::plugin_call([&] {
        tt::CheckpointState s;
        TRAINRIG_TRY(m->backend->save_state(s));
        if (params) std::memcpy(params, s.params.data(), m->total * sizeof(float));
        if (am) std::memcpy(am, s.adam_m.data(), m->total * sizeof(float));
        if (av) std::memcpy(av, s.adam_v.data(), m->total * sizeof(float));
        return ok_status();
    });
}

char* trainrig_train_get_grads(trainrig_train_model* m, float* grads) {
    return tt::plugin_call([&] {
        std::vector<float> g;
        TRAINRIG_TRY(m->backend->copy_grads(g));
        std::memcpy(grads, g.data(), g.size() * sizeof(float));
        return ok_status();
    });
}

char* trainrig_train_get_logits(trainrig_train_model* m, float* logits, size_t rows) {
    return tt::plugin_call([&]() -> Status {
        std::vector<float> all;
        TRAINRIG_TRY(m->backend->copy_logits(all));
        if (rows == 0 || rows != m->logits_rows ||
            all.size() < rows * static_cast<size_t>(m->config.padded_vocab))
            return Status(Errc::kInternal, "the logits asked for are not the last forward's");
        std::memcpy(logits, all.data(), rows * m->config.padded_vocab * sizeof(float));
        return ok_status();
    });
}

char* trainrig_train_zero_grads(trainrig_train_model* m) {
    return tt::plugin_call([&] { return m->backend->zero_grads(); });
}

char* trainrig_train_stage(trainrig_train_model* m, const uint32_t* inputs, const uint32_t* targets,
                           int batch, int seq) {
    return tt::plugin_call([&]() -> Status {
        m->staged = false;
        const size_t n = static_cast<size_t>(batch) * static_cast<size_t>(seq);
        if (inputs == nullptr || batch < 1 || seq < 1 || n > m->max_tokens)
            return Status(Errc::kInvalidInput, "the staged batch does not fit the model");
        m->staged_inputs.assign(inputs, inputs + n);
        m->staged_targets.clear();
        if (targets) m->staged_targets.assign(targets, targets + n);
        m->staged = true;
        m->staged_B = batch;
        m->staged_T = seq;
        return ok_status();
    });
}

char* trainrig_train_forward(trainrig_train_model* m, const uint32_t* inputs,
                             const uint32_t* targets, int batch, int seq, double* loss) {
    return tt::plugin_call([&]() -> Status {
        if (env_is("FAKE_TRAIN_HANG_AT_BATCH", batch)) hang();
        if (env_is("FAKE_TRAIN_FAULT_AT_BATCH", batch)) g_context_lost = true;
        if (g_context_lost) return Status(Errc::kIo, kFault);
        if (std::exchange(g_oom_left_behind, false))
            return Status(Errc::kIo, "cudaGetLastError(): out of memory (gpt_cuda.cpp:161)");
        if (inputs == nullptr) {
            if (!m->staged || m->staged_B != batch || m->staged_T != seq)
                return Status(Errc::kInternal, "forward of a batch never staged");
            inputs = m->staged_inputs.data();
            targets = m->staged_targets.empty() ? nullptr : m->staged_targets.data();
        }
        m->staged = false;
        auto r = m->backend->forward(inputs, targets, batch, seq);
        if (!r.ok()) return r.status();
        *loss = *r;
        m->logits_rows = static_cast<size_t>(batch) * static_cast<size_t>(seq);
        return ok_status();
    });
}

char* trainrig_train_backward(trainrig_train_model* m, float loss_scale, int last) {
    m->logits_rows = 0;  // backward turns them into their gradient
    return tt::plugin_call([&] { return m->backend->backward(loss_scale, last != 0); });
}

char* trainrig_train_finish_reduce(trainrig_train_model*) { return nullptr; }

char* trainrig_train_grad_norm(trainrig_train_model* m, double* norm) {
    return tt::plugin_call([&]() -> Status {
        auto r = m->backend->grad_norm();
        if (!r.ok()) return r.status();
        *norm = *r;
        return ok_status();
    });
}

char* trainrig_train_update(trainrig_train_model* m, double lr, int64_t t, double norm) {
    return tt::plugin_call([&] { return m->backend->update(lr, t, norm); });
}

char* trainrig_train_step_times(trainrig_train_model*, double* seconds, int* measured) {
    *measured = 0;
    const char* given = std::getenv("FAKE_TRAIN_PHASE_TIMES");
    if (given == nullptr) return nullptr;
    return tt::plugin_call([&]() -> Status {
        char* at = const_cast<char*>(given);
        for (int i = 0; i < 4; ++i) {
            seconds[i] = std::strtod(at, &at);
            if (*at != (i == 3 ? '\0' : ','))
                return Status(Errc::kInternal, "bad FAKE_TRAIN_PHASE_TIMES");
            if (*at == ',') ++at;
        }
        *measured = 1;
        return ok_status();
    });
}

uint64_t trainrig_train_device_bytes(trainrig_train_model* m) { return m->bytes; }

}  // extern "C"
