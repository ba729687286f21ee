// The fake NVML libraries, loaded with dlopen the way trainrig loads libnvidia-ml.so.1 and driven
// by fixtures written the way README.md describes them.
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

namespace trainrig::nvml {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using InitWithFlagsFn = Return (*)(unsigned int);

double seconds_since(Clock::time_point start) {
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
      "power_usage_mw": 61000, "power_limit_mw": 700000, "energy_mj": 123456789012,
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

TEST_F(FakeNvml, InitWithoutTheVariableIsDriverNotLoaded) {
    EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kErrorDriverNotLoaded);
    EXPECT_EQ(nvml<InitFn>("nvmlInit")(), kErrorDriverNotLoaded);
    EXPECT_EQ(nvml<InitWithFlagsFn>("nvmlInitWithFlags")(0), kErrorDriverNotLoaded);
    EXPECT_EQ(nvml<ShutdownFn>("nvmlShutdown")(), kErrorUninitialized);
    setenv("TRAINRIG_FAKE_NVML", "", 1);
    EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kErrorDriverNotLoaded);
}

TEST_F(FakeNvml, CallsBeforeInitAreUninitialized) {
    unsigned count = 0;
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount_v2")(&count), kErrorUninitialized);
    char version[kSystemDriverVersionBufferSize];
    EXPECT_EQ(nvml<SystemGetStringFn>("nvmlSystemGetDriverVersion")(version, sizeof version),
              kErrorUninitialized);
    Device dev = nullptr;
    EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(0, &dev),
              kErrorUninitialized);
    unsigned temp = 0;
    EXPECT_EQ(nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature")(dev, kTemperatureGpu, &temp),
              kErrorUninitialized);
    EventSet set = nullptr;
    EXPECT_EQ(nvml<EventSetCreateFn>("nvmlEventSetCreate")(&set), kErrorUninitialized);

    // A fixture whose "init" fails leaves the library just as uninitialised.
    EXPECT_EQ(init(R"({"init": "NO_PERMISSION", "gpus": [{}]})"), kErrorNoPermission);
    EXPECT_EQ(nvml<InitFn>("nvmlInit")(), kErrorNoPermission);
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount")(&count), kErrorUninitialized);
}

TEST_F(FakeNvml, BadFixturesFailInitWithOneLineOnStderr) {
    const std::pair<const char*, const char*> cases[] = {
        {"{\"gpus\": [", "parse error"},
        {"[]", "expected an object"},
        {R"({"gpus": [{"temperature": "hot"}]})", "gpus[0].temperature: expected"},
        {R"({"gpus": [{}, {"temprature": 30}]})", "gpus[1].temprature: unknown member"},
        {R"({"init": "FINE"})", "init: not an NVML return name"},
        {R"({"gpus": [{"pci_bus_id": "0000:41:00.0"}]})", "gpus[0].pci_bus_id: expected"},
        {R"({"gpus": [{"memory": {"total": 1}}]})", "gpus[0].memory.used: missing"},
        {R"({"gpus": [{"errors": {"nvmlDeviceGetTemp": "UNKNOWN"}}]})", "errors.nvmlDeviceGetTemp"},
        {R"({"gpus": [], "hang": {"function": "nvmlDeviceGetName", "gpu": 0}})",
         "hang.gpu: no such"},
        {R"({"gpus": [{}], "events": [{"gpu": 0}]})", "events[0].xid: missing"},
        {R"({"gpus": [{}], "topology": [["NVLINK"]]})", "topology[0][0]: expected"},
        {R"({"gpus": [{"cpu_affinity": "3-1"}]})", "gpus[0].cpu_affinity: expected"},
    };
    for (const auto& [json, complaint] : cases) {
        SCOPED_TRACE(json);
        const std::string path = use_fixture(json);
        ::testing::internal::CaptureStderr();
        EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kErrorUnknown);
        const std::string printed = ::testing::internal::GetCapturedStderr();
        EXPECT_EQ(printed.rfind("fake NVML: " + path + ": ", 0), 0u) << printed;
        EXPECT_NE(printed.find(complaint), std::string::npos) << printed;
        EXPECT_EQ(printed.find('\n'), printed.size() - 1) << printed;
    }

    setenv("TRAINRIG_FAKE_NVML", (dir_ / "absent.json").c_str(), 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kErrorUnknown);
    EXPECT_NE(::testing::internal::GetCapturedStderr().find("absent.json: cannot open"),
              std::string::npos);
}

TEST_F(FakeNvml, ShutdownBalancesInit) {
    unsigned count = 0;
    ASSERT_EQ(init(R"({"gpus": [{}]})"), kSuccess);
    ASSERT_EQ(nvml<InitWithFlagsFn>("nvmlInitWithFlags")(0), kSuccess);
    EXPECT_EQ(nvml<ShutdownFn>("nvmlShutdown")(), kSuccess);
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount_v2")(&count), kSuccess);
    EXPECT_EQ(nvml<ShutdownFn>("nvmlShutdown")(), kSuccess);
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount_v2")(&count), kErrorUninitialized);
    EXPECT_EQ(nvml<ShutdownFn>("nvmlShutdown")(), kErrorUninitialized);
}

TEST_F(FakeNvml, EveryInitReadsTheFileAgain) {
    unsigned count = 0;
    ASSERT_EQ(init(R"({"gpus": [{"name": "first"}]})"), kSuccess);
    const Device first = device(0);

    // A nested init reads the file, so a broken one fails it, but the handles already given
    // out stay those of the first init.
    use_fixture("not json");
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kErrorUnknown);
    ::testing::internal::GetCapturedStderr();
    use_fixture(R"({"gpus": [{}, {}, {}]})");
    EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kSuccess);
    std::string name;
    EXPECT_EQ(name_of(first, name), kSuccess);
    EXPECT_EQ(name, "first");
    EXPECT_EQ(nvml<ShutdownFn>("nvmlShutdown")(), kSuccess);
    EXPECT_EQ(nvml<ShutdownFn>("nvmlShutdown")(), kSuccess);

    EXPECT_EQ(nvml<InitFn>("nvmlInit_v2")(), kSuccess);
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount_v2")(&count), kSuccess);
    EXPECT_EQ(count, 3u);
    EXPECT_EQ(name_of(device(0), name), kErrorNotSupported);
}

