#include "train/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/read_all.h"
#include "train/param_layout.h"

namespace trainrig::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "trainrig.train.checkpoint";
constexpr int kFormatVersion = 1;

uint32_t crc_of(const void* data, size_t bytes) {
    return static_cast<uint32_t>(
        crc32_z(crc32_z(0L, Z_NULL, 0), static_cast<const Bytef*>(data), bytes));
}

Status write_durable(const std::string& path, const void* data, size_t bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status(errno, "create", path);
    const auto* p = static_cast<const char*>(data);
    for (size_t done = 0; done < bytes;) {
        const ssize_t n = ::write(fd, p + done, std::min<size_t>(bytes - done, 1 << 30));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return errno_status(err, "write", path);
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        return errno_status(err, "fsync", path);
    }
    if (::close(fd) != 0) return errno_status(errno, "close", path);
    return ok_status();
}

Status fsync_dir(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", path);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    return rc == 0 ? ok_status() : errno_status(err, "fsync", path);
}

// A test hook, like tune's TRAINRIG_TUNE_CRASH_AFTER: TRAINRIG_TRAIN_CRASH_IN_SAVE=POINT@STEP
// dies by SIGKILL at a named point of the save of STEP, to prove that no crash point loses the
// previous checkpoint.
void crash_point(const char* name, int64_t step) {
    const char* at = std::getenv("TRAINRIG_TRAIN_CRASH_IN_SAVE");
    if (at != nullptr && fmt::format("{}@{}", name, step) == at) ::raise(SIGKILL);
}

std::optional<int64_t> step_of(const std::string& name) {
    if (name.size() != 14 || name.compare(0, 5, "step-") != 0) return std::nullopt;
    int64_t v = 0;
    for (size_t i = 5; i < name.size(); ++i) {
        if (name[i] < '0' || name[i] > '9') return std::nullopt;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

// Reads straight into the float vector (a 1.5B model's file is 6 GB: no second copy).
Result<std::vector<float>> read_floats(const std::string& path, const json& entry) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", path);
    struct stat st {};
    ::fstat(fd, &st);
    const auto size = static_cast<size_t>(st.st_size);
    const auto recorded = entry.at("bytes").get<size_t>();
    if (size != recorded || size % sizeof(float) != 0) {
        ::close(fd);
        return Status(
            Errc::kInvalidInput,
            fmt::format("{} has {} bytes, the checkpoint recorded {}", path, size, recorded));
    }
    std::vector<float> out(size / sizeof(float));
    auto* p = reinterpret_cast<char*>(out.data());
    for (size_t done = 0; done < size;) {
        const ssize_t n = ::read(fd, p + done, std::min<size_t>(size - done, 1 << 30));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            ::close(fd);
            return errno_status(err, "read", path);
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    if (crc_of(out.data(), size) != entry.at("crc32").get<uint32_t>())
        return Status(Errc::kInvalidInput, fmt::format("{} fails its CRC-32 check", path));
    return out;
}

Result<std::string> read_state_text(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "open", path);
    return read_all(fd, path, 16u << 20);
}

// *other_shape is set when the folder is sound but holds another model shape.
Result<CheckpointState> read_checkpoint(const std::string& folder, const ModelConfig& expected,
                                        bool* other_shape) {
    auto text = read_state_text(folder + "/state.json");
    if (!text.ok()) return text.status();
    CheckpointState s;
    json files;
    try {
        const json j = json::parse(*text);
        if (j.at("format").get<std::string>() != kFormat ||
            j.at("version").get<int>() != kFormatVersion)
            return Status(Errc::kInvalidInput,
                          fmt::format("{}/state.json is not a version {} {} file", folder,
                                      kFormatVersion, kFormat));
        auto model = model_config_from_json(j.at("model"), folder + "/state.json");
        if (!model.ok()) return model.status();
        s.model = std::move(model).value();
        if (j.at("config_hash").get<std::string>() != config_hash(expected)) {
            *other_shape = true;
            return Status(Errc::kInvalidInput,
                          fmt::format("checkpoint {} is of a different model ({}) than this run "
                                      "({})",
                                      folder, describe(s.model), describe(expected)),
                          "use the same --model/--layers/--heads/--dim/--seq settings, or another "
                          "--ckpt-dir");
        }
        s.step = j.at("step").get<int64_t>();
        s.loader_json = j.at("loader").dump();
        s.rng_state = j.at("rng_state").get<uint64_t>();
        s.seed = j.at("seed").get<uint64_t>();
        s.run_json = j.at("run").dump();
        files = j.at("files");
    } catch (const json::exception& e) {
        return Status(Errc::kInvalidInput, fmt::format("{}/state.json: {}", folder, e.what()));
    }
    try {
        auto params = read_floats(folder + "/model.bin", files.at("model.bin"));
        if (!params.ok()) return params.status();
        s.params = std::move(params).value();
        auto m = read_floats(folder + "/adam_m.bin", files.at("adam_m.bin"));
        if (!m.ok()) return m.status();
        s.adam_m = std::move(m).value();
        auto v = read_floats(folder + "/adam_v.bin", files.at("adam_v.bin"));
        if (!v.ok()) return v.status();
        s.adam_v = std::move(v).value();
        const size_t n = ParamLayout(expected).total();
        if (s.params.size() != n || s.adam_m.size() != n || s.adam_v.size() != n)
            return Status(Errc::kInvalidInput,
                          fmt::format("{} holds {} parameters, the model has {}", folder,
                                      s.params.size(), n));
    } catch (const json::exception& e) {
        return Status(Errc::kInvalidInput, fmt::format("{}/state.json: {}", folder, e.what()));
    }
    return s;
}

}  // namespace

