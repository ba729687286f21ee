// The connection matrix of `trainrig topo` built from hand-made snapshots: how a NIC is named
// and placed when sysfs tells little, and when the `?` legend appears.
#include <gtest/gtest.h>

#include <string>

#include "topo/gpu_matrix.h"
#include "topo/render_topo.h"

namespace trainrig {
namespace {

Nic nic(const std::string& address) {
    Nic n;
    n.address = address;
    n.sysfs_path = "/sys/devices/pci0000:00/" + address;
    n.numa_node = Fact<int64_t>::known(1);
    return n;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(TopoMatrix, NicWithoutInterfacesIsNamedByItsPciIds) {
    Snapshot s;
    Nic n = nic("0000:00:03.0");
    n.vendor = Fact<uint64_t>::known(0x1af4);
    n.device = Fact<uint64_t>::known(0x1000);
    n.local_cpulist = Fact<std::string>::known("8-15");
    s.nics = Fact<std::vector<Nic>>::known({n});
    const GpuMatrix m = build_gpu_matrix(s);
    ASSERT_EQ(m.nics.size(), 1u);
    EXPECT_EQ(m.nics[0].model, "1af4:1000");
    EXPECT_EQ(m.nics[0].cpus, "8-15");
    EXPECT_EQ(m.nics[0].numa, "1");
    const std::string text = render_topo_table(m);
    EXPECT_TRUE(has(text, "  NIC0: 0000:00:03.0 1af4:1000\n")) << text;
    EXPECT_TRUE(has(text, "8-15            1\n")) << text;
}

TEST(TopoMatrix, NicWithNothingKnownIsAQuestionMarkAndItsCellsNotApplicable) {
    Snapshot s;
    s.nics = Fact<std::vector<Nic>>::known({nic("0000:00:03.0")});
    const GpuMatrix m = build_gpu_matrix(s);
    EXPECT_EQ(m.nics[0].model, "?");
    EXPECT_TRUE(has(render_topo_table(m), "N/A             1\n")) << render_topo_table(m);
}

TEST(TopoMatrix, UnknownLegendOnlyWhenACellIsUnknown) {
    Snapshot s;
    Nic a = nic("0000:00:03.0"), b = nic("0000:00:04.0");
    s.nics = Fact<std::vector<Nic>>::known({a, b});
    EXPECT_FALSE(has(render_topo_table(build_gpu_matrix(s)), "?    = not known"));
    b.sysfs_path = "";  // its place on the bus could not be read
    s.nics = Fact<std::vector<Nic>>::known({a, b});
    const std::string text = render_topo_table(build_gpu_matrix(s));
    EXPECT_TRUE(has(text, "?    = not known")) << text;
    EXPECT_TRUE(has(text,
                    "\nGPUs (from the PCI bus; no NVLink information without the "
                    "driver):\n  none\n"))
        << text;
}

}  // namespace
}  // namespace trainrig