TEST_F(FakeNvml, SystemValues) {
    ASSERT_EQ(init(kFullFixture), kSuccess);
    char text[kSystemDriverVersionBufferSize];
    EXPECT_EQ(nvml<SystemGetStringFn>("nvmlSystemGetDriverVersion")(text, sizeof text), kSuccess);
    EXPECT_STREQ(text, "535.183.01");
    EXPECT_EQ(nvml<SystemGetStringFn>("nvmlSystemGetNVMLVersion")(text, sizeof text), kSuccess);
    EXPECT_STREQ(text, "12.535.183.01");
    for (const char* name :
         {"nvmlSystemGetCudaDriverVersion", "nvmlSystemGetCudaDriverVersion_v2"}) {
        int cuda = 0;
        EXPECT_EQ(nvml<SystemGetCudaDriverVersionFn>(name)(&cuda), kSuccess);
        EXPECT_EQ(cuda, 12020) << name;
    }
    for (const char* name : {"nvmlDeviceGetCount", "nvmlDeviceGetCount_v2"}) {
        unsigned count = 0;
        EXPECT_EQ(nvml<DeviceGetCountFn>(name)(&count), kSuccess);
        EXPECT_EQ(count, 2u) << name;
    }
    Device old_handle = nullptr;
    EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex")(1, &old_handle),
              kSuccess);
    EXPECT_EQ(old_handle, device(1));
    EXPECT_NE(device(0), device(1));
}

TEST_F(FakeNvml, StringGettersNeedRoomForTheTerminator) {
    ASSERT_EQ(init(kFullFixture), kSuccess);
    const auto get_name = nvml<DeviceGetStringFn>("nvmlDeviceGetName");
    const std::string expected = "NVIDIA H100 80GB HBM3";
    char buffer[64];
    const auto length = static_cast<unsigned>(expected.size());
    EXPECT_EQ(get_name(device(0), buffer, length), kErrorInsufficientSize);
    EXPECT_EQ(get_name(device(0), buffer, 0), kErrorInsufficientSize);
    EXPECT_EQ(get_name(device(0), buffer, length + 1), kSuccess);
    EXPECT_EQ(buffer, expected);
    EXPECT_EQ(get_name(device(0), nullptr, 64), kErrorInvalidArgument);
    const auto driver = nvml<SystemGetStringFn>("nvmlSystemGetDriverVersion");
    EXPECT_EQ(driver(buffer, 10), kErrorInsufficientSize);
    EXPECT_EQ(driver(buffer, 11), kSuccess);
}

TEST_F(FakeNvml, DeviceValues) {
    ASSERT_EQ(init(kFullFixture), kSuccess);
    const Device dev = device(0);
    char text[kDeviceUuidBufferSize];
    EXPECT_EQ(nvml<DeviceGetStringFn>("nvmlDeviceGetUUID")(dev, text, sizeof text), kSuccess);
    EXPECT_STREQ(text, "GPU-11111111-2222-3333-4444-555555555555");

    for (const char* name : {"nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo_v3"}) {
        SCOPED_TRACE(name);
        PciInfo pci{};
        EXPECT_EQ(nvml<DeviceGetPciInfoFn>(name)(dev, &pci), kSuccess);
        EXPECT_STREQ(pci.busId, "00000000:41:00.0");
        EXPECT_STREQ(pci.busIdLegacy, "0000:41:00.0");
        EXPECT_EQ(pci.domain, 0u);
        EXPECT_EQ(pci.bus, 0x41u);
        EXPECT_EQ(pci.device, 0u);
        EXPECT_EQ(pci.pciDeviceId, 0x233010deu);
        EXPECT_EQ(pci.pciSubSystemId, 0x16c110deu);
    }

    Memory memory{};
    EXPECT_EQ(nvml<DeviceGetMemoryInfoFn>("nvmlDeviceGetMemoryInfo")(dev, &memory), kSuccess);
    EXPECT_EQ(memory.total, 85899345920ull);
    EXPECT_EQ(memory.used, 1073741824ull);
    EXPECT_EQ(memory.free, 85899345920ull - 1073741824ull);
    Bar1Memory bar1{};
    EXPECT_EQ(nvml<DeviceGetBar1MemoryInfoFn>("nvmlDeviceGetBAR1MemoryInfo")(dev, &bar1), kSuccess);
    EXPECT_EQ(bar1.bar1Total, 137438953472ull);
    EXPECT_EQ(bar1.bar1Free, 137438953472ull - 2097152ull);

    unsigned value = 0;
    EXPECT_EQ(
        nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature")(dev, kTemperatureGpu, &value),
        kSuccess);
    EXPECT_EQ(value, 34u);
    const auto threshold =
        nvml<DeviceGetTemperatureThresholdFn>("nvmlDeviceGetTemperatureThreshold");
    const std::pair<int, unsigned> thresholds[] = {{kTemperatureThresholdShutdown, 92},
                                                   {kTemperatureThresholdSlowdown, 89},
                                                   {kTemperatureThresholdGpuMax, 85},
                                                   {kTemperatureThresholdMemMax, 95}};
    for (const auto& [type, expected] : thresholds) {
        EXPECT_EQ(threshold(dev, type, &value), kSuccess);
        EXPECT_EQ(value, expected) << type;
    }

    const std::pair<const char*, unsigned> uints[] = {
        {"nvmlDeviceGetPowerUsage", 61000},           {"nvmlDeviceGetEnforcedPowerLimit", 700000},
        {"nvmlDeviceGetCurrPcieLinkGeneration", 4},   {"nvmlDeviceGetMaxPcieLinkGeneration", 5},
        {"nvmlDeviceGetGpuMaxPcieLinkGeneration", 5}, {"nvmlDeviceGetCurrPcieLinkWidth", 8},
        {"nvmlDeviceGetMaxPcieLinkWidth", 16},        {"nvmlDeviceGetPcieReplayCounter", 2},
    };
    for (const auto& [name, expected] : uints) {
        EXPECT_EQ(uint_value(name, dev, &value), kSuccess) << name;
        EXPECT_EQ(value, expected) << name;
    }

    unsigned long long wide = 0;
    EXPECT_EQ(nvml<DeviceGetUllFn>("nvmlDeviceGetTotalEnergyConsumption")(dev, &wide), kSuccess);
    EXPECT_EQ(wide, 123456789012ull);
    for (const char* name :
         {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}) {
        EXPECT_EQ(nvml<DeviceGetUllFn>(name)(dev, &wide), kSuccess);
        EXPECT_EQ(wide, kClocksEventGpuIdle | kClocksEventSwPowerCap) << name;
    }

    const std::tuple<int, unsigned, unsigned> clocks[] = {
        {kClockGraphics, 1755, 1990}, {kClockSm, 1980, 1985}, {kClockMem, 2619, 2620}};
    for (const auto& [type, current, max] : clocks) {
        EXPECT_EQ(nvml<DeviceGetClockFn>("nvmlDeviceGetClockInfo")(dev, type, &value), kSuccess);
        EXPECT_EQ(value, current) << type;
        EXPECT_EQ(nvml<DeviceGetClockFn>("nvmlDeviceGetMaxClockInfo")(dev, type, &value), kSuccess);
        EXPECT_EQ(value, max) << type;
    }

    Utilization utilization{};
    EXPECT_EQ(nvml<DeviceGetUtilizationRatesFn>("nvmlDeviceGetUtilizationRates")(dev, &utilization),
              kSuccess);
    EXPECT_EQ(utilization.gpu, 7u);
    EXPECT_EQ(utilization.memory, 3u);

    int major = 0, minor = -1;
    EXPECT_EQ(nvml<DeviceGetCudaComputeCapabilityFn>("nvmlDeviceGetCudaComputeCapability")(
                  dev, &major, &minor),
              kSuccess);
    EXPECT_EQ(major, 9);
    EXPECT_EQ(minor, 0);
    int mode = -1;
    EXPECT_EQ(nvml<DeviceGetEnableStateFn>("nvmlDeviceGetPersistenceMode")(dev, &mode), kSuccess);
    EXPECT_EQ(mode, kFeatureEnabled);
}

