// The boundary between `trainrig train` and its device backend. The CUDA backend needs the CUDA
// runtime, cuBLASLt and NCCL; the trainrig binary must start where none of them is installed. So
// the backend lives in a shared library (libtrainrig_train_cuda.so, built when the CUDA toolkit
// is found) that the binary loads with dlopen when --backend cuda is asked for. Only C types
// cross: JSON strings for settings and descriptions, host pointers for data.
//
// Every call that can fail returns NULL on success or a malloc'd text saying what failed,
// "errc<TAB>sentence<TAB>next step" (errc as core/status.h names it; the next step may be
// empty), freed with trainrig_train_free. Two objects:
//
// A world: this process's device and, with several ranks, an NCCL communicator over all of them.
//   trainrig_train_unique_id: a fresh NCCL id (rank 0 under mpirun, which broadcasts it; every
//     rank under a torchrun-style launch with NCCL_COMM_ID set, where all get the same id).
//   trainrig_train_world_open takes
//     {"rank": r, "world": n, "local_rank": l, "nccl_id": "hex" (n > 1 only)}
//   and selects device local_rank modulo the visible devices. trainrig_train_world_device
//   describes it: {"index", "name", "pci_bus_id", "compute_capability", "memory_bytes",
//   "free_bytes"}. all_reduce (sum; dtype 0 float, 1 double) and broadcast work on host
//   buffers, so the world is also the run's host communicator when no MPI launched it.
//
// A model on a world: trainrig_train_model_open takes
//   {"model": model_config_json() (src/train/model_config.h: "arch", "layers", "heads",
//              "channels", "max_seq", "vocab", "padded_vocab", and llama's fields),
//    "optimizer": {"beta1", "beta2", "eps", "weight_decay", "grad_clip"},
//    "batch": B, "seq": T, "bucket_bytes": gradient all-reduce bucket size}
// Parameters and moments cross as fp32 in ParamLayout order (src/train/param_layout.h);
// set_state with null moments leaves them zero. backward(last = 1) also starts the gradient
// all-reduce over the world, bucket by bucket as layers finish; finish_reduce waits for it (the
// exposed communication). forward returns when the device has finished it (its loss is read);
// backward and update return once their work is queued. step_times waits for the queued work
// and gives the seconds the device spent since its last call in forward, backward, exposed
// communication and optimizer (grad_norm through update), in that order; *measured = 0 says the
// plugin does not time its phases (its calls then finish before they return).
// stage starts the host-to-device copy of the micro-batch the next forward takes, so it overlaps
// work still queued (the previous step's update); forward with null inputs then uses it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRAINRIG_TRAIN_ABI 2

typedef struct trainrig_train_world trainrig_train_world;
typedef struct trainrig_train_model trainrig_train_model;

int trainrig_train_abi(void);
void trainrig_train_free(char* text);

char* trainrig_train_unique_id(unsigned char* id, size_t capacity, size_t* size);
char* trainrig_train_world_open(const char* config_json, trainrig_train_world** out);
void trainrig_train_world_close(trainrig_train_world* w);
char* trainrig_train_world_device(trainrig_train_world* w, char** json);
char* trainrig_train_world_all_reduce(trainrig_train_world* w, void* data, size_t n, int dtype);
char* trainrig_train_world_broadcast(trainrig_train_world* w, void* data, size_t bytes, int root);

char* trainrig_train_model_open(trainrig_train_world* w, const char* config_json,
                                trainrig_train_model** out);
void trainrig_train_model_close(trainrig_train_model* m);
char* trainrig_train_set_state(trainrig_train_model* m, const float* params, const float* adam_m,
                               const float* adam_v);
char* trainrig_train_get_state(trainrig_train_model* m, float* params, float* adam_m,
                               float* adam_v);
char* trainrig_train_get_grads(trainrig_train_model* m, float* grads);
// The last forward's logits as fp32, `rows` of padded_vocab (rows = its B·T), until backward.
char* trainrig_train_get_logits(trainrig_train_model* m, float* logits, size_t rows);
char* trainrig_train_zero_grads(trainrig_train_model* m);
char* trainrig_train_stage(trainrig_train_model* m, const uint32_t* inputs, const uint32_t* targets,
                           int batch, int seq);
char* trainrig_train_forward(trainrig_train_model* m, const uint32_t* inputs,
                             const uint32_t* targets, int batch, int seq, double* loss);
char* trainrig_train_backward(trainrig_train_model* m, float loss_scale, int last);
char* trainrig_train_finish_reduce(trainrig_train_model* m);
char* trainrig_train_grad_norm(trainrig_train_model* m, double* norm);
char* trainrig_train_update(trainrig_train_model* m, double lr, int64_t t, double norm);
char* trainrig_train_step_times(trainrig_train_model* m, double* seconds /* [4] */, int* measured);
// Bytes the model holds on the device (everything it allocated).
uint64_t trainrig_train_device_bytes(trainrig_train_model* m);

#ifdef __cplusplus
}
#endif
