// What the fake NVML tests share: a dlopen'ed fake library, fixtures written to a temporary
// folder, and the test classes for the full and the old build.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#include "nvml/nvml_api.h"

// A named namespace, not an anonymous one: gtest needs one fixture type per test suite across
// the files that include this.
namespace trainrig::nvml::fake_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using InitWithFlagsFn = Return (*)(unsigned int);

inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// One GPU with every member the schema has, and one with none.
constexpr const char* kFullFixture = R"({
  "driver_version": "535.183.01",
  "nvml_version": "12.535.183.01",
  "cuda_driver_version": 12020,
  "gpus": [
    {
      "name": "NVIDIA H100 80GB HBM3",
      "uuid": "GPU-11111111-2222-3333-4444-555555555555",
      "pci_bus_id": "00000000:41:00.0",
      "pci_device_id": "0x233010de",
      "pci_subsystem_id": 381751518,
      "compute_capability": [9, 0],
      "memory": {"total": 85899345920, "used": 1073741824},
      "bar1": {"total": 137438953472, "used": 2097152},
      "temperature": 34,
      "thresholds": {"shutdown": 92, "slowdown": 89, "gpu_max": 85, "mem_max": 95},
      "power_usage_mw": 61000, "power_limit_mw": 700000, "power_default_limit_mw": 700000,
      "energy_mj": 123456789012,
      "clocks": {"sm": 1980, "mem": 2619, "graphics": 1755,
                 "sm_max": 1985, "mem_max": 2620, "graphics_max": 1990},
      "clock_event_reasons": 5,
      "utilization": {"gpu": 7, "memory": 3},
      "pcie": {"gen": 4, "gen_max": 5, "gpu_gen_max": 5, "width": 8, "width_max": 16,
               "replay_counter": 2},
      "ecc": {"current": true, "pending": false, "volatile_corrected": 1,
              "volatile_uncorrected": 2, "aggregate_corrected": 3, "aggregate_uncorrected": 4},
      "remapped_rows": {"correctable": 1, "uncorrectable": 2, "pending": true, "failure": false},
      "retired_pages": {"single_bit": 2, "double_bit": 0, "pending": true},
      "persistence_mode": true,
      "mig_mode": {"current": false, "pending": true},
      "cpu_affinity": "0-3",
      "fabric": {"state": "completed", "status": "SUCCESS", "clique_id": 7,
                 "cluster_uuid": "00112233-4455-6677-8899-aabbccddeeff"},
      "_note": "members starting with _ are comments"
    },
    {}
  ]
})";

// One dlopen of a fake library. dlclose need not unload it, so a test leaves the library shut
// down (TearDown) rather than counting on a fresh copy next time.
class Library {
public:
    explicit Library(const char* path) : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {}
    ~Library() {
        if (handle_) dlclose(handle_);
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    bool loaded() const { return handle_ != nullptr; }
    void* symbol(const char* name) const { return dlsym(handle_, name); }

private:
    void* handle_;
};

class FakeNvml : public ::testing::Test {
protected:
    explicit FakeNvml(const char* path = TRAINRIG_FAKE_NVML_LIB) : library_(path) {}

    void SetUp() override {
        ASSERT_TRUE(library_.loaded()) << dlerror();
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::path(::testing::TempDir()) /
               ("fake_nvml_" + std::string(test->name()) + "_" + std::to_string(getpid()));
        fs::create_directories(dir_);
        unsetenv("TRAINRIG_FAKE_NVML");
    }

    void TearDown() override {
        if (auto shutdown = reinterpret_cast<ShutdownFn>(library_.symbol("nvmlShutdown")))
            for (int i = 0; i < 100 && shutdown() == kSuccess; ++i) {
            }
        unsetenv("TRAINRIG_FAKE_NVML");
        fs::remove_all(dir_);
    }

    // The entry point `name`; a missing one fails the test (gtest reports the exception).
    template <class Fn>
    Fn nvml(const char* name) const {
        void* address = library_.symbol(name);
        if (!address) throw std::runtime_error(std::string("not exported: ") + name);
        return reinterpret_cast<Fn>(address);
    }

    // Writes `json` to a new file and points TRAINRIG_FAKE_NVML at it.
    std::string use_fixture(const std::string& json) {
        const auto path = dir_ / ("fixture" + std::to_string(fixtures_++) + ".json");
        std::ofstream(path) << json;
        setenv("TRAINRIG_FAKE_NVML", path.c_str(), 1);
        return path.string();
    }

    Return init(const std::string& json) {
        use_fixture(json);
        return nvml<InitFn>("nvmlInit_v2")();
    }

    Device device(unsigned index) const {
        Device handle = nullptr;
        EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(index, &handle),
                  kSuccess);
        return handle;
    }

    Return uint_value(const char* name, Device dev, unsigned* value) const {
        return nvml<DeviceGetUintFn>(name)(dev, value);
    }

    Return name_of(Device dev, std::string& name) const {
        char buffer[kDeviceNameBufferSize] = {};
        const Return rc = nvml<DeviceGetStringFn>("nvmlDeviceGetName")(dev, buffer, sizeof buffer);
        name = buffer;
        return rc;
    }

    Library library_;
    fs::path dir_;
    int fixtures_ = 0;
};

class FakeNvmlOld : public FakeNvml {
protected:
    FakeNvmlOld() : FakeNvml(TRAINRIG_FAKE_NVML_OLD_LIB) {}
};

}  // namespace trainrig::nvml::fake_test