TEST_F(FakeNvml, HealthValues) {
    ASSERT_EQ(init(kFullFixture), kSuccess);
    const Device dev = device(0);
    int current = -1, pending = -1;
    EXPECT_EQ(nvml<DeviceGetEccModeFn>("nvmlDeviceGetEccMode")(dev, &current, &pending), kSuccess);
    EXPECT_EQ(current, kFeatureEnabled);
    EXPECT_EQ(pending, kFeatureDisabled);
    const std::tuple<int, int, unsigned long long> counters[] = {
        {kMemoryErrorCorrected, kVolatileEcc, 1},
        {kMemoryErrorUncorrected, kVolatileEcc, 2},
        {kMemoryErrorCorrected, kAggregateEcc, 3},
        {kMemoryErrorUncorrected, kAggregateEcc, 4}};
    for (const auto& [error, counter, expected] : counters) {
        unsigned long long count = 0;
        EXPECT_EQ(nvml<DeviceGetTotalEccErrorsFn>("nvmlDeviceGetTotalEccErrors")(dev, error,
                                                                                 counter, &count),
                  kSuccess);
        EXPECT_EQ(count, expected) << error << "/" << counter;
    }

    unsigned correctable = 9, uncorrectable = 9, rows_pending = 9, failure = 9;
    EXPECT_EQ(nvml<DeviceGetRemappedRowsFn>("nvmlDeviceGetRemappedRows")(
                  dev, &correctable, &uncorrectable, &rows_pending, &failure),
              kSuccess);
    EXPECT_EQ(correctable, 1u);
    EXPECT_EQ(uncorrectable, 2u);
    EXPECT_EQ(rows_pending, 1u);
    EXPECT_EQ(failure, 0u);

    int pages_pending = -1;
    EXPECT_EQ(
        nvml<DeviceGetEnableStateFn>("nvmlDeviceGetRetiredPagesPendingStatus")(dev, &pages_pending),
        kSuccess);
    EXPECT_EQ(pages_pending, kFeatureEnabled);

    GpuFabricInfo fabric{};
    EXPECT_EQ(nvml<DeviceGetGpuFabricInfoFn>("nvmlDeviceGetGpuFabricInfo")(dev, &fabric), kSuccess);
    EXPECT_EQ(fabric.state, kGpuFabricStateCompleted);
    EXPECT_EQ(fabric.status, kSuccess);
    EXPECT_EQ(fabric.cliqueId, 7u);
    EXPECT_EQ(fabric.clusterUuid[0], 0x00);
    EXPECT_EQ(fabric.clusterUuid[1], 0x11);
    EXPECT_EQ(fabric.clusterUuid[15], 0xff);
}

