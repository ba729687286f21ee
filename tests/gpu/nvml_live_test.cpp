// On a machine with an NVIDIA driver: trainrig's NVML probe against nvidia-smi, fact by fact.
// Without a driver every test skips (label `gpu`; scripts/gpu-check.sh runs them on a GPU host).
#include <gtest/gtest.h>

#include <chrono>

#include "core/child_process.h"
#include "core/root_fs.h"
#include "core/text.h"
#include "probe/probes.h"

namespace trainrig {
namespace {

using namespace std::chrono_literals;

struct SmiGpu {
    std::vector<std::string> fields;
};

// nvidia-smi --query-gpu rows, or nothing without nvidia-smi.
std::vector<SmiGpu> smi(const std::string& query) {
    auto r =
        run_command({"nvidia-smi", "--query-gpu=" + query, "--format=csv,noheader,nounits"}, 30s);
    std::vector<SmiGpu> out;
    if (!r || r->exit_code != 0) return out;
    for (auto line : split(trim(r->out), '\n')) {
        SmiGpu g;
        for (auto f : split(line, ',')) g.fields.emplace_back(trim(f));
        out.push_back(std::move(g));
    }
    return out;
}

class LiveNvml : public ::testing::Test {
protected:
    void SetUp() override {
        facts_ = probe_nvml(RootFs("/"), 30s);
        if (facts_.is_failed() && facts_.status().code() == Errc::kNotFound)
            GTEST_SKIP() << "no NVIDIA driver: " << facts_.status().message();
        ASSERT_TRUE(facts_.is_known()) << facts_.status().message();
        rows_ = smi("index,pci.bus_id,name,memory.total,pcie.link.width.max,persistence_mode");
        if (rows_.empty()) GTEST_SKIP() << "nvidia-smi is not there to compare with";
    }
    Fact<NvmlFacts> facts_;
    std::vector<SmiGpu> rows_;
};

TEST_F(LiveNvml, SameGpusAsNvidiaSmi) {
    const auto& n = facts_.value();
    ASSERT_EQ(n.gpus.size(), rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i) {
        const auto& g = n.gpus[i];
        const auto& row = rows_[i].fields;
        ASSERT_GE(row.size(), 6u);
        ASSERT_TRUE(g.bus_id.is_known()) << g.bus_id.status().message();
        std::string bus = row[1];
        for (auto& c : bus) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        EXPECT_TRUE(bus.ends_with(g.bus_id.value())) << bus << " vs " << g.bus_id.value();
        ASSERT_TRUE(g.name.is_known());
        EXPECT_EQ(g.name.value(), row[2]);
        ASSERT_TRUE(g.memory_total_bytes.is_known());
        EXPECT_EQ(g.memory_total_bytes.value() >> 20, parse_u64(row[3]).value_or(0));
        if (g.pcie.width_max.is_known() && row[4] != "[N/A]") {
            EXPECT_EQ(std::to_string(g.pcie.width_max.value()), row[4]);
        }
        if (g.persistence_mode.is_known()) {
            EXPECT_EQ(g.persistence_mode.value() ? "Enabled" : "Disabled", row[5]);
        }
    }
}

TEST_F(LiveNvml, DriverVersionsAgree) {
    auto rows = smi("driver_version");
    ASSERT_FALSE(rows.empty());
    ASSERT_TRUE(facts_.value().driver_version.is_known());
    EXPECT_EQ(facts_.value().driver_version.value(), rows[0].fields[0]);
    ASSERT_TRUE(facts_.value().cuda_driver_version.is_known());
    EXPECT_GE(facts_.value().cuda_driver_version.value(), 11000);
}

TEST_F(LiveNvml, EveryFieldIsKnownUnsupportedOrAnExplainedError) {
    for (const auto& g : facts_.value().gpus) {
        EXPECT_FALSE(g.lost) << g.index;
        EXPECT_TRUE(g.unreachable.empty()) << g.unreachable;
        for (const Fact<int64_t>* f : {&g.temperature_c, &g.pcie.gen, &g.pcie.width})
            EXPECT_TRUE(f->is_known() || f->status().code() == Errc::kUnsupported)
                << f->status().message();
        EXPECT_TRUE(g.clock_event_reasons.is_known()) << g.clock_event_reasons.status().message();
    }
    RecordProperty("nvml_seconds", std::to_string(facts_.value().seconds));
}

}  // namespace
}  // namespace trainrig
