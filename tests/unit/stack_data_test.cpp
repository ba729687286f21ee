// The stack data: the built-in copy loads, every row has a source, the tables agree with each
// other and with the plan catalog, and an edited copy that would mislead is refused with its line.
#include "stack/stack_data.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "plan/hardware.h"
#include "stack/compat.h"
#include "stack/cuda_drivers.h"

namespace trainrig::stack {
namespace {

std::string data_file_text() {
    std::ifstream in(std::string(TRAINRIG_SOURCE_DIR) + "/src/stack/stack_data.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(StackData, BuiltInLoadsAndIsTheSourceFile) {
    const auto& d = builtin_stack_data();
    EXPECT_TRUE(std::regex_match(d.current_to, std::regex(R"(\d{4}-\d{2}-\d{2})")));
    EXPECT_FALSE(d.cuda.empty());
    EXPECT_FALSE(d.torch.empty());
    // The compiled-in text is the file in the tree, not a stale copy.
    auto parsed = parse_stack_data(data_file_text(), "stack_data.toml");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->current_to, d.current_to);
    EXPECT_EQ(parsed->torch.size(), d.torch.size());
    EXPECT_EQ(parsed->cuda.size(), d.cuda.size());
}

TEST(StackData, EveryRowHasASource) {
    const auto& d = builtin_stack_data();
    for (const auto& c : d.cuda) EXPECT_FALSE(c.source.empty()) << cuda_text(c.cuda);
    for (const auto& a : d.architectures) EXPECT_FALSE(a.source.empty()) << a.name;
    for (const auto& g : d.gpus) EXPECT_FALSE(g.source.empty()) << g.id;
    for (const auto& b : d.branches) EXPECT_FALSE(b.source.empty()) << b.branch;
    for (const auto& n : d.nccl) EXPECT_FALSE(n.source.empty()) << n.version;
    for (const auto& x : d.distros) EXPECT_FALSE(x.source.empty()) << x.id;
    for (const auto& t : d.torch) {
        EXPECT_FALSE(t.source.empty()) << t.version;
        for (const auto& b : t.builds) EXPECT_FALSE(b.source.empty()) << t.version << " " << b.cuda;
    }
}

TEST(StackData, TablesAgree) {
    const auto& d = builtin_stack_data();
    for (const auto& t : d.torch) {
        EXPECT_LE(compare_versions(t.python_min, t.python_max), 0) << t.version;
        for (const auto& b : t.builds) {
            // Every wheel's CUDA is a CUDA release of the table, new enough for its targets.
            ASSERT_NE(d.find_cuda(b.cuda), nullptr) << t.version << " cu" << b.cuda;
            for (auto cc : b.arch) {
                ASSERT_NE(d.find_architecture(cc), nullptr) << t.version << " " << cc;
                EXPECT_NE(cuda_gpu_fit(d, b.cuda, cc), CudaGpuFit::kTooOld)
                    << t.version << "+" << cuda_tag(b.cuda) << " targets " << cc_text(cc);
                EXPECT_NE(cuda_gpu_fit(d, b.cuda, cc), CudaGpuFit::kDropped)
                    << t.version << "+" << cuda_tag(b.cuda) << " targets " << cc_text(cc);
            }
            if (!b.nccl.empty()) {
                EXPECT_NE(d.find_nccl(b.nccl), nullptr) << b.nccl;
            }
        }
    }
    // Minor-version compatibility floors are one per major.
    for (const auto& c : d.cuda)
        for (const auto& o : d.cuda)
            if (c.cuda / 1000 == o.cuda / 1000 && c.cuda >= 12000) {
                EXPECT_EQ(c.minor_compat, o.minor_compat) << cuda_text(c.cuda);
            }
    // Toolkit drivers grow with the CUDA version.
    for (size_t i = 1; i < d.cuda.size(); ++i)
        EXPECT_GT(compare_versions(d.cuda[i].toolkit_driver, d.cuda[i - 1].toolkit_driver), 0)
            << cuda_text(d.cuda[i].cuda);
    for (const auto& g : d.gpus) EXPECT_NE(d.find_architecture(g.compute_capability), nullptr);
}

TEST(StackData, EveryCatalogGpuHasAComputeCapability) {
    const auto& d = builtin_stack_data();
    for (const auto& g : plan::builtin_hardware().gpus) {
        bool found = false;
        for (const auto& m : d.gpus) found |= m.id == g.id;
        EXPECT_TRUE(found) << "plan catalog GPU " << g.id << " has no [[gpu]] row in "
                           << "src/stack/stack_data.toml";
    }
}

TEST(StackData, KnownFacts) {
    const auto& d = builtin_stack_data();
    // Blackwell needs CUDA 12.8; CUDA 13 dropped Volta; PyTorch 2.8 dropped CUDA 11.8 and 2.12
    // dropped CUDA 12.8 (each from the source its row names).
    EXPECT_EQ(cuda_gpu_fit(d, 12040, 100), CudaGpuFit::kTooOld);
    EXPECT_EQ(cuda_gpu_fit(d, 12080, 100), CudaGpuFit::kSupported);
    EXPECT_EQ(cuda_gpu_fit(d, 13000, 70), CudaGpuFit::kDropped);
    auto has = [&](const char* torch, int cuda) {
        for (const auto& b : d.find_torch(torch)->builds)
            if (b.cuda == cuda) return true;
        return false;
    };
    EXPECT_TRUE(has("2.7", 11080));
    EXPECT_FALSE(has("2.8", 11080));
    EXPECT_TRUE(has("2.11", 12080));
    EXPECT_FALSE(has("2.12", 12080));
    EXPECT_EQ(d.find_cuda(12080)->toolkit_driver, "570.26");
    EXPECT_EQ(d.find_branch(580)->type, BranchType::kLongTerm);
}

// cuda_driver_requirement() is the data now: the same answers as the table it replaced.
TEST(StackData, CudaDriverRequirementIsBackedByTheData) {
    const std::vector<std::tuple<int, const char*, const char*>> before = {
        {11000, "450.51.05", "450.80.02"}, {11080, "520.61.05", "450.80.02"},
        {12000, "525.60.13", "525.60.13"}, {12040, "550.54.14", "525.60.13"},
        {12060, "560.28.03", "525.60.13"}, {12080, "570.26", "525.60.13"},
        {12090, "575.51.03", "525.60.13"}, {13000, "580.65.06", "580.65.06"},
        {13010, "590.44.01", "580.65.06"}};
    for (const auto& [cuda, toolkit, floor] : before) {
        auto r = cuda_driver_requirement(cuda);
        ASSERT_TRUE(r) << cuda;
        EXPECT_STREQ(r->toolkit_driver, toolkit) << cuda;
        EXPECT_STREQ(r->minor_compat, floor) << cuda;
    }
    auto future = cuda_driver_requirement(13090);  // a 13.x newer than the data
    ASSERT_TRUE(future);
    EXPECT_EQ(future->toolkit_driver, nullptr);
    EXPECT_STREQ(future->minor_compat, "580.65.06");
    EXPECT_FALSE(cuda_driver_requirement(12070));
    EXPECT_FALSE(cuda_driver_requirement(14000));
}

TEST(StackData, VersionTextsParse) {
    EXPECT_EQ(parse_compute_capability("9.0"), 90);
    EXPECT_EQ(parse_compute_capability("12.0"), 120);
    EXPECT_EQ(parse_compute_capability("sm_100"), 100);
    EXPECT_EQ(parse_compute_capability("9.x"), 0);
    EXPECT_EQ(minor_version("2.14.0+cu132"), "2.14");
    EXPECT_EQ(minor_version("2.5.0a0+872d972e41"), "");
    EXPECT_EQ(driver_branch("580.65.06"), 580);
    EXPECT_LT(compare_versions("2.9", "2.10"), 0);
    EXPECT_EQ(cuda_tag(13020), "cu132");
}

// A copy of the data with one line replaced, or an extra line added after `after`.
std::string edited(const std::string& from, const std::string& to) {
    std::string text = data_file_text();
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(StackData, BadCopiesAreRefusedWithTheLine) {
    struct Case {
        std::string from, to, says;
    };
    const std::vector<Case> cases = {
        {"current_to = \"2026-09-08\"", "current_to = \"soon\"", "\"current_to\" must be a date"},
        {"version = \"12.8\"\ntoolkit_driver", "version = \"12.8\"\ntoolkit_drivr",
         "unknown key \"toolkit_drivr\""},
        {"minor_compat = \"525.60.13\"\nsource = \"CUDA Toolkit Release Notes, Table 3 (12.8",
         "minor_compat = \"525.60.13\"\nsrc = \"CUDA Toolkit Release Notes, Table 3 (12.8",
         "unknown key \"src\""},
        {"  cuda = \"13.2\"\n  cudnn = \"9.24.0.43\"", "  cuda = \"13.7\"\n  cudnn = \"9.24.0.43\"",
         "has a CUDA 13.7 build, but [[cuda]] has no CUDA 13.7"},
        {"compute_capability = \"10.0\"", "compute_capability = \"10.3\"",
         "compute capability 10.3, which no [[architecture]] lists"},
        {"type = \"ltsb\"\nend_of_life = \"2028-06\"", "type = \"lts\"\nend_of_life = \"2028-06\"",
         "\"type\" must be"},
    };
    for (const auto& c : cases) {
        auto r = parse_stack_data(edited(c.from, c.to), "my.toml");
        ASSERT_FALSE(r.ok()) << c.to;
        EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
        EXPECT_EQ(r.status().message().rfind("my.toml", 0), 0u) << r.status().message();
    }
    // A row without its source names the table and the line.
    auto no_source = parse_stack_data(
        edited("source = \"NVIDIA CUDA GPUs compute capability; PCI ID Repository 10de:2901\"", ""),
        "my.toml");
    ASSERT_FALSE(no_source.ok());
    EXPECT_NE(no_source.status().message().find("[[gpu]] line"), std::string::npos);
    EXPECT_NE(no_source.status().message().find("\"source\" is missing"), std::string::npos);
}

}  // namespace
}  // namespace trainrig::stack
