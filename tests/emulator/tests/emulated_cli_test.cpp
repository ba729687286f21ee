// The fleet commands a user runs on GPU servers, run on the emulated device (docs/testing.md, "The
// emulated GPU"): `validate --fleet` over two ranks and `bench run nccl-pairs`, with the fake
// NVML describing the same GPUs. Neither judges emulated timings or calls a node READY. Every GPU
// benchmark and `validate --level quick` on one node run in scripts/gpu-check.sh --emulated
// (tests/emulator/gpu_check_emulated_test.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../unit/temp_dir_test.h"
#include "core/emulated_gpu.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Four emulated A100s at the bus ids of the fake NVML's (epyc-4xa100-healthy.json: 4 x A100
// SXM4 80GB), so NVML and CUDA describe the same devices; 4 GB of memory each is enough here.
std::string emulated_env() {
    // The fake library is built beside the plain trainrig, not the emulated build's copy.
    return "TRAINRIG_NVML_LIBRARY=" TRAINRIG_FAKE_NVML_LIB " TRAINRIG_FAKE_NVML=" +
           std::string(TRAINRIG_SOURCE_DIR) +
           "/tests/fixtures/nvml/epyc-4xa100-healthy.json"
           " TRAINRIG_EMULATED_GPUS=0000:41:00.0,0000:61:00.0,0000:a1:00.0,0000:c1:00.0"
           " TRAINRIG_EMULATED_GPU_MEMORY=4G TRAINRIG_EMULATED_GPU_MODEL=a100-80g-sxm";
}

class EmulatedCli : public TempDirTest {
protected:
    std::string env_ = emulated_env();
};

// Every record: measured on an emulated GPU, its own data check passed, and no expectation (so
// "info", never pass or fail).
void expect_emulated_and_verified(const json& record) {
    SCOPED_TRACE(record.dump().substr(0, 600));
    ASSERT_TRUE(record["target"]["gpu_name"].is_string());
    EXPECT_TRUE(is_emulated_gpu(record["target"]["gpu_name"].get<std::string>()));
    EXPECT_EQ(record["verified"], true) << record["verify_detail"];
    EXPECT_TRUE(record["expected"].is_null());
    EXPECT_EQ(record["no_expectation"], kEmulatedNoExpectation);
    EXPECT_EQ(record["status"], "info");
    EXPECT_FALSE(record["samples"].empty());
}

// `validate --fleet` under mpirun, two ranks on this machine: each validates its node alone (its
// stages see no MPI launcher: the nccl benchmark runs single-process over the node's four GPUs),
// rank 0 gathers the two reports and judges the fleet. An emulated node is UNKNOWN, so the
// fleet is. The training stage is the single node's test's (gpu_check_emulated_test.py).
TEST_F(EmulatedCli, FleetValidateJudgesTwoEmulatedNodes) {
    const fs::path report = dir_ / "fleet";
    const auto r = run_sh(
        env_ +
        mpirun_prefix(2, {"TRAINRIG_NVML_LIBRARY", "TRAINRIG_FAKE_NVML", "TRAINRIG_EMULATED_GPUS",
                          "TRAINRIG_EMULATED_GPU_MEMORY", "TRAINRIG_EMULATED_GPU_MODEL"}) +
        TRAINRIG_BINARY
        " validate --fleet --level quick --no-report --json "
        "--skip stack,host-bench,data-path,training,watch --fleet-report " +
        report.string());
    ASSERT_EQ(r.rc, 2) << r.err.substr(0, 3000) << r.out.substr(0, 3000);
    const json doc = json::parse(r.out);  // rank 0's alone
    EXPECT_EQ(doc["schema"], "trainrig.fleet");
    ASSERT_EQ(doc["nodes"].size(), 2u) << doc["nodes"];
    for (const auto& n : doc["nodes"]) EXPECT_EQ(n["state"], "UNKNOWN") << n;
    int nodes = 0;
    for (const auto& dir : fs::directory_iterator(report / "nodes")) {
        ++nodes;
        const json node = json::parse(std::ifstream(dir.path() / "report.json"));
        SCOPED_TRACE(dir.path().string());
        EXPECT_EQ(node["scope"], "emulated");
        for (const auto& s : node["stages"]) {
            if (s["name"] == "gpu-bench") {
                EXPECT_EQ(s["state"], "ran") << s;
            }
        }
        bool nccl = false;
        for (const auto& rec : node["bench"]["results"]) {
            if (rec["bench"] != "nccl") continue;
            nccl = true;
            EXPECT_EQ(rec["params"]["launcher"], "single-process") << rec["params"];
            EXPECT_EQ(rec["params"]["ranks"], 4);
            expect_emulated_and_verified(rec);
        }
        EXPECT_TRUE(nccl);
    }
    EXPECT_EQ(nodes, 2);
}

// nccl-pairs between two nodes on this machine: each rank in a UTS namespace of its own with a
// host name of its own (nccl-pairs, like NCCL, tells nodes apart by name), one emulated GPU
// each, NCCL between them through the emulator's shared memory. Rank 0 reports the pair.
TEST_F(EmulatedCli, NcclPairsMeasuresThePairOfTwoNodes) {
    if (std::system("unshare -u true 2>/dev/null") != 0)
        GTEST_SKIP() << "no UTS namespaces here (unshare -u needs CAP_SYS_ADMIN)";
    const fs::path node = dir_ / "node.sh";
    std::ofstream(node)
        << "#!/bin/sh\n"
           "exec unshare -u sh -c 'hostname \"emulated-node-$OMPI_COMM_WORLD_RANK\" "
           "&& exec \"$0\" \"$@\"' " TRAINRIG_BINARY " \"$@\"\n";
    fs::permissions(node, fs::perms::owner_all);
    const fs::path pairs = dir_ / "pairs.json";
    const auto r =
        run_sh(env_ + " TRAINRIG_EMULATED_GPUS=0000:41:00.0" +
               mpirun_prefix(2, {"TRAINRIG_EMULATED_GPUS", "TRAINRIG_EMULATED_GPU_MEMORY"}) +
               node.string() + " bench run nccl-pairs --quick --json -o " + pairs.string());
    ASSERT_EQ(r.rc, 0) << r.err << r.out.substr(0, 3000);
    // One document, rank 0's: the other rank took part and writes nothing.
    EXPECT_EQ(r.out.find('{'), std::string::npos) << r.out.substr(0, 3000);
    const json doc = json::parse(std::ifstream(pairs));
    EXPECT_TRUE(doc["errors"].empty()) << doc["errors"];
    bool pair = false, verdict = false;
    for (const auto& rec : doc["results"]) {
        if (rec["bench"] != "nccl-pairs") continue;
        pair = pair || rec["target"]["nodes"] == "emulated-node-0+emulated-node-1";
        verdict = verdict || rec["name"] == "bad_nodes";
        EXPECT_EQ(rec["verified"], true) << rec.dump().substr(0, 600);
    }
    EXPECT_TRUE(pair && verdict) << doc.dump().substr(0, 3000);
}

}  // namespace
}  // namespace trainrig::test
