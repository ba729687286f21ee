#include "train/device_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/fnv1a.h"
#include "core/local_rank.h"
#include "core/plugin_library.h"
#include "train/grad_buckets.h"
#include "train/init_weights.h"
#include "train/param_layout.h"
#include "train/train_plugin_abi.h"

namespace trainrig::train {

// The plugin's entry points, resolved once. Named (not in the anonymous namespace below): the
// DeviceWorld of device_plugin.h holds one.
struct TrainPluginApi {
    int (*abi)();
    void (*free)(char*);
    char* (*unique_id)(unsigned char*, size_t, size_t*);
    char* (*world_open)(const char*, trainrig_train_world**);
    void (*world_close)(trainrig_train_world*);
    char* (*world_device)(trainrig_train_world*, char**);
    char* (*world_all_reduce)(trainrig_train_world*, void*, size_t, int);
    char* (*world_broadcast)(trainrig_train_world*, void*, size_t, int);
    char* (*model_open)(trainrig_train_world*, const char*, trainrig_train_model**);
    void (*model_close)(trainrig_train_model*);
    char* (*set_state)(trainrig_train_model*, const float*, const float*, const float*);
    char* (*get_state)(trainrig_train_model*, float*, float*, float*);
    char* (*get_grads)(trainrig_train_model*, float*);
    char* (*get_logits)(trainrig_train_model*, float*, size_t);
    char* (*zero_grads)(trainrig_train_model*);
    char* (*stage)(trainrig_train_model*, const uint32_t*, const uint32_t*, int, int);
    char* (*forward)(trainrig_train_model*, const uint32_t*, const uint32_t*, int, int, double*);
    char* (*backward)(trainrig_train_model*, float, int);
    char* (*finish_reduce)(trainrig_train_model*);
    char* (*grad_norm)(trainrig_train_model*, double*);
    char* (*update)(trainrig_train_model*, double, int64_t, double);
    char* (*step_times)(trainrig_train_model*, double*, int*);
    uint64_t (*device_bytes)(trainrig_train_model*);
};

namespace {

constexpr const char* kPluginName = "libtrainrig_train_cuda.so";

template <class F>
bool resolve(void* handle, const char* symbol, F& fn) {
    fn = reinterpret_cast<F>(::dlsym(handle, symbol));
    return fn != nullptr;
}

Result<const TrainPluginApi*> load_api() {
    static const Result<TrainPluginApi> loaded = []() -> Result<TrainPluginApi> {
        const PluginLibrary lib = load_plugin_library(kPluginName, "TRAINRIG_TRAIN_PLUGIN");
        if (!lib.handle)
            return Status(Errc::kUnsupported,
                          lib.error.empty()
                              ? fmt::format("the cuda backend is not available: this trainrig was "
                                            "built without CUDA, or {} is not beside it",
                                            kPluginName)
                              : fmt::format("the cuda backend could not be loaded: {}", lib.error));
        TrainPluginApi a{};
        void* h = lib.handle;
        const bool all = resolve(h, "trainrig_train_abi", a.abi) &&
                         resolve(h, "trainrig_train_free", a.free) &&
                         resolve(h, "trainrig_train_unique_id", a.unique_id) &&
                         resolve(h, "trainrig_train_world_open", a.world_open) &&
                         resolve(h, "trainrig_train_world_close", a.world_close) &&
                         resolve(h, "trainrig_train_world_device", a.world_device) &&
                         resolve(h, "trainrig_train_world_all_reduce", a.world_all_reduce) &&
                         resolve(h, "trainrig_train_world_broadcast", a.world_broadcast) &&
                         resolve(h, "trainrig_train_model_open", a.model_open) &&
                         resolve(h, "trainrig_train_model_close", a.model_close) &&
                         resolve(h, "trainrig_train_set_state", a.set_state) &&
                         resolve(h, "trainrig_train_get_state", a.get_state) &&
                         resolve(h, "trainrig_train_get_grads", a.get_grads) &&
                         resolve(h, "trainrig_train_get_logits", a.get_logits) &&
                         resolve(h, "trainrig_train_zero_grads", a.zero_grads) &&
                         resolve(h, "trainrig_train_stage", a.stage) &&
                         resolve(h, "trainrig_train_forward", a.forward) &&
                         resolve(h, "trainrig_train_backward", a.backward) &&
                         resolve(h, "trainrig_train_finish_reduce", a.finish_reduce) &&
                         resolve(h, "trainrig_train_grad_norm", a.grad_norm) &&
                         resolve(h, "trainrig_train_update", a.update) &&
                         resolve(h, "trainrig_train_step_times", a.step_times) &&
                         resolve(h, "trainrig_train_device_bytes", a.device_bytes);
        if (!all)
            return Status(Errc::kUnsupported,
                          fmt::format("{} lacks some trainrig_train_* entry points", kPluginName));
        if (a.abi() != TRAINRIG_TRAIN_ABI)
            return Status(Errc::kUnsupported,
                          fmt::format("{} speaks interface version {}, this trainrig {}",
                                      kPluginName, a.abi(), TRAINRIG_TRAIN_ABI));
        return a;
    }();
    if (!loaded.ok()) return loaded.status();
    return &*loaded;
}

// A plugin answer: null, or "errc<TAB>sentence<TAB>next step" it allocated (train_plugin_abi.h).
Status check(const TrainPluginApi& api, char* error) {
    if (error == nullptr) return ok_status();
    const std::string text(error);
    api.free(error);
    const size_t a = text.find('\t');
    const size_t b = a == std::string::npos ? a : text.find('\t', a + 1);
    if (b == std::string::npos) return Status(Errc::kIo, text);
    return Status(errc_from_name(text.substr(0, a)), text.substr(a + 1, b - a - 1),
                  text.substr(b + 1));
}

int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    return *end == '\0' && x >= 0 && x < (1 << 30) ? static_cast<int>(x) : fallback;
}

std::string to_hex(const unsigned char* bytes, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
    return out;
}

}  // namespace