TEST_F(FakeNvml, RetiredPagesAnswerTheSizeQueryFirst) {
    ASSERT_EQ(init(kFullFixture), kSuccess);
    const auto retired = nvml<DeviceGetRetiredPagesFn>("nvmlDeviceGetRetiredPages");
    const Device dev = device(0);
    unsigned count = 0;
    EXPECT_EQ(retired(dev, kPageRetirementMultipleSingleBitEcc, &count, nullptr),
              kErrorInsufficientSize);
    EXPECT_EQ(count, 2u);
    unsigned long long addresses[4] = {};
    count = 4;
    EXPECT_EQ(retired(dev, kPageRetirementMultipleSingleBitEcc, &count, addresses), kSuccess);
    EXPECT_EQ(count, 2u);
    EXPECT_NE(addresses[0], 0u);
    EXPECT_NE(addresses[0], addresses[1]);

    count = 0;
    EXPECT_EQ(retired(dev, kPageRetirementDoubleBitEcc, &count, nullptr), kSuccess);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(retired(dev, kPageRetirementDoubleBitEcc, nullptr, nullptr), kErrorInvalidArgument);
    EXPECT_EQ(retired(dev, 7, &count, nullptr), kErrorInvalidArgument);
    EXPECT_EQ(retired(device(1), kPageRetirementDoubleBitEcc, &count, nullptr), kErrorNotSupported);
}

TEST_F(FakeNvml, MissingMembersAreNotSupported) {
    ASSERT_EQ(init(R"({"gpus": [{}]})"), kSuccess);
    char text[kDeviceNameBufferSize];
    EXPECT_EQ(nvml<SystemGetStringFn>("nvmlSystemGetDriverVersion")(text, sizeof text),
              kErrorNotSupported);
    EXPECT_EQ(nvml<SystemGetStringFn>("nvmlSystemGetNVMLVersion")(text, sizeof text),
              kErrorNotSupported);
    int number = 0, other = 0;
    EXPECT_EQ(nvml<SystemGetCudaDriverVersionFn>("nvmlSystemGetCudaDriverVersion_v2")(&number),
              kErrorNotSupported);

    const Device dev = device(0);
    EXPECT_EQ(nvml<DeviceGetStringFn>("nvmlDeviceGetName")(dev, text, sizeof text),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetStringFn>("nvmlDeviceGetUUID")(dev, text, sizeof text),
              kErrorNotSupported);
    PciInfo pci{};
    EXPECT_EQ(nvml<DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3")(dev, &pci), kErrorNotSupported);
    Memory memory{};
    EXPECT_EQ(nvml<DeviceGetMemoryInfoFn>("nvmlDeviceGetMemoryInfo")(dev, &memory),
              kErrorNotSupported);
    Bar1Memory bar1{};
    EXPECT_EQ(nvml<DeviceGetBar1MemoryInfoFn>("nvmlDeviceGetBAR1MemoryInfo")(dev, &bar1),
              kErrorNotSupported);
    unsigned value = 0;
    EXPECT_EQ(
        nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature")(dev, kTemperatureGpu, &value),
        kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetTemperatureThresholdFn>("nvmlDeviceGetTemperatureThreshold")(
                  dev, kTemperatureThresholdSlowdown, &value),
              kErrorNotSupported);
    for (const char* name :
         {"nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit",
          "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
          "nvmlDeviceGetGpuMaxPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth",
          "nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetPcieReplayCounter"})
        EXPECT_EQ(uint_value(name, dev, &value), kErrorNotSupported) << name;
    unsigned long long wide = 0;
    for (const char* name :
         {"nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetCurrentClocksEventReasons",
          "nvmlDeviceGetCurrentClocksThrottleReasons"})
        EXPECT_EQ(nvml<DeviceGetUllFn>(name)(dev, &wide), kErrorNotSupported) << name;
    EXPECT_EQ(nvml<DeviceGetClockFn>("nvmlDeviceGetClockInfo")(dev, kClockSm, &value),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetClockFn>("nvmlDeviceGetMaxClockInfo")(dev, kClockMem, &value),
              kErrorNotSupported);
    Utilization utilization{};
    EXPECT_EQ(nvml<DeviceGetUtilizationRatesFn>("nvmlDeviceGetUtilizationRates")(dev, &utilization),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetEccModeFn>("nvmlDeviceGetEccMode")(dev, &number, &other),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetTotalEccErrorsFn>("nvmlDeviceGetTotalEccErrors")(
                  dev, kMemoryErrorUncorrected, kVolatileEcc, &wide),
              kErrorNotSupported);
    unsigned a = 0, b = 0, c = 0, d = 0;
    EXPECT_EQ(nvml<DeviceGetRemappedRowsFn>("nvmlDeviceGetRemappedRows")(dev, &a, &b, &c, &d),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetEnableStateFn>("nvmlDeviceGetRetiredPagesPendingStatus")(dev, &number),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetEnableStateFn>("nvmlDeviceGetPersistenceMode")(dev, &number),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetCudaComputeCapabilityFn>("nvmlDeviceGetCudaComputeCapability")(
                  dev, &number, &other),
              kErrorNotSupported);
    unsigned long cpus = 0;
    EXPECT_EQ(nvml<DeviceGetCpuAffinityFn>("nvmlDeviceGetCpuAffinity")(dev, 1, &cpus),
              kErrorNotSupported);
    GpuFabricInfo fabric{};
    EXPECT_EQ(nvml<DeviceGetGpuFabricInfoFn>("nvmlDeviceGetGpuFabricInfo")(dev, &fabric),
              kErrorNotSupported);
    EXPECT_EQ(nvml<DeviceGetTopologyCommonAncestorFn>("nvmlDeviceGetTopologyCommonAncestor")(
                  dev, dev, &number),
              kErrorNotSupported);
}

TEST_F(FakeNvml, BadArgumentsAreInvalidArgument) {
    ASSERT_EQ(init(kFullFixture), kSuccess);
    Device dev = nullptr;
    EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(2, &dev),
              kErrorInvalidArgument);
    EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(0, nullptr),
              kErrorInvalidArgument);
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount_v2")(nullptr), kErrorInvalidArgument);

    unsigned value = 0;
    int local = 0;
    const Device foreign = reinterpret_cast<Device>(&local);
    EXPECT_EQ(uint_value("nvmlDeviceGetPowerUsage", foreign, &value), kErrorInvalidArgument);
    EXPECT_EQ(uint_value("nvmlDeviceGetPowerUsage", nullptr, &value), kErrorInvalidArgument);

    dev = device(0);
    EXPECT_EQ(uint_value("nvmlDeviceGetPowerUsage", dev, nullptr), kErrorInvalidArgument);
    EXPECT_EQ(nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature")(dev, 1, &value),
              kErrorInvalidArgument);
    EXPECT_EQ(
        nvml<DeviceGetTemperatureThresholdFn>("nvmlDeviceGetTemperatureThreshold")(dev, 9, &value),
        kErrorInvalidArgument);
    EXPECT_EQ(nvml<DeviceGetClockFn>("nvmlDeviceGetClockInfo")(dev, 3, &value),
              kErrorInvalidArgument);
    unsigned long long wide = 0;
    EXPECT_EQ(
        nvml<DeviceGetTotalEccErrorsFn>("nvmlDeviceGetTotalEccErrors")(dev, 2, kVolatileEcc, &wide),
        kErrorInvalidArgument);
    PciInfo pci{};
    EXPECT_EQ(nvml<DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3")(dev, nullptr),
              kErrorInvalidArgument);
    EXPECT_EQ(nvml<DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3")(foreign, &pci),
              kErrorInvalidArgument);
    unsigned long cpus = 0;
    EXPECT_EQ(nvml<DeviceGetCpuAffinityFn>("nvmlDeviceGetCpuAffinity")(dev, 0, &cpus),
              kErrorInvalidArgument);
    EXPECT_EQ(nvml<DeviceGetCpuAffinityFn>("nvmlDeviceGetCpuAffinity")(dev, 1, nullptr),
              kErrorInvalidArgument);
}