Result<CheckpointStore> CheckpointStore::open(std::string dir, int keep) {
    if (keep < 1)
        return Status(Errc::kInvalidInput, fmt::format("--keep must be at least 1, not {}", keep));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status(Errc::kIo, fmt::format("cannot create {}: {}", dir, ec.message()));
    const std::string lock = dir + "/.lock";
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status(errno, "open", lock);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return Status(Errc::kInvalidInput, fmt::format("another training run is using {}", dir),
                      "wait for it to finish or give this run another --ckpt-dir");
    }
    return CheckpointStore(std::move(dir), keep, fd);
}

CheckpointStore::CheckpointStore(std::string dir, int keep, int lock_fd)
    : dir_(std::move(dir)), keep_(keep), lock_fd_(lock_fd) {}

CheckpointStore::CheckpointStore(CheckpointStore&& o) noexcept
    : dir_(std::move(o.dir_)), keep_(o.keep_), lock_fd_(std::exchange(o.lock_fd_, -1)) {}

CheckpointStore& CheckpointStore::operator=(CheckpointStore&& o) noexcept {
    if (this != &o) {
        if (lock_fd_ >= 0) ::close(lock_fd_);
        dir_ = std::move(o.dir_);
        keep_ = o.keep_;
        lock_fd_ = std::exchange(o.lock_fd_, -1);
    }
    return *this;
}

CheckpointStore::~CheckpointStore() {
    if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string CheckpointStore::folder(int64_t step) const {
    return fmt::format("{}/step-{:09d}", dir_, step);
}

std::vector<int64_t> CheckpointStore::committed_steps() const {
    std::vector<int64_t> steps;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
        const auto step = step_of(e.path().filename().string());
        if (step && fs::exists(e.path() / kCommitMarker, ec)) steps.push_back(*step);
    }
    std::sort(steps.rbegin(), steps.rend());
    return steps;
}