class DeviceWorld {
public:
    DeviceWorld(const TrainPluginApi& api, trainrig_train_world* handle, int rank, int world,
                bool torchrun)
        : api_(api), handle_(handle), rank_(rank), world_(world), torchrun_(torchrun) {}
    ~DeviceWorld() { api_.world_close(handle_); }
    DeviceWorld(const DeviceWorld&) = delete;
    DeviceWorld& operator=(const DeviceWorld&) = delete;

    const TrainPluginApi& api() const { return api_; }
    trainrig_train_world* handle() const { return handle_; }
    int rank() const { return rank_; }
    int world() const { return world_; }
    bool torchrun() const { return torchrun_; }
    DeviceInfo info;

private:
    const TrainPluginApi& api_;
    trainrig_train_world* handle_;
    int rank_, world_;
    bool torchrun_;
};

namespace {

Result<DeviceInfo> describe(const TrainPluginApi& api, trainrig_train_world* w) {
    char* text = nullptr;
    TRAINRIG_TRY(check(api, api.world_device(w, &text)));
    const auto j = nlohmann::json::parse(text ? text : "", nullptr, false);
    if (text) api.free(text);
    if (!j.is_object())
        return Status(Errc::kInternal, "the cuda backend described its device badly");
    return device_info_from_json(j);
}

class DeviceCommunicator final : public Communicator {
public:
    explicit DeviceCommunicator(std::shared_ptr<DeviceWorld> w) : w_(std::move(w)) {}
    int rank() const override { return w_->rank(); }
    int world() const override { return w_->world(); }
    std::string name() const override { return "nccl"; }
    Status all_reduce_sum(float* data, size_t n) override {
        return check(w_->api(), w_->api().world_all_reduce(w_->handle(), data, n, 0));
    }
    Status all_reduce_sum(double* data, size_t n) override {
        return check(w_->api(), w_->api().world_all_reduce(w_->handle(), data, n, 1));
    }
    Status broadcast(void* data, size_t bytes, int root) override {
        return check(w_->api(), w_->api().world_broadcast(w_->handle(), data, bytes, root));
    }
    Status barrier() override {
        double x = 0;
        return all_reduce_sum(&x, 1);
    }

private:
    std::shared_ptr<DeviceWorld> w_;
};

class DeviceBackend final : public Backend {
public:
    DeviceBackend(std::shared_ptr<DeviceWorld> w, trainrig_train_model* m, const ModelConfig& c)
        : w_(std::move(w)), api_(w_->api()), m_(m), config_(c), total_(ParamLayout(c).total()) {}
    ~DeviceBackend() override { api_.model_close(m_); }

    std::string name() const override { return "cuda"; }
    const ModelConfig& config() const override { return config_; }