TEST_F(FakeNvml, ErrorsOverrideEverythingElse) {
    ASSERT_EQ(init(R"({"gpus": [
        {"temperature": 30, "pci_bus_id": "00000000:41:00.0", "power_usage_mw": 1,
         "errors": {"nvmlDeviceGetTemperature": "UNKNOWN",
                    "nvmlDeviceGetPciInfo": "NO_PERMISSION",
                    "nvmlDeviceGetPciInfo_v3": "GPU_IS_LOST"}},
        {"temperature": 31, "errors": {"nvmlDeviceGetHandleByIndex": "NOT_FOUND"}}
    ]})"),
              kSuccess);
    const Device dev = device(0);
    unsigned value = 0;
    const auto temperature = nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature");
    EXPECT_EQ(temperature(dev, kTemperatureGpu, &value), kErrorUnknown);
    EXPECT_EQ(temperature(dev, kTemperatureGpu, nullptr), kErrorUnknown);
    EXPECT_EQ(uint_value("nvmlDeviceGetPowerUsage", dev, &value), kSuccess);

    // The unversioned name covers every version; an exact one wins for its own version.
    PciInfo pci{};
    EXPECT_EQ(nvml<DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v2")(dev, &pci), kErrorNoPermission);
    EXPECT_EQ(nvml<DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3")(dev, &pci), kErrorGpuIsLost);

    Device second = nullptr;
    EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(1, &second),
              kErrorNotFound);
    EXPECT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex")(1, &second),
              kErrorNotFound);
}

TEST_F(FakeNvml, LostGpuKeepsItsHandleButAnswersGpuIsLost) {
    ASSERT_EQ(init(R"({"gpus": [{"name": "lost", "temperature": 40, "lost": true},
                                 {"name": "fine"}],
                       "topology": [["INTERNAL", "NODE"], ["NODE", "INTERNAL"]]})"),
              kSuccess);
    const Device lost = device(0);
    ASSERT_NE(lost, nullptr);
    std::string name;
    EXPECT_EQ(name_of(lost, name), kErrorGpuIsLost);
    unsigned value = 0;
    EXPECT_EQ(
        nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature")(lost, kTemperatureGpu, &value),
        kErrorGpuIsLost);
    EXPECT_EQ(name_of(device(1), name), kSuccess);
    EXPECT_EQ(name, "fine");
    int level = 0;
    EXPECT_EQ(nvml<DeviceGetTopologyCommonAncestorFn>("nvmlDeviceGetTopologyCommonAncestor")(
                  device(1), lost, &level),
              kErrorGpuIsLost);
    EXPECT_STREQ(nvml<ErrorStringFn>("nvmlErrorString")(kErrorGpuIsLost), "GPU is lost");
    EXPECT_STREQ(nvml<ErrorStringFn>("nvmlErrorString")(kErrorNotSupported), "Not Supported");
    EXPECT_STREQ(nvml<ErrorStringFn>("nvmlErrorString")(12345), "Unknown Error");
}

