// `trainrig train --backend cuda` through the plugin boundary, with a stand-in plugin that
// computes on the CPU (tests/fakes/fake_train_plugin.cpp): the same run through the device path
// must give the CPU backend's weights bit for bit, resume exactly, and fail cleanly.
#include <cstdlib>

#include "train_cli_fixture.h"

namespace trainrig::test {
namespace {

const std::string kFake = std::string("TRAINRIG_TRAIN_PLUGIN=") + TRAINRIG_FAKE_TRAIN_LIB;

TEST_F(TrainCliTest, TheDevicePathTrainsAsTheCpuBackendDoes) {
    const std::string cpu = ckpt("cpu"), dev = ckpt("dev");
    // Validation between steps comes after the next step's batch was staged on the device: the
    // step must still train on its own batch, not on the last validation batch.
    const std::string val = " --val-data " + val_ + " --val-every 1 --val-batches 2";
    auto c = run_trainrig(args("--steps 4 --grad-accum 2 --json --ckpt-dir " + cpu + val +
                               " --log " + cpu + ".jsonl"));
    ASSERT_EQ(c.rc, 0) << c.err;
    auto r = run_trainrig(args("--backend cuda --steps 4 --grad-accum 2 --json --ckpt-dir " + dev +
                               val + " --log " + dev + ".jsonl"),
                          kFake);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json s = json::parse(r.out);
    EXPECT_EQ(s["backend"], "cuda");
    EXPECT_EQ(s["device"], "trainrig fake device");
    EXPECT_GT(s["peak_memory_bytes"].get<uint64_t>(), 0u);
    const json sc = json::parse(c.out);
    EXPECT_EQ(s["first_val_loss"], sc["first_val_loss"]);
    const auto lines_cpu = log_lines(cpu + ".jsonl"), lines_dev = log_lines(dev + ".jsonl");
    ASSERT_EQ(lines_dev.size(), lines_cpu.size());
    for (size_t i = 0; i < lines_dev.size(); ++i)
        for (const char* key : {"loss", "val_loss", "grad_norm"})
            EXPECT_EQ(lines_dev[i][key], lines_cpu[i][key]) << key << " at step " << i + 1;
    for (const char* file : {"model.bin", "adam_m.bin", "adam_v.bin"})
        EXPECT_TRUE(same_bytes(step_dir(cpu, 4) + "/" + file, step_dir(dev, 4) + "/" + file))
            << file;
}

// A device's calls return before their kernels finish, so its phase times are the ones its events
// measured; the host-side agreement stays in comm beside the all-reduce the device left exposed.
TEST_F(TrainCliTest, TheDevicePathReportsThePhasesTheDeviceTimed) {
    const std::string log = (dir_ / "dev.jsonl").string();
    auto r = run_trainrig(args("--backend cuda --steps 3 --json --log " + log),
                          kFake + " FAKE_TRAIN_PHASE_TIMES=0.5,0.25,0.125,0.0625");
    ASSERT_EQ(r.rc, 0) << r.err;
    const json s = json::parse(r.out);
    EXPECT_EQ(s["phase_clock"], "device");
    EXPECT_EQ(s["median_phase_s"]["forward"], 0.5);
    const auto lines = log_lines(log);
    ASSERT_EQ(lines.size(), 3u);
    for (const json& line : lines) {
        EXPECT_EQ(line["forward_s"], 0.5);
        EXPECT_EQ(line["backward_s"], 0.25);
        EXPECT_EQ(line["optimizer_s"], 0.0625);
        EXPECT_GE(line["comm_s"].get<double>(), 0.125);
        EXPECT_LT(line["comm_s"].get<double>(), 0.125 + line["step_s"].get<double>());
    }
    // Without device timing the host clocks time the calls, as for the CPU backend.
    auto host = run_trainrig(args("--backend cuda --steps 2 --json"), kFake);
    ASSERT_EQ(host.rc, 0) << host.err;
    EXPECT_EQ(json::parse(host.out)["phase_clock"], "host");
    EXPECT_LT(json::parse(host.out)["median_phase_s"]["forward"].get<double>(), 0.5);
}

TEST_F(TrainCliTest, TheDevicePathResumesExactly) {
    const std::string straight = ckpt("straight"), split = ckpt("split");
    ASSERT_EQ(run_trainrig(args("--backend cuda --steps 6 --ckpt-dir " + straight), kFake).rc, 0);
    ASSERT_EQ(
        run_trainrig(args("--backend cuda --steps 6 --stop-at 3 --ckpt-dir " + split), kFake).rc,
        0);
    auto r = run_trainrig(args("--backend cuda --steps 6 --resume --ckpt-dir " + split), kFake);
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* file : {"model.bin", "adam_m.bin", "adam_v.bin"})
        EXPECT_TRUE(same_bytes(step_dir(straight, 6) + "/" + file, step_dir(split, 6) + "/" + file))
            << file;
}

TEST_F(TrainCliTest, DeviceFailuresGetOneSentenceAndWriteNothing) {
    const std::string dir = ckpt("never");
    struct Case {
        std::string env, extra, expect;
    };
    const std::vector<Case> cases = {
        {"TRAINRIG_TRAIN_PLUGIN=/nonexistent/libtrainrig_train_cuda.so", "--backend cuda",
         "the cuda backend is not available"},
        {kFake + " FAKE_TRAIN_DEVICE_MEMORY=1000", "--backend cuda",
         "bytes of device memory, but only 1000 are free"},
        {kFake + " WORLD_SIZE=2 RANK=0", "--backend cuda",
         "RANK and WORLD_SIZE are set but NCCL_COMM_ID is not"},
        {"WORLD_SIZE=2 RANK=1", "", "the cpu backend runs data-parallel only under mpirun"},
    };
    for (const Case& c : cases) {
        auto r = run_trainrig(args(c.extra + " --steps 2 --ckpt-dir " + dir), c.env);
        EXPECT_EQ(r.rc, 2) << c.env;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.env << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(fs::exists(dir)) << c.env;
    }
}

TEST_F(TrainCliTest, MpiRanksStopTogetherWhenTheDeviceWorldCannotForm) {
    ASSERT_EQ(std::system("command -v mpirun >/dev/null"), 0)
        << "mpirun is missing: scripts/install-deps.sh installs openmpi-bin";
    // Rank 0 cannot make an NCCL id (the stand-in has none); rank 1 waits for it over MPI and
    // must hear that there is none instead of waiting for ever.
    const std::string dir = ckpt("never");
    auto r = run_trainrig(args("--backend cuda --steps 2 --threads 1 --ckpt-dir " + dir),
                          kFake +
                              " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                              "ASAN_OPTIONS=detect_leaks=0 OMPI_MCA_btl=self,vader "
                              "mpirun --oversubscribe -np 2 -x ASAN_OPTIONS -x "
                              "TRAINRIG_TRAIN_PLUGIN");
    EXPECT_NE(r.rc, 0);
    EXPECT_NE(r.err.find("the fake device has no NCCL"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("made no NCCL id"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace trainrig::test
