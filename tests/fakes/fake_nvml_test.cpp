// The fake NVML libraries, loaded with dlopen the way trainrig loads libnvidia-ml.so.1 and driven
// by fixtures written the way README.md describes them: init, and the values each call answers.
#include "fake_nvml_test_support.h"

namespace trainrig::nvml {
namespace {

using namespace fake_test;

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
        {"nvmlDeviceGetPowerUsage", 61000},
        {"nvmlDeviceGetEnforcedPowerLimit", 700000},
        {"nvmlDeviceGetPowerManagementDefaultLimit", 700000},
        {"nvmlDeviceGetCurrPcieLinkGeneration", 4},
        {"nvmlDeviceGetMaxPcieLinkGeneration", 5},
        {"nvmlDeviceGetGpuMaxPcieLinkGeneration", 5},
        {"nvmlDeviceGetCurrPcieLinkWidth", 8},
        {"nvmlDeviceGetMaxPcieLinkWidth", 16},
        {"nvmlDeviceGetPcieReplayCounter", 2},
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
    unsigned mig_now = 9, mig_next = 9;
    EXPECT_EQ(nvml<DeviceGetMigModeFn>("nvmlDeviceGetMigMode")(dev, &mig_now, &mig_next), kSuccess);
    EXPECT_EQ(mig_now, kDeviceMigDisable);
    EXPECT_EQ(mig_next, kDeviceMigEnable);
}

TEST_F(FakeNvml, AGpuInMigModeHasNoUtilization) {
    ASSERT_EQ(init(R"({"gpus": [{"utilization": {"gpu": 7, "memory": 3},
                                 "mig_mode": {"current": true, "pending": true}}]})"),
              kSuccess);
    Utilization utilization{};
    EXPECT_EQ(
        nvml<DeviceGetUtilizationRatesFn>("nvmlDeviceGetUtilizationRates")(device(0), &utilization),
        kErrorNotSupported);
    unsigned now = 0, next = 0;
    EXPECT_EQ(nvml<DeviceGetMigModeFn>("nvmlDeviceGetMigMode")(device(0), &now, &next), kSuccess);
    EXPECT_EQ(now, kDeviceMigEnable);
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
          "nvmlDeviceGetPowerManagementDefaultLimit", "nvmlDeviceGetCurrPcieLinkGeneration",
          "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetGpuMaxPcieLinkGeneration",
          "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth",
          "nvmlDeviceGetPcieReplayCounter"})
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
    unsigned now = 0, next = 0;
    EXPECT_EQ(nvml<DeviceGetMigModeFn>("nvmlDeviceGetMigMode")(dev, &now, &next),
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

}  // namespace
}  // namespace trainrig::nvml