    Status init_weights(uint64_t seed) override {
        // On the host with the CPU backend's generator: every backend starts from the same
        // weights, so a CUDA run is comparable with the CPU reference from step 0.
        std::vector<float> params(total_);
        init_model_weights(ParamLayout(config_), config_.layers, seed, std::span<float>(params));
        return check(api_, api_.set_state(m_, params.data(), nullptr, nullptr));
    }
    Status zero_grads() override { return check(api_, api_.zero_grads(m_)); }
    Result<double> forward(const uint32_t* inputs, const uint32_t* targets, int B,
                           int Tn) override {
        double loss = 0;
        // The micro-batch stage() already sent goes in as null: the plugin takes its copy.
        const bool staged = staged_.inputs == inputs && staged_.targets == targets &&
                            staged_.B == B && staged_.T == Tn && inputs != nullptr;
        staged_ = Staged{};
        TRAINRIG_TRY(check(api_, api_.forward(m_, staged ? nullptr : inputs,
                                              staged ? nullptr : targets, B, Tn, &loss)));
        rows_ = static_cast<size_t>(B) * static_cast<size_t>(Tn);
        return loss;
    }
    Status stage(const uint32_t* inputs, const uint32_t* targets, int B, int Tn) override {
        staged_ = Staged{};
        TRAINRIG_TRY(check(api_, api_.stage(m_, inputs, targets, B, Tn)));
        staged_ = Staged{inputs, targets, B, Tn};
        return ok_status();
    }
    Status backward(float loss_scale, bool last) override {
        return check(api_, api_.backward(m_, loss_scale, last ? 1 : 0));
    }
    // The gradients travel over NCCL inside the plugin (started by the last backward); the
    // host communicator carries only the small agreements.
    Status all_reduce_grads(Communicator&) override { return check(api_, api_.finish_reduce(m_)); }
    Result<double> grad_norm() override {
        double norm = 0;
        TRAINRIG_TRY(check(api_, api_.grad_norm(m_, &norm)));
        return norm;
    }
    Status update(double lr, int64_t t, double norm) override {
        return check(api_, api_.update(m_, lr, t, norm));
    }
    Result<std::optional<DeviceTimes>> take_device_times() override {
        double s[4] = {};
        int measured = 0;
        TRAINRIG_TRY(check(api_, api_.step_times(m_, s, &measured)));
        if (measured == 0) return std::optional<DeviceTimes>();
        return std::optional<DeviceTimes>(DeviceTimes{s[0], s[1], s[2], s[3]});
    }
    Status save_state(CheckpointState& s) override {
        for (auto* v : {&s.params, &s.adam_m, &s.adam_v}) v->resize(total_);
        return check(api_, api_.get_state(m_, s.params.data(), s.adam_m.data(), s.adam_v.data()));
    }
    Status load_state(const CheckpointState& s) override {
        if (s.params.size() != total_ || s.adam_m.size() != total_ || s.adam_v.size() != total_)
            return Status(Errc::kInvalidInput,
                          "the checkpoint does not hold this model's parameters");
        return check(api_, api_.set_state(m_, s.params.data(), s.adam_m.data(), s.adam_v.data()));
    }
    Status copy_grads(std::vector<float>& out) override {
        out.resize(total_);
        return check(api_, api_.get_grads(m_, out.data()));
    }
    Status copy_logits(std::vector<float>& out) override {
        out.resize(rows_ * static_cast<size_t>(config_.padded_vocab));
        return check(api_, api_.get_logits(m_, out.data(), rows_));
    }
    Result<uint64_t> params_digest() override {
        std::vector<float> params(total_);
        TRAINRIG_TRY(check(api_, api_.get_state(m_, params.data(), nullptr, nullptr)));
        return fnv1a64(params.data(), params.size() * sizeof(float));
    }
    size_t peak_memory_bytes() const override { return api_.device_bytes(m_); }

private:
    std::shared_ptr<DeviceWorld> w_;  // outlives the model
    const TrainPluginApi& api_;
    trainrig_train_model* m_;
    ModelConfig config_;
    size_t total_;
    size_t rows_ = 0;  // of the last forward
    struct Staged {
        const uint32_t *inputs = nullptr, *targets = nullptr;
        int B = 0, T = 0;
    } staged_;  // what the plugin holds for the next forward
};

}  // namespace

