// What a training loop needs from a device: one micro-batch forward and backward, the gradient
// all-reduce, the optimizer update, evaluation, and the state a checkpoint holds. The CPU
// backend (cpu_backend.h) is the reference; the CUDA backend implements the same contract with
// bf16 compute and fp32 master weights.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "train/checkpoint.h"
#include "train/communicator.h"
#include "train/model_config.h"
#include "train/optimizer.h"

namespace trainrig::train {

// Seconds a device spent in each phase of a step, timed on the device (CUDA events): its calls
// return before their kernels finish, so host clocks around them would misplace the time.
struct DeviceTimes {
    double forward = 0, backward = 0, comm = 0, optimizer = 0;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    virtual const ModelConfig& config() const = 0;

    // Every call may fail on a device (out of memory, a lost GPU); the CPU backend never does.
    virtual Status init_weights(uint64_t seed) = 0;
    virtual Status zero_grads() = 0;
    // Mean loss of the micro-batch; B·T inputs and targets (targets may be null: no loss).
    virtual Result<double> forward(const uint32_t* inputs, const uint32_t* targets, int B,
                                   int Tn) = 0;
    // Starts moving the micro-batch the next forward will take to the device, so the copy
    // overlaps the work still queued; a forward with the same pointers then uses it. The
    // buffers must stay unchanged until that forward. Backends that compute on the host ignore it.
    virtual Status stage(const uint32_t* inputs, const uint32_t* targets, int B, int Tn) {
        (void)inputs, (void)targets, (void)B, (void)Tn;
        return ok_status();
    }
    // Adds loss_scale × d(mean loss)/dθ to the gradients. `last` marks the last micro-batch of
    // a step: a device backend starts the gradient all-reduce as layers finish.
    virtual Status backward(float loss_scale, bool last) = 0;
    // Sums the gradients over all ranks (or waits for the sum backward started).
    virtual Status all_reduce_grads(Communicator& comm) = 0;
    // Global L2 norm of the (reduced) gradients.
    virtual Result<double> grad_norm() = 0;
    // Clips by the configured norm and applies AdamW at learning rate lr; t is 1-based.
    virtual Status update(double lr, int64_t t, double norm) = 0;

    // Copies parameters and optimizer moments to the host (for a checkpoint), and back.
    virtual Status save_state(CheckpointState& s) = 0;
    virtual Status load_state(const CheckpointState& s) = 0;
    // The gradients as fp32 in ParamLayout order, to compare backends tensor by tensor.
    virtual Status copy_grads(std::vector<float>& out) = 0;
    // The last forward's logits as fp32, B·T rows of padded_vocab, valid until backward (which
    // turns them into their gradient in place).
    virtual Status copy_logits(std::vector<float>& out) = 0;
    // A digest of the parameters' bytes, to compare replicas across ranks.
    virtual Result<uint64_t> params_digest() = 0;
    // The phase times the device measured since the last call, after waiting for the work
    // queued so far; none when the backend's calls finish before they return (host clocks then
    // time them, as for the CPU backend).
    virtual Result<std::optional<DeviceTimes>> take_device_times() {
        return std::optional<DeviceTimes>();
    }
    // Device bytes the model state and activations hold at most so far.
    virtual size_t peak_memory_bytes() const = 0;
};

// Bytes a CPU run of this shape needs: fp32 parameters, gradients and two AdamW moments, plus
// activations and backward scratch of one micro-batch.
size_t cpu_training_bytes(const ModelConfig& c, int B, int Tn);

std::unique_ptr<Backend> make_cpu_backend(const ModelConfig& config, const OptimizerConfig& opt);

}  // namespace trainrig::train
