// The last known identity of a GPU NVML no longer describes: from the NVIDIA driver's /proc
// files (the article-box tree, whose GPU 1 is lost) and from a history's stored identities.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "watch/known_identity.h"

namespace trainrig::watch {
namespace {

std::string tree(const std::string& name) {
    return std::string(TRAINRIG_SOURCE_DIR) + "/tests/fixtures/machines/" + name;
}

TEST(KnownIdentity, DriverFilesDescribeEveryGpuInBusOrder) {
    const auto ids = driver_identities(RootFs(tree("article-box")));
    ASSERT_EQ(ids.size(), 2u);
    EXPECT_EQ(ids[0].bus_id, "0000:01:00.0");
    EXPECT_EQ(ids[1].bus_id, "0000:41:00.0");
    EXPECT_EQ(ids[1].uuid, "GPU-6963a909-9dfc-ae7f-3f16-6860eed3f3c6");
    EXPECT_EQ(ids[1].name, "NVIDIA A100 80GB PCIe");
    EXPECT_TRUE(driver_identities(RootFs(tree("cpu-only"))).empty());  // no driver
}

TEST(KnownIdentity, TheLostGpuTakesTheDriverGpuNoOtherClaims) {
    std::vector<GpuIdentity> gpus = {{0, "GPU-a", "A100", "0000:01:00.0"}, {1, "", "", ""}};
    fill_from_driver(gpus, driver_identities(RootFs(tree("article-box"))));
    EXPECT_EQ(gpus[0].uuid, "GPU-a");  // what NVML said stays
    EXPECT_EQ(gpus[1].bus_id, "0000:41:00.0");
    EXPECT_EQ(gpus[1].uuid, "GPU-6963a909-9dfc-ae7f-3f16-6860eed3f3c6");
}

TEST(KnownIdentity, NothingIsGuessedWhenTheCountsDisagree) {
    // Two GPUs without a bus id, one unclaimed driver GPU: which is which is not known.
    std::vector<GpuIdentity> gpus = {{0, "", "", ""}, {1, "", "", ""}};
    const std::vector<GpuIdentity> driver = {{0, "GPU-x", "A100", "0000:01:00.0"}};
    fill_from_driver(gpus, driver);
    EXPECT_TRUE(gpus[0].bus_id.empty());
    EXPECT_TRUE(gpus[1].bus_id.empty());
}

TEST(KnownIdentity, StoredIdentitiesFillOnlyTheBlanksOfTheSameIndex) {
    std::vector<GpuIdentity> gpus = {{0, "GPU-a", "H100", "0000:1b:00.0"}, {1, "", "", ""}};
    fill_identities(gpus,
                    {{0, "GPU-old", "H100", "0000:1b:00.0"}, {1, "GPU-b", "H100", "0000:3d:00.0"}});
    EXPECT_EQ(gpus[0].uuid, "GPU-a");
    EXPECT_EQ(gpus[1].uuid, "GPU-b");
    EXPECT_EQ(gpus[1].bus_id, "0000:3d:00.0");
}

}  // namespace
}  // namespace trainrig::watch
