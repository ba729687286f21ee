// TRAINRIG_HOST_DEVICE marks small inline functions that CUDA kernels call too, so the host
// code, its unit tests and the kernels share one definition.
#pragma once

#if defined(__CUDACC__)
#define TRAINRIG_HOST_DEVICE __host__ __device__
#else
#define TRAINRIG_HOST_DEVICE
#endif
