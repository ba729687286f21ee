// A test on the emulated device: two GPUs of 64 MiB at the bus ids of the fixture servers,
// unless the environment names others; device memory through RAII.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace trainrig::emu::testing {

class EmulatedTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("TRAINRIG_EMULATED_GPUS", "0000:01:00.0,0000:41:00.0", 0);
        ::setenv("TRAINRIG_EMULATED_GPU_MEMORY", "64M", 0);
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        cudaGetLastError();
    }
    void TearDown() override {
        for (void* p : owned_) cudaFree(p);
        cudaDeviceReset();  // after a planted fault, the next test starts on a sound device
    }
    template <class T>
    T* device(size_t n) {
        void* p = nullptr;
        EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
        owned_.push_back(p);
        return static_cast<T*>(p);
    }
    template <class T>
    T* device(const std::vector<T>& v) {
        T* p = device<T>(v.size());
        EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
                  cudaSuccess);
        return p;
    }
    template <class T>
    std::vector<T> host(const T* p, size_t n) {
        std::vector<T> v(n);
        EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
        return v;
    }

private:
    std::vector<void*> owned_;
};

}  // namespace trainrig::emu::testing