Result<std::string> CheckpointStore::save(const CheckpointState& s) {
    const std::string final_dir = folder(s.step);
    const std::string tmp = fmt::format("{}/.tmp-step-{:09d}-{}", dir_, s.step, ::getpid());
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (::mkdir(tmp.c_str(), 0755) != 0) return errno_status(errno, "create", tmp);
    // A save that fails (disk full, I/O error) takes its partial folder with it.
    struct RemoveUnlessRenamed {
        const std::string& path;
        bool renamed = false;
        ~RemoveUnlessRenamed() {
            std::error_code ignored;
            if (!renamed) fs::remove_all(path, ignored);
        }
    } cleanup{tmp};

    const size_t pbytes = s.params.size() * sizeof(float);
    TRAINRIG_TRY(write_durable(tmp + "/model.bin", s.params.data(), pbytes));
    crash_point("files", s.step);
    const size_t obytes = s.adam_m.size() * sizeof(float);
    TRAINRIG_TRY(write_durable(tmp + "/adam_m.bin", s.adam_m.data(), obytes));
    TRAINRIG_TRY(write_durable(tmp + "/adam_v.bin", s.adam_v.data(), obytes));

    json tensors = json::array();
    const ParamLayout layout(s.model);
    for (const TensorSlot& t : layout.slots())
        tensors.push_back({{"name", t.name}, {"offset", t.offset}, {"elements", t.size}});
    json state = {
        {"format", kFormat},
        {"version", kFormatVersion},
        {"step", s.step},
        {"model", model_config_json(s.model)},
        {"config_hash", config_hash(s.model)},
        {"loader", json::parse(s.loader_json.empty() ? "null" : s.loader_json)},
        {"rng_state", s.rng_state},
        {"seed", s.seed},
        {"run", json::parse(s.run_json.empty() ? "{}" : s.run_json)},
        {"tensors", tensors},
        {"files",
         {{"model.bin",
           {{"bytes", pbytes}, {"crc32", crc_of(s.params.data(), pbytes)}, {"dtype", "f32"}}},
          {"adam_m.bin",
           {{"bytes", obytes}, {"crc32", crc_of(s.adam_m.data(), obytes)}, {"dtype", "f32"}}},
          {"adam_v.bin",
           {{"bytes", obytes}, {"crc32", crc_of(s.adam_v.data(), obytes)}, {"dtype", "f32"}}}}},
    };
    const std::string text = state.dump(2) + "\n";
    TRAINRIG_TRY(write_durable(tmp + "/state.json", text.data(), text.size()));
    TRAINRIG_TRY(fsync_dir(tmp));

    // A folder of this step left by a crash before its marker is replaced.
    fs::remove_all(final_dir, ec);
    if (::rename(tmp.c_str(), final_dir.c_str()) != 0) return errno_status(errno, "rename", tmp);
    cleanup.renamed = true;
    TRAINRIG_TRY(fsync_dir(dir_));
    crash_point("renamed", s.step);
    const std::string marker = fmt::format("{}\n", s.step);
    TRAINRIG_TRY(write_durable(final_dir + "/" + kCommitMarker, marker.data(), marker.size()));
    TRAINRIG_TRY(fsync_dir(final_dir));
    prune(s.step);
    return final_dir;
}

void CheckpointStore::prune(int64_t newest) {
    std::error_code ec;
    const std::vector<int64_t> steps = committed_steps();
    for (size_t i = static_cast<size_t>(keep_); i < steps.size(); ++i)
        fs::remove_all(folder(steps[i]), ec);
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
        const std::string name = e.path().filename().string();
        const auto step = step_of(name);
        const bool stale_tmp = name.rfind(".tmp-step-", 0) == 0;
        const bool uncommitted =
            step && *step <= newest && !fs::exists(e.path() / kCommitMarker, ec);
        if (stale_tmp || uncommitted) fs::remove_all(e.path(), ec);
    }
}

Result<std::optional<CheckpointState>> CheckpointStore::load_latest(
    const ModelConfig& expected, std::vector<std::string>* skipped) {
    for (int64_t step : committed_steps()) {
        bool other_shape = false;
        auto s = read_checkpoint(folder(step), expected, &other_shape);
        if (s.ok()) return std::optional<CheckpointState>(std::move(s).value());
        // Another model's checkpoint is the user's mistake, not damage: never skip past it.
        if (other_shape) return s.status();
        if (skipped) skipped->push_back(s.status().message());
    }
    return std::optional<CheckpointState>();
}

CheckpointWriter::CheckpointWriter(CheckpointStore& store)
    : store_(store), thread_([this] { loop(); }) {}

CheckpointWriter::~CheckpointWriter() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

Status CheckpointWriter::submit(CheckpointState&& s,
                                std::function<void(const Result<std::string>&)> done) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !busy_ && !pending_; });
    Status previous = std::exchange(last_, ok_status());
    pending_ = std::move(s);
    done_ = std::move(done);
    cv_.notify_all();
    return previous;
}

Status CheckpointWriter::wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !busy_ && !pending_; });
    return std::exchange(last_, ok_status());
}

void CheckpointWriter::loop() {
    std::unique_lock lock(mu_);
    for (;;) {
        cv_.wait(lock, [&] { return stop_ || pending_.has_value(); });
        if (!pending_) return;  // stopping with nothing left to write
        CheckpointState s = std::move(*pending_);
        pending_.reset();
        busy_ = true;
        auto done = std::move(done_);
        lock.unlock();
        Result<std::string> r = store_.save(s);
        if (done) done(r);
        lock.lock();
        last_ = r.ok() ? ok_status() : r.status();
        busy_ = false;
        cv_.notify_all();
    }
}

}  // namespace trainrig::train