TEST_F(FakeNvml, NvLinksEndInNotSupported) {
    ASSERT_EQ(init(R"({"gpus": [
        {"nvlinks": [{"active": true, "remote_pci_bus_id": "00000000:C4:00.0", "remote_type": "gpu"},
                     {"active": false, "remote_type": "switch"}]},
        {}
    ]})"),
              kSuccess);
    const auto state = nvml<DeviceGetNvLinkStateFn>("nvmlDeviceGetNvLinkState");
    const auto remote_type =
        nvml<DeviceGetNvLinkRemoteDeviceTypeFn>("nvmlDeviceGetNvLinkRemoteDeviceType");
    const auto remote_pci =
        nvml<DeviceGetNvLinkRemotePciInfoFn>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
    const Device dev = device(0);
    int active = -1, type = -1;
    EXPECT_EQ(state(dev, 0, &active), kSuccess);
    EXPECT_EQ(active, kFeatureEnabled);
    EXPECT_EQ(remote_type(dev, 0, &type), kSuccess);
    EXPECT_EQ(type, kNvLinkDeviceGpu);
    PciInfo pci{};
    EXPECT_EQ(remote_pci(dev, 0, &pci), kSuccess);
    EXPECT_STREQ(pci.busId, "00000000:C4:00.0");
    EXPECT_EQ(pci.bus, 0xc4u);

    EXPECT_EQ(state(dev, 1, &active), kSuccess);
    EXPECT_EQ(active, kFeatureDisabled);
    EXPECT_EQ(remote_type(dev, 1, &type), kSuccess);
    EXPECT_EQ(type, kNvLinkDeviceSwitch);
    EXPECT_EQ(remote_pci(dev, 1, &pci), kErrorNotSupported);

    // How a caller finds the link count: walk until the first error.
    EXPECT_EQ(state(dev, 2, &active), kErrorNotSupported);
    EXPECT_EQ(state(dev, kNvLinkMaxLinks - 1, &active), kErrorNotSupported);
    EXPECT_EQ(state(dev, kNvLinkMaxLinks, &active), kErrorInvalidArgument);
    EXPECT_EQ(state(device(1), 0, &active), kErrorNotSupported);
    EXPECT_EQ(state(device(1), kNvLinkMaxLinks, &active), kErrorInvalidArgument);

    // The unversioned call fills only the fields the first nvmlPciInfo_t had.
    PciInfo old{};
    std::strcpy(old.busId, "untouched");
    EXPECT_EQ(
        nvml<DeviceGetNvLinkRemotePciInfoFn>("nvmlDeviceGetNvLinkRemotePciInfo")(dev, 0, &old),
        kSuccess);
    EXPECT_STREQ(old.busIdLegacy, "0000:C4:00.0");
    EXPECT_EQ(old.bus, 0xc4u);
    EXPECT_STREQ(old.busId, "untouched");
}

TEST_F(FakeNvml, CpuAffinityIsABitmaskOf64CpusPerWord) {
    ASSERT_EQ(init(R"({"gpus": [{"cpu_affinity": "130-131,0-3,64"}, {"cpu_affinity": ""}]})"),
              kSuccess);
    const auto affinity = nvml<DeviceGetCpuAffinityFn>("nvmlDeviceGetCpuAffinity");
    unsigned long set[4] = {~0ul, ~0ul, ~0ul, ~0ul};
    EXPECT_EQ(affinity(device(0), 3, set), kSuccess);
    EXPECT_EQ(set[0], 0xful);
    EXPECT_EQ(set[1], 0x1ul);
    EXPECT_EQ(set[2], 0xcul);
    EXPECT_EQ(set[3], ~0ul);  // past the size given

    unsigned long one_word = 0;
    EXPECT_EQ(affinity(device(0), 1, &one_word), kSuccess);
    EXPECT_EQ(one_word, 0xful);
    EXPECT_EQ(affinity(device(1), 1, &one_word), kSuccess);
    EXPECT_EQ(one_word, 0ul);
}

TEST_F(FakeNvml, TopologyLevels) {
    ASSERT_EQ(init(R"({"gpus": [{}, {}, {}],
                       "topology": [["INTERNAL", "SINGLE", "SYSTEM"],
                                    ["SINGLE", "INTERNAL", "HOSTBRIDGE"],
                                    ["MULTIPLE", "NODE"]]})"),
              kSuccess);
    const auto ancestor =
        nvml<DeviceGetTopologyCommonAncestorFn>("nvmlDeviceGetTopologyCommonAncestor");
    const std::tuple<unsigned, unsigned, int> expected[] = {
        {0, 0, kTopologyInternal},   {0, 1, kTopologySingle},   {0, 2, kTopologySystem},
        {1, 2, kTopologyHostbridge}, {2, 0, kTopologyMultiple}, {2, 1, kTopologyNode}};
    for (const auto& [i, j, level] : expected) {
        int answer = -1;
        EXPECT_EQ(ancestor(device(i), device(j), &answer), kSuccess);
        EXPECT_EQ(answer, level) << i << "," << j;
    }
    int answer = -1;
    EXPECT_EQ(ancestor(device(2), device(2), &answer), kErrorNotSupported);  // short row
    EXPECT_EQ(ancestor(device(0), device(1), nullptr), kErrorInvalidArgument);
    EXPECT_EQ(ancestor(device(0), nullptr, &answer), kErrorInvalidArgument);
}

TEST_F(FakeNvml, EventsArriveInOrderThenTheWaitTimesOut) {
    ASSERT_EQ(init(R"({"gpus": [{}, {}, {"lost": true}],
                       "events": [{"gpu": 1, "xid": 79}, {"gpu": 0, "xid": 48},
                                  {"gpu": 1, "xid": 94}]})"),
              kSuccess);
    const auto create = nvml<EventSetCreateFn>("nvmlEventSetCreate");
    const auto register_events = nvml<DeviceRegisterEventsFn>("nvmlDeviceRegisterEvents");
    const auto wait = nvml<EventSetWaitFn>("nvmlEventSetWait_v2");
    const auto free_set = nvml<EventSetFreeFn>("nvmlEventSetFree");

    EventSet set = nullptr;
    ASSERT_EQ(create(&set), kSuccess);
    EXPECT_EQ(register_events(device(0), 0x1, set), kSuccess);  // not Xids: nothing from GPU 0
    EXPECT_EQ(register_events(device(1), kEventTypeXidCriticalError, set), kSuccess);
    EXPECT_EQ(register_events(device(2), kEventTypeXidCriticalError, set), kErrorGpuIsLost);
    EXPECT_EQ(register_events(device(1), kEventTypeXidCriticalError, nullptr),
              kErrorInvalidArgument);

    EventData data{};
    EXPECT_EQ(wait(set, &data, 1000), kSuccess);
    EXPECT_EQ(data.device, device(1));
    EXPECT_EQ(data.eventType, kEventTypeXidCriticalError);
    EXPECT_EQ(data.eventData, 79u);
    EXPECT_EQ(wait(set, &data, 1000), kSuccess);
    EXPECT_EQ(data.eventData, 94u);

    const auto start = Clock::now();
    EXPECT_EQ(wait(set, &data, 5000), kErrorTimeout);
    EXPECT_LT(seconds_since(start), 1.0);  // an empty queue naps 50 ms, not the whole timeout

    EXPECT_EQ(register_events(device(0), kEventTypeXidCriticalError, set), kSuccess);
    EXPECT_EQ(wait(set, &data, 0), kSuccess);
    EXPECT_EQ(data.device, device(0));
    EXPECT_EQ(data.eventData, 48u);
    EXPECT_EQ(wait(set, &data, 0), kErrorTimeout);
    EXPECT_EQ(wait(set, nullptr, 0), kErrorInvalidArgument);

    // Each set sees the whole queue.
    EventSet other = nullptr;
    ASSERT_EQ(create(&other), kSuccess);
    EXPECT_EQ(register_events(device(1), kEventTypeXidCriticalError, other), kSuccess);
    EXPECT_EQ(wait(other, &data, 0), kSuccess);
    EXPECT_EQ(data.eventData, 79u);

    EXPECT_EQ(free_set(set), kSuccess);
    EXPECT_EQ(free_set(set), kErrorInvalidArgument);
    EXPECT_EQ(wait(set, &data, 0), kErrorInvalidArgument);
    EXPECT_EQ(free_set(other), kSuccess);
}

