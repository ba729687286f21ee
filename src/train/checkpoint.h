// Crash-safe training checkpoints in a directory of step-NNNNNNNNN/ folders (docs/train.md):
//   model.bin      fp32 parameters, ParamLayout order, little-endian
//   adam_m.bin, adam_v.bin  AdamW first and second moments, same order
//   state.json     step, model shape and its hash, loader state, RNG state, run settings,
//                  and each file's size and CRC-32
//   COMMITTED      written last: a folder without it is not a checkpoint
// A save writes everything into a temporary folder, fsyncs every file and the folder, renames it
// into place, fsyncs the parent, then writes and fsyncs COMMITTED. Loading takes the newest
// committed folder whose files match their recorded sizes and CRCs, so a crash at any moment
// leaves the previous checkpoint usable.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "train/model_config.h"

namespace trainrig::train {

struct CheckpointState {
    int64_t step = 0;  // optimizer updates completed
    ModelConfig model;
    std::string loader_json;  // data::LoaderState::to_json()
    uint64_t rng_state = 0;
    uint64_t seed = 0;
    std::string run_json;  // the run's settings, for the record (JSON object)
    std::vector<float> params, adam_m, adam_v;
};

inline constexpr const char* kCommitMarker = "COMMITTED";

class CheckpointStore {
public:
    // Takes an exclusive lock on the directory (created if missing): two runs never write into
    // one directory.
    static Result<CheckpointStore> open(std::string dir, int keep);
    CheckpointStore(CheckpointStore&&) noexcept;
    CheckpointStore& operator=(CheckpointStore&&) noexcept;
    ~CheckpointStore();

    // Writes a checkpoint durably, then removes all but the newest `keep` and any leftovers
    // of interrupted saves. Returns the folder written.
    Result<std::string> save(const CheckpointState& s);

    // The newest complete checkpoint, or nullopt when there is none. A complete checkpoint of a
    // different model shape is an error; one whose files fail their checks is skipped, with a
    // sentence in `skipped`.
    Result<std::optional<CheckpointState>> load_latest(const ModelConfig& expected,
                                                       std::vector<std::string>* skipped);

    // Committed step folders, newest first.
    std::vector<int64_t> committed_steps() const;
    std::string folder(int64_t step) const;
    const std::string& dir() const { return dir_; }

private:
    CheckpointStore(std::string dir, int keep, int lock_fd);
    void prune(int64_t newest);
    std::string dir_;
    int keep_ = 1;
    int lock_fd_ = -1;
};

// Saves on a background thread: submit() waits for the previous save to finish, takes the
// state (already copied off the model) and returns, so training stalls only for the copy.
class CheckpointWriter {
public:
    explicit CheckpointWriter(CheckpointStore& store);
    ~CheckpointWriter();
    // The result of the previous save (if any) is returned and cleared.
    Status submit(CheckpointState&& s, std::function<void(const Result<std::string>&)> done);
    Status wait();  // until nothing is in flight; the last save's result

private:
    void loop();
    CheckpointStore& store_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::optional<CheckpointState> pending_;
    std::function<void(const Result<std::string>&)> done_;
    bool busy_ = false, stop_ = false;
    Status last_;
    std::thread thread_;
};

}  // namespace trainrig::train
