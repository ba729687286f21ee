// The fake NVML's faults and edges: bad arguments, injected errors, lost GPUs, link and topology
// enumeration, events, hangs, and the exports of the full and the old build.
#include "fake_nvml_test_support.h"

namespace trainrig::nvml {
namespace {

using namespace fake_test;

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