TEST_F(FakeNvml, EventWaitTakesErrorsFromTheRegisteredGpus) {
    ASSERT_EQ(init(R"({"gpus": [{}, {"errors": {"nvmlEventSetWait": "GPU_IS_LOST"}}],
                       "events": [{"gpu": 0, "xid": 31}]})"),
              kSuccess);
    EventSet set = nullptr;
    ASSERT_EQ(nvml<EventSetCreateFn>("nvmlEventSetCreate")(&set), kSuccess);
    const auto register_events = nvml<DeviceRegisterEventsFn>("nvmlDeviceRegisterEvents");
    const auto wait = nvml<EventSetWaitFn>("nvmlEventSetWait_v2");
    ASSERT_EQ(register_events(device(0), kEventTypeXidCriticalError, set), kSuccess);
    EventData data{};
    EXPECT_EQ(wait(set, &data, 0), kSuccess);
    EXPECT_EQ(data.eventData, 31u);
    EXPECT_EQ(data.gpuInstanceId, 0xFFFFFFFFu);
    ASSERT_EQ(register_events(device(1), kEventTypeXidCriticalError, set), kSuccess);
    EXPECT_EQ(wait(set, &data, 0), kErrorGpuIsLost);
    EXPECT_EQ(wait(set, nullptr, 0), kErrorGpuIsLost);
}

TEST_F(FakeNvml, HangDelaysTheCallThenAnswers) {
    ASSERT_EQ(init(R"({"gpus": [{"temperature": 30}, {"temperature": 31}],
                       "hang": {"function": "nvmlDeviceGetTemperature", "gpu": 1,
                                "seconds": 0.2}})"),
              kSuccess);
    const auto temperature = nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature");
    unsigned value = 0;
    auto start = Clock::now();
    EXPECT_EQ(temperature(device(1), kTemperatureGpu, &value), kSuccess);
    EXPECT_GE(seconds_since(start), 0.2);
    EXPECT_EQ(value, 31u);

    start = Clock::now();
    EXPECT_EQ(temperature(device(0), kTemperatureGpu, &value), kSuccess);
    EXPECT_LT(seconds_since(start), 0.2);
    EXPECT_EQ(value, 30u);
}

TEST_F(FakeNvml, HangWithoutGpuCoversEveryCallOfThatName) {
    ASSERT_EQ(init(R"({"driver_version": "1.2", "gpus": [],
                       "hang": {"function": "nvmlSystemGetDriverVersion", "seconds": 0.2}})"),
              kSuccess);
    char text[kSystemDriverVersionBufferSize];
    const auto start = Clock::now();
    EXPECT_EQ(nvml<SystemGetStringFn>("nvmlSystemGetDriverVersion")(text, sizeof text), kSuccess);
    EXPECT_GE(seconds_since(start), 0.2);
    EXPECT_STREQ(text, "1.2");
}