Result<std::shared_ptr<DeviceWorld>> open_device_world(Communicator& host, bool alone) {
    auto api = load_api();
    if (!api.ok()) return api.status();
    const TrainPluginApi& a = **api;
    int rank = host.rank(), world = host.world();
    bool torchrun = false;
    if (!alone && world == 1 && torchrun_world_size() > 1) {
        torchrun = true;
        rank = env_int("RANK", -1);
        world = torchrun_world_size();
        if (rank < 0 || rank >= world)
            return Status(Errc::kInvalidInput,
                          fmt::format("WORLD_SIZE is {} but RANK is not a rank of it", world));
        if (std::getenv("NCCL_COMM_ID") == nullptr)
            return Status(Errc::kInvalidInput,
                          "RANK and WORLD_SIZE are set but NCCL_COMM_ID is not",
                          "set NCCL_COMM_ID=<rank 0 host>:<free port> for every rank, or launch "
                          "with mpirun");
    }
    // The plugin takes the GPU of the launcher's local rank (core/local_rank.h), as the NCCL
    // benchmark does.
    auto local = local_rank_from_process_env();
    if (!local.ok()) return local.status();
    nlohmann::json config = {
        {"rank", rank}, {"world", world}, {"local_rank", local->local_rank.value_or(0)}};
    if (world > 1) {
        unsigned char id[256] = {};
        size_t size = 0;
        Status got;
        // Under mpirun only rank 0 makes the id and the others receive it; torchrun-style,
        // NCCL_COMM_ID gives every rank the same one.
        if (torchrun || rank == 0) got = check(a, a.unique_id(id, sizeof id, &size));
        if (!torchrun) {
            TRAINRIG_TRY(host.broadcast(&size, sizeof size, 0));
            TRAINRIG_TRY(host.broadcast(id, sizeof id, 0));
        }
        TRAINRIG_TRY(got);
        if (size == 0 || size > sizeof id)
            return Status(Errc::kInternal, "the cuda backend made no NCCL id");
        config["nccl_id"] = to_hex(id, size);
    }
    trainrig_train_world* handle = nullptr;
    TRAINRIG_TRY(check(a, a.world_open(config.dump().c_str(), &handle)));
    auto w = std::make_shared<DeviceWorld>(a, handle, rank, world, torchrun);
    auto info = describe(a, handle);
    if (!info.ok()) return info.status();
    w->info = std::move(info).value();
    return w;
}

const DeviceInfo& device_info(const DeviceWorld& w) { return w.info; }

nlohmann::json device_info_json(const DeviceInfo& d) {
    return {{"index", d.index},
            {"name", d.name},
            {"pci_bus_id", d.pci_bus_id},
            {"compute_capability", d.compute_capability},
            {"memory_bytes", d.memory_bytes},
            {"free_bytes", d.free_bytes}};
}

DeviceInfo device_info_from_json(const nlohmann::json& j) {
    DeviceInfo d;
    d.index = j.value("index", 0);
    d.name = j.value("name", "");
    d.pci_bus_id = j.value("pci_bus_id", "");
    d.compute_capability = j.value("compute_capability", "");
    d.memory_bytes = j.value("memory_bytes", uint64_t{0});
    d.free_bytes = j.value("free_bytes", uint64_t{0});
    return d;
}

bool needs_device_communicator(const DeviceWorld& w) { return w.torchrun(); }

std::unique_ptr<Communicator> make_device_communicator(std::shared_ptr<DeviceWorld> w) {
    return std::make_unique<DeviceCommunicator>(std::move(w));
}

Result<std::unique_ptr<Backend>> make_device_backend(std::shared_ptr<DeviceWorld> w,
                                                     const ModelConfig& config,
                                                     const OptimizerConfig& opt, int batch,
                                                     int seq) {
    const nlohmann::json request = {{"model", model_config_json(config)},
                                    {"optimizer",
                                     {{"beta1", opt.beta1},
                                      {"beta2", opt.beta2},
                                      {"eps", opt.eps},
                                      {"weight_decay", opt.weight_decay},
                                      {"grad_clip", opt.grad_clip}}},
                                    {"batch", batch},
                                    {"seq", seq},
                                    {"bucket_bytes", kDefaultBucketBytes}};
    const TrainPluginApi& a = w->api();
    trainrig_train_model* m = nullptr;
    TRAINRIG_TRY(check(a, a.model_open(w->handle(), request.dump().c_str(), &m)));
    return std::unique_ptr<Backend>(new DeviceBackend(std::move(w), m, config));
}

Result<std::unique_ptr<Backend>> make_lone_device_backend(const ModelConfig& config,
                                                          const OptimizerConfig& opt, int batch,
                                                          int seq) {
    LocalCommunicator alone;
    auto w = open_device_world(alone, true);
    if (!w.ok()) return w.status();
    return make_device_backend(std::move(w).value(), config, opt, batch, seq);
}

Result<DeviceInfo> describe_lone_device() {
    LocalCommunicator alone;
    auto w = open_device_world(alone, true);
    if (!w.ok()) return w.status();
    return device_info(**w);
}

}  // namespace trainrig::train
