// The GPU benchmark plugin through its C boundary, as trainrig loads it: list() and run() for
// h2d, hbm and gemm in quick mode give well-formed, verified records. Skips without a device;
// the boundary tests (malformed requests, no device) run anywhere.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "measure/gpu_plugin_abi.h"

namespace {

// TRAINRIG_GPU_BENCH_PLUGIN, else the plugin beside this test (a gpu-bundle), else the build's.
std::string plugin_path() {
    if (const char* p = std::getenv("TRAINRIG_GPU_BENCH_PLUGIN"); p != nullptr && *p != '\0')
        return p;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto beside = self.parent_path() / "libtrainrig_gpu_bench.so";
        if (std::filesystem::exists(beside, ec)) return beside.string();
    }
    return TRAINRIG_GPU_BENCH_PLUGIN;
}

class GpuBenchPlugin : public ::testing::Test {
protected:
    void SetUp() override {
        handle_ = dlopen(plugin_path().c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle_, nullptr) << dlerror();
        list_ = reinterpret_cast<decltype(list_)>(dlsym(handle_, "trainrig_gpu_bench_list"));
        run_ = reinterpret_cast<decltype(run_)>(dlsym(handle_, "trainrig_gpu_bench_run"));
        free_ = reinterpret_cast<decltype(free_)>(dlsym(handle_, "trainrig_gpu_bench_free"));
        ASSERT_NE(list_, nullptr);
        ASSERT_NE(run_, nullptr);
        ASSERT_NE(free_, nullptr);
    }
    // The plugin stays loaded: the CUDA runtime and NCCL keep threads that run its code.

    nlohmann::json take(char* s) {
        EXPECT_NE(s, nullptr);
        if (s == nullptr) return nullptr;
        nlohmann::json j = nlohmann::json::parse(s);
        free_(s);
        return j;
    }
    nlohmann::json list() { return take(list_()); }
    nlohmann::json run(const nlohmann::json& request) {
        return take(run_(request.dump().c_str(), &cancel_));
    }
    // The first device, or a skip when the plugin sees none.
    bool have_device() {
        const auto l = list();
        return l["devices"].is_array() && !l["devices"].empty();
    }

    void* handle_ = nullptr;
    char* (*list_)() = nullptr;
    char* (*run_)(const char*, const volatile int*) = nullptr;
    void (*free_)(char*) = nullptr;
    volatile int cancel_ = 0;
};

// Every member gpu_plugin_abi.h promises, with plausible values.
void expect_well_formed(const nlohmann::json& r, const std::string& bench) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["bench"], bench);
    EXPECT_TRUE(r["name"].is_string() && !r["name"].get<std::string>().empty());
    EXPECT_TRUE(r["params"].is_object());
    ASSERT_TRUE(r["target"].is_object());
    EXPECT_TRUE(r["target"].contains("gpu") || r["target"].contains("gpus"));
    EXPECT_TRUE(r["target"]["gpu_name"].is_string());
    EXPECT_TRUE(r["unit"] == "bytes/s" || r["unit"] == "FLOP/s");
    ASSERT_TRUE(r["samples"].is_array());
    EXPECT_FALSE(r["samples"].empty());
    for (const auto& s : r["samples"]) {
        ASSERT_TRUE(s.is_number());
        EXPECT_TRUE(std::isfinite(s.get<double>()) && s.get<double>() > 0);
    }
    EXPECT_TRUE(r["counted"].is_object());
    EXPECT_EQ(r["verified"], true);
    EXPECT_TRUE(r["verify_detail"].is_string() && !r["verify_detail"].get<std::string>().empty());
}

TEST_F(GpuBenchPlugin, ListAnswersWithDevicesOrASentence) {
    const auto l = list();
    EXPECT_EQ(l["abi"], TRAINRIG_GPU_BENCH_ABI);
    ASSERT_TRUE(l["devices"].is_array());
    if (l["devices"].empty()) {
        EXPECT_TRUE(l["error"].is_string()) << l.dump();
        return;
    }
    EXPECT_TRUE(l["error"].is_null());
    for (const auto& d : l["devices"]) {
        EXPECT_TRUE(d["name"].is_string());
        EXPECT_TRUE(d["pci_bus_id"].is_string());
        EXPECT_GT(d["memory_bytes"].get<double>(), 0);
    }
}

TEST_F(GpuBenchPlugin, BadRequestsAreErrorsNotCrashes) {
    for (const char* text : {"", "[]", "{\"bench\": 3}", "{\"bench\": \"nope\"}",
                             "{\"bench\": \"hbm\", \"gpus\": \"all\"}"}) {
        const auto reply = take(run_(text, &cancel_));
        EXPECT_TRUE(reply["error"].is_string()) << text;
        EXPECT_TRUE(reply["records"].is_array() && reply["records"].empty()) << text;
    }
    EXPECT_TRUE(take(run_(nullptr, nullptr))["error"].is_string());
}

TEST_F(GpuBenchPlugin, QuickRunsGiveVerifiedRecords) {
    if (!have_device()) GTEST_SKIP() << "no CUDA device: " << list()["error"];
    for (const std::string bench : {"h2d", "hbm", "gemm"}) {
        const auto reply = run({{"bench", bench}, {"quick", true}, {"gpus", {0}}, {"repeats", 2}});
        ASSERT_TRUE(reply["error"].is_null()) << bench << ": " << reply["error"];
        ASSERT_FALSE(reply["records"].empty()) << bench;
        for (const auto& r : reply["records"]) expect_well_formed(r, bench);
    }
}

TEST_F(GpuBenchPlugin, ACancelledRunSaysInterrupted) {
    if (!have_device()) GTEST_SKIP() << "no CUDA device: " << list()["error"];
    cancel_ = 1;
    const auto reply = run({{"bench", "hbm"}, {"quick", true}, {"gpus", {0}}});
    EXPECT_EQ(reply["error"], "interrupted");
}

}  // namespace