TEST_F(FakeNvml, HangDoesNotBlockOtherThreads) {
    ASSERT_EQ(init(R"({"gpus": [{"name": "slow", "temperature": 30}],
                       "hang": {"function": "nvmlDeviceGetName", "seconds": 1}})"),
              kSuccess);
    const Device dev = device(0);
    std::atomic<bool> hung_call_returned = false;
    std::thread hung([&] {
        std::string name;
        EXPECT_EQ(name_of(dev, name), kSuccess);
        EXPECT_EQ(name, "slow");
        hung_call_returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    unsigned value = 0;
    EXPECT_EQ(
        nvml<DeviceGetTemperatureFn>("nvmlDeviceGetTemperature")(dev, kTemperatureGpu, &value),
        kSuccess);
    EXPECT_FALSE(hung_call_returned);
    hung.join();
    EXPECT_TRUE(hung_call_returned);
}

TEST_F(FakeNvml, ExportsEveryEntryPoint) {
    for (const char* name : {"nvmlInit_v2",
                             "nvmlInit",
                             "nvmlInitWithFlags",
                             "nvmlShutdown",
                             "nvmlErrorString",
                             "nvmlSystemGetDriverVersion",
                             "nvmlSystemGetNVMLVersion",
                             "nvmlSystemGetCudaDriverVersion",
                             "nvmlSystemGetCudaDriverVersion_v2",
                             "nvmlDeviceGetCount",
                             "nvmlDeviceGetCount_v2",
                             "nvmlDeviceGetHandleByIndex",
                             "nvmlDeviceGetHandleByIndex_v2",
                             "nvmlDeviceGetName",
                             "nvmlDeviceGetUUID",
                             "nvmlDeviceGetPciInfo_v2",
                             "nvmlDeviceGetPciInfo_v3",
                             "nvmlDeviceGetMemoryInfo",
                             "nvmlDeviceGetBAR1MemoryInfo",
                             "nvmlDeviceGetTemperature",
                             "nvmlDeviceGetTemperatureThreshold",
                             "nvmlDeviceGetPowerUsage",
                             "nvmlDeviceGetEnforcedPowerLimit",
                             "nvmlDeviceGetTotalEnergyConsumption",
                             "nvmlDeviceGetClockInfo",
                             "nvmlDeviceGetMaxClockInfo",
                             "nvmlDeviceGetCurrentClocksEventReasons",
                             "nvmlDeviceGetCurrentClocksThrottleReasons",
                             "nvmlDeviceGetUtilizationRates",
                             "nvmlDeviceGetCurrPcieLinkGeneration",
                             "nvmlDeviceGetMaxPcieLinkGeneration",
                             "nvmlDeviceGetGpuMaxPcieLinkGeneration",
                             "nvmlDeviceGetCurrPcieLinkWidth",
                             "nvmlDeviceGetMaxPcieLinkWidth",
                             "nvmlDeviceGetPcieReplayCounter",
                             "nvmlDeviceGetEccMode",
                             "nvmlDeviceGetTotalEccErrors",
                             "nvmlDeviceGetRemappedRows",
                             "nvmlDeviceGetRetiredPages",
                             "nvmlDeviceGetRetiredPagesPendingStatus",
                             "nvmlDeviceGetPersistenceMode",
                             "nvmlDeviceGetNvLinkState",
                             "nvmlDeviceGetNvLinkRemotePciInfo",
                             "nvmlDeviceGetNvLinkRemotePciInfo_v2",
                             "nvmlDeviceGetNvLinkRemoteDeviceType",
                             "nvmlDeviceGetCpuAffinity",
                             "nvmlDeviceGetTopologyCommonAncestor",
                             "nvmlDeviceGetCudaComputeCapability",
                             "nvmlDeviceGetGpuFabricInfo",
                             "nvmlEventSetCreate",
                             "nvmlDeviceRegisterEvents",
                             "nvmlEventSetWait",
                             "nvmlEventSetWait_v2",
                             "nvmlEventSetFree"})
        EXPECT_NE(library_.symbol(name), nullptr) << name;
}

constexpr const char* kNewerNames[] = {
    "nvmlInit_v2",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlSystemGetCudaDriverVersion_v2",
    "nvmlEventSetWait_v2",
    "nvmlDeviceGetNvLinkRemotePciInfo_v2",
    "nvmlDeviceGetGpuFabricInfo",
    "nvmlDeviceGetRemappedRows",
};

TEST_F(FakeNvmlOld, LacksTheNewerNames) {
    for (const char* name : kNewerNames) EXPECT_EQ(library_.symbol(name), nullptr) << name;
    for (const char* name :
         {"nvmlInit", "nvmlShutdown", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
          "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetCurrentClocksThrottleReasons",
          "nvmlSystemGetCudaDriverVersion", "nvmlEventSetWait", "nvmlDeviceGetNvLinkRemotePciInfo",
          "nvmlDeviceGetName"})
        EXPECT_NE(library_.symbol(name), nullptr) << name;
}

TEST_F(FakeNvmlOld, AnswersThroughTheOlderNames) {
    use_fixture(R"({"cuda_driver_version": 11040,
                    "gpus": [{"pci_bus_id": "00000000:41:00.0", "clock_event_reasons": 4}],
                    "events": [{"gpu": 0, "xid": 13}]})");
    ASSERT_EQ(nvml<InitFn>("nvmlInit")(), kSuccess);
    unsigned count = 0;
    EXPECT_EQ(nvml<DeviceGetCountFn>("nvmlDeviceGetCount")(&count), kSuccess);
    EXPECT_EQ(count, 1u);
    int cuda = 0;
    EXPECT_EQ(nvml<SystemGetCudaDriverVersionFn>("nvmlSystemGetCudaDriverVersion")(&cuda),
              kSuccess);
    EXPECT_EQ(cuda, 11040);
    Device dev = nullptr;
    ASSERT_EQ(nvml<DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex")(0, &dev), kSuccess);
    PciInfo pci{};
    EXPECT_EQ(nvml<DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v2")(dev, &pci), kSuccess);
    EXPECT_STREQ(pci.busId, "00000000:41:00.0");
    unsigned long long reasons = 0;
    EXPECT_EQ(nvml<DeviceGetUllFn>("nvmlDeviceGetCurrentClocksThrottleReasons")(dev, &reasons),
              kSuccess);
    EXPECT_EQ(reasons, kClocksEventSwPowerCap);

    EventSet set = nullptr;
    ASSERT_EQ(nvml<EventSetCreateFn>("nvmlEventSetCreate")(&set), kSuccess);
    ASSERT_EQ(nvml<DeviceRegisterEventsFn>("nvmlDeviceRegisterEvents")(
                  dev, kEventTypeXidCriticalError, set),
              kSuccess);
    // The first nvmlEventData_t ended at eventData: nothing past it is written.
    EventData data{};
    data.gpuInstanceId = 1234;
    EXPECT_EQ(nvml<EventSetWaitFn>("nvmlEventSetWait")(set, &data, 0), kSuccess);
    EXPECT_EQ(data.device, dev);
    EXPECT_EQ(data.eventData, 13u);
    EXPECT_EQ(data.gpuInstanceId, 1234u);
    EXPECT_EQ(nvml<EventSetFreeFn>("nvmlEventSetFree")(set), kSuccess);
}

}  // namespace
}  // namespace trainrig::nvml
