// The boundary between `trainrig bench` and its GPU benchmarks. The GPU benchmarks need the CUDA
// runtime, cuBLASLt and NCCL; the trainrig binary must start on machines that have none of them.
// So they live in a shared library (libtrainrig_gpu_bench.so, built only when the CUDA toolkit
// is found) that the binary loads with dlopen when a GPU benchmark is asked for. Everything that
// crosses the boundary is a NUL-terminated JSON string, so the two sides share no C++ types.
//
// trainrig_gpu_bench_list() returns
//   {"abi": 1, "devices": [{"index", "name", "pci_bus_id", "compute_capability", "memory_bytes",
//                           "numa_node", "pcie_gen", "pcie_width"}],
//    "error": null | "one sentence: why no GPU can be used"}
//
// trainrig_gpu_bench_run(request, cancel) takes
//   {"bench": "h2d"|"d2h"|"hbm"|"gemm"|"p2p"|"nccl"|"burn", "quick": bool,
//    "gpus": [indices] (empty: all), "seconds": burn duration, "repeats": 0 = the bench's default}
// and returns
//   {"records": [record...], "reporting": bool, "error": null | "one sentence"}
// "reporting" is false on a rank of a multi-process launch (nccl, nccl-pairs under mpirun) other
// than the one that reports: it took part, its records are rank 0's to give.
// where a record is the trainrig.bench record without the verdict fields (docs/formats.md):
//   {"bench", "name", "params", "target", "unit", "samples", "counted", "verified",
//    "verify_detail"}
// "target" names what was measured: {"gpu": 0, "gpu_name": "NVIDIA H200", "pcie_gen": 5,
// "pcie_width": 16, ...}; trainrig derives the expectation and the verdict from it.
//
// cancel points to a flag that SIGINT/SIGTERM set; a running benchmark polls it between
// samples, frees what it allocated, and returns {"records": [...done so far], "error":
// "interrupted"}. Strings returned are freed with trainrig_gpu_bench_free.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#define TRAINRIG_GPU_BENCH_ABI 1

char* trainrig_gpu_bench_list(void);
char* trainrig_gpu_bench_run(const char* request_json, const volatile int* cancel);
void trainrig_gpu_bench_free(char* json);

#ifdef __cplusplus
}
#endif
