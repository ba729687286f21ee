// Launchers of the benchmarks' few kernels: filling buffers with known data and counting the
// elements that differ from what is expected. Each queues on `stream` and returns at once;
// counts land in device memory (an unsigned long long the caller zeroed).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "measure/collective_math.h"
#include "measure/gemm_types.h"

namespace trainrig::cuda {

// words[i] = pattern_word(i, seed).
Status fill_pattern(uint32_t* words, size_t n, uint32_t seed, cudaStream_t stream);
// *count += number of i with words[i] != pattern_word(i, seed).
Status count_pattern_mismatches(const uint32_t* words, size_t n, uint32_t seed,
                                unsigned long long* count, cudaStream_t stream);
// *count += number of i with a[i] != b[i] (bitwise).
Status count_word_mismatches(const uint32_t* a, const uint32_t* b, size_t n,
                             unsigned long long* count, cudaStream_t stream);

// n elements of the GEMM input type `d` (fp32 for tf32), uniform in [-1, 1), rounded to nearest.
Status fill_uniform(void* data, bench::GemmDtype d, size_t n, uint32_t seed, cudaStream_t stream);
// Elements of a GEMM input (input = true) or output type of `d`, widened to fp32.
Status widen_to_float(const void* data, bench::GemmDtype d, bool input, size_t n, float* out,
                      cudaStream_t stream);

// send[i] = collective_input(rank, i).
Status fill_collective_input(float* send, size_t n, int rank, cudaStream_t stream);
// *count += elements of recv that differ from collective_expected(c, nranks, rank, block, j).
Status count_collective_mismatches(const float* recv, size_t n, bench::Collective c, int nranks,
                                   int rank, size_t block, unsigned long long* count,
                                   cudaStream_t stream);

}  // namespace trainrig::cuda
